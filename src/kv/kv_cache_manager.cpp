#include "kv/kv_cache_manager.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>

#include "core/check.h"
#include "core/strings.h"
#include "kv/kv_cache_group.h"
#include "kv/prefix_hash.h"

namespace nt {

struct KvCacheManager::Seq {
  bool live = false;
  int32_t len = 0;       // positions written and committed
  int32_t reserved = 0;  // positions with blocks (>= len)
  std::vector<Group::Table> tables;  // per group
};

KvCacheManager::KvCacheManager() = default;
KvCacheManager::~KvCacheManager() = default;

Result<std::unique_ptr<KvCacheManager>> KvCacheManager::create(const KvLayout& layout, int64_t pool_tokens,
                                                               uint64_t chain_seed, int max_seqs,
                                                               int32_t max_step_tokens) {
  NT_CHECK(layout.n_layer > 0 && layout.n_head_kv > 0 && layout.head_dim > 0 && layout.block_size > 0);
  NT_CHECK(layout.n_swa == 0 || (layout.n_swa > 0 && layout.swa_layers.size() == size_t(layout.n_layer)));
  NT_CHECK(max_seqs >= 0 && max_step_tokens >= 0);
  if (pool_tokens <= 0)
    return make_error("the KV cache pool must hold at least one token (got %lld)", static_cast<long long>(pool_tokens));
  const auto& ki = dtype_info(layout.k_type);
  const auto& vi = dtype_info(layout.v_type);
  if (layout.row_elems() % ki.block_size != 0 || layout.row_elems() % vi.block_size != 0)
    return make_error("cache type %s/%s needs n_head_kv * head_dim (%lld) to be a multiple of its block size",
                      ki.name, vi.name, static_cast<long long>(layout.row_elems()));
  if (ki.block_size > 1 && layout.head_dim % static_cast<int>(ki.block_size) != 0)
    return make_error("cache type %s needs head_dim (%d) to be a multiple of %u", ki.name, layout.head_dim, ki.block_size);
  if (vi.block_size > 1 && layout.head_dim % static_cast<int>(vi.block_size) != 0)
    return make_error("cache type %s needs head_dim (%d) to be a multiple of %u", vi.name, layout.head_dim, vi.block_size);
  const int64_t n_blocks = (pool_tokens + layout.block_size - 1) / layout.block_size;
  if (n_blocks > std::numeric_limits<int32_t>::max())
    return make_error("the KV cache pool of %lld tokens is too large", static_cast<long long>(pool_tokens));

  std::unique_ptr<KvCacheManager> m(new KvCacheManager());
  m->layout_ = layout;
  m->chain_seed_ = chain_seed;
  // Full-attention layers first (group 0 when there are any), then the sliding-window layers.
  LayerGroup full, sliding;
  full.kind = LayerKind::Full;
  sliding.kind = LayerKind::Sliding;
  sliding.window = layout.n_swa;
  m->group_of_layer_.assign(size_t(layout.n_layer), 0);
  for (int il = 0; il < layout.n_layer; ++il) (layout.is_swa(il) ? sliding : full).layers.push_back(il);
  for (LayerGroup* g : {&full, &sliding}) {
    if (g->layers.empty()) continue;
    for (int il : g->layers) m->group_of_layer_[size_t(il)] = static_cast<int>(m->groups_.size());
    m->groups_.push_back(*g);
  }
  m->capacity_tokens_ = n_blocks * layout.block_size;

  for (const LayerGroup& spec : m->groups_) {
    int64_t group_blocks = n_blocks;
    if (spec.kind == LayerKind::Sliding && max_seqs > 0) {
      // Per sequence: the blocks a window of positions can straddle, the block being written and a
      // copy of a shared tail; the step's chunks add their own blocks.
      const int64_t bs = layout.block_size;
      const int64_t per_seq = (spec.window - 1 + bs - 1) / bs + 1 + 2;
      group_blocks = std::min(n_blocks, int64_t(max_seqs) * per_seq + (int64_t(max_step_tokens) + bs - 1) / bs);
    }
    auto g = std::make_unique<Group>(spec, layout, static_cast<int32_t>(group_blocks));
    // Left uninitialised on purpose: the OS commits pages only as blocks are first written, so
    // resident memory follows the tokens actually cached. Only written positions are ever read.
    g->storage.reset(new (std::nothrow) uint8_t[g->storage_bytes]);
    if (!g->storage)
      return make_error("cannot allocate %s for a KV cache pool of %lld tokens; use a smaller pool",
                        format_bytes(g->storage_bytes).c_str(), static_cast<long long>(pool_tokens));
    m->group_state_.push_back(std::move(g));
  }
  return m;
}

int64_t KvCacheManager::capacity_tokens() const { return capacity_tokens_; }

size_t KvCacheManager::total_bytes() const {
  size_t total = 0;
  for (const auto& g : group_state_) total += g->storage_bytes;
  return total;
}

size_t KvCacheManager::bytes_for(int64_t n_tokens) const {
  size_t total = 0;
  for (const auto& g : group_state_) {
    const int64_t n = g->spec.kind == LayerKind::Sliding ? std::min<int64_t>(n_tokens, g->spec.window) : n_tokens;
    total += (g->k_row_bytes + g->v_row_bytes) * g->spec.layers.size() * size_t(std::max<int64_t>(n, 0));
  }
  return total;
}

KvCacheManager::Seq& KvCacheManager::seq_ref(int seq) {
  NT_CHECK(seq >= 0 && size_t(seq) < seqs_.size() && seqs_[size_t(seq)].live);
  return seqs_[size_t(seq)];
}
const KvCacheManager::Seq& KvCacheManager::seq_ref(int seq) const {
  NT_CHECK(seq >= 0 && size_t(seq) < seqs_.size() && seqs_[size_t(seq)].live);
  return seqs_[size_t(seq)];
}

int KvCacheManager::new_seq() {
  size_t i = 0;
  while (i < seqs_.size() && seqs_[i].live) ++i;
  if (i == seqs_.size()) seqs_.emplace_back();
  Seq& s = seqs_[i];
  s = Seq{};
  s.live = true;
  s.tables.resize(group_state_.size());
  return static_cast<int>(i);
}

void KvCacheManager::free_seq(int seq) {
  Seq& s = seq_ref(seq);
  if (token_granular()) keep_tail(s);
  for (size_t g = 0; g < group_state_.size(); ++g) group_state_[g]->release_from(s.tables[g], 0);
  s = Seq{};
}

int32_t KvCacheManager::seq_len(int seq) const { return seq_ref(seq).len; }

int32_t KvCacheManager::match_prefix(int seq, std::span<const int32_t> tokens, const ResumeCheck& resumable) {
  Seq& s = seq_ref(seq);
  NT_CHECK(s.len == 0 && s.reserved == 0);
  prefix_queried_ += int64_t(tokens.size());
  // Recurrent layers (hybrid models) resume only where the caller can restore their state (not
  // combined with sliding windows, whose shorter hits need other blocks).
  const bool recurrent = layout_.recurrent_floats > 0;
  if (recurrent && (!resumable || layout_.n_swa > 0)) return 0;
  const int bs = layout_.block_size;
  // The last token is never a hit: its logits are needed, so the block holding it is computed.
  const size_t n_full = tokens.empty() ? 0 : (tokens.size() - 1) / size_t(bs);
  std::vector<uint64_t> keys(n_full);
  for (size_t i = 0; i < n_full; ++i)
    keys[i] = block_hash(i == 0 ? chain_seed_ : keys[i - 1], tokens.subspan(i * size_t(bs), size_t(bs)));
  // The published block of group gr holding block i of `tokens`, or -1.
  auto cached = [&](const Group& gr, size_t i) {
    const int32_t b = gr.pool.find(keys[i]);
    return b >= 0 && gr.verify(b, i == 0 ? chain_seed_ : keys[i - 1], tokens.subspan(i * size_t(bs), size_t(bs))) ? b
                                                                                                                  : -1;
  };
  // Full groups need every block from the start; a sliding group, for a hit of m blocks, the run
  // of blocks its window reaches from position m * bs. The hit is the longest every group holds.
  size_t n_blocks = n_full;
  for (const auto& g : group_state_) {
    if (g->spec.kind != LayerKind::Full) continue;
    size_t i = 0;
    while (i < n_blocks && cached(*g, i) >= 0) ++i;
    n_blocks = i;
  }
  for (const auto& g : group_state_) {
    if (g->spec.kind != LayerKind::Sliding) continue;
    std::vector<size_t> run(n_blocks + 1, 0);  // run[m]: cached blocks ending at block m - 1
    for (size_t i = 0; i < n_blocks; ++i) run[i + 1] = cached(*g, i) >= 0 ? run[i] + 1 : 0;
    size_t m = n_blocks;
    while (m > 0 && run[m] < m - g->first_seen_block(int64_t(m) * bs)) --m;
    n_blocks = m;
  }
  if (recurrent)  // full groups only: every shorter run of their blocks is cached too
    while (n_blocks > 0 && !resumable(static_cast<int32_t>(n_blocks) * bs, keys[n_blocks - 1])) --n_blocks;
  for (size_t g = 0; g < group_state_.size(); ++g) {
    Group& gr = *group_state_[g];
    Group::Table& t = s.tables[g];
    const size_t lo = gr.first_seen_block(int64_t(n_blocks) * bs);
    for (size_t i = 0; i < n_blocks; ++i) {
      int32_t b = -1;
      if (i >= lo) {
        b = cached(gr, i);
        NT_CHECK(b >= 0 && gr.pool.acquire(keys[i]) == b);
      }
      t.blocks.push_back(b);
      t.keys.push_back(keys[i]);
    }
    t.released = lo;
  }
  s.len = s.reserved = static_cast<int32_t>(n_blocks) * bs;
  if (token_granular() && !tokens.empty()) {
    const size_t start = n_blocks * size_t(bs);
    const size_t limit = std::min(tokens.size() - 1 - start, size_t(bs));  // never the last token
    s.len = s.reserved = static_cast<int32_t>(start) +
                         copy_partial(s, n_blocks == 0 ? chain_seed_ : keys[n_blocks - 1], tokens.subspan(start, limit));
  }
  prefix_hit_ += s.len;
  return s.len;
}

bool KvCacheManager::token_granular() const {
  return granular_ && groups_.size() == 1 && groups_[0].kind == LayerKind::Full && layout_.recurrent_floats == 0;
}

int32_t KvCacheManager::copy_partial(Seq& s, uint64_t parent, std::span<const int32_t> next) {
  Group& gr = *group_state_[0];
  const auto [src, j] = gr.longest_child(parent, next);
  if (j == 0) return 0;
  // src is pinned while a block is taken for the copy, so taking one cannot evict it.
  NT_CHECK(gr.pool.acquire(gr.pool.hash_of(src)) == src);
  const int32_t nb = gr.allocate();
  if (nb >= 0) gr.copy_rows(nb, src, j);
  gr.pool.unref(src);
  if (nb < 0) return 0;
  s.tables[0].blocks.push_back(nb);
  return j;
}

void KvCacheManager::keep_tail(Seq& s) {
  Group& gr = *group_state_[0];
  Group::Table& t = s.tables[0];
  const int bs = layout_.block_size;
  const size_t i = size_t(s.len / bs);
  const int32_t off = s.len % bs;
  if (off == 0 || i >= t.blocks.size()) return;
  const int32_t b = t.blocks[i];
  if (gr.pool.refcount(b) != 1 || gr.pool.hashed(b)) return;
  const uint64_t parent = i == 0 ? chain_seed_ : t.keys[i - 1];
  const std::span<const int32_t> tokens(gr.block_tokens.data() + size_t(b) * size_t(bs), size_t(off));
  gr.publish(b, Group::tail_key(parent, tokens), parent, tokens);
}

uint64_t KvCacheManager::prefix_key(int seq, int32_t end) const {
  const Seq& s = seq_ref(seq);
  NT_CHECK(end > 0 && end % layout_.block_size == 0 && end <= s.len);
  return s.tables[0].keys[size_t(end / layout_.block_size) - 1];
}

int32_t KvCacheManager::blocks_needed(int seq, int32_t n) const {
  const Seq& s = seq_ref(seq);
  int32_t total = 0;
  for (size_t g = 0; g < group_state_.size(); ++g) total += group_state_[g]->blocks_needed(s.tables[g], s.len, n);
  return total;
}

int32_t KvCacheManager::available_blocks() const {
  int32_t total = 0;
  for (const auto& g : group_state_) total += g->pool.n_available();
  return total;
}

Status KvCacheManager::reserve(int seq, int32_t n) {
  NT_CHECK(n >= 0);
  Seq& s = seq_ref(seq);
  for (size_t g = 0; g < group_state_.size(); ++g) {
    const Group& gr = *group_state_[g];
    const int32_t need = gr.blocks_needed(s.tables[g], s.len, n);
    if (need > gr.pool.n_available())
      return make_error(ErrorKind::Capacity,
                        "the KV cache pool is full: %d more positions of the sequence need %d blocks of %d "
                        "tokens and %d are free or evictable now",
                        n, need, layout_.block_size, gr.pool.n_available());
  }
  if (n == 0) return {};
  for (size_t g = 0; g < group_state_.size(); ++g) {
    Group& gr = *group_state_[g];
    Group::Table& t = s.tables[g];
    NT_CHECK(gr.make_tail_private(t, s.len));  // counted in blocks_needed above
    const size_t want = size_t((int64_t(s.len) + n + layout_.block_size - 1) / layout_.block_size);
    while (t.blocks.size() < want) {
      const int32_t b = gr.allocate();
      NT_CHECK(b >= 0);
      t.blocks.push_back(b);
    }
  }
  s.reserved = std::max(s.reserved, s.len + n);
  return {};
}

void KvCacheManager::commit(int seq, std::span<const int32_t> tokens, int32_t n) {
  Seq& s = seq_ref(seq);
  NT_CHECK(n >= 0 && int64_t(s.len) + n <= s.reserved && tokens.size() >= size_t(s.len) + size_t(n));
  const int bs = layout_.block_size;
  const size_t first = size_t(s.len / bs), end = size_t((s.len + n) / bs);  // blocks becoming full
  if (token_granular()) {  // every written position's token id, kept with its block (keep_tail())
    Group& gr = *group_state_[0];
    for (int32_t pos = s.len; pos < s.len + n; ++pos)
      gr.block_tokens[size_t(s.tables[0].blocks[size_t(pos / bs)]) * size_t(bs) + size_t(pos % bs)] = tokens[size_t(pos)];
  }
  for (size_t g = 0; g < group_state_.size(); ++g) {
    Group& gr = *group_state_[g];
    Group::Table& t = s.tables[g];
    NT_CHECK(t.keys.size() == first);
    for (size_t i = first; i < end; ++i) {
      const int32_t b = t.blocks[i];
      NT_CHECK(gr.pool.refcount(b) == 1 && !gr.pool.hashed(b));  // it was just written
      const uint64_t parent = i == 0 ? chain_seed_ : t.keys[i - 1];
      const auto block_tokens = tokens.subspan(i * size_t(bs), size_t(bs));
      const uint64_t key = block_hash(parent, block_tokens);
      t.keys.push_back(key);
      gr.publish(b, key, parent, block_tokens);
    }
  }
  s.len += n;
  for (size_t g = 0; g < group_state_.size(); ++g) group_state_[g]->release_behind(s.tables[g], s.len);
}

void KvCacheManager::truncate(int seq, int32_t n) {
  Seq& s = seq_ref(seq);
  const int bs = layout_.block_size;
  s.len = std::clamp(n, 0, s.len);
  for (size_t g = 0; g < group_state_.size(); ++g)
    if (!group_state_[g]->restore_window(s.tables[g], s.len, chain_seed_)) s.len = 0;
  for (size_t g = 0; g < group_state_.size(); ++g) {
    Group& gr = *group_state_[g];
    Group::Table& t = s.tables[g];
    gr.release_from(t, size_t((s.len + bs - 1) / bs));
    if (t.keys.size() > size_t(s.len / bs)) t.keys.resize(size_t(s.len / bs));
    // When no block is free for the copy now, reserve() makes it before the next write.
    gr.make_tail_private(t, s.len);
  }
  s.reserved = s.len;
}

KvCacheStats KvCacheManager::stats() const {
  KvCacheStats st;
  st.block_size = layout_.block_size;
  for (const auto& g : group_state_) {
    st.blocks_total += g->pool.n_blocks();
    st.blocks_used += g->pool.n_used();
    st.blocks_cached += g->pool.n_cached();
    st.blocks_free += g->pool.n_free();
  }
  st.prefix_queried_tokens = prefix_queried_;
  st.prefix_hit_tokens = prefix_hit_;
  return st;
}

KvCacheStats KvCacheManager::group_stats(size_t group) const {
  NT_CHECK(group < group_state_.size());
  const BlockPool& p = group_state_[group]->pool;
  KvCacheStats st;
  st.block_size = layout_.block_size;
  st.blocks_total = p.n_blocks();
  st.blocks_used = p.n_used();
  st.blocks_cached = p.n_cached();
  st.blocks_free = p.n_free();
  st.prefix_queried_tokens = prefix_queried_;
  st.prefix_hit_tokens = prefix_hit_;
  return st;
}

size_t KvCacheManager::group_bytes(size_t group) const {
  NT_CHECK(group < group_state_.size());
  return group_state_[group]->storage_bytes;
}

uint8_t* KvCacheManager::row(int layer, int seq, int32_t pos, bool v) {
  Seq& s = seq_ref(seq);
  NT_CHECK(layer >= 0 && layer < layout_.n_layer && pos >= 0 && pos < s.reserved);
  const int g = group_of_layer_[size_t(layer)];
  Group& gr = *group_state_[size_t(g)];
  const int bs = layout_.block_size;
  const int32_t b = s.tables[size_t(g)].blocks[size_t(pos / bs)];
  NT_CHECK(b >= 0);  // not released behind a sliding window
  const int slot = gr.slot_of_layer[size_t(layer)];
  return v ? gr.v_base(b, slot) + size_t(pos % bs) * gr.v_row_bytes : gr.k_base(b, slot) + size_t(pos % bs) * gr.k_row_bytes;
}

uint8_t* KvCacheManager::k_row(int layer, int seq, int32_t pos) { return row(layer, seq, pos, false); }
uint8_t* KvCacheManager::v_row(int layer, int seq, int32_t pos) { return row(layer, seq, pos, true); }

void KvCacheManager::spans(int layer, int seq, int32_t n_kv, std::vector<KvSpan>& out) const {
  const Seq& s = seq_ref(seq);
  out.clear();
  NT_CHECK(layer >= 0 && layer < layout_.n_layer && n_kv >= 0 && n_kv <= s.reserved);
  const int g = group_of_layer_[size_t(layer)];
  Group& gr = *group_state_[size_t(g)];
  const int slot = gr.slot_of_layer[size_t(layer)];
  const int bs = layout_.block_size;
  const auto& blocks = s.tables[size_t(g)].blocks;
  for (int32_t start = 0; start < n_kv; start += bs) {
    const int32_t b = blocks[size_t(start / bs)];
    KvSpan sp;  // null rows for a block released behind a sliding window
    sp.k = b < 0 ? nullptr : gr.k_base(b, slot);
    sp.v = b < 0 ? nullptr : gr.v_base(b, slot);
    sp.n = std::min(bs, n_kv - start);
    out.push_back(sp);
  }
}

}  // namespace nt

#include "kv/kv_cache.h"

#include <algorithm>
#include <new>

#include "core/check.h"
#include "core/strings.h"

namespace nt {

Result<KvCache> KvCache::create(const KvLayout& layout, int64_t n_ctx) {
  NT_CHECK(layout.n_layer > 0 && layout.n_head_kv > 0 && layout.head_dim > 0 && layout.block_size > 0);
  if (n_ctx <= 0) return make_error("context size must be positive (got %lld)", static_cast<long long>(n_ctx));
  const auto& ki = dtype_info(layout.k_type);
  const auto& vi = dtype_info(layout.v_type);
  if (layout.row_elems() % ki.block_size != 0 || layout.row_elems() % vi.block_size != 0)
    return make_error("cache type %s/%s needs n_head_kv * head_dim (%lld) to be a multiple of its block size",
                      ki.name, vi.name, static_cast<long long>(layout.row_elems()));
  if (ki.block_size > 1 && layout.head_dim % static_cast<int>(ki.block_size) != 0)
    return make_error("cache type %s needs head_dim (%d) to be a multiple of %u", ki.name, layout.head_dim, ki.block_size);
  if (vi.block_size > 1 && layout.head_dim % static_cast<int>(vi.block_size) != 0)
    return make_error("cache type %s needs head_dim (%d) to be a multiple of %u", vi.name, layout.head_dim, vi.block_size);
  KvCache c;
  c.layout_ = layout;
  c.n_blocks_ = static_cast<int32_t>((n_ctx + layout.block_size - 1) / layout.block_size);
  c.storage_bytes_ = size_t(c.n_blocks_) * layout.bytes_per_block();
  // Left uninitialised on purpose: the OS commits pages only as blocks are first written, so
  // resident memory follows the tokens actually cached. Only written positions are ever read.
  c.storage_.reset(new (std::nothrow) uint8_t[c.storage_bytes_]);
  if (!c.storage_)
    return make_error("cannot allocate %s for a KV cache of %lld tokens; lower -c",
                      format_bytes(c.storage_bytes_).c_str(), static_cast<long long>(n_ctx));
  c.free_.reserve(static_cast<size_t>(c.n_blocks_));
  for (int32_t b = c.n_blocks_ - 1; b >= 0; --b) c.free_.push_back(b);
  c.refcount_.assign(static_cast<size_t>(c.n_blocks_), 0);
  return c;
}

int KvCache::new_sequence() {
  for (size_t i = 0; i < seqs_.size(); ++i)
    if (!seqs_[i].live) {
      seqs_[i] = Seq{};
      seqs_[i].live = true;
      return static_cast<int>(i);
    }
  seqs_.push_back(Seq{});
  seqs_.back().live = true;
  return static_cast<int>(seqs_.size() - 1);
}

KvCache::Seq& KvCache::seq_ref(int seq) {
  NT_CHECK(seq >= 0 && static_cast<size_t>(seq) < seqs_.size() && seqs_[static_cast<size_t>(seq)].live);
  return seqs_[static_cast<size_t>(seq)];
}
const KvCache::Seq& KvCache::seq_ref(int seq) const {
  NT_CHECK(seq >= 0 && static_cast<size_t>(seq) < seqs_.size() && seqs_[static_cast<size_t>(seq)].live);
  return seqs_[static_cast<size_t>(seq)];
}

void KvCache::free_sequence(int seq) {
  truncate(seq, 0);
  seq_ref(seq).live = false;
}

int32_t KvCache::seq_len(int seq) const { return seq_ref(seq).len; }

Status KvCache::reserve(int seq, int32_t n) {
  Seq& s = seq_ref(seq);
  const int64_t need_tokens = int64_t(s.len) + n;
  const int64_t need_blocks = (need_tokens + layout_.block_size - 1) / layout_.block_size;
  const int64_t extra = need_blocks - static_cast<int64_t>(s.blocks.size());
  if (extra > static_cast<int64_t>(free_.size())) {
    const int64_t avail = (static_cast<int64_t>(s.blocks.size()) + static_cast<int64_t>(free_.size())) * layout_.block_size;
    return make_error("KV cache full: the sequence needs %lld positions but only %lld fit (%lld over); "
                      "raise -c or shorten the prompt/-n",
                      static_cast<long long>(need_tokens), static_cast<long long>(avail),
                      static_cast<long long>(need_tokens - avail));
  }
  for (int64_t i = 0; i < extra; ++i) {
    int32_t b = free_.back();
    free_.pop_back();
    refcount_[static_cast<size_t>(b)] = 1;
    s.blocks.push_back(b);
  }
  s.reserved = static_cast<int32_t>(need_tokens);
  return {};
}

void KvCache::set_len(int seq, int32_t new_len) {
  Seq& s = seq_ref(seq);
  // Invariant: only reserved positions can become part of the sequence.
  NT_CHECK(new_len >= 0 && int64_t(new_len) <= int64_t(s.blocks.size()) * layout_.block_size);
  s.len = new_len;
}

void KvCache::truncate(int seq, int32_t n) {
  Seq& s = seq_ref(seq);
  // n >= len still releases blocks reserved beyond len (e.g. after a failed step).
  s.len = std::max(std::min(n, s.len), 0);
  const size_t keep = static_cast<size_t>((s.len + layout_.block_size - 1) / layout_.block_size);
  while (s.blocks.size() > keep) {
    int32_t b = s.blocks.back();
    s.blocks.pop_back();
    if (--refcount_[static_cast<size_t>(b)] == 0) free_.push_back(b);
  }
  s.reserved = s.len;
}

uint8_t* KvCache::k_row(int layer, int seq, int32_t pos) {
  Seq& s = seq_ref(seq);
  const int32_t bi = pos / layout_.block_size, off = pos % layout_.block_size;
  NT_CHECK(pos >= 0 && static_cast<size_t>(bi) < s.blocks.size());
  return block_ptr(s.blocks[static_cast<size_t>(bi)]) + layer_offset(layer) + size_t(off) * layout_.k_row_bytes();
}

uint8_t* KvCache::v_row(int layer, int seq, int32_t pos) {
  Seq& s = seq_ref(seq);
  const int32_t bi = pos / layout_.block_size, off = pos % layout_.block_size;
  NT_CHECK(pos >= 0 && static_cast<size_t>(bi) < s.blocks.size());
  return block_ptr(s.blocks[static_cast<size_t>(bi)]) + layer_offset(layer) +
         size_t(layout_.block_size) * layout_.k_row_bytes() + size_t(off) * layout_.v_row_bytes();
}

void KvCache::spans(int layer, int seq, int32_t n_kv, std::vector<KvSpan>& out) const {
  const Seq& s = seq_ref(seq);
  out.clear();
  NT_CHECK(n_kv >= 0 && int64_t(n_kv) <= int64_t(s.blocks.size()) * layout_.block_size);
  for (int32_t start = 0; start < n_kv; start += layout_.block_size) {
    const uint8_t* base = block_ptr(s.blocks[static_cast<size_t>(start / layout_.block_size)]) + layer_offset(layer);
    KvSpan sp;
    sp.k = base;
    sp.v = base + size_t(layout_.block_size) * layout_.k_row_bytes();
    sp.n = std::min(layout_.block_size, n_kv - start);
    out.push_back(sp);
  }
}

}  // namespace nt

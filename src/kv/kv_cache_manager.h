// kv/kv_cache_manager.h — the paged KV cache shared by all requests: per-sequence block tables over
// a block pool, the prefix cache (full blocks keyed by hash chain, found by later requests whoever
// computed them), and row access for the forward pass (KvStore).
// Owns: cache memory, block tables, sequence lengths, prefix-cache statistics.
// Must not know: requests, scheduling policy, models or attention math.
//
// Layers are grouped by kind, each group with its own pool and block tables (as vLLM's hybrid KV
// cache manager does): full-attention layers keep every position; sliding-window layers
// (KvLayout::swa_layers) keep only the blocks their window still reaches: a block wholly before
// (seq_len + 1 - window) is released as the sequence advances (to the prefix cache when published)
// and its table entry becomes a placeholder (-1), so block indices still line up with positions.
// A sliding group's pool is sized for the sequences that can run at once (see create()).
//
// Memory layout of a group, layer-major: for each layer of the group, the K rows of every block
// [n_blocks, block_size, n_head_kv * head_dim], then the V rows of every block, in the layout's
// types. One layer's rows of a sequence's blocks lie close together whatever the block size.
//
// Token-granular reuse (one full-attention group, no recurrent state): past the last whole matching
// block, a prompt copies the matching rows of the published block that shares the most of its
// next tokens into a fresh block of its own; a finished sequence's partial last block is published
// (under a key no full block has) for that purpose only. Partial rows are copied, never shared.
//
// Invariants:
//  - full blocks and finished sequences' partial last blocks are published; only full ones are
//    shared; a block another sequence references is never written:
//    writes go at positions >= seq_len, in the sequence's own last block or in fresh ones
//    (truncate() copies or unpublishes a shared or published block before it can be written)
//  - the last token of a prompt is never a prefix-cache hit (its logits are needed)
//  - a sliding group never releases a block a query at position >= seq_len can see; a prefix hit
//    of length m holds, in a sliding group, the blocks from (m + 1 - window) on
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "core/result.h"
#include "kv/block_pool.h"
#include "model/kv_store.h"

namespace nt {

enum class LayerKind {
  Full,     // attends to every cached position of the sequence
  Sliding,  // attends to its last `window` positions (its own included)
};

struct LayerGroup {
  LayerKind kind = LayerKind::Full;
  int32_t window = 0;       // Sliding: positions a query sees
  std::vector<int> layers;  // model layer indices, ascending
};

struct KvCacheStats {
  int block_size = 0;
  int32_t blocks_total = 0;
  int32_t blocks_used = 0;    // referenced by a sequence
  int32_t blocks_cached = 0;  // unreferenced, still findable by the prefix cache (evictable)
  int32_t blocks_free = 0;
  int64_t prefix_queried_tokens = 0;  // prompt tokens looked up in the prefix cache
  int64_t prefix_hit_tokens = 0;      // of those, found cached
};

class KvCacheManager final : public KvStore {
 public:
  // pool_tokens: the capacity shared by all sequences, rounded up to whole blocks; chain_seed: see
  // prefix_chain_seed(). A sliding group's pool holds, when max_seqs > 0, what max_seqs sequences
  // can hold at once (each its window's blocks, one more and a copied tail) plus max_step_tokens
  // of chunks in flight, and never more than the full pool. Errors: the types cannot hold the
  // layout's rows, or no memory.
  static Result<std::unique_ptr<KvCacheManager>> create(const KvLayout& layout, int64_t pool_tokens,
                                                        uint64_t chain_seed, int max_seqs = 0,
                                                        int32_t max_step_tokens = 0);
  ~KvCacheManager() override;

  const KvLayout& layout() const override { return layout_; }
  int block_size() const { return layout_.block_size; }
  int64_t capacity_tokens() const;  // the full-attention pool: what one sequence may hold at most
  size_t total_bytes() const;
  // K and V bytes one sequence of n_tokens positions holds: every position in full groups, the
  // last window in sliding ones (whole blocks aside).
  size_t bytes_for(int64_t n_tokens) const;
  const std::vector<LayerGroup>& groups() const { return groups_; }

  // Token-granular reuse (see above) is on by default where the layout allows it; off, prompts
  // reuse whole blocks only (the block-level tests, and A/B measurements of the copy).
  void set_token_granular(bool on) { granular_ = on; }

  // Sequences are small integer ids handed out here; a new one is empty.
  int new_seq();
  // Releases the sequence's blocks: published (full) ones stay in the prefix cache.
  void free_seq(int seq);
  int32_t seq_len(int seq) const;

  // For an empty sequence: references the longest run of published blocks that starts `tokens`,
  // never covering the last token, and sets seq_len to the tokens they hold (a multiple of
  // block_size, plus the rows copied from a partial match when reuse is token-granular). A sliding group needs only the blocks its window reaches from there (the hit is
  // the longest length every group holds). Counts the query and the hit in stats(). Returns the
  // new seq_len. When the layout has recurrent state, a length also needs `resumable(len, key)`
  // (key: the chain key of the block ending at len) to say the state at len can be restored; the
  // longest such length is taken (no predicate: 0, the prefix is recomputed).
  using ResumeCheck = std::function<bool(int32_t len, uint64_t key)>;
  int32_t match_prefix(int seq, std::span<const int32_t> tokens, const ResumeCheck& resumable = {});
  // The chain key of seq's full block ending at position end (a multiple of block_size, <= seq_len).
  uint64_t prefix_key(int seq, int32_t end) const;
  // Blocks reserve(seq, n) would have to take from the pool (summed over groups), including the
  // copy of a shared block the next write would land in (see truncate()).
  int32_t blocks_needed(int seq, int32_t n) const;
  // Blocks the pool can hand out now: free ones and unreferenced cached ones (summed over groups).
  int32_t available_blocks() const;
  // Makes room for positions [seq_len, seq_len + n). ErrorKind::Capacity, and nothing changed,
  // when the pool cannot supply the blocks now.
  Status reserve(int seq, int32_t n);
  // The forward pass wrote positions [seq_len, seq_len + n) of seq, whose tokens from position 0
  // are `tokens` (size >= seq_len + n): advances seq_len and publishes the blocks that became full.
  void commit(int seq, std::span<const int32_t> tokens, int32_t n);
  // Forgets positions >= n (and any reservation beyond them); the block then holding the last
  // kept positions is made private to seq (copied if shared, unpublished if only published). When
  // no block is available for the copy now, the next reserve() makes it (and counts it). A sliding
  // group takes back the released blocks the window at n reaches from the prefix cache; when one
  // was evicted meanwhile, the sequence is emptied instead (seq_len() says which).
  void truncate(int seq, int32_t n);

  // Not synchronised: the thread that runs steps reads it (and may publish a copy for others).
  // Block counts are summed over the groups; group_stats() gives one group's (its pool).
  KvCacheStats stats() const;
  KvCacheStats group_stats(size_t group) const;
  size_t group_bytes(size_t group) const;  // the group's storage

  // KvStore: rows of positions below seq_len + the reserved room.
  uint8_t* k_row(int layer, int seq, int32_t pos) override;
  uint8_t* v_row(int layer, int seq, int32_t pos) override;
  void spans(int layer, int seq, int32_t n_kv, std::vector<KvSpan>& out) const override;

 private:
  struct Group;
  struct Seq;
  KvCacheManager();
  uint8_t* row(int layer, int seq, int32_t pos, bool v);  // k_row / v_row
  // Whether prefixes are reused to the token (one full-attention group, no recurrent state).
  bool token_granular() const;
  // Copies into a fresh block of s the rows of the published block after `parent` that matches
  // the most of `next`; returns the rows copied (0: none matched, or no block was available).
  int32_t copy_partial(Seq& s, uint64_t parent, std::span<const int32_t> next);
  // Publishes s's partial last block, so a later prompt can copy its rows (s is ending).
  void keep_tail(Seq& s);
  Seq& seq_ref(int seq);
  const Seq& seq_ref(int seq) const;

  KvLayout layout_;
  std::vector<LayerGroup> groups_;
  std::vector<std::unique_ptr<Group>> group_state_;
  std::vector<int> group_of_layer_;  // [n_layer] -> group index
  std::vector<Seq> seqs_;
  uint64_t chain_seed_ = 0;
  int64_t capacity_tokens_ = 0;
  int64_t prefix_queried_ = 0, prefix_hit_ = 0;
  bool granular_ = true;
};

}  // namespace nt

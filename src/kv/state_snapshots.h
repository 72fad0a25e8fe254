// kv/state_snapshots.h — copies of recurrent states (hybrid models such as qwen35) taken at full
// KV block boundaries, so a later request whose prompt starts with the same tokens resumes there:
// the KV blocks up to the boundary come from the prefix cache and the state from its snapshot.
// A snapshot is keyed by the prefix-cache chain key of the block that ends at its boundary and
// keeps its token ids, so a hit is checked token by token (a key collision is a miss). At most
// max_snapshots are kept, spare ones (SnapshotRank) then the least recently saved or used evicted
// first. A snapshot whose KV blocks were evicted is never used (match_prefix_with_state asks the
// KV cache first) and ages out.
// Must not know: models, requests, scheduling.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "kv/kv_cache_manager.h"
#include "kv/recurrent_state.h"

namespace nt {

// Spare: a snapshot its prompt keeps besides another one below it that serves all it serves but a
// few tokens (a prompt's end off the chunked-prefill windows, docs/qwen35.md); Full: any other.
enum class SnapshotRank { Full, Spare };

class StateSnapshots {
 public:
  // floats_per_state: KvLayout::recurrent_floats; max_snapshots >= 1.
  StateSnapshots(int64_t floats_per_state, int max_snapshots);

  // Copies `state`, which stands after `tokens` (a whole number of blocks), under `key` (the chain
  // key of the block ending at tokens.size()). Beyond the limit it evicts the least recently used
  // spare one, else the least recently used, but a spare one is dropped rather than evict a full
  // one. chunked_until: kept with it for the caller (the position from which the request that
  // computed it decoded, see Batch::chunked_until); a save of the same tokens keeps the first.
  void save(uint64_t key, std::span<const int32_t> tokens, const float* state, int32_t chunked_until = INT32_MAX,
            SnapshotRank rank = SnapshotRank::Full);
  // The state saved under `key` after exactly `tokens`, marked most recently used; null when none.
  const float* find(uint64_t key, std::span<const int32_t> tokens, int32_t* chunked_until = nullptr);

  int max_snapshots() const { return max_; }
  int size() const { return static_cast<int>(lru_.size()); }
  size_t bytes_per_snapshot() const { return size_t(floats_) * sizeof(float); }
  size_t bytes() const { return size_t(size()) * bytes_per_snapshot(); }
  int64_t saved() const { return saved_; }  // snapshots taken since creation
  int64_t hits() const { return hits_; }    // sequences resumed from one (count_hit)
  void count_hit() { ++hits_; }

 private:
  struct Entry {
    uint64_t key = 0;
    std::vector<int32_t> tokens;
    std::unique_ptr<float[]> data;
    int32_t chunked_until = INT32_MAX;
    SnapshotRank rank = SnapshotRank::Full;
  };
  int64_t floats_;
  int max_;
  std::list<Entry> lru_;  // least recently used first
  std::unordered_map<uint64_t, std::list<Entry>::iterator> by_key_;
  int64_t saved_ = 0, hits_ = 0;
};

// For an empty sequence of a layout with recurrent state: takes the longest prefix of `tokens` whose
// KV blocks are in the prefix cache and whose end has a snapshot (never covering the last token),
// copies that snapshot into the sequence's state in `pool` (position = the prefix length) and
// returns the length (0: nothing reused, the state untouched). `usable` (when given) may refuse a
// snapshot by its length and the chunked_until it was saved with; a shorter one is tried then.
using SnapshotFilter = std::function<bool(int32_t len, int32_t chunked_until)>;
int32_t match_prefix_with_state(KvCacheManager& kv, StateSnapshots& snaps, RecurrentStatePool& pool, int seq,
                                std::span<const int32_t> tokens, const SnapshotFilter& usable = {});

}  // namespace nt

// kv/state_snapshots.cpp — recurrent-state snapshots at block boundaries (see state_snapshots.h).
#include "kv/state_snapshots.h"

#include <algorithm>
#include <iterator>

#include "core/check.h"

namespace nt {

StateSnapshots::StateSnapshots(int64_t floats_per_state, int max_snapshots)
    : floats_(floats_per_state), max_(max_snapshots) {
  NT_CHECK(floats_per_state > 0 && max_snapshots >= 1);
}

void StateSnapshots::save(uint64_t key, std::span<const int32_t> tokens, const float* state, int32_t chunked_until,
                          SnapshotRank rank) {
  auto it = by_key_.find(key);
  if (it != by_key_.end()) {
    // The same prefix gives the same state; a different one under the same key (a collision) replaces it.
    Entry& e = *it->second;
    if (!std::equal(tokens.begin(), tokens.end(), e.tokens.begin(), e.tokens.end())) {
      e.tokens.assign(tokens.begin(), tokens.end());
      std::copy_n(state, floats_, e.data.get());
      e.chunked_until = chunked_until;
      e.rank = rank;
    }
    lru_.splice(lru_.end(), lru_, it->second);
    ++saved_;
    return;
  }
  Entry e;
  if (static_cast<int>(lru_.size()) >= max_) {
    // Reuse the buffer of the least recently used spare one, else (for a full one) of the least
    // recently used; a spare one never pushes a full one out.
    auto victim = std::find_if(lru_.begin(), lru_.end(), [](const Entry& x) { return x.rank == SnapshotRank::Spare; });
    if (victim == lru_.end()) {
      if (rank == SnapshotRank::Spare) return;
      victim = lru_.begin();
    }
    e = std::move(*victim);
    by_key_.erase(e.key);
    lru_.erase(victim);
  } else {
    e.data = std::make_unique<float[]>(size_t(floats_));
  }
  e.key = key;
  e.chunked_until = chunked_until;
  e.rank = rank;
  e.tokens.assign(tokens.begin(), tokens.end());
  std::copy_n(state, floats_, e.data.get());
  lru_.push_back(std::move(e));
  by_key_[key] = std::prev(lru_.end());
  ++saved_;
}

const float* StateSnapshots::find(uint64_t key, std::span<const int32_t> tokens, int32_t* chunked_until) {
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return nullptr;
  const Entry& e = *it->second;
  if (!std::equal(tokens.begin(), tokens.end(), e.tokens.begin(), e.tokens.end())) return nullptr;
  if (chunked_until) *chunked_until = e.chunked_until;
  lru_.splice(lru_.end(), lru_, it->second);
  return it->second->data.get();
}

int32_t match_prefix_with_state(KvCacheManager& kv, StateSnapshots& snaps, RecurrentStatePool& pool, int seq,
                                std::span<const int32_t> tokens, const SnapshotFilter& usable) {
  NT_CHECK(pool.floats_per_seq() == kv.layout().recurrent_floats);
  const float* found = nullptr;
  const int32_t n = kv.match_prefix(seq, tokens, [&](int32_t len, uint64_t key) {
    int32_t until = INT32_MAX;
    found = snaps.find(key, tokens.first(size_t(len)), &until);
    if (found && usable && !usable(len, until)) found = nullptr;
    return found != nullptr;
  });
  if (n == 0) return 0;
  NT_CHECK(found != nullptr);
  std::copy_n(found, pool.floats_per_seq(), pool.state(seq));
  *pool.pos(seq) = n;
  snaps.count_hit();
  return n;
}

}  // namespace nt

// kv/block_pool.h — the blocks of one layer group's KV storage as a pool: reference counts, the
// free list, and the prefix cache's index of full blocks by content hash, with least-recently-used
// eviction of cached blocks that no request references.
// Owns: block ids and their states. Must not know: what a block holds (kv_cache_manager.h does),
// tokens, requests.
//
// A block is in exactly one state:
//   free    — refcount 0, no hash; allocate() takes these first
//   cached  — refcount 0, hashed: its contents are still valid and findable by hash; on the LRU
//             list, evicted (hash forgotten, reused) by allocate() when no free block is left
//   used    — refcount > 0 (hashed or not); never evicted
// Invariant: n_free() + n_cached() + n_used() == n_blocks().
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

namespace nt {

class BlockPool {
 public:
  explicit BlockPool(int32_t n_blocks);

  int32_t n_blocks() const { return static_cast<int32_t>(blocks_.size()); }
  int32_t n_free() const { return static_cast<int32_t>(free_.size()); }
  int32_t n_cached() const { return static_cast<int32_t>(lru_.size()); }
  int32_t n_used() const { return n_blocks() - n_free() - n_cached(); }
  // Blocks allocate() can hand out now (free first, then evictable cached ones).
  int32_t n_available() const { return n_free() + n_cached(); }

  // A block for new contents, refcount 1 and no hash: a free block, else the least recently
  // released cached block (its hash is forgotten). -1 when every block is in use.
  int32_t allocate();
  // One more owner of a used block (a request sharing it).
  void ref(int32_t b);
  // One owner fewer; at 0 a hashed block becomes cached (most recently used end of the LRU list),
  // an unhashed one free.
  void unref(int32_t b);

  // Publishes a full, used block under `hash` so later requests can find it. When another block
  // already holds that hash, nothing changes (the first writer stays the cached copy) and false
  // is returned. A block is published at most once.
  bool publish(int32_t b, uint64_t hash);
  // Forgets b's hash (its contents are about to change); b must be used by exactly one owner.
  void unpublish(int32_t b);
  // The block published under `hash` with one more reference (taken off the LRU list if it was
  // cached), or -1 when no block holds that hash.
  int32_t acquire(uint64_t hash);
  // Whether a block is published under `hash` (no reference taken).
  bool contains(uint64_t hash) const { return by_hash_.count(hash) != 0; }
  // The block published under `hash`, or -1; no reference taken (the manager verifies the block's
  // contents before acquire()).
  int32_t find(uint64_t hash) const;

  int32_t refcount(int32_t b) const { return blocks_[static_cast<size_t>(b)].refs; }
  bool hashed(int32_t b) const { return blocks_[static_cast<size_t>(b)].has_hash; }
  uint64_t hash_of(int32_t b) const { return blocks_[static_cast<size_t>(b)].hash; }

  // Checks every block against the states above (free list, LRU list and hash index agree with
  // refcounts and hashes). O(n_blocks); for tests and debugging.
  bool check_consistent() const;

 private:
  struct Block {
    int32_t refs = 0;
    bool has_hash = false;
    uint64_t hash = 0;
    std::list<int32_t>::iterator lru;  // valid while cached
  };
  std::vector<Block> blocks_;
  std::vector<int32_t> free_;                      // stack of free block ids
  std::list<int32_t> lru_;                         // cached blocks, least recently released first
  std::unordered_map<uint64_t, int32_t> by_hash_;  // published blocks (cached or used)
};

}  // namespace nt

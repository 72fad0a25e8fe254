#include "kv/block_pool.h"

#include "core/check.h"

namespace nt {

BlockPool::BlockPool(int32_t n_blocks) {
  NT_CHECK(n_blocks >= 0);
  blocks_.resize(static_cast<size_t>(n_blocks));
  free_.reserve(static_cast<size_t>(n_blocks));
  // A stack: block 0 is handed out first, so a fresh pool fills from the start of its storage.
  for (int32_t b = n_blocks - 1; b >= 0; --b) free_.push_back(b);
}

int32_t BlockPool::allocate() {
  int32_t b = -1;
  if (!free_.empty()) {
    b = free_.back();
    free_.pop_back();
  } else if (!lru_.empty()) {
    b = lru_.front();
    lru_.pop_front();
    Block& e = blocks_[static_cast<size_t>(b)];
    by_hash_.erase(e.hash);
    e.has_hash = false;
    e.hash = 0;
  } else {
    return -1;
  }
  blocks_[static_cast<size_t>(b)].refs = 1;
  return b;
}

void BlockPool::ref(int32_t b) {
  Block& e = blocks_.at(static_cast<size_t>(b));
  NT_CHECK(e.refs > 0);
  ++e.refs;
}

void BlockPool::unref(int32_t b) {
  Block& e = blocks_.at(static_cast<size_t>(b));
  NT_CHECK(e.refs > 0);
  if (--e.refs > 0) return;
  if (e.has_hash) {
    e.lru = lru_.insert(lru_.end(), b);
  } else {
    free_.push_back(b);
  }
}

bool BlockPool::publish(int32_t b, uint64_t hash) {
  Block& e = blocks_.at(static_cast<size_t>(b));
  NT_CHECK(e.refs > 0 && !e.has_hash);
  if (!by_hash_.emplace(hash, b).second) return false;
  e.has_hash = true;
  e.hash = hash;
  return true;
}

void BlockPool::unpublish(int32_t b) {
  Block& e = blocks_.at(static_cast<size_t>(b));
  NT_CHECK(e.refs == 1 && e.has_hash);
  by_hash_.erase(e.hash);
  e.has_hash = false;
  e.hash = 0;
}

int32_t BlockPool::find(uint64_t hash) const {
  auto it = by_hash_.find(hash);
  return it == by_hash_.end() ? -1 : it->second;
}

int32_t BlockPool::acquire(uint64_t hash) {
  const int32_t b = find(hash);
  if (b < 0) return -1;
  Block& e = blocks_[static_cast<size_t>(b)];
  if (e.refs == 0) lru_.erase(e.lru);
  ++e.refs;
  return b;
}

bool BlockPool::check_consistent() const {
  std::vector<int> seen(blocks_.size(), 0);  // 1 free, 2 cached
  for (int32_t b : free_) {
    if (b < 0 || b >= n_blocks() || seen[static_cast<size_t>(b)] != 0) return false;
    const Block& e = blocks_[static_cast<size_t>(b)];
    if (e.refs != 0 || e.has_hash) return false;
    seen[static_cast<size_t>(b)] = 1;
  }
  for (auto it = lru_.begin(); it != lru_.end(); ++it) {
    const int32_t b = *it;
    if (b < 0 || b >= n_blocks() || seen[static_cast<size_t>(b)] != 0) return false;
    const Block& e = blocks_[static_cast<size_t>(b)];
    if (e.refs != 0 || !e.has_hash || e.lru != it) return false;
    seen[static_cast<size_t>(b)] = 2;
  }
  size_t n_hashed = 0;
  for (size_t b = 0; b < blocks_.size(); ++b) {
    const Block& e = blocks_[b];
    if (e.refs < 0) return false;
    if (seen[b] == 0 && e.refs == 0) return false;  // unreferenced but on neither list
    if (e.has_hash) {
      ++n_hashed;
      auto it = by_hash_.find(e.hash);
      if (it == by_hash_.end() || it->second != static_cast<int32_t>(b)) return false;
    }
  }
  return n_hashed == by_hash_.size();
}

}  // namespace nt

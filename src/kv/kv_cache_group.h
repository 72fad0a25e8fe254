// kv/kv_cache_group.h — one layer group of the KV cache manager (internal to kv_cache_manager.cpp):
// its block pool, its storage, and what identifies each published block: the token ids and parent
// key of every published block, and an index from a parent key to the published blocks that follow
// it, which finds the longest partial match of a prompt's next block (token-granular reuse).
#pragma once

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <utility>

#include "kv/kv_cache_manager.h"
#include "kv/prefix_hash.h"

namespace nt {

// One layer group: its pool, its storage, and what identifies each published block.
struct KvCacheManager::Group {
  // A sequence's blocks in this group, and the chain key of each full one.
  struct Table {
    std::vector<int32_t> blocks;  // -1: a sliding group's block released behind the window
    std::vector<uint64_t> keys;   // keys[i]: chain key of block i, for the blocks that are full
    size_t released = 0;          // blocks [0, released) are -1
  };

  Group(LayerGroup spec_, const KvLayout& lay, int32_t n_blocks)
      : spec(std::move(spec_)), pool(n_blocks), bs(lay.block_size), k_row_bytes(lay.k_row_bytes()),
        v_row_bytes(lay.v_row_bytes()) {
    k_block_bytes = size_t(bs) * k_row_bytes;
    v_block_bytes = size_t(bs) * v_row_bytes;
    k_region_bytes = k_block_bytes * size_t(n_blocks);
    layer_bytes = (k_block_bytes + v_block_bytes) * size_t(n_blocks);
    storage_bytes = layer_bytes * spec.layers.size();
    slot_of_layer.assign(size_t(lay.n_layer), -1);
    for (size_t i = 0; i < spec.layers.size(); ++i) slot_of_layer[size_t(spec.layers[i])] = static_cast<int>(i);
    block_tokens.assign(size_t(n_blocks) * size_t(bs), 0);
    block_parent.assign(size_t(n_blocks), 0);
    block_fill.assign(size_t(n_blocks), 0);
    indexed.assign(size_t(n_blocks), 0);
  }

  // Layer-major storage: for each layer of the group, the K rows of every block, then the V rows
  // of every block. A sequence's blocks, mostly consecutive ids, then lie close together per layer,
  // which keeps attention's reads local however small the blocks are.
  uint8_t* k_base(int32_t b, int slot) {
    return storage.get() + size_t(slot) * layer_bytes + size_t(b) * k_block_bytes;
  }
  uint8_t* v_base(int32_t b, int slot) {
    return storage.get() + size_t(slot) * layer_bytes + k_region_bytes + size_t(b) * v_block_bytes;
  }

  // Publishes block b under key (child of `parent`): a full block (bs tokens) or a finished
  // sequence's partial last block (fewer, under tail_key()); records its tokens for verification
  // and indexes it under its parent for partial matches.
  void publish(int32_t b, uint64_t key, uint64_t parent, std::span<const int32_t> tokens) {
    if (!pool.publish(b, key)) return;  // an equal block is already cached: it stays the shared copy
    int32_t* dst = block_tokens.data() + size_t(b) * size_t(bs);
    if (tokens.data() != dst) std::copy(tokens.begin(), tokens.end(), dst);
    block_parent[size_t(b)] = parent;
    block_fill[size_t(b)] = static_cast<int32_t>(tokens.size());
    children.emplace(parent, b);
    indexed[size_t(b)] = 1;
  }
  // The key a partial block of `tokens` after `parent` is published under: never a full block's.
  static uint64_t tail_key(uint64_t parent, std::span<const int32_t> tokens) {
    return block_hash(parent ^ 0x7a11b10c5eedf00dULL, tokens) ^ uint64_t(tokens.size());
  }
  // Takes b out of the parent index: its hash is about to be forgotten (evicted or unpublished).
  void unindex(int32_t b) {
    if (!indexed[size_t(b)]) return;
    auto [lo, hi] = children.equal_range(block_parent[size_t(b)]);
    for (auto it = lo; it != hi; ++it)
      if (it->second == b) {
        children.erase(it);
        break;
      }
    indexed[size_t(b)] = 0;
  }
  // A block for new contents (see BlockPool::allocate), out of the parent index.
  int32_t allocate() {
    const int32_t b = pool.allocate();
    if (b >= 0) unindex(b);
    return b;
  }
  void unpublish(int32_t b) {
    unindex(b);
    pool.unpublish(b);
  }
  // The published block after `parent` whose first tokens match the most of `tokens`, and how
  // many it matches ({-1, 0}: none). Of equal matches any will do: each holds its tokens' rows.
  std::pair<int32_t, int32_t> longest_child(uint64_t parent, std::span<const int32_t> tokens) const {
    std::pair<int32_t, int32_t> best{-1, 0};
    auto [lo, hi] = children.equal_range(parent);
    for (auto it = lo; it != hi; ++it) {
      const int32_t b = it->second;
      const int32_t* have = block_tokens.data() + size_t(b) * size_t(bs);
      const size_t n = std::min(size_t(block_fill[size_t(b)]), tokens.size());
      const auto j = static_cast<int32_t>(std::mismatch(have, have + n, tokens.begin()).first - have);
      if (j > best.second) best = {b, j};
    }
    return best;
  }
  // Whether published block b really holds `tokens` after `parent` (its key matched): a hit is
  // checked against the stored ids so a 64-bit key collision is a miss, never another prompt's rows.
  bool verify(int32_t b, uint64_t parent, std::span<const int32_t> tokens) const {
    return block_parent[size_t(b)] == parent && block_fill[size_t(b)] == bs &&
           std::equal(tokens.begin(), tokens.end(), block_tokens.begin() + std::ptrdiff_t(size_t(b) * size_t(bs)));
  }

  // Drops the table's blocks from index `keep` on, last first (so the LRU list evicts a chain's
  // tail before its head, which more prompts share).
  void release_from(Table& t, size_t keep) {
    while (t.blocks.size() > keep) {
      if (t.blocks.back() >= 0) pool.unref(t.blocks.back());
      t.blocks.pop_back();
    }
    if (t.keys.size() > keep) t.keys.resize(keep);
    t.released = std::min(t.released, keep);
  }

  // The first block a query at position len (or later) can see: blocks before it are out of a
  // sliding group's window (every block is seen in a full group).
  size_t first_seen_block(int64_t len) const {
    if (spec.kind != LayerKind::Sliding) return 0;
    return size_t(std::max<int64_t>(0, len + 1 - spec.window) / bs);
  }
  // Releases the blocks no query at position >= len can see (a sliding group's, behind its window).
  void release_behind(Table& t, int32_t len) {
    const size_t end = std::min(first_seen_block(len), t.blocks.size());
    for (; t.released < end; ++t.released) {
      int32_t& b = t.blocks[t.released];
      if (b >= 0) pool.unref(b);
      b = -1;
    }
  }
  // Takes back released blocks [first_seen_block(len), ...) that hold positions below len from the
  // prefix cache, by their keys; false when one is no longer there (those taken back stay).
  bool restore_window(Table& t, int32_t len, uint64_t seed) {
    const size_t lo = first_seen_block(len), hi = std::min(t.released, size_t((int64_t(len) + bs - 1) / bs));
    for (size_t i = hi; i-- > lo;) {  // last first, so t.released stays a prefix
      const uint64_t parent = i == 0 ? seed : t.keys[i - 1];
      const int32_t b = pool.find(t.keys[i]);
      if (b < 0 || block_parent[size_t(b)] != parent) return false;
      pool.acquire(t.keys[i]);
      t.blocks[i] = b;
      t.released = i;
    }
    return true;
  }

  // Copies the first n rows of block src (every layer, K and V) and their token ids into block dst.
  void copy_rows(int32_t dst, int32_t src, int32_t n) {
    for (int slot = 0; slot < static_cast<int>(spec.layers.size()); ++slot) {
      std::memcpy(k_base(dst, slot), k_base(src, slot), size_t(n) * k_row_bytes);
      std::memcpy(v_base(dst, slot), v_base(src, slot), size_t(n) * v_row_bytes);
    }
    std::copy_n(block_tokens.begin() + std::ptrdiff_t(size_t(src) * size_t(bs)), n,
                block_tokens.begin() + std::ptrdiff_t(size_t(dst) * size_t(bs)));
  }

  // Whether the block holding position len (the next write) is shared and must be copied first.
  bool tail_shared(const Table& t, int32_t len) const {
    const size_t i = size_t(len / bs);
    return len % bs != 0 && i < t.blocks.size() && pool.refcount(t.blocks[i]) > 1;
  }
  // Makes the block holding position len private before it is written: a shared block is copied
  // (its rows below len), an unshared published one is unpublished. False when a copy is needed and
  // no block is available.
  bool make_tail_private(Table& t, int32_t len) {
    const size_t i = size_t(len / bs);
    const int32_t off = len % bs;
    if (off == 0 || i >= t.blocks.size()) return true;
    const int32_t b = t.blocks[i];
    if (pool.refcount(b) > 1) {
      const int32_t nb = allocate();
      if (nb < 0) return false;
      copy_rows(nb, b, off);
      pool.unref(b);
      t.blocks[i] = nb;
    } else if (pool.hashed(b)) {
      unpublish(b);
    }
    return true;
  }

  // Blocks reserving n more positions after len takes from the pool (a copy of a shared tail included).
  int32_t blocks_needed(const Table& t, int32_t len, int32_t n) const {
    if (n <= 0) return 0;
    const int64_t need = (int64_t(len) + n + bs - 1) / bs - int64_t(t.blocks.size());
    return static_cast<int32_t>(std::max<int64_t>(need, 0)) + (tail_shared(t, len) ? 1 : 0);
  }

  LayerGroup spec;
  BlockPool pool;
  int bs;
  size_t k_row_bytes, v_row_bytes;
  size_t k_block_bytes = 0, v_block_bytes = 0;  // one block's K (V) rows of one layer
  size_t k_region_bytes = 0;                     // one layer's K rows of every block
  size_t layer_bytes = 0;                        // one layer's K and V rows of every block
  size_t storage_bytes = 0;
  std::vector<int> slot_of_layer;  // [n_layer] -> index in spec.layers, -1 when not in this group
  std::unique_ptr<uint8_t[]> storage;
  std::vector<int32_t> block_tokens;   // [n_blocks * bs]: a published block's token ids (token-granular
                                       // layouts: every written position's, published or not)
  std::vector<uint64_t> block_parent;  // [n_blocks]: a published block's parent key
  std::vector<int32_t> block_fill;     // [n_blocks]: a published block's tokens (bs unless a tail)
  std::unordered_multimap<uint64_t, int32_t> children;  // parent key -> published blocks after it
  std::vector<uint8_t> indexed;        // [n_blocks]: whether the block is in `children`
};

}  // namespace nt

// Tests for kv/block_pool.h: reference counting, the free / cached / used states and their
// invariant, publish (first writer wins), acquire, and least-recently-used eviction that never
// touches a referenced block.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "kv/block_pool.h"

namespace nt {
namespace {

void expect_counts(const BlockPool& p, int32_t n_free, int32_t n_cached, int32_t n_used) {
  EXPECT_EQ(p.n_free(), n_free);
  EXPECT_EQ(p.n_cached(), n_cached);
  EXPECT_EQ(p.n_used(), n_used);
  EXPECT_EQ(p.n_free() + p.n_cached() + p.n_used(), p.n_blocks());
  EXPECT_TRUE(p.check_consistent());
}

TEST(BlockPool, AllocatesEveryBlockOnceThenFails) {
  BlockPool p(4);
  expect_counts(p, 4, 0, 0);
  std::set<int32_t> got;
  for (int i = 0; i < 4; ++i) {
    const int32_t b = p.allocate();
    ASSERT_GE(b, 0);
    EXPECT_LT(b, 4);
    EXPECT_EQ(p.refcount(b), 1);
    EXPECT_FALSE(p.hashed(b));
    got.insert(b);
  }
  EXPECT_EQ(got.size(), 4u);
  EXPECT_EQ(p.allocate(), -1);
  expect_counts(p, 0, 0, 4);
}

TEST(BlockPool, RefcountFreesAtZero) {
  BlockPool p(2);
  const int32_t b = p.allocate();
  p.ref(b);
  p.ref(b);
  EXPECT_EQ(p.refcount(b), 3);
  p.unref(b);
  p.unref(b);
  expect_counts(p, 1, 0, 1);
  p.unref(b);
  EXPECT_EQ(p.refcount(b), 0);
  expect_counts(p, 2, 0, 0);  // unhashed: back to free, not cached
}

TEST(BlockPool, PublishedBlockIsCachedWhenReleasedAndAcquiredAgain) {
  BlockPool p(3);
  const int32_t b = p.allocate();
  EXPECT_TRUE(p.publish(b, 0x1234));
  EXPECT_TRUE(p.hashed(b));
  EXPECT_TRUE(p.contains(0x1234));
  EXPECT_EQ(p.find(0x1234), b);
  p.unref(b);
  expect_counts(p, 2, 1, 0);
  EXPECT_EQ(p.acquire(0x1234), b);  // taken off the LRU list
  EXPECT_EQ(p.refcount(b), 1);
  expect_counts(p, 2, 0, 1);
  EXPECT_EQ(p.acquire(0x1234), b);  // a second sharer
  EXPECT_EQ(p.refcount(b), 2);
  expect_counts(p, 2, 0, 1);
  EXPECT_EQ(p.acquire(0x9999), -1);
  EXPECT_EQ(p.find(0x9999), -1);
}

TEST(BlockPool, PublishFirstWriterWins) {
  BlockPool p(3);
  const int32_t a = p.allocate(), b = p.allocate();
  EXPECT_TRUE(p.publish(a, 77));
  EXPECT_FALSE(p.publish(b, 77));
  EXPECT_FALSE(p.hashed(b));
  EXPECT_EQ(p.find(77), a);
  p.unref(b);  // the loser is an ordinary private block: freed, not cached
  expect_counts(p, 2, 0, 1);
}

TEST(BlockPool, UnpublishForgetsTheHash) {
  BlockPool p(2);
  const int32_t b = p.allocate();
  ASSERT_TRUE(p.publish(b, 5));
  p.unpublish(b);
  EXPECT_FALSE(p.hashed(b));
  EXPECT_FALSE(p.contains(5));
  p.unref(b);
  expect_counts(p, 2, 0, 0);
  // The hash can be published again by another block.
  const int32_t c = p.allocate();
  EXPECT_TRUE(p.publish(c, 5));
}

TEST(BlockPool, FreeBlocksGoBeforeCachedOnes) {
  BlockPool p(3);
  const int32_t a = p.allocate();
  ASSERT_TRUE(p.publish(a, 1));
  p.unref(a);
  // Two free blocks remain: both are handed out before the cached one is evicted.
  const int32_t x = p.allocate(), y = p.allocate();
  EXPECT_NE(x, a);
  EXPECT_NE(y, a);
  EXPECT_TRUE(p.contains(1));
  expect_counts(p, 0, 1, 2);
  EXPECT_EQ(p.allocate(), a);  // now evicted
  EXPECT_FALSE(p.contains(1));
  EXPECT_FALSE(p.hashed(a));
  expect_counts(p, 0, 0, 3);
}

TEST(BlockPool, EvictsLeastRecentlyReleasedFirst) {
  BlockPool p(4);
  int32_t b[4];
  for (int i = 0; i < 4; ++i) {
    b[i] = p.allocate();
    ASSERT_TRUE(p.publish(b[i], uint64_t(100 + i)));
  }
  // Release order 2, 0, 3, 1.
  p.unref(b[2]);
  p.unref(b[0]);
  p.unref(b[3]);
  p.unref(b[1]);
  expect_counts(p, 0, 4, 0);
  // Reusing block 0 (a hit) moves it to the most recently used end when released again.
  ASSERT_EQ(p.acquire(100), b[0]);
  p.unref(b[0]);
  EXPECT_EQ(p.allocate(), b[2]);
  EXPECT_EQ(p.allocate(), b[3]);
  EXPECT_EQ(p.allocate(), b[1]);
  EXPECT_EQ(p.allocate(), b[0]);
  EXPECT_EQ(p.allocate(), -1);
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(p.contains(uint64_t(100 + i)));
  expect_counts(p, 0, 0, 4);
}

TEST(BlockPool, NeverEvictsReferencedBlocks) {
  BlockPool p(3);
  const int32_t held = p.allocate();
  ASSERT_TRUE(p.publish(held, 1));  // published but still referenced
  const int32_t c = p.allocate();
  ASSERT_TRUE(p.publish(c, 2));
  p.unref(c);
  const int32_t x = p.allocate();
  EXPECT_NE(x, held);
  EXPECT_EQ(p.allocate(), c);  // the only evictable one
  EXPECT_EQ(p.allocate(), -1);  // the rest are referenced
  EXPECT_TRUE(p.contains(1));
  EXPECT_EQ(p.find(1), held);
  EXPECT_EQ(p.refcount(held), 1);
  EXPECT_EQ(p.n_available(), 0);
  expect_counts(p, 0, 0, 3);
}

TEST(BlockPool, SharedBlockStaysUsedUntilLastOwnerLeaves) {
  BlockPool p(2);
  const int32_t b = p.allocate();
  ASSERT_TRUE(p.publish(b, 9));
  ASSERT_EQ(p.acquire(9), b);
  p.unref(b);
  expect_counts(p, 1, 0, 1);
  EXPECT_EQ(p.allocate(), 1 - b);
  EXPECT_EQ(p.allocate(), -1);  // b is still referenced once: not evictable
  p.unref(b);
  expect_counts(p, 0, 1, 1);
}

TEST(BlockPool, RandomOperationsKeepTheInvariant) {
  BlockPool p(16);
  std::vector<int32_t> owned;  // one entry per reference held
  uint64_t rng = 12345, next_hash = 1;
  auto rand = [&rng](uint64_t n) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (rng >> 33) % n;
  };
  for (int step = 0; step < 5000; ++step) {
    switch (rand(5)) {
      case 0: {
        const int32_t b = p.allocate();
        if (b >= 0) owned.push_back(b);
        else EXPECT_EQ(p.n_available(), 0);
        break;
      }
      case 1:
        if (!owned.empty()) {
          const size_t i = rand(owned.size());
          p.unref(owned[i]);
          owned.erase(owned.begin() + std::ptrdiff_t(i));
        }
        break;
      case 2:
        if (!owned.empty()) {
          const int32_t b = owned[rand(owned.size())];
          if (!p.hashed(b)) p.publish(b, next_hash++ % 40);
        }
        break;
      case 3: {
        const int32_t b = p.acquire(rand(40));
        if (b >= 0) owned.push_back(b);
        break;
      }
      case 4:
        if (!owned.empty()) {
          const int32_t b = owned[rand(owned.size())];
          p.ref(b);
          owned.push_back(b);
        }
        break;
    }
    ASSERT_TRUE(p.check_consistent()) << "step " << step;
    std::set<int32_t> distinct(owned.begin(), owned.end());
    ASSERT_EQ(p.n_used(), int32_t(distinct.size()));
    for (int32_t b : distinct)
      ASSERT_EQ(p.refcount(b), int32_t(std::count(owned.begin(), owned.end(), b)));
  }
}

}  // namespace
}  // namespace nt

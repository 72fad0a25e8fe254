// Tests for kv/prefix_hash.h: keys depend on every token, its position, the parent key and the
// chain seed (model identity and cache types); no collisions among many near-identical blocks.
#include <gtest/gtest.h>

#include <bit>
#include <unordered_set>
#include <vector>

#include "kv/prefix_hash.h"

namespace nt {
namespace {

TEST(PrefixHash, DeterministicAndSensitiveToEveryInput) {
  const std::vector<int32_t> t = {1, 2, 3, 4};
  const uint64_t seed = prefix_chain_seed("model-a", DType::F16, DType::F16);
  EXPECT_EQ(block_hash(seed, t), block_hash(seed, t));
  EXPECT_NE(block_hash(seed, t), block_hash(seed + 1, t));
  for (size_t i = 0; i < t.size(); ++i) {
    std::vector<int32_t> u = t;
    u[i] += 1;
    EXPECT_NE(block_hash(seed, t), block_hash(seed, u)) << "token " << i;
  }
  EXPECT_NE(block_hash(seed, t), block_hash(seed, std::vector<int32_t>{2, 1, 3, 4}));  // order
  EXPECT_NE(block_hash(seed, std::vector<int32_t>{7}), block_hash(seed, std::vector<int32_t>{7, 0}));  // length
  EXPECT_NE(block_hash(seed, std::vector<int32_t>{}), block_hash(seed, std::vector<int32_t>{0}));
}

TEST(PrefixHash, SeedNamesModelAndCacheTypes) {
  const uint64_t a = prefix_chain_seed("model-a", DType::F16, DType::F16);
  EXPECT_EQ(a, prefix_chain_seed("model-a", DType::F16, DType::F16));
  EXPECT_NE(a, prefix_chain_seed("model-b", DType::F16, DType::F16));
  EXPECT_NE(a, prefix_chain_seed("model-a", DType::Q8_0, DType::F16));
  EXPECT_NE(a, prefix_chain_seed("model-a", DType::F16, DType::Q8_0));
  EXPECT_NE(prefix_chain_seed("model-a", DType::F16, DType::Q8_0), prefix_chain_seed("model-a", DType::Q8_0, DType::F16));
  EXPECT_NE(prefix_chain_seed("", DType::F16, DType::F16), prefix_chain_seed(std::string_view("\0", 1), DType::F16, DType::F16));
  EXPECT_NE(prefix_chain_seed("12345678", DType::F16, DType::F16), prefix_chain_seed("123456781", DType::F16, DType::F16));
  // The same tokens under different seeds give different keys.
  const std::vector<int32_t> t = {10, 20, 30, 40};
  EXPECT_NE(block_hash(a, t), block_hash(prefix_chain_seed("model-b", DType::F16, DType::F16), t));
}

TEST(PrefixHash, NoCollisionsAmongNearIdenticalBlocks) {
  // Every block of 16 tokens differing from a base block in one token by a small amount, under
  // two parents: 2 * 16 * 2000 keys, all distinct.
  std::unordered_set<uint64_t> keys;
  std::vector<int32_t> base(16, 100);
  size_t n = 0;
  for (uint64_t parent : {uint64_t(0), uint64_t(1)})
    for (size_t pos = 0; pos < base.size(); ++pos)
      for (int32_t v = 0; v < 2000; ++v) {
        std::vector<int32_t> t = base;
        t[pos] = v;
        if (v == 100 && pos > 0) continue;  // the base block itself, counted once per parent
        keys.insert(block_hash(parent, t));
        ++n;
      }
  EXPECT_EQ(keys.size(), n);
}

TEST(PrefixHash, OneTokenChangeFlipsAboutHalfTheBits) {
  const uint64_t seed = prefix_chain_seed("m", DType::F16, DType::F16);
  std::vector<int32_t> t(16, 5);
  const uint64_t k0 = block_hash(seed, t);
  int total = 0, trials = 0;
  for (size_t pos = 0; pos < t.size(); ++pos)
    for (int bit = 0; bit < 20; ++bit) {
      std::vector<int32_t> u = t;
      u[pos] ^= 1 << bit;
      const int d = std::popcount(k0 ^ block_hash(seed, u));
      EXPECT_GE(d, 12) << "pos " << pos << " bit " << bit;
      total += d;
      ++trials;
    }
  const double mean = double(total) / trials;
  EXPECT_GT(mean, 30.0);
  EXPECT_LT(mean, 34.0);
}

}  // namespace
}  // namespace nt

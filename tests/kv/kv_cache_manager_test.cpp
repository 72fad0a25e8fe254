// Tests for kv/kv_cache_manager.h with a tiny layout (2 layers, 1 KV head, head_dim 4, F32,
// 4-token blocks): prefix matching by hash chain, the last-token rule, reservation that fails with
// nothing changed, copy-on-write truncation, the cache surviving free_seq, eviction, statistics.
// Each row written holds a recognisable value (owner tag, layer, position, K or V) so a test can
// tell whose rows a sequence reads.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "kv/kv_cache_manager.h"
#include "kv/kv_rows.h"

namespace nt {
namespace {

using namespace kvtest;  // NOLINT(google-build-using-namespace): the shared test helpers

// Whole-block reuse: these tests are about blocks (kv_partial_reuse_test.cpp: the rows copied past
// the last whole block).
std::unique_ptr<KvCacheManager> make(int64_t pool_tokens) { return make_tiny(pool_tokens, false); }

TEST(KvCacheManager, SamePrefixSharesFullBlocks) {
  auto m = make(64);
  const auto prompt = iota_tokens(10);
  const int a = computed_seq(*m, prompt, 1);
  EXPECT_EQ(m->stats().blocks_used, 3);

  const int b = m->new_seq();
  EXPECT_EQ(m->match_prefix(b, prompt), 8);  // two full blocks; the partial third is never shared
  EXPECT_EQ(m->seq_len(b), 8);
  EXPECT_TRUE(rows_are(*m, b, 0, 8, 1));       // b reads a's rows
  EXPECT_EQ(m->stats().blocks_used, 3);        // nothing new: the two blocks are shared
  step(*m, b, prompt, 2, 2);                   // b computes its own tail in a fresh block
  EXPECT_EQ(m->stats().blocks_used, 4);
  EXPECT_TRUE(rows_are(*m, b, 8, 10, 2));
  EXPECT_TRUE(rows_are(*m, a, 0, 10, 1));
}

TEST(KvCacheManager, DifferentEarlierTokenBreaksTheChain) {
  auto m = make(64);
  const auto prompt = iota_tokens(13);
  computed_seq(*m, prompt, 1);  // three full blocks published

  auto changed = [&](size_t pos) {
    auto t = prompt;
    t[pos] = 7;
    return t;
  };
  int s = m->new_seq();
  EXPECT_EQ(m->match_prefix(s, changed(1)), 0);  // first block differs
  s = m->new_seq();
  EXPECT_EQ(m->match_prefix(s, changed(5)), 4);  // second block differs: only the first matches
  s = m->new_seq();
  EXPECT_EQ(m->match_prefix(s, changed(11)), 8);
  // The same tokens in blocks 1 and 2 after a different block 0 match nothing: keys are chained.
  s = m->new_seq();
  EXPECT_EQ(m->match_prefix(s, changed(0)), 0);
  s = m->new_seq();
  EXPECT_EQ(m->match_prefix(s, prompt), 12);
}

TEST(KvCacheManager, PartialBlocksAreNeverShared) {
  auto m = make(64);
  const auto prompt = iota_tokens(16);
  const int a = m->new_seq();
  step(*m, a, prompt, 6, 1);  // one full block and two positions of the next
  const int b = m->new_seq();
  EXPECT_EQ(m->match_prefix(b, prompt), 4);
  // Once a's second block fills, it is shared too.
  step(*m, a, prompt, 2, 1);
  const int c = m->new_seq();
  EXPECT_EQ(m->match_prefix(c, prompt), 8);
  EXPECT_TRUE(rows_are(*m, c, 0, 8, 1));
}

TEST(KvCacheManager, DecodedTokensPublishBlocksAsTheyFill) {
  auto m = make(64);
  const auto tokens = iota_tokens(9);
  const int a = m->new_seq();
  for (int i = 0; i < 8; ++i) step(*m, a, tokens, 1, 3);  // one token per step
  const int b = m->new_seq();
  EXPECT_EQ(m->match_prefix(b, tokens), 8);
  EXPECT_TRUE(rows_are(*m, b, 0, 8, 3));
}

TEST(KvCacheManager, LastTokenIsNeverAHit) {
  auto m = make(64);
  const auto prompt = iota_tokens(8);
  computed_seq(*m, prompt, 1);  // both blocks of the prompt are cached
  int s = m->new_seq();
  // The whole prompt is cached, but the block holding its last token is computed again (its
  // logits are needed): only the first block is a hit.
  EXPECT_EQ(m->match_prefix(s, prompt), 4);
  s = m->new_seq();
  auto longer = prompt;
  longer.push_back(1);
  EXPECT_EQ(m->match_prefix(s, longer), 8);  // one more token: both blocks are hits
  s = m->new_seq();
  EXPECT_EQ(m->match_prefix(s, std::span<const int32_t>(prompt.data(), 1)), 0);
  s = m->new_seq();
  EXPECT_EQ(m->match_prefix(s, std::span<const int32_t>()), 0);
}

TEST(KvCacheManager, ReserveCapacityErrorChangesNothing) {
  auto m = make(16);  // 4 blocks
  EXPECT_EQ(m->capacity_tokens(), 16);
  const int a = m->new_seq();
  ASSERT_TRUE(m->reserve(a, 10).ok());  // 3 blocks
  const int b = m->new_seq();
  step(*m, b, iota_tokens(2), 2, 2);  // the 4th block
  const KvCacheStats before = m->stats();
  EXPECT_EQ(m->blocks_needed(b, 3), 1);
  EXPECT_EQ(m->available_blocks(), 0);
  Status st = m->reserve(b, 3);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::Capacity);
  EXPECT_NE(st.error().message.find("KV cache pool"), std::string::npos) << st.error().message;
  EXPECT_EQ(st.error().message.find("-c"), std::string::npos) << st.error().message;
  const KvCacheStats after = m->stats();
  EXPECT_EQ(after.blocks_used, before.blocks_used);
  EXPECT_EQ(after.blocks_free, before.blocks_free);
  EXPECT_EQ(m->seq_len(b), 2);
  EXPECT_TRUE(rows_are(*m, b, 0, 2, 2));
  // Room inside the last block needs nothing new; a's reservation is never taken.
  EXPECT_EQ(m->blocks_needed(b, 2), 0);
  EXPECT_TRUE(m->reserve(b, 2).ok());
  m->free_seq(a);
  EXPECT_TRUE(m->reserve(b, 3).ok());
}

TEST(KvCacheManager, FreedSequenceLeavesFullBlocksCached) {
  auto m = make(64);
  const auto prompt = iota_tokens(10);
  const int a = computed_seq(*m, prompt, 1);
  m->free_seq(a);
  KvCacheStats st = m->stats();
  EXPECT_EQ(st.blocks_used, 0);
  EXPECT_EQ(st.blocks_cached, 2);  // the partial block is freed
  EXPECT_EQ(st.blocks_free, 14);
  EXPECT_EQ(st.blocks_total, 16);
  const int b = m->new_seq();
  EXPECT_EQ(m->match_prefix(b, prompt), 8);
  EXPECT_TRUE(rows_are(*m, b, 0, 8, 1));
  st = m->stats();
  EXPECT_EQ(st.blocks_used, 2);
  EXPECT_EQ(st.blocks_cached, 0);
}

TEST(KvCacheManager, CachedBlocksAreEvictedTailFirstWhenSpaceIsNeeded) {
  auto m = make(16);  // 4 blocks
  const auto prompt = iota_tokens(8);
  m->free_seq(computed_seq(*m, prompt, 1));  // 2 cached blocks, 2 free
  auto longer = prompt;
  longer.push_back(1);
  const int x = m->new_seq();
  ASSERT_TRUE(m->reserve(x, 12).ok());  // the two free blocks and one evicted: the chain's tail
  EXPECT_EQ(m->stats().blocks_cached, 1);
  const int c = m->new_seq();
  EXPECT_EQ(m->match_prefix(c, longer), 4);  // the head block survived
  EXPECT_TRUE(rows_are(*m, c, 0, 4, 1));
  // c references the head now: x cannot take it.
  EXPECT_FALSE(m->reserve(x, 13).ok());
  m->free_seq(c);
  ASSERT_TRUE(m->reserve(x, 13).ok());
  const int d = m->new_seq();
  EXPECT_EQ(m->match_prefix(d, longer), 0);
}

TEST(KvCacheManager, TruncateCopiesASharedBlockBeforeItIsWritten) {
  auto m = make(64);
  const auto prompt = iota_tokens(9);
  const int a = computed_seq(*m, std::vector<int32_t>(prompt.begin(), prompt.begin() + 8), 1);
  const int b = m->new_seq();
  ASSERT_EQ(m->match_prefix(b, prompt), 8);
  EXPECT_EQ(m->stats().blocks_used, 2);  // both shared
  m->truncate(b, 6);                     // b will overwrite positions 6 and 7 of the second block
  EXPECT_EQ(m->seq_len(b), 6);
  EXPECT_EQ(m->stats().blocks_used, 3);  // b's copy
  EXPECT_TRUE(rows_are(*m, b, 0, 6, 1));  // the kept rows came along
  auto other = prompt;
  other[6] = 5;
  other[7] = 6;
  step(*m, b, other, 2, 2);
  EXPECT_TRUE(rows_are(*m, b, 6, 8, 2));
  EXPECT_TRUE(rows_are(*m, a, 0, 8, 1));  // a's rows unchanged
  // Both versions of the second block are findable.
  auto with_a = prompt;
  int s = m->new_seq();
  EXPECT_EQ(m->match_prefix(s, with_a), 8);
  EXPECT_TRUE(rows_are(*m, s, 0, 8, 1));
  other.push_back(0);
  s = m->new_seq();
  EXPECT_EQ(m->match_prefix(s, other), 8);
  EXPECT_TRUE(rows_are(*m, s, 0, 6, 1));  // b's copy kept a's rows 4 and 5
  EXPECT_TRUE(rows_are(*m, s, 6, 8, 2));
}

TEST(KvCacheManager, TruncateUnpublishesAPrivateFullBlock) {
  auto m = make(64);
  auto prompt = iota_tokens(9);
  const int a = computed_seq(*m, std::vector<int32_t>(prompt.begin(), prompt.begin() + 8), 1);
  m->truncate(a, 6);
  EXPECT_EQ(m->stats().blocks_used, 2);  // no copy: a was the only owner
  int s = m->new_seq();
  EXPECT_EQ(m->match_prefix(s, prompt), 4);  // the second block's old contents are gone
  m->free_seq(s);
  auto changed = prompt;
  changed[7] = 3;
  step(*m, a, changed, 2, 4);
  EXPECT_TRUE(rows_are(*m, a, 0, 6, 1));
  EXPECT_TRUE(rows_are(*m, a, 6, 8, 4));
  s = m->new_seq();
  EXPECT_EQ(m->match_prefix(s, changed), 8);  // republished with its new tokens
  EXPECT_TRUE(rows_are(*m, s, 6, 8, 4));
}

TEST(KvCacheManager, CopyDeferredToReserveWhenThePoolIsFull) {
  auto m = make(12);  // 3 blocks
  const auto prompt = iota_tokens(9);
  const int a = computed_seq(*m, std::vector<int32_t>(prompt.begin(), prompt.begin() + 8), 1);
  const int b = m->new_seq();
  ASSERT_EQ(m->match_prefix(b, prompt), 8);
  const int c = m->new_seq();
  ASSERT_TRUE(m->reserve(c, 4).ok());  // the last block
  m->truncate(b, 6);                   // no block for the copy now
  EXPECT_EQ(m->blocks_needed(b, 1), 1);
  Status st = m->reserve(b, 1);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::Capacity);
  m->free_seq(c);
  ASSERT_TRUE(m->reserve(b, 1).ok());  // copies now
  write_rows(*m, b, 6, 7, 2);
  auto other = prompt;
  other[6] = 1;
  m->commit(b, other, 1);
  EXPECT_TRUE(rows_are(*m, b, 0, 6, 1));
  EXPECT_TRUE(rows_are(*m, b, 6, 7, 2));
  EXPECT_TRUE(rows_are(*m, a, 0, 8, 1));
}

TEST(KvCacheManager, CopyNotNeededOnceTheOtherOwnerLeaves) {
  auto m = make(8);  // 2 blocks
  const auto prompt = iota_tokens(9);
  const int a = computed_seq(*m, std::vector<int32_t>(prompt.begin(), prompt.begin() + 8), 1);
  const int b = m->new_seq();
  ASSERT_EQ(m->match_prefix(b, prompt), 8);
  m->truncate(b, 6);  // shared and no block free: stays shared for now
  m->free_seq(a);
  EXPECT_EQ(m->blocks_needed(b, 2), 0);  // b is the only owner now: unpublished, written in place
  ASSERT_TRUE(m->reserve(b, 2).ok());
  write_rows(*m, b, 6, 8, 2);
  m->commit(b, prompt, 2);
  EXPECT_TRUE(rows_are(*m, b, 0, 6, 1));
  EXPECT_TRUE(rows_are(*m, b, 6, 8, 2));
}

TEST(KvCacheManager, PrefixComputedTwiceAtOnceStillChainsThroughEitherCopy) {
  // Two sequences compute the same first block before either publishes: the first to commit
  // wins, the other's copy stays private. A later block of the loser is still found after the
  // winner's copy of the first block.
  auto m = make(64);
  auto shared = iota_tokens(4);
  auto a_tokens = shared, b_tokens = shared;
  for (int32_t t : {1, 2, 3, 4}) a_tokens.push_back(t);
  for (int32_t t : {5, 6, 7, 8}) b_tokens.push_back(t);
  const int a = m->new_seq(), b = m->new_seq();
  ASSERT_TRUE(m->reserve(a, 8).ok());
  ASSERT_TRUE(m->reserve(b, 8).ok());
  write_rows(*m, a, 0, 8, 1);
  write_rows(*m, b, 0, 8, 2);
  m->commit(a, a_tokens, 8);
  m->commit(b, b_tokens, 8);
  b_tokens.push_back(0);
  const int s = m->new_seq();
  EXPECT_EQ(m->match_prefix(s, b_tokens), 8);
  EXPECT_TRUE(rows_are(*m, s, 0, 4, 1));  // a's first block
  EXPECT_TRUE(rows_are(*m, s, 4, 8, 2));  // b's second
}

TEST(KvCacheManager, StatsCountQueriesAndHits) {
  auto m = make(64);
  const auto prompt = iota_tokens(10);
  int s = m->new_seq();
  EXPECT_EQ(m->match_prefix(s, prompt), 0);
  step(*m, s, prompt, 10, 1);
  s = m->new_seq();
  EXPECT_EQ(m->match_prefix(s, prompt), 8);
  const KvCacheStats st = m->stats();
  EXPECT_EQ(st.block_size, kBs);
  EXPECT_EQ(st.prefix_queried_tokens, 20);
  EXPECT_EQ(st.prefix_hit_tokens, 8);
  EXPECT_EQ(st.blocks_total, 16);
  EXPECT_EQ(st.blocks_used, 3);
  EXPECT_EQ(st.blocks_used + st.blocks_cached + st.blocks_free, st.blocks_total);
}

TEST(KvCacheManager, LayoutAndGroups) {
  auto m = make(10);  // rounded up to 3 blocks
  EXPECT_EQ(m->capacity_tokens(), 12);
  EXPECT_EQ(m->block_size(), kBs);
  EXPECT_EQ(m->total_bytes(), size_t(12) * tiny_layout().bytes_per_token());
  ASSERT_EQ(m->groups().size(), 1u);
  EXPECT_EQ(m->groups()[0].kind, LayerKind::Full);
  EXPECT_EQ(m->groups()[0].layers, (std::vector<int>{0, 1}));
}

TEST(KvCacheManager, AFreshSequenceIsContiguousPerLayer) {
  // Layer-major storage: a fresh pool hands out consecutive blocks, whose rows of one layer
  // follow each other, so attention reads one run per layer whatever the block size.
  auto m = make(64);
  const int s = m->new_seq();
  ASSERT_TRUE(m->reserve(s, 12).ok());
  std::vector<KvSpan> sp;
  const size_t row = kHeadDim * sizeof(float);
  for (int il = 0; il < kLayers; ++il) {
    m->spans(il, s, 12, sp);
    ASSERT_EQ(sp.size(), 3u);
    for (size_t i = 1; i < sp.size(); ++i) {
      EXPECT_EQ(sp[i].k, sp[i - 1].k + kBs * row);
      EXPECT_EQ(sp[i].v, sp[i - 1].v + kBs * row);
    }
    EXPECT_EQ(m->k_row(il, s, 5), sp[1].k + row);
  }
}

TEST(KvCacheManager, CreateRejectsBadSizes) {
  auto r = KvCacheManager::create(tiny_layout(), 0, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("KV cache pool"), std::string::npos);
  KvLayout q = tiny_layout();
  q.k_type = DType::Q8_0;  // 4 values per row cannot hold a 32-value Q8_0 block
  EXPECT_FALSE(KvCacheManager::create(q, 16, 1).ok());
}

TEST(KvCacheManager, SequenceIdsAreReused) {
  auto m = make(16);
  const int a = m->new_seq(), b = m->new_seq();
  EXPECT_NE(a, b);
  m->free_seq(a);
  EXPECT_EQ(m->new_seq(), a);
  EXPECT_EQ(m->seq_len(a), 0);
}

}  // namespace
}  // namespace nt

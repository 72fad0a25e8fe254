// Tests for token-granular prefix reuse in kv/kv_cache_manager.h: past the last whole matching
// block a prompt copies the matching rows of a published block (a full one that diverges inside,
// or a finished sequence's partial last block) into a block of its own; the copy is private, the
// last-token rule holds, eviction and hash collisions never hand out wrong rows.
#include <gtest/gtest.h>

#include <vector>

#include "kv/kv_cache_manager.h"
#include "kv/kv_rows.h"

namespace nt {
namespace {

using namespace kvtest;  // NOLINT(google-build-using-namespace): the shared test helpers

std::unique_ptr<KvCacheManager> make(int64_t pool_tokens) { return make_tiny(pool_tokens, true); }

std::vector<int32_t> with(std::vector<int32_t> t, size_t pos, int32_t id) {
  t[pos] = id;
  return t;
}

TEST(KvPartialReuse, AFullBlockThatDivergesInsideGivesItsMatchingRows) {
  auto m = make(64);
  const auto prompt = iota_tokens(13);
  const int a = computed_seq(*m, prompt, 1);  // blocks 0-2 full and published, position 12 in a 4th
  for (size_t pos : {1u, 5u, 6u, 11u}) {
    const int s = m->new_seq();
    EXPECT_EQ(m->match_prefix(s, with(prompt, pos, 7)), int32_t(pos)) << pos;
    EXPECT_TRUE(rows_are(*m, s, 0, int32_t(pos), 1)) << pos;
    m->free_seq(s);
  }
  // The copy is s's own block: writing after it leaves a's rows alone.
  const auto other = with(prompt, 6, 7);
  const int s = m->new_seq();
  ASSERT_EQ(m->match_prefix(s, other), 6);
  EXPECT_EQ(m->stats().blocks_used, 4 + 1);  // a's four (the first shared with s) and s's copy
  step(*m, s, other, 3, 2);
  EXPECT_TRUE(rows_are(*m, s, 0, 6, 1));
  EXPECT_TRUE(rows_are(*m, s, 6, 9, 2));
  EXPECT_TRUE(rows_are(*m, a, 0, 13, 1));
  // s's second block filled with its own tokens: published under them, found by them.
  m->free_seq(s);
  auto longer = other;
  longer.resize(9);
  longer.push_back(0);
  const int t = m->new_seq();
  EXPECT_EQ(m->match_prefix(t, longer), 9);  // block 1 whole (s's), then one row of s's tail
  EXPECT_TRUE(rows_are(*m, t, 0, 6, 1));
  EXPECT_TRUE(rows_are(*m, t, 6, 9, 2));
}

TEST(KvPartialReuse, AFinishedSequencesPartialLastBlockIsKeptForItsRows) {
  auto m = make(64);
  const auto tokens = iota_tokens(11);
  const int a = m->new_seq();
  step(*m, a, tokens, 10, 1);  // blocks 0 and 1 full, positions 8 and 9 in block 2
  const int b = m->new_seq();
  EXPECT_EQ(m->match_prefix(b, tokens), 8);  // a still runs: its last block is being written
  m->free_seq(b);
  m->free_seq(a);
  KvCacheStats st = m->stats();
  EXPECT_EQ(st.blocks_cached, 3);  // the partial block stays, evictable
  EXPECT_EQ(st.blocks_used, 0);
  const int c = m->new_seq();
  EXPECT_EQ(m->match_prefix(c, tokens), 10);  // both kept rows; token 10 is the last
  EXPECT_TRUE(rows_are(*m, c, 0, 10, 1));
  st = m->stats();
  EXPECT_EQ(st.blocks_used, 3);    // two shared, one copy
  EXPECT_EQ(st.blocks_cached, 1);  // the kept tail is copied, never shared
  // Only its matching rows: a prompt that differs at position 9 takes one.
  const int d = m->new_seq();
  EXPECT_EQ(m->match_prefix(d, with(tokens, 9, 3)), 9);
  EXPECT_TRUE(rows_are(*m, d, 0, 9, 1));
}

TEST(KvPartialReuse, TheLastTokenIsNeverCopied) {
  auto m = make(64);
  const auto tokens = iota_tokens(10);
  m->free_seq(computed_seq(*m, tokens, 1));
  for (int n : {1, 2, 5, 9, 10}) {
    const int s = m->new_seq();
    EXPECT_EQ(m->match_prefix(s, std::span<const int32_t>(tokens.data(), size_t(n))), n - 1) << n;
    m->free_seq(s);
  }
}

TEST(KvPartialReuse, TheLongestMatchAmongSiblingsWinsAndSharedRowsAreTheirOwn) {
  auto m = make(64);
  auto base = iota_tokens(4);
  auto x = base, y = base;
  for (int32_t t : {50, 51, 52, 53}) x.push_back(t);  // block 1 of x: 50 51 52 53
  for (int32_t t : {50, 51, 60}) y.push_back(t);       // y's tail: 50 51 60
  m->free_seq(computed_seq(*m, x, 1));
  m->free_seq(computed_seq(*m, y, 2));  // its first block is x's (published first)
  auto q = base;
  for (int32_t t : {50, 51, 60, 99, 0}) q.push_back(t);
  int s = m->new_seq();
  EXPECT_EQ(m->match_prefix(s, q), 7);  // three rows of y's tail beat two of x's block
  EXPECT_TRUE(rows_are(*m, s, 0, 4, 1));
  EXPECT_TRUE(rows_are(*m, s, 4, 7, 2));
  m->free_seq(s);
  q[6] = 53;
  q[7] = 0;
  s = m->new_seq();
  EXPECT_EQ(m->match_prefix(s, q), 6);  // two rows each: either owner's rows are its own tokens'
  EXPECT_TRUE(rows_are(*m, s, 0, 4, 1));
}

TEST(KvPartialReuse, NoBlockForTheCopyMeansWholeBlocksOnly) {
  auto m = make(12);  // 3 blocks
  const auto tokens = iota_tokens(7);
  const int a = computed_seq(*m, tokens, 1);  // blocks 0 (full) and 1 (3 rows)
  const int x = m->new_seq();
  ASSERT_TRUE(m->reserve(x, 4).ok());  // the third block
  auto q = with(tokens, 6, 0);
  q.push_back(1);
  const int s = m->new_seq();
  EXPECT_EQ(m->match_prefix(s, q), 4);  // a still runs: no tail; and no block for a copy anyway
  m->free_seq(s);
  m->free_seq(a);  // block 1 kept as a tail (cached), block 0 cached
  const int s2 = m->new_seq();
  // The only block a copy could take is the kept tail itself, pinned while it is copied.
  EXPECT_EQ(m->match_prefix(s2, q), 4);
  EXPECT_TRUE(rows_are(*m, s2, 0, 4, 1));
  m->free_seq(x);
  const int s3 = m->new_seq();
  EXPECT_EQ(m->match_prefix(s3, q), 6);
  EXPECT_TRUE(rows_are(*m, s3, 0, 6, 1));
}

TEST(KvPartialReuse, AnEvictedTailIsNeverFound) {
  auto m = make(16);  // 4 blocks
  const auto tokens = iota_tokens(7);
  m->free_seq(computed_seq(*m, tokens, 1));  // the tail is released first: evicted first
  const int x = m->new_seq();
  ASSERT_TRUE(m->reserve(x, 12).ok());  // the two free blocks and the tail's
  EXPECT_EQ(m->stats().blocks_cached, 1);
  write_rows(*m, x, 0, 12, 5);  // x's rows over the tail's old ones (its token ids unchanged)
  const int s = m->new_seq();
  EXPECT_EQ(m->match_prefix(s, tokens), 4);
  EXPECT_TRUE(rows_are(*m, s, 0, 4, 1));
}

TEST(KvPartialReuse, OffReusesWholeBlocksOnly) {
  auto m = make(64);
  m->set_token_granular(false);
  const auto tokens = iota_tokens(11);
  m->free_seq(computed_seq(*m, tokens, 1));
  EXPECT_EQ(m->stats().blocks_cached, 2);
  const int s = m->new_seq();
  EXPECT_EQ(m->match_prefix(s, tokens), 8);
}

TEST(KvPartialReuse, RandomPromptsReadTheirOwnTokensRows) {
  // Sequences over a 3-symbol alphabet share many prefixes of every length; each position's rows
  // are tagged by the token there and the whole prefix before it, so a copied row from another
  // prefix would show. Every position a match returns must hold the rows its own tokens wrote.
  auto m = make(64);
  uint32_t x = 12345;
  auto next = [&] { return (x = x * 1103515245u + 12345u) >> 16; };
  auto prefix_tag = [](const std::vector<int32_t>& t, size_t n) {
    int tag = 1;
    for (size_t i = 0; i < n; ++i) tag = (tag * 3 + t[i]) % 97 + 1;
    return tag;
  };
  std::vector<int> live;
  int partial_hits = 0;
  for (int round = 0; round < 300; ++round) {
    std::vector<int32_t> t(2 + next() % 14);
    for (auto& v : t) v = static_cast<int32_t>(next() % 3);
    const int s = m->new_seq();
    const int32_t hit = m->match_prefix(s, t);
    ASSERT_LT(hit, int32_t(t.size()));
    partial_hits += hit % 4 != 0;
    for (int32_t pos = 0; pos < hit; ++pos) ASSERT_TRUE(rows_are(*m, s, pos, pos + 1, prefix_tag(t, size_t(pos) + 1)));
    const int32_t n = int32_t(t.size()) - hit;
    if (!m->reserve(s, n).ok()) {
      m->free_seq(s);
      continue;
    }
    for (int32_t pos = hit; pos < hit + n; ++pos) write_rows(*m, s, pos, pos + 1, prefix_tag(t, size_t(pos) + 1));
    m->commit(s, t, n);
    live.push_back(s);
    if (live.size() > 3 || next() % 2) {
      const size_t k = next() % live.size();
      m->free_seq(live[k]);
      live.erase(live.begin() + std::ptrdiff_t(k));
    }
  }
  const KvCacheStats st = m->stats();
  EXPECT_EQ(st.blocks_used + st.blocks_cached + st.blocks_free, st.blocks_total);
  EXPECT_GT(partial_hits, 30);  // the copies were exercised
}

}  // namespace
}  // namespace nt

// Tests for kv/kv_cache_manager.h with a sliding-window group: layer 0 attends to everything,
// layer 1 to its last 6 positions (4-token blocks). Blocks wholly behind the window are released
// as a sequence advances (never one another sequence still sees), prefix hits need the window's
// blocks only, truncation takes released blocks back from the prefix cache, and a sliding pool is
// sized for the sequences that run at once.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "kv/kv_cache_manager.h"
#include "kv/prefix_hash.h"

namespace nt {
namespace {

constexpr int kBs = 4;
constexpr int kWindow = 6;
constexpr int kHeadDim = 4;
constexpr size_t kFull = 0, kSliding = 1;  // group indices

KvLayout sliding_layout() {
  KvLayout l;
  l.n_layer = 2;
  l.n_head_kv = 1;
  l.head_dim = kHeadDim;
  l.k_type = DType::F32;
  l.v_type = DType::F32;
  l.block_size = kBs;
  l.n_swa = kWindow;
  l.swa_layers = {0, 1};
  return l;
}

std::unique_ptr<KvCacheManager> make(int64_t pool_tokens, int max_seqs = 0, int32_t max_step = 0) {
  auto m = KvCacheManager::create(sliding_layout(), pool_tokens,
                                  prefix_chain_seed("test-model", DType::F32, DType::F32), max_seqs, max_step);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return std::move(m.value());
}

float row_value(int tag, int layer, int32_t pos) { return float(tag * 10000 + layer * 1000 + pos); }

// Reserves, writes (every row's first K and V value: tag, layer, position) and commits n tokens.
void step(KvCacheManager& m, int seq, const std::vector<int32_t>& tokens, int32_t n, int tag) {
  const int32_t len = m.seq_len(seq);
  ASSERT_TRUE(m.reserve(seq, n).ok());
  for (int32_t pos = len; pos < len + n; ++pos)
    for (int il = 0; il < 2; ++il) {
      const float x = row_value(tag, il, pos);
      std::memcpy(m.k_row(il, seq, pos), &x, sizeof x);
      std::memcpy(m.v_row(il, seq, pos), &x, sizeof x);
    }
  m.commit(seq, tokens, n);
  ASSERT_EQ(m.seq_len(seq), len + n);
}

// What the forward pass sees of layer il for a query at position len (the next one): rows through
// spans(), null exactly for the blocks wholly behind the window, the others holding tag's rows.
::testing::AssertionResult sees(KvCacheManager& m, int seq, int il, int tag) {
  const int32_t len = m.seq_len(seq);
  std::vector<KvSpan> sp;
  m.spans(il, seq, len, sp);
  const int32_t start = il == 1 ? std::max(0, len + 1 - kWindow) : 0;
  for (size_t b = 0; b < sp.size(); ++b) {
    const int32_t first = int32_t(b) * kBs;
    const bool behind = first + sp[b].n <= start;
    if (behind != (sp[b].k == nullptr) || behind != (sp[b].v == nullptr))
      return ::testing::AssertionFailure() << "layer " << il << " len " << len << ": block " << b
                                           << (behind ? " is behind the window but kept" : " is in the window but released");
    if (behind) continue;
    for (int32_t j = 0; j < sp[b].n; ++j) {
      float k, v;
      std::memcpy(&k, sp[b].k + size_t(j) * kHeadDim * sizeof(float), sizeof k);
      std::memcpy(&v, sp[b].v + size_t(j) * kHeadDim * sizeof(float), sizeof v);
      if (first + j >= start && (k != row_value(tag, il, first + j) || v != k))
        return ::testing::AssertionFailure() << "layer " << il << " pos " << first + j << ": K " << k << " V " << v
                                             << ", expected " << row_value(tag, il, first + j);
    }
  }
  return ::testing::AssertionSuccess();
}

std::vector<int32_t> iota_tokens(int n, int32_t first = 100) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  std::iota(t.begin(), t.end(), first);
  return t;
}

int32_t used(const KvCacheManager& m, size_t g) { return m.group_stats(g).blocks_used; }

TEST(KvSliding, LayersAreGroupedByKind) {
  auto m = make(64);
  ASSERT_EQ(m->groups().size(), 2u);
  EXPECT_EQ(m->groups()[kFull].kind, LayerKind::Full);
  EXPECT_EQ(m->groups()[kFull].layers, std::vector<int>{0});
  EXPECT_EQ(m->groups()[kSliding].kind, LayerKind::Sliding);
  EXPECT_EQ(m->groups()[kSliding].window, kWindow);
  EXPECT_EQ(m->groups()[kSliding].layers, std::vector<int>{1});
  EXPECT_EQ(m->capacity_tokens(), 64);
}

TEST(KvSliding, BlocksBehindTheWindowAreReleasedAsASequenceAdvances) {
  auto m = make(256);
  const auto toks = iota_tokens(100);
  const int s = m->new_seq();
  for (int32_t len = 1; len <= 100; ++len) {
    step(*m, s, toks, 1, 1);
    ASSERT_TRUE(sees(*m, s, 0, 1));
    ASSERT_TRUE(sees(*m, s, 1, 1));
    // The window's 5 earlier positions straddle at most 2 blocks (the bound the pool is sized by: 3).
    ASSERT_LE(used(*m, kSliding), (kWindow - 1 + kBs - 1) / kBs + 1) << "len " << len;
    ASSERT_EQ(used(*m, kFull), (len + kBs - 1) / kBs);
  }
  // Released full blocks stay findable: they are cached, not lost.
  EXPECT_EQ(m->group_stats(kSliding).blocks_cached, 25 - used(*m, kSliding));
  m->free_seq(s);
  EXPECT_EQ(used(*m, kFull) + used(*m, kSliding), 0);
}

TEST(KvSliding, APrefillChunkLongerThanTheWindowKeepsOnlyTheWindowAfterward) {
  auto m = make(256);
  const auto toks = iota_tokens(40);
  const int s = m->new_seq();
  step(*m, s, toks, 40, 3);  // every block is written before the window moves past it
  EXPECT_TRUE(sees(*m, s, 1, 3));
  EXPECT_EQ(used(*m, kSliding), 2);  // positions 35..39: blocks 8 and 9
  EXPECT_EQ(used(*m, kFull), 10);
}

TEST(KvSliding, ABlockAnotherSequenceStillSeesIsNeverReleased) {
  auto m = make(256);
  const auto toks = iota_tokens(40);
  const int a = m->new_seq();
  step(*m, a, toks, 16, 1);
  // b shares a's first 12 positions (the last token of its 13-token prompt is computed).
  const int b = m->new_seq();
  ASSERT_EQ(m->match_prefix(b, std::span(toks).first(13)), 12);
  step(*m, b, toks, 1, 2);
  // a moves on far past them: its reference to block 2 goes, b's stays.
  for (int i = 0; i < 24; ++i) step(*m, a, toks, 1, 1);
  ASSERT_EQ(m->seq_len(a), 40);
  ASSERT_EQ(m->seq_len(b), 13);
  std::vector<KvSpan> sp;
  m->spans(1, b, 13, sp);
  ASSERT_EQ(sp.size(), 4u);
  EXPECT_EQ(sp[0].k, nullptr);  // behind b's window (positions 8..13)
  EXPECT_EQ(sp[1].k, nullptr);
  for (size_t i = 2; i < 4; ++i) ASSERT_NE(sp[i].k, nullptr) << i;
  for (int32_t pos = 8; pos < 12; ++pos) {  // a's rows, shared, intact
    float k;
    std::memcpy(&k, m->k_row(1, b, pos), sizeof k);
    EXPECT_EQ(k, row_value(1, 1, pos)) << pos;
  }
  float k;
  std::memcpy(&k, m->k_row(1, b, 12), sizeof k);
  EXPECT_EQ(k, row_value(2, 1, 12));
  m->free_seq(a);
  m->free_seq(b);
  EXPECT_EQ(used(*m, kFull) + used(*m, kSliding), 0);
}

TEST(KvSliding, APrefixHitTakesOnlyTheWindowsBlocks) {
  auto m = make(256);
  const auto toks = iota_tokens(25);
  const int a = m->new_seq();
  step(*m, a, toks, 24, 1);
  m->free_seq(a);
  const int b = m->new_seq();
  ASSERT_EQ(m->match_prefix(b, toks), 24);
  EXPECT_EQ(used(*m, kFull), 6);
  EXPECT_EQ(used(*m, kSliding), 2);  // the next query (position 24) sees 19..24: blocks 4 and 5
  EXPECT_TRUE(sees(*m, b, 0, 1));
  EXPECT_TRUE(sees(*m, b, 1, 1));
  step(*m, b, toks, 1, 2);
  EXPECT_EQ(m->group_stats(kSliding).prefix_hit_tokens, 24);
}

TEST(KvSliding, APrefixHitNeedsTheWindowsBlocksStillCached) {
  // A sliding pool of 6 blocks (one sequence, 4-token steps): other prompts evict a's released
  // sliding blocks while its full-attention blocks all stay cached.
  auto m = make(64, 1, 4);
  ASSERT_EQ(m->group_stats(kSliding).blocks_total, 6);
  const auto toks = iota_tokens(25);
  const int a = m->new_seq();
  for (int i = 0; i < 6; ++i) step(*m, a, toks, 4, 1);
  m->free_seq(a);  // sliding LRU: blocks 0, 1, 2, 3 (released on the way), 5, 4
  const auto other = iota_tokens(24, 500);
  const int c = m->new_seq();
  step(*m, c, other, 4, 3);
  step(*m, c, other, 4, 3);  // evicts a's sliding blocks 0 and 1: not needed for a hit of 24
  int b = m->new_seq();
  ASSERT_EQ(m->match_prefix(b, toks), 24);
  m->free_seq(b);
  for (int i = 0; i < 3; ++i) step(*m, c, other, 4, 3);  // evicts 2, 3 and 5
  b = m->new_seq();
  // Every full block is cached, but no length has its window's sliding blocks: block 5 is gone
  // for 24, 3 for 20, 2 for 16 ...
  EXPECT_EQ(m->group_stats(kFull).blocks_cached, 6);
  EXPECT_EQ(m->match_prefix(b, toks), 0);
  EXPECT_EQ(used(*m, kFull), 5);  // c's
}

TEST(KvSliding, TruncateTakesReleasedBlocksBackFromThePrefixCache) {
  auto m = make(256);
  const auto toks = iota_tokens(30);
  const int s = m->new_seq();
  for (int i = 0; i < 6; ++i) step(*m, s, toks, 4, 1);
  m->truncate(s, 10);  // the next query (10) sees 5..10: blocks 1 and 2, released at 24
  ASSERT_EQ(m->seq_len(s), 10);
  EXPECT_TRUE(sees(*m, s, 0, 1));
  EXPECT_TRUE(sees(*m, s, 1, 1));
  step(*m, s, toks, 2, 1);
  EXPECT_TRUE(sees(*m, s, 1, 1));
}

TEST(KvSliding, TruncateEmptiesTheSequenceWhenAWindowBlockWasEvicted) {
  auto m = make(64, 1, 4);
  const auto toks = iota_tokens(30);
  const int s = m->new_seq();
  for (int i = 0; i < 6; ++i) step(*m, s, toks, 4, 1);  // sliding blocks 0..3 released, cached
  const int c = m->new_seq();
  const auto other = iota_tokens(8, 500);
  step(*m, c, other, 8, 3);  // evicts s's released sliding blocks 0 and 1 (the pool's last two)
  m->truncate(s, 6);         // position 6 sees 1..6: block 1 is gone
  EXPECT_EQ(m->seq_len(s), 0);
  EXPECT_EQ(used(*m, kFull), 2);
  EXPECT_EQ(used(*m, kSliding), 2);
}

TEST(KvSliding, ASlidingPoolHoldsWhatTheRunningSequencesCanHold) {
  // Per sequence: 5 earlier positions straddle 2 blocks, plus the one written and a copied tail
  // (and one for rounding a chunk); plus 16 tokens of chunks in flight.
  auto m = make(4096, 3, 16);
  EXPECT_EQ(m->group_stats(kFull).blocks_total, 1024);
  EXPECT_EQ(m->group_stats(kSliding).blocks_total, 3 * 5 + 4);
  EXPECT_LT(m->group_bytes(kSliding) * 10, m->group_bytes(kFull));
  EXPECT_EQ(m->total_bytes(), m->group_bytes(kFull) + m->group_bytes(kSliding));
  // Three sequences prefilling and decoding past the window never run out.
  const auto toks = iota_tokens(200);
  std::vector<int> seqs;
  for (int i = 0; i < 3; ++i) seqs.push_back(m->new_seq());
  for (int round = 0; round < 30; ++round)
    for (int i = 0; i < 3; ++i) step(*m, seqs[size_t(i)], toks, round < 2 ? 5 : 1, 1);
  for (int s : seqs) EXPECT_TRUE(sees(*m, s, 1, 1));
}

}  // namespace
}  // namespace nt

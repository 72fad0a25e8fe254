// Tests for kv/state_snapshots.h: recurrent-state snapshots keyed by the prefix cache's chain keys
// (a token mismatch under a key is a miss, least recently used first out), and the prefix match of
// a recurrent layout: the longest cached KV prefix whose end has a snapshot, never covering the last
// token, with the snapshot restored into the sequence's state; evicted KV blocks void a snapshot.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "kv/kv_cache_manager.h"
#include "kv/prefix_hash.h"
#include "kv/recurrent_state.h"
#include "kv/state_snapshots.h"

namespace nt {
namespace {

constexpr int kBs = 4;
constexpr int64_t kFloats = 6;

KvLayout recurrent_layout() {
  KvLayout l;
  l.n_layer = 1;
  l.n_head_kv = 1;
  l.head_dim = 4;
  l.k_type = l.v_type = DType::F32;
  l.block_size = kBs;
  l.recurrent_floats = kFloats;
  return l;
}

std::unique_ptr<KvCacheManager> make(int64_t pool_tokens) {
  auto m = KvCacheManager::create(recurrent_layout(), pool_tokens, prefix_chain_seed("m", DType::F32, DType::F32));
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return std::move(m.value());
}

std::vector<int32_t> tokens(int n, int32_t first) {
  std::vector<int32_t> t(size_t(n), 0);
  std::iota(t.begin(), t.end(), first);
  return t;
}

std::vector<float> state_of(float v) { return std::vector<float>(size_t(kFloats), v); }

// Runs `t` through a new sequence of m (rows are not written: only the tables matter here), saves
// the state `value + end` at each of `ends` and frees the sequence; its full blocks stay cached.
void run_and_snapshot(KvCacheManager& m, StateSnapshots& s, const std::vector<int32_t>& t,
                      const std::vector<int32_t>& ends, float value) {
  const int seq = m.new_seq();
  int32_t done = 0;
  for (int32_t end : ends) {
    ASSERT_TRUE(m.reserve(seq, end - done).ok());
    m.commit(seq, t, end - done);
    done = end;
    s.save(m.prefix_key(seq, end), std::span<const int32_t>(t).first(size_t(end)), state_of(value + float(end)).data());
  }
  ASSERT_TRUE(m.reserve(seq, int32_t(t.size()) - done).ok());
  m.commit(seq, t, int32_t(t.size()) - done);
  m.free_seq(seq);
}

TEST(StateSnapshots, FindNeedsTheSameTokensAndTheLeastRecentlyUsedGoesFirst) {
  StateSnapshots s(kFloats, 2);
  const auto a = tokens(8, 1), b = tokens(8, 100), c = tokens(8, 200);
  s.save(1, a, state_of(1).data());
  s.save(2, b, state_of(2).data());
  ASSERT_NE(s.find(1, a), nullptr);
  EXPECT_EQ(s.find(1, a)[0], 1.0f);
  EXPECT_EQ(s.find(1, b), nullptr);  // same key, other tokens: a miss
  EXPECT_EQ(s.find(1, std::span<const int32_t>(a).first(4)), nullptr);
  s.save(3, c, state_of(3).data());  // evicts 2 (1 was used since)
  EXPECT_EQ(s.size(), 2);
  EXPECT_EQ(s.bytes(), 2 * kFloats * sizeof(float));
  EXPECT_EQ(s.find(2, b), nullptr);
  ASSERT_NE(s.find(1, a), nullptr);
  ASSERT_NE(s.find(3, c), nullptr);
  EXPECT_EQ(s.find(3, c)[kFloats - 1], 3.0f);
  EXPECT_EQ(s.saved(), 3);
}

TEST(StateSnapshots, APromptResumesAtTheLongestCachedPrefixWithASnapshot) {
  auto m = make(64);
  StateSnapshots s(kFloats, 8);
  RecurrentStatePool pool(kFloats);
  const auto first = tokens(14, 1);
  run_and_snapshot(*m, s, first, {4, 12}, 0.5f);  // snapshots at 4 and 12; blocks 0-2 cached

  // A longer prompt sharing the first 14 tokens: the snapshot at 12 (blocks 0-2 cached).
  auto longer = first;
  for (int32_t t : tokens(10, 500)) longer.push_back(t);
  const int b = m->new_seq();
  EXPECT_EQ(match_prefix_with_state(*m, s, pool, b, longer), 12);
  EXPECT_EQ(m->seq_len(b), 12);
  EXPECT_EQ(*pool.pos(b), 12);
  EXPECT_EQ(pool.state(b)[0], 12.5f);
  EXPECT_EQ(s.hits(), 1);
  m->free_seq(b);

  // The same prompt again: 12 leaves the last token (13) to compute, so it is used too.
  const int c = m->new_seq();
  EXPECT_EQ(match_prefix_with_state(*m, s, pool, c, first), 12);
  m->free_seq(c);

  // A prompt of exactly 12 tokens: the snapshot at 12 would cover its last token; 4 is the latest before.
  const int d = m->new_seq();
  EXPECT_EQ(match_prefix_with_state(*m, s, pool, d, std::span<const int32_t>(first).first(12)), 4);
  EXPECT_EQ(pool.state(d)[0], 4.5f);
  m->free_seq(d);

  // Diverging inside block 2: the snapshot at 4 (block 1 is cached, but nothing was snapshot at 8).
  auto diverging = first;
  diverging[9] = 999;
  const int e = m->new_seq();
  EXPECT_EQ(match_prefix_with_state(*m, s, pool, e, diverging), 4);
  m->free_seq(e);

  // Without a snapshot store, the KV cache alone never resumes a recurrent layout.
  const int f = m->new_seq();
  EXPECT_EQ(m->match_prefix(f, longer), 0);
  m->free_seq(f);
}

// A spare snapshot (one whose prompt keeps another below it that serves nearly all it serves) is
// evicted before any other and never pushes another out: taking two per prompt keeps as many
// prompts resumable as one per prompt did.
TEST(StateSnapshots, SpareOnesGoFirstAndNeverPushOthersOut) {
  StateSnapshots s(kFloats, 2);
  const auto a = tokens(8, 1), b = tokens(8, 100), c = tokens(8, 200), d = tokens(8, 300);
  s.save(1, a, state_of(1).data());
  s.save(2, b, state_of(2).data(), INT32_MAX, SnapshotRank::Spare);
  s.save(3, c, state_of(3).data());  // evicts the spare 2, though 1 is older
  EXPECT_EQ(s.find(2, b), nullptr);
  ASSERT_NE(s.find(1, a), nullptr);
  ASSERT_NE(s.find(3, c), nullptr);
  s.save(4, d, state_of(4).data(), INT32_MAX, SnapshotRank::Spare);  // full of others: not kept
  EXPECT_EQ(s.find(4, d), nullptr);
  EXPECT_EQ(s.size(), 2);
  EXPECT_EQ(s.saved(), 3);
  s.save(1, a, state_of(1).data());  // the same again: stays
  s.save(5, d, state_of(5).data());  // no spare: the least recently used (3) goes
  EXPECT_EQ(s.find(3, c), nullptr);
  ASSERT_NE(s.find(1, a), nullptr);
  // A spare one replaces a spare one.
  StateSnapshots one(kFloats, 1);
  one.save(1, a, state_of(1).data(), INT32_MAX, SnapshotRank::Spare);
  one.save(2, b, state_of(2).data(), INT32_MAX, SnapshotRank::Spare);
  EXPECT_EQ(one.find(1, a), nullptr);
  ASSERT_NE(one.find(2, b), nullptr);
}

TEST(StateSnapshots, KeepWhereTheirPromptEndedAndAFilterCanRefuseThem) {
  StateSnapshots s(kFloats, 4);
  const auto a = tokens(8, 1);
  s.save(1, a, state_of(1).data(), 6);
  s.save(1, a, state_of(2).data(), 99);  // the same tokens again: the first one stays
  int32_t until = 0;
  ASSERT_NE(s.find(1, a, &until), nullptr);
  EXPECT_EQ(until, 6);
  EXPECT_EQ(s.find(1, a)[0], 1.0f);

  auto m = make(64);
  StateSnapshots snaps(kFloats, 8);
  RecurrentStatePool pool(kFloats);
  const auto first = tokens(14, 1);
  run_and_snapshot(*m, snaps, first, {4, 12}, 0.5f);
  // Refusing the snapshot at 12 falls back to the one at 4; refusing both resumes nothing.
  const int b = m->new_seq();
  std::vector<int32_t> seen;
  EXPECT_EQ(match_prefix_with_state(*m, snaps, pool, b, first, [&](int32_t len, int32_t u) {
              seen.push_back(len);
              EXPECT_EQ(u, INT32_MAX);  // saved without one
              return len != 12;
            }), 4);
  EXPECT_EQ(pool.state(b)[0], 4.5f);
  EXPECT_EQ(seen, (std::vector<int32_t>{12, 4}));
  m->free_seq(b);
  const int c = m->new_seq();
  EXPECT_EQ(match_prefix_with_state(*m, snaps, pool, c, first, [](int32_t, int32_t) { return false; }), 0);
  m->free_seq(c);
}

TEST(StateSnapshots, EvictedKvBlocksVoidTheirSnapshot) {
  auto m = make(16);  // 4 blocks
  StateSnapshots s(kFloats, 8);
  RecurrentStatePool pool(kFloats);
  const auto first = tokens(13, 1);
  run_and_snapshot(*m, s, first, {8, 12}, 0.0f);
  // Another prompt fills the pool, evicting the cached blocks of `first` (least recently released first).
  run_and_snapshot(*m, s, tokens(16, 300), {}, 0.0f);
  const int b = m->new_seq();
  EXPECT_EQ(match_prefix_with_state(*m, s, pool, b, first), 0);
  EXPECT_EQ(m->seq_len(b), 0);
  EXPECT_EQ(s.hits(), 0);
  m->free_seq(b);
}

}  // namespace
}  // namespace nt

// Tests for sampling/candidates.h: each stage's effect on hand-made distributions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "sampling/candidates.h"

namespace nt {
namespace {

const float kInf = std::numeric_limits<float>::infinity();

Candidates from_logits(const std::vector<float>& logits) {
  Candidates c;
  c.assign(logits);
  return c;
}
// Logits whose softmax is exactly `probs` (log of each).
Candidates from_probs(const std::vector<float>& probs) {
  std::vector<float> l;
  for (float p : probs) l.push_back(std::log(p));
  return from_logits(l);
}
std::vector<int32_t> ids(const Candidates& c) {
  std::vector<int32_t> out;
  for (const Candidate& x : c.items) out.push_back(x.id);
  return out;
}
std::vector<int32_t> sorted_ids(const Candidates& c) {
  auto v = ids(c);
  std::sort(v.begin(), v.end());
  return v;
}

TEST(LogitBias, AddsAndBans) {
  Candidates c = from_logits({1, 2, 3, 4});
  std::vector<LogitBias> b = {{0, 5.0f}, {3, -kInf}, {2, -1.0f}, {99, 1.0f}};
  apply_logit_bias(c, b);
  EXPECT_FLOAT_EQ(c.items[0].logit, 6.0f);
  EXPECT_FLOAT_EQ(c.items[1].logit, 2.0f);
  EXPECT_FLOAT_EQ(c.items[2].logit, 2.0f);
  EXPECT_EQ(c.items[3].logit, -kInf);
  std::vector<float> p;
  softmax(c, p);
  EXPECT_EQ(p[3], 0.0f);
}

TEST(Penalties, RepeatDividesPositiveAndMultipliesNegative) {
  Candidates c = from_logits({2.0f, -2.0f, 3.0f, 1.0f});
  std::vector<int32_t> hist = {0, 1, 0};
  apply_penalties(c, hist, 2.0f, 0.0f, 0.0f);
  EXPECT_FLOAT_EQ(c.items[0].logit, 1.0f);   // 2 / 2
  EXPECT_FLOAT_EQ(c.items[1].logit, -4.0f);  // -2 * 2
  EXPECT_FLOAT_EQ(c.items[2].logit, 3.0f);   // not seen
  EXPECT_FLOAT_EQ(c.items[3].logit, 1.0f);
}

TEST(Penalties, FrequencyScalesWithCountPresenceDoesNot) {
  Candidates c = from_logits({0.0f, 0.0f, 0.0f});
  std::vector<int32_t> hist = {0, 0, 0, 1};
  apply_penalties(c, hist, 1.0f, 0.5f, 0.25f);
  EXPECT_FLOAT_EQ(c.items[0].logit, -(3 * 0.5f + 0.25f));
  EXPECT_FLOAT_EQ(c.items[1].logit, -(1 * 0.5f + 0.25f));
  EXPECT_FLOAT_EQ(c.items[2].logit, 0.0f);
}

TEST(TopK, KeepsHighestSortedWithIdTieBreak) {
  Candidates c = from_logits({1, 5, 3, 5, 2, 4});
  apply_top_k(c, 3);
  EXPECT_EQ(ids(c), (std::vector<int32_t>{1, 3, 5}));
  EXPECT_TRUE(c.fully_sorted());
  Candidates d = from_logits({1, 2});
  apply_top_k(d, 0);  // disabled
  EXPECT_EQ(d.size(), 2u);
  apply_top_k(d, 10);  // larger than the list
  EXPECT_EQ(d.size(), 2u);
}

TEST(TopK, LargeVocabMatchesFullSort) {
  std::vector<float> l(150000);
  uint32_t s = 1;
  for (float& x : l) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / 65536.0f;
  }
  Candidates c = from_logits(l);
  apply_top_k(c, 40);
  std::vector<Candidate> all;
  for (size_t i = 0; i < l.size(); ++i) all.push_back({static_cast<int32_t>(i), l[i]});
  std::sort(all.begin(), all.end(), candidate_before);
  ASSERT_EQ(c.size(), 40u);
  for (size_t i = 0; i < 40; ++i) EXPECT_EQ(c.items[i].id, all[i].id);
}

TEST(TopK, OnePassSelectionEqualsAssignThenTopK) {
  // Many ties (values in 0..9) so the id tie-break decides membership at the boundary.
  std::vector<float> l(5000);
  uint32_t s = 7;
  for (float& x : l) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>((s >> 16) % 10);
  }
  l[17] = std::numeric_limits<float>::quiet_NaN();
  for (size_t k : {1u, 3u, 40u, 499u, 500u, 501u, 4999u, 5000u, 6000u}) {
    Candidates a = from_logits(l);
    apply_top_k(a, static_cast<int>(k));
    Candidates b;
    b.assign_top_k(l, k);
    ASSERT_EQ(ids(a), ids(b)) << "k=" << k;
    EXPECT_EQ(a.fully_sorted(), b.fully_sorted());
    EXPECT_EQ(a.id_order, b.id_order);
  }
}

TEST(TopP, KeepsSmallestNucleus) {
  // probs 0.5 0.3 0.15 0.05 (ids shuffled)
  Candidates c = from_probs({0.15f, 0.5f, 0.05f, 0.3f});
  apply_top_p(c, 0.7f);  // 0.5 < 0.7 <= 0.8
  EXPECT_EQ(ids(c), (std::vector<int32_t>{1, 3}));
  Candidates d = from_probs({0.15f, 0.5f, 0.05f, 0.3f});
  apply_top_p(d, 0.9f);  // 0.8 < 0.9 <= 0.95
  EXPECT_EQ(ids(d), (std::vector<int32_t>{1, 3, 0}));
  Candidates e = from_probs({0.15f, 0.5f, 0.05f, 0.3f});
  apply_top_p(e, 0.1f);  // the top token alone
  EXPECT_EQ(ids(e), (std::vector<int32_t>{1}));
  Candidates f = from_probs({0.15f, 0.5f, 0.05f, 0.3f});
  apply_top_p(f, 1.0f);  // disabled
  EXPECT_EQ(f.size(), 4u);
}

TEST(TopP, GrowsPastFirstBlockOnFlatDistribution) {
  // 10000 equal logits: top-p 0.5 must keep exactly 5000 (needs several growth rounds).
  Candidates c = from_logits(std::vector<float>(10000, 0.0f));
  apply_top_p(c, 0.5f);
  EXPECT_EQ(c.size(), 5000u);
  EXPECT_EQ(c.items.front().id, 0);  // ties by id
  EXPECT_EQ(c.items.back().id, 4999);
}

TEST(MinP, KeepsTokensAboveFractionOfMax) {
  Candidates c = from_probs({0.15f, 0.5f, 0.05f, 0.3f});
  apply_min_p(c, 0.2f);  // threshold 0.1
  EXPECT_EQ(sorted_ids(c), (std::vector<int32_t>{0, 1, 3}));
  Candidates d = from_probs({0.15f, 0.5f, 0.05f, 0.3f});
  apply_min_p(d, 0.65f);  // threshold 0.325: only 0.5
  EXPECT_EQ(ids(d), (std::vector<int32_t>{1}));
  Candidates e = from_probs({0.15f, 0.5f, 0.05f, 0.3f});
  apply_min_p(e, 0.0f);  // disabled
  EXPECT_EQ(e.size(), 4u);
}

TEST(Typical, KeepsTokensNearTheEntropy) {
  // probs 0.5 0.2 0.2 0.1: H = 1.2206 nats; surprisals 0.693 1.609 1.609 2.303;
  // distances 0.527 0.389 0.389 1.082 -> order: id1, id2 (0.2 each, 0.4), id0 (0.9), id3.
  Candidates c = from_probs({0.5f, 0.2f, 0.2f, 0.1f});
  apply_typical(c, 0.3f);  // 0.2 < 0.3 <= 0.4
  EXPECT_EQ(ids(c), (std::vector<int32_t>{1, 2}));
  // The most likely token is not the most typical: typical-p can drop it.
  Candidates d = from_probs({0.5f, 0.2f, 0.2f, 0.1f});
  apply_typical(d, 0.5f);  // needs id0 as well; result back in logit order
  EXPECT_EQ(ids(d), (std::vector<int32_t>{0, 1, 2}));
  Candidates e = from_probs({0.5f, 0.2f, 0.2f, 0.1f});
  apply_typical(e, 1.0f);
  EXPECT_EQ(e.size(), 4u);
}

TEST(Temperature, ScalesLogits) {
  Candidates c = from_logits({1.0f, 2.0f, 3.0f});
  apply_temperature(c, 0.5f);
  std::vector<float> p;
  softmax(c, p);
  Candidates ref = from_logits({2.0f, 4.0f, 6.0f});
  std::vector<float> q;
  softmax(ref, q);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(p[i], q[i], 1e-6);
  // Higher temperature flattens: entropy rises.
  Candidates hot = from_logits({1.0f, 2.0f, 3.0f});
  apply_temperature(hot, 2.0f);
  std::vector<float> ph;
  softmax(hot, ph);
  EXPECT_GT(entropy_bits(ph), entropy_bits(p));
}

TEST(Temperature, ZeroIsGreedyWithIdTieBreak) {
  Candidates c = from_logits({1.0f, 7.0f, 3.0f, 7.0f});
  apply_temperature(c, 0.0f);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c.items[0].id, 1);
}

TEST(Softmax, SumsToOneAndHandlesBanned) {
  Candidates c = from_logits({0.0f, std::log(3.0f), -kInf});
  std::vector<float> p;
  softmax(c, p);
  EXPECT_NEAR(p[0], 0.25f, 1e-6);
  EXPECT_NEAR(p[1], 0.75f, 1e-6);
  EXPECT_EQ(p[2], 0.0f);
  EXPECT_NEAR(entropy_bits(std::vector<float>{0.5f, 0.5f}), 1.0, 1e-12);
  EXPECT_NEAR(entropy_bits(std::vector<float>{1.0f, 0.0f}), 0.0, 1e-12);
}

TEST(Draw, NeverPicksZeroProbability) {
  Rng rng(5);
  std::vector<float> p = {0.0f, 0.5f, 0.0f, 0.5f, 0.0f};
  for (int i = 0; i < 2000; ++i) {
    const size_t k = draw_index(p, rng);
    ASSERT_TRUE(k == 1 || k == 3) << k;
  }
}

}  // namespace
}  // namespace nt

// Tests for sampling/sampler.h: the whole chain against a straightforward reference, greedy,
// seeded reproducibility, the penalty window, --logit-bias parsing, validation, and a chi-square
// test of draw frequencies.
//
// Chi-square significance level: alpha = 0.001. The seed is fixed, so each test is deterministic;
// alpha says how unlikely a correct sampler is to fail with a seed picked at random (1 in 1000).
// Each chi-square test also checks its own power: the same counts against a slightly wrong
// distribution must be rejected, so the test can fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "sampling/sampler.h"

namespace nt {
namespace {

SamplerParams no_filters(float temp = 1.0f) {
  SamplerParams p;
  p.temp = temp;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.seed = 1;
  return p;
}

std::vector<float> log_probs(const std::vector<double>& probs) {
  std::vector<float> l;
  for (double p : probs) l.push_back(static_cast<float>(std::log(p)));
  return l;
}

double chi_square(const std::vector<int>& counts, const std::vector<double>& expected_p, int n) {
  double chi2 = 0.0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const double e = expected_p[i] * n;
    chi2 += (counts[i] - e) * (counts[i] - e) / e;
  }
  return chi2;
}

TEST(SamplerChiSquare, DrawFrequenciesMatchDistribution) {
  const std::vector<double> probs = {0.30, 0.25, 0.20, 0.12, 0.08, 0.05};
  SamplerParams p = no_filters();
  p.seed = 20261129;
  Sampler s(p, 6, 0);
  const auto logits = log_probs(probs);
  const int n = 60000;
  std::vector<int> counts(6, 0);
  for (int i = 0; i < n; ++i) ++counts[static_cast<size_t>(s.sample(logits))];
  const double chi2 = chi_square(counts, probs, n);
  const double critical_df5 = 20.515;  // chi-square quantile, df 5, alpha 0.001
  EXPECT_LT(chi2, critical_df5);
  // Power: a distribution 10% hotter (temperature 1.1) must be rejected by these counts.
  std::vector<double> hotter(6);
  double z = 0.0;
  for (size_t i = 0; i < 6; ++i) z += hotter[i] = std::pow(probs[i], 1.0 / 1.1);
  for (double& h : hotter) h /= z;
  EXPECT_GT(chi_square(counts, hotter, n), critical_df5);
}

TEST(SamplerChiSquare, FrequenciesAfterTopKAndTemperature) {
  // top-k 3 then temperature 0.5: expected p_i ~ q_i^2 over the three largest.
  const std::vector<double> probs = {0.05, 0.40, 0.10, 0.30, 0.15};
  SamplerParams p = no_filters(0.5f);
  p.top_k = 3;
  p.seed = 99;
  Sampler s(p, 5, 0);
  const auto logits = log_probs(probs);
  const int n = 40000;
  std::map<int32_t, int> seen;
  for (int i = 0; i < n; ++i) ++seen[s.sample(logits)];
  ASSERT_EQ(seen.size(), 3u);  // only ids 1, 3, 4 are possible
  std::vector<int> counts = {seen[1], seen[3], seen[4]};
  std::vector<double> expected = {0.16, 0.09, 0.0225};
  double z = 0.0;
  for (double e : expected) z += e;
  for (double& e : expected) e /= z;
  const double critical_df2 = 13.816;  // df 2, alpha 0.001
  EXPECT_LT(chi_square(counts, expected, n), critical_df2);
  // Power: the untempered top-3 distribution must be rejected.
  std::vector<double> untempered = {0.40 / 0.85, 0.30 / 0.85, 0.15 / 0.85};
  EXPECT_GT(chi_square(counts, untempered, n), critical_df2);
}

// A straightforward implementation of the documented chain: full sorts, probabilities everywhere.
std::vector<std::pair<int32_t, double>> reference_chain(std::vector<float> l, const SamplerParams& p,
                                                        const std::vector<int32_t>& history) {
  for (const LogitBias& b : p.logit_bias) l[static_cast<size_t>(b.token)] += b.bias;
  std::map<int32_t, int> count;
  for (int32_t t : history) ++count[t];
  for (auto [t, n] : count) {
    float& x = l[static_cast<size_t>(t)];
    x = x > 0 ? x / p.repeat_penalty : x * p.repeat_penalty;
    x -= static_cast<float>(n) * p.frequency_penalty + p.presence_penalty;
  }
  std::vector<Candidate> c;
  for (size_t i = 0; i < l.size(); ++i) c.push_back({static_cast<int32_t>(i), l[i]});
  std::sort(c.begin(), c.end(), candidate_before);
  auto probs = [](const std::vector<Candidate>& v, double t) {
    std::vector<double> q;
    double z = 0.0;
    for (const auto& x : v) z += std::exp((x.logit - v[0].logit) / t);
    for (const auto& x : v) q.push_back(std::exp((x.logit - v[0].logit) / t) / z);
    return q;
  };
  if (p.top_k > 0 && static_cast<size_t>(p.top_k) < c.size()) c.resize(static_cast<size_t>(p.top_k));
  if (p.typical_p < 1.0f) {
    auto q = probs(c, 1.0);
    double h = 0.0;
    for (double x : q) h -= x * std::log(x);
    std::vector<size_t> order(c.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return std::fabs(-std::log(q[a]) - h) < std::fabs(-std::log(q[b]) - h);
    });
    std::vector<Candidate> kept;
    double cum = 0.0;
    for (size_t i : order) {
      kept.push_back(c[i]);
      cum += q[i];
      if (cum >= p.typical_p) break;
    }
    std::sort(kept.begin(), kept.end(), candidate_before);
    c = kept;
  }
  if (p.top_p < 1.0f) {
    auto q = probs(c, 1.0);
    double cum = 0.0;
    size_t keep = c.size();
    for (size_t i = 0; i < q.size(); ++i) {
      cum += q[i];
      if (cum >= p.top_p) {
        keep = i + 1;
        break;
      }
    }
    c.resize(keep);
  }
  if (p.min_p > 0.0f) {
    auto q = probs(c, 1.0);
    std::vector<Candidate> kept;
    for (size_t i = 0; i < c.size(); ++i)
      if (q[i] >= p.min_p * q[0]) kept.push_back(c[i]);
    c = kept;
  }
  auto q = probs(c, p.temp > 0 ? p.temp : 1.0);
  std::vector<std::pair<int32_t, double>> out;
  for (size_t i = 0; i < c.size(); ++i) out.push_back({c[i].id, q[i]});
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

TEST(SamplerChain, MatchesReferenceOnRandomCases) {
  Rng gen(2026);
  const int32_t n_vocab = 3000;
  for (int trial = 0; trial < 60; ++trial) {
    std::vector<float> logits(n_vocab);
    const double scale = 1.0 + 6.0 * gen.uniform();
    for (float& x : logits) x = static_cast<float>((gen.uniform() * 2.0 - 1.0) * scale);
    SamplerParams p;
    p.seed = trial;
    p.temp = static_cast<float>(0.3 + 1.5 * gen.uniform());
    p.top_k = trial % 3 == 0 ? 0 : static_cast<int>(1 + gen.uniform() * 500);
    p.top_p = trial % 4 == 1 ? 1.0f : static_cast<float>(0.5 + 0.49 * gen.uniform());
    p.min_p = trial % 5 == 2 ? 0.0f : static_cast<float>(0.2 * gen.uniform());
    p.typical_p = trial % 3 == 1 ? static_cast<float>(0.3 + 0.6 * gen.uniform()) : 1.0f;
    p.repeat_penalty = trial % 2 ? 1.3f : 1.0f;
    p.frequency_penalty = trial % 4 == 3 ? 0.2f : 0.0f;
    p.presence_penalty = trial % 4 == 0 ? 0.5f : 0.0f;
    p.repeat_last_n = 16;
    if (trial % 6 == 5) p.logit_bias = {{7, 20.0f}, {8, -INFINITY}};
    Sampler s(p, n_vocab, 0);
    std::vector<int32_t> hist;
    for (int i = 0; i < 40; ++i) hist.push_back(static_cast<int32_t>(gen.uniform() * 50));
    s.accept(hist);
    const std::vector<int32_t> window(hist.end() - 16, hist.end());
    StepInfo info;
    const int32_t tok = s.sample(logits, &info, n_vocab);
    const auto ref = reference_chain(logits, p, window);
    ASSERT_EQ(info.n_candidates, ref.size()) << "trial " << trial;
    ASSERT_EQ(info.top.size(), ref.size());
    for (size_t i = 0; i < ref.size(); ++i) {
      EXPECT_EQ(info.top[i].token, ref[i].first) << "trial " << trial << " rank " << i;
      EXPECT_NEAR(info.top[i].prob, ref[i].second, 1e-5) << "trial " << trial;
    }
    EXPECT_TRUE(std::any_of(ref.begin(), ref.end(), [&](const auto& r) { return r.first == tok; }));
    EXPECT_EQ(info.token, tok);
  }
}

TEST(Sampler, GreedyIsArgmaxAndReportsProbabilities) {
  SamplerParams p;  // defaults: top-k 40, top-p 0.95, min-p 0.05
  p.temp = 0.0f;
  Sampler s(p, 5, 0);
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 3.0f, -1.0f};
  EXPECT_EQ(s.sample(logits), 1);  // tie with id 3 -> lowest id
  StepInfo info;
  EXPECT_EQ(s.sample(logits, &info, 3), 1);
  EXPECT_EQ(info.token, 1);
  ASSERT_EQ(info.top.size(), 3u);
  EXPECT_EQ(info.top[0].token, 1);
  EXPECT_EQ(info.top[1].token, 3);
  EXPECT_NEAR(info.top[0].prob, info.top[1].prob, 1e-7);
  EXPECT_GT(info.entropy, 0.0);
}

// The raw greedy path (no bias, penalties or step info) scans the logits in vector-friendly passes:
// it must pick what a plain strict-greater scan picks: the lowest id of the largest logit, NaN
// never, id 0 when no logit exceeds -inf; lengths around the 16-lane blocks and the vocab size.
TEST(Sampler, GreedyRawArgmaxIsTheFirstLargestLogit) {
  auto scan = [](const std::vector<float>& x) {
    size_t best = 0;
    float best_l = -std::numeric_limits<float>::infinity();
    for (size_t i = 0; i < x.size(); ++i)
      if (x[i] > best_l) best_l = x[i], best = i;
    return static_cast<int32_t>(best);
  };
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::mt19937 rng(5);
  SamplerParams p;
  p.temp = 0.0f;
  for (size_t n : {size_t(1), size_t(2), size_t(15), size_t(16), size_t(17), size_t(40), size_t(151936)}) {
    Sampler s(p, static_cast<int32_t>(n), 0);
    auto pick = [&] { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
    for (int trial = 0; trial < 24; ++trial) {
      std::vector<float> x(n);
      std::normal_distribution<float> nd(0.0f, 3.0f);
      for (float& v : x) v = nd(rng);
      switch (trial % 8) {
        case 1: x[pick()] = 20.0f, x[pick()] = 20.0f; break;                     // ties
        case 2: for (int k = 0; k < 5; ++k) x[pick()] = nan; x[0] = nan; break;  // NaN never wins
        case 3: x[pick()] = inf, x[pick()] = inf; break;
        case 4: std::fill(x.begin(), x.end(), nan); break;
        case 5: std::fill(x.begin(), x.end(), -inf); x[pick()] = nan; break;
        case 6: x[n - 1] = 30.0f; break;                                        // past the last whole block
        case 7: std::fill(x.begin(), x.end(), -0.0f); x[pick()] = 0.0f; break;  // +0 == -0: the first
        default: break;
      }
      EXPECT_EQ(s.sample(x), scan(x)) << "n " << n << " trial " << trial;
    }
  }
}

TEST(Sampler, GreedyRespectsBias) {
  SamplerParams p;
  p.temp = 0.0f;
  p.logit_bias = {{1, -INFINITY}, {3, -INFINITY}};
  Sampler s(p, 5, 0);
  EXPECT_EQ(s.sample(std::vector<float>{1.0f, 3.0f, 2.0f, 3.0f, -1.0f}), 2);
}

TEST(Sampler, SameSeedSameStreamDifferentSeedDifferent) {
  std::vector<float> logits(1000);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = static_cast<float>(std::sin(i * 0.37));
  auto run = [&](uint64_t seed) {
    SamplerParams p = no_filters(1.0f);
    p.seed = seed;
    Sampler s(p, 1000, 0);
    std::vector<int32_t> out;
    for (int i = 0; i < 200; ++i) out.push_back(s.sample(logits));
    s.reset();
    EXPECT_EQ(s.sample(logits), out[0]);  // reset restarts the stream
    return out;
  };
  EXPECT_EQ(run(42), run(42));
  EXPECT_NE(run(42), run(43));
  SamplerParams p = no_filters();
  p.seed = std::nullopt;
  Sampler a(p, 10, 0), b(p, 10, 0);
  EXPECT_NE(a.seed(), b.seed());
}

TEST(Sampler, PenaltyWindowForgetsOldTokens) {
  SamplerParams p;
  p.temp = 0.0f;
  p.repeat_last_n = 2;
  p.presence_penalty = 10.0f;
  Sampler s(p, 4, 0);
  const std::vector<float> logits = {5.0f, 4.0f, 3.0f, 0.0f};
  s.accept(0);
  EXPECT_EQ(s.sample(logits), 1);  // 0 is penalized
  s.accept(1);
  EXPECT_EQ(s.sample(logits), 2);  // 0 and 1 penalized
  s.accept(2);                     // window now {1, 2}: 0 is forgotten
  EXPECT_EQ(s.sample(logits), 0);
}

TEST(Sampler, RepeatLastNMinusOneUsesContext) {
  SamplerParams p;
  p.temp = 0.0f;
  p.repeat_last_n = -1;
  p.presence_penalty = 10.0f;
  Sampler s(p, 4, 8);
  s.accept(std::vector<int32_t>{0, 3, 3, 3, 3, 3, 3, 3});  // 8 tokens: 0 still inside
  EXPECT_EQ(s.sample(std::vector<float>{5.0f, 4.0f, 3.0f, 0.0f}), 1);
  s.accept(3);  // 9th token pushes 0 out
  EXPECT_EQ(s.sample(std::vector<float>{5.0f, 4.0f, 3.0f, 0.0f}), 0);
}

TEST(LogitBiasParse, AcceptsLlamaCppForms) {
  auto a = parse_logit_bias("15043+1.5");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->token, 15043);
  EXPECT_FLOAT_EQ(a->bias, 1.5f);
  auto b = parse_logit_bias("2-inf");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->token, 2);
  EXPECT_TRUE(std::isinf(b->bias) && b->bias < 0);
  auto c = parse_logit_bias("7-0.25");
  ASSERT_TRUE(c.ok());
  EXPECT_FLOAT_EQ(c->bias, -0.25f);
  for (const char* bad : {"", "abc", "12", "12+", "+3", "12*3", "12+x", "12+-3", "12+nan",
                          "1234567890+1"})
    EXPECT_FALSE(parse_logit_bias(bad).ok()) << bad;
}

TEST(Validate, NamesTheFlag) {
  SamplerParams p;
  EXPECT_TRUE(validate(p).ok());
  p.top_p = 1.5f;
  auto e = validate(p);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message, "top_p must be between 0 and 1 (got 1.5)");  // API names, no CLI flags
  p = SamplerParams{};
  p.logit_bias = {{100, 1.0f}};
  EXPECT_TRUE(validate(p).ok());  // the vocabulary is only known once a model is loaded
  e = validate_for_vocab(p, 100);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("logit_bias"), std::string::npos);
  EXPECT_TRUE(validate_for_vocab(p, 101).ok());
  p = SamplerParams{};
  p.temp = NAN;
  EXPECT_FALSE(validate(p).ok());
  p = SamplerParams{};
  p.repeat_last_n = -2;
  EXPECT_FALSE(validate(p).ok());
}

TEST(Describe, ListsActiveStagesInOrder) {
  SamplerParams p;
  EXPECT_EQ(describe(p), "top-k 40 -> top-p 0.95 -> min-p 0.05 -> temp 0.80");
  p.temp = 0;
  p.top_k = 0;
  p.top_p = 1;
  p.min_p = 0;
  EXPECT_EQ(describe(p), "greedy");
}

}  // namespace
}  // namespace nt

// qwen35 prefill of a ~200-token prompt (the model of GoldenSynth.Qwen35_F32): its Gated DeltaNet
// layers take whole windows of 64 positions aligned in the sequence in the chunked form, the rest
// token by token. Prefill steps cut at multiples of 64 (-b 64, 128, 192, one step) give the same
// logits bit for bit; -b 50 (never a whole window: all token by token) and a token-by-token decode
// of the whole prompt agree with them within the golden tolerance (0.02 on F32 logits), and differ
// in bits (the chunked form is in use).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "engine/engine.h"
#include "model/model.h"
#include "support/test_support.h"

namespace nt {
namespace {

constexpr double kGoldenF32LogitTol = 0.02;  // ../shared/tools/golden_compare.py, F32 models

const std::string& model_path() { return test::qwen35_f32_model(); }

std::vector<int32_t> prompt(int n) {
  std::vector<int32_t> t;
  uint32_t x = 12345u;
  for (int i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    t.push_back(static_cast<int32_t>(3 + (x >> 8) % 31000u));
  }
  return t;
}

constexpr int kPrompt = 203;
constexpr int kDecode = 6;

// The logits after the prompt (prefilled in steps of n_batch; 1: decoded token by token), then
// after each of kDecode more tokens decoded one at a time.
std::vector<float> logits(int n_batch) {
  auto m = Model::load(model_path());
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  if (!m) return {};
  EngineOptions o;
  o.n_threads = 2;
  o.n_batch = n_batch;
  o.n_ctx = 512;
  auto e = Engine::create(std::move(*m), o);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message);
  if (!e) return {};
  Engine& eng = **e;
  const int V = eng.config().n_vocab;
  const std::vector<int32_t> toks = prompt(kPrompt + kDecode);
  const int seq = eng.new_seq();
  std::vector<float> out;
  auto r = eng.eval(seq, toks.data(), kPrompt);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  if (!r) return {};
  out.insert(out.end(), *r, *r + V);
  for (int i = kPrompt; i < kPrompt + kDecode; ++i) {
    auto s = eng.eval(seq, &toks[size_t(i)], 1);
    EXPECT_TRUE(s.ok());
    if (!s) return {};
    out.insert(out.end(), *s, *s + V);
  }
  return out;
}

double worst_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double w = 0;
  for (size_t i = 0; i < a.size(); ++i) w = std::max(w, std::abs(double(a[i]) - double(b[i])));
  return w;
}

TEST(Qwen35Prefill, StepsCutAtMultiplesOfTheChunkGiveTheSameLogitsBitForBit) {
  NT_REQUIRE_SHARED();
  const std::vector<float> whole = logits(512);
  ASSERT_EQ(whole.size(), size_t(kDecode + 1) * 32000);
  for (int b : {64, 128, 192}) {
    const std::vector<float> got = logits(b);
    ASSERT_EQ(got.size(), whole.size());
    EXPECT_EQ(0, std::memcmp(got.data(), whole.data(), whole.size() * sizeof(float)))
        << "-b " << b << ": worst |logit diff| " << worst_diff(got, whole);
  }
}

TEST(Qwen35Prefill, TokenByTokenAndUnalignedStepsAgreeWithinTheGoldenTolerance) {
  NT_REQUIRE_SHARED();
  const std::vector<float> whole = logits(512);
  for (int b : {50, 1}) {
    const std::vector<float> got = logits(b);
    ASSERT_EQ(got.size(), whole.size());
    const double w = worst_diff(got, whole);
    EXPECT_LT(w, kGoldenF32LogitTol) << "-b " << b;
    // Not the same bits: the whole prompt's aligned windows went through the chunked form.
    EXPECT_NE(0, std::memcmp(got.data(), whole.data(), whole.size() * sizeof(float))) << "-b " << b;
  }
}

}  // namespace
}  // namespace nt

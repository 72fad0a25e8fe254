// Tests of the reference quantizers (tensor/quantize.h): quantize -> dequantize error on fixed
// random tensors against bounds measured with llama.cpp, exact cases, and determinism.
//
// The bounds: llama.cpp (ggml_quantize_chunk + to_float, Sep 2026 build, no imatrix) was run on the
// very same tensors (same generator, reimplemented in a throwaway C harness against libggml-base)
// and gave the RMSE values in kLlamaRmse. We require ours to be no worse than 1.1x those.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tensor/dequant.h"
#include "tensor/fp16.h"
#include "tensor/quant_blocks.h"
#include "tensor/quantize.h"

namespace nt {
namespace {

constexpr int kRows = 32, kCols = 2048;

// xorshift64 -> 24-bit uniform; Irwin-Hall(12) approximately normal. kind 1 adds an outlier
// (x8) every 97 values, the shape that stresses per-block scales.
struct Gen {
  uint64_t s;
  float uni() {
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    return static_cast<float>(s >> 40) / 16777216.0f;
  }
  float gauss() {
    float t = 0;
    for (int i = 0; i < 12; ++i) t += uni();
    return t - 6.0f;
  }
};

std::vector<float> fixed_tensor(int kind) {
  Gen g{0x9E3779B97F4A7C15ull + static_cast<uint64_t>(kind)};
  std::vector<float> x(static_cast<size_t>(kRows) * kCols);
  for (size_t i = 0; i < x.size(); ++i) {
    float v = g.gauss();
    if (kind == 1 && i % 97 == 0) v *= 8;
    x[i] = 0.02f * v;
  }
  return x;
}

double rmse_roundtrip(DType type, const std::vector<float>& x, QuantEffort effort = QuantEffort::kBest) {
  const uint64_t row_bytes = dtype_row_bytes(type, kCols);
  std::vector<uint8_t> q(row_bytes * kRows);
  std::vector<float> y(x.size());
  for (int r = 0; r < kRows; ++r) {
    quantize_row(type, x.data() + static_cast<size_t>(r) * kCols, q.data() + row_bytes * r, kCols, effort);
    dequantize_row(type, q.data() + row_bytes * r, y.data() + static_cast<size_t>(r) * kCols, kCols);
  }
  double e = 0;
  for (size_t i = 0; i < x.size(); ++i) e += (static_cast<double>(x[i]) - y[i]) * (static_cast<double>(x[i]) - y[i]);
  return std::sqrt(e / static_cast<double>(x.size()));
}

struct Ref {
  DType type;
  double rmse[2];  // llama.cpp's RMSE on kind 0 (gaussian) and kind 1 (with outliers)
};
constexpr Ref kLlamaRmse[] = {
    {DType::Q8_0, {1.052832e-04, 2.311841e-04}}, {DType::Q4_0, {1.685907e-03, 3.611983e-03}},
    {DType::Q4_1, {1.539390e-03, 2.518930e-03}}, {DType::Q5_0, {8.364206e-04, 1.827903e-03}},
    {DType::Q5_1, {7.467532e-04, 1.215492e-03}}, {DType::Q4_K, {1.406943e-03, 2.350109e-03}},
    {DType::Q5_K, {7.136886e-04, 1.177162e-03}}, {DType::Q6_K, {3.505541e-04, 6.835490e-04}},
    {DType::F16, {4.158223e-06, 5.409244e-06}},  {DType::BF16, {3.325407e-05, 4.273739e-05}},
};

TEST(Quantize, RmseWithinTenPercentOfLlamaCpp) {
  for (int kind = 0; kind < 2; ++kind) {
    const auto x = fixed_tensor(kind);
    for (const auto& ref : kLlamaRmse) {
      const double ours = rmse_roundtrip(ref.type, x);
      std::printf("kind %d %-5s ours %.4e  llama.cpp %.4e  ratio %.3f\n", kind,
                  std::string(dtype_name(ref.type)).c_str(), ours, ref.rmse[kind], ours / ref.rmse[kind]);
      EXPECT_LE(ours, 1.1 * ref.rmse[kind]) << dtype_name(ref.type) << " kind " << kind;
      EXPECT_GT(ours, 0.0) << dtype_name(ref.type);  // lossy types: zero error would mean no-op
    }
  }
}

TEST(Quantize, FastEffortStaysReasonable) {
  // synth's fast path skips the searches; it must still be a faithful encoding (within 1.5x)
  const auto x = fixed_tensor(0);
  for (const auto& ref : kLlamaRmse)
    EXPECT_LE(rmse_roundtrip(ref.type, x, QuantEffort::kFast), 1.5 * ref.rmse[0]) << dtype_name(ref.type);
}

TEST(Quantize, F32IsExactAndF16MatchesScalarConversion) {
  const auto x = fixed_tensor(1);
  std::vector<float> y(kCols);
  quantize_row(DType::F32, x.data(), y.data(), kCols);
  EXPECT_EQ(std::memcmp(x.data(), y.data(), kCols * 4), 0);
  std::vector<uint16_t> h(kCols);
  quantize_row(DType::F16, x.data(), h.data(), kCols);
  for (int i = 0; i < kCols; ++i) ASSERT_EQ(h[i], fp32_to_fp16(x[i]));
}

TEST(Quantize, ExactlyRepresentableBlocksRoundTrip) {
  // values k * 0.5 for k in [-8, 7] are exact in Q4_0 (d = -0.5... the largest magnitude is -4)
  std::vector<float> x(32);
  for (int i = 0; i < 32; ++i) x[i] = 0.5f * static_cast<float>((i % 16) - 8);
  BlockQ4_0 b;
  quantize_row(DType::Q4_0, x.data(), &b, 32);
  std::vector<float> y(32);
  dequantize_row(DType::Q4_0, &b, y.data(), 32);
  for (int i = 0; i < 32; ++i) EXPECT_FLOAT_EQ(y[i], x[i]) << i;
  // Q8_0: integers up to 127 with d = 1
  for (int i = 0; i < 32; ++i) x[i] = static_cast<float>(i * 4 - 64 + (i == 31 ? 3 : 0));
  BlockQ8_0 b8;
  quantize_row(DType::Q8_0, x.data(), &b8, 32);
  dequantize_row(DType::Q8_0, &b8, y.data(), 32);
  for (int i = 0; i < 32; ++i) EXPECT_NEAR(y[i], x[i], 0.5f) << i;
}

TEST(Quantize, ZerosAndConstantsStayFinite) {
  for (DType t : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
    for (float c : {0.0f, 1.0f, -3.0f}) {
      std::vector<float> x(256, c), y(256);
      std::vector<uint8_t> q(dtype_row_bytes(t, 256));
      quantize_row(t, x.data(), q.data(), 256);
      dequantize_row(t, q.data(), y.data(), 256);
      for (int i = 0; i < 256; ++i) {
        ASSERT_TRUE(std::isfinite(y[i])) << dtype_name(t);
        EXPECT_NEAR(y[i], c, std::fabs(c) * 0.02f + 1e-6f) << dtype_name(t) << " c=" << c;
      }
    }
  }
}

TEST(Quantize, Deterministic) {
  const auto x = fixed_tensor(1);
  for (DType t : {DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::Q4_0}) {
    std::vector<uint8_t> a(dtype_row_bytes(t, kCols)), b(a.size());
    quantize_row(t, x.data(), a.data(), kCols);
    quantize_row(t, x.data(), b.data(), kCols);
    EXPECT_EQ(a, b) << dtype_name(t);
  }
}

}  // namespace
}  // namespace nt

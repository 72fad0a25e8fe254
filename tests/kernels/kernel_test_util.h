// tests/kernels/kernel_test_util.h — random weights of every type (valid bit patterns with sane
// scale fields), SIMD-level iteration, and the per-type error budgets of the fast matmul.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/cpu_features.h"
#include "kernels/kernels.h"
#include "tensor/dequant.h"
#include "tensor/dtype.h"
#include "tensor/fp16.h"

namespace nt::test {

inline const std::vector<DType>& all_weight_types() {
  static const std::vector<DType> t = {DType::F32,  DType::F16,  DType::BF16, DType::Q4_0, DType::Q4_1,
                                       DType::Q5_0, DType::Q5_1, DType::Q8_0, DType::Q2_K, DType::Q3_K,
                                       DType::Q4_K, DType::Q5_K, DType::Q6_K};
  return t;
}

inline std::vector<SimdLevel> supported_levels() {
  std::vector<SimdLevel> v = {SimdLevel::Scalar};
  if (cpu_max_simd_level() >= SimdLevel::Avx2) v.push_back(SimdLevel::Avx2);
  if (cpu_max_simd_level() >= SimdLevel::Avx512) v.push_back(SimdLevel::Avx512);
  return v;
}

// Restores the dispatcher's level when a test ends.
struct LevelGuard {
  SimdLevel saved = simd_level();
  ~LevelGuard() { set_simd_level(saved); }
};

inline void put_f16(uint8_t* p, float v) {
  const uint16_t h = fp32_to_fp16(v);
  std::memcpy(p, &h, 2);
}

// A weight matrix of n_rows x n_cols: random quant bits, scale fields set to small values.
struct RandomWeights {
  std::vector<uint8_t> bytes;
  MatView view;
  RandomWeights(DType type, int64_t n_rows, int64_t n_cols, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const size_t row_bytes = dtype_row_bytes(type, n_cols);
    bytes.resize(row_bytes * n_rows);
    const float s = 1.0f / std::sqrt(static_cast<float>(n_cols));
    if (type == DType::F32 || type == DType::F16 || type == DType::BF16) {
      for (int64_t i = 0; i < n_rows * n_cols; ++i) {
        const float v = u(rng) * s * 4;
        if (type == DType::F32) std::memcpy(bytes.data() + 4 * i, &v, 4);
        else {
          const uint16_t h = type == DType::F16 ? fp32_to_fp16(v) : fp32_to_bf16(v);
          std::memcpy(bytes.data() + 2 * i, &h, 2);
        }
      }
    } else {
      for (auto& b : bytes) b = static_cast<uint8_t>(rng());
      const DTypeInfo& info = dtype_info(type);
      const size_t n_blocks = bytes.size() / info.type_size;
      for (size_t b = 0; b < n_blocks; ++b) {
        uint8_t* p = bytes.data() + b * info.type_size;
        const float d = (0.5f + 0.5f * std::fabs(u(rng))) * s;
        switch (type) {
          case DType::Q4_0: case DType::Q5_0: put_f16(p, d / 8); break;
          case DType::Q8_0: put_f16(p, d / 64); break;
          case DType::Q4_1: case DType::Q5_1: put_f16(p, d / 8); put_f16(p + 2, -d * u(rng)); break;
          case DType::Q2_K: put_f16(p + 80, d / 16); put_f16(p + 82, d / 32); break;
          case DType::Q3_K: put_f16(p + 108, d / 64); break;
          case DType::Q4_K: case DType::Q5_K: put_f16(p, d / 64); put_f16(p + 2, d / 128); break;
          case DType::Q6_K: put_f16(p + 208, d / 1024); break;
          default: break;
        }
      }
    }
    view = MatView{type, n_cols, n_rows, bytes.data(), row_bytes};
  }
};

inline std::vector<float> random_activations(int64_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, scale);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = g(rng);
  // A few outliers, as real activations have: they stress the per-block activation scales.
  for (int64_t i = 0; i < n; i += 97) x[static_cast<size_t>(i)] *= 8.0f;
  return x;
}

// ERROR BUDGETS of the fast matmul against matmul_ref (double accumulation of dequantized rows).
// Float sums: a sum of n products in float has at most about n * 2^-24 relative error of
// sum |w*x| (a loose worst case; real errors are far smaller but the bound cannot be wrong).
constexpr double kFloatSumRelPerTerm = 6.0e-8;
// Quantized weights multiply against activations quantized to int8 per 32-element block with scale
// amax/127: each activation is off by at most half a step, amax/254, so |error| <= sum over blocks
// of (amax_b / 254) * sum |w_i| in the block. The budget takes that bound with a 1% margin, plus
// the float-sum term above for the per-block scale arithmetic.
constexpr double kActQuantHalfStep = 1.0 / 254.0;
constexpr double kActQuantMargin = 1.01;

// The second, tight check for quantized types: the fast kernel must equal, up to float summation
// error only, the exact dot of the dequantized weights with the activations quantized the way the
// kernels document it (per 32 elements: d = amax / 127, q = round-to-nearest-even(x * (1 / d))).
// This catches any wrong offset, scale or bit in a decoder (the loose bound above cannot).
inline std::vector<float> q8_activations(const float* x, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t b = 0; b < n; b += 32) {
    float amax = 0;
    for (int64_t i = b; i < b + 32; ++i) amax = std::fmax(amax, std::fabs(x[i]));
    const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int64_t i = b; i < b + 32; ++i) out[static_cast<size_t>(i)] = std::nearbyint(x[i] * id) * d;
  }
  return out;
}
inline double exact_dot(const float* w, const float* x, int64_t n, double* sum_abs) {
  double s = 0, a = 0;
  for (int64_t i = 0; i < n; ++i) {
    s += static_cast<double>(w[i]) * x[i];
    a += std::fabs(static_cast<double>(w[i]) * x[i]);
  }
  *sum_abs = a;
  return s;
}

// F16 weights at the AVX2 and AVX-512 levels read activations rounded to fp16 after a per-token
// power-of-two scale (xquant.h, XLayout::F16): relative error <= 2^-11 per element, or absolute
// <= 2^-40 * max|x| below the fp16 normal range.
constexpr double kF16ActRel = 1.0 / 2048.0;
constexpr double kF16ActAbs = 1.0 / 1099511627776.0;  // 2^-40
inline bool f16_activations(DType type, SimdLevel level) { return type == DType::F16 && level >= SimdLevel::Avx2; }
// Those activations exactly as the kernels document them: e = min(15 - E, 140) for max|x| =
// m * 2^E (m in [0.5, 1)), round-to-nearest-even fp16 of x * 2^e, times 2^-e.
inline std::vector<float> f16_activations_of(const float* x, int64_t n) {
  float amax = 0;
  for (int64_t i = 0; i < n; ++i) amax = std::fmax(amax, std::fabs(x[i]));
  int e = 0;
  if (amax > 0 && std::isfinite(amax)) {
    int ex = 0;
    (void)std::frexp(amax, &ex);
    e = std::min(15 - ex, 140);
  }
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    out[static_cast<size_t>(i)] = std::ldexp(fp16_to_fp32(fp32_to_fp16(std::ldexp(x[i], e))), -e);
  return out;
}

// The allowed |fast - ref| for one output (row w_row, token x) of a weight type at a SIMD level.
inline double matmul_budget(DType type, const float* w_row, const float* x, int64_t n,
                            SimdLevel level = SimdLevel::Scalar) {
  double sum_abs = 0, w_abs = 0, x_max = 0;
  for (int64_t i = 0; i < n; ++i) {
    sum_abs += std::fabs(static_cast<double>(w_row[i]) * x[i]);
    w_abs += std::fabs(w_row[i]);
    x_max = std::fmax(x_max, std::fabs(x[i]));
  }
  double budget = kFloatSumRelPerTerm * static_cast<double>(n) * sum_abs + 1e-30;
  if (f16_activations(type, level)) budget += kF16ActRel * sum_abs + kF16ActAbs * x_max * w_abs;
  const bool quantized = !(type == DType::F32 || type == DType::F16 || type == DType::BF16);
  if (quantized) {
    double q = 0;
    for (int64_t b = 0; b < n; b += 32) {
      double amax = 0, wsum = 0;
      for (int64_t i = b; i < b + 32 && i < n; ++i) {
        amax = std::fmax(amax, std::fabs(x[i]));
        wsum += std::fabs(w_row[i]);
      }
      q += amax * kActQuantHalfStep * wsum;
    }
    budget += kActQuantMargin * q;
  }
  return budget;
}

// Every output y [n_tokens, n_rows] against the reference y_ref within matmul_budget at `level`.
inline void expect_within_budget(const MatView& w, const float* x, const float* y, const float* y_ref, int64_t n_tokens,
                                 SimdLevel level, const std::string& label) {
  std::vector<float> wrow(static_cast<size_t>(w.n_cols));
  for (int64_t r = 0; r < w.n_rows; ++r) {
    dequantize_row(w.type, w.data + r * w.row_bytes, wrow.data(), w.n_cols);
    for (int64_t t = 0; t < n_tokens; ++t) {
      const double budget = matmul_budget(w.type, wrow.data(), x + t * w.n_cols, w.n_cols, level);
      EXPECT_LE(std::fabs(static_cast<double>(y[t * w.n_rows + r]) - y_ref[t * w.n_rows + r]), budget)
          << label << " at " << simd_level_name(level) << " row " << r << " token " << t;
    }
  }
}

}  // namespace nt::test

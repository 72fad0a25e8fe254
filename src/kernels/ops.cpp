// kernels/ops.cpp — element-wise and per-row kernels: norms, activations, softmax, RoPE, row
// conversions. Each is a fixed-order scalar loop (the compiler may vectorise only where the order
// of a reduction does not change), so results never depend on threads or batch size.
#include <cmath>
#include <cstring>

#include "core/check.h"
#include "kernels/cpu_features.h"
#include "kernels/kernels.h"
#include "kernels/kernels_internal.h"
#include "tensor/dequant.h"
#include "tensor/fp16.h"
#include "tensor/quant_blocks.h"

namespace nt {

void rms_norm(const float* x, const float* w, float* y, int64_t n, float eps) {
  // Sum of squares in double over 8 fixed lanes: accurate and order-fixed.
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) acc[l] += static_cast<double>(x[i + l]) * x[i + l];
  for (; i < n; ++i) acc[0] += static_cast<double>(x[i]) * x[i];
  const double ss = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  const float scale = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(n) + eps));
  if (w) {
    for (int64_t j = 0; j < n; ++j) y[j] = x[j] * scale * w[j];
  } else {
    for (int64_t j = 0; j < n; ++j) y[j] = x[j] * scale;
  }
}

namespace detail {

float exp_sum(float* x, int64_t n, float mx) {
  const SimdLevel level = simd_level();
  if (level == SimdLevel::Avx512) return exp_sum_avx512(x, n, mx);
  if (level == SimdLevel::Avx2) return exp_sum_avx2(x, n, mx);
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t i = 0; i < n; ++i) acc[i & 7] += (x[i] = std::exp(x[i] - mx));
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

}  // namespace detail

void silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  const SimdLevel level = simd_level();
  if (level == SimdLevel::Avx512) return detail::silu_mul_avx512(gate, up, out, n);
  if (level == SimdLevel::Avx2) return detail::silu_mul_avx2(gate, up, out, n);
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void gelu_mul_ref(const float* gate, const float* up, float* out, int64_t n) {
  constexpr float kSqrt2OverPi = 0.79788456080286535588f, kCoef = 0.044715f;
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = 0.5f * g * (1.0f + std::tanh(kSqrt2OverPi * g * (1.0f + kCoef * g * g))) * up[i];
  }
}

void gelu_mul(const float* gate, const float* up, float* out, int64_t n) {
  const SimdLevel level = simd_level();
  if (level == SimdLevel::Avx512) return detail::gelu_mul_avx512(gate, up, out, n);
  if (level == SimdLevel::Avx2) return detail::gelu_mul_avx2(gate, up, out, n);
  gelu_mul_ref(gate, up, out, n);
}

void add_inplace(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void softmax_inplace(float* x, int64_t n) {
  if (n <= 0) return;
  float mx = x[0];
  for (int64_t i = 1; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
  const float inv = 1.0f / detail::exp_sum(x, n, mx);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

namespace {

float yarn_ramp(float low, float high, int i0) {
  const float y = (static_cast<float>(i0) / 2 - low) / std::fmax(0.001f, high - low);
  return 1.0f - std::fmin(1.0f, std::fmax(0.0f, y));
}

// The dimension at which a rotation frequency completes n_rot turns over the original context.
float yarn_corr_dim(int n_dims, int n_ctx_orig, float n_rot, float base) {
  return static_cast<float>(n_dims) * std::log(static_cast<float>(n_ctx_orig) / (n_rot * 2.0f * 3.14159265358979f)) /
         (2.0f * std::log(base));
}

}  // namespace

int rope_pairs(int head_dim, const RopeParams& p) {
  const int n_rot = p.n_rot > 0 ? p.n_rot : head_dim;
  NT_CHECK(n_rot <= head_dim && n_rot % 2 == 0);
  return n_rot / 2;
}

void rope_angles(int head_dim, int32_t pos, const RopeParams& p, float* cs, float* sn) {
  const int half = rope_pairs(head_dim, p), n_rot = 2 * half;
  // theta_i = pos * base^(-2i/n_rot).
  const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(n_rot));
  float corr0 = 0, corr1 = 0, mscale = p.attn_factor;
  if (p.ext_factor != 0.0f) {
    const int n_orig = p.n_ctx_orig > 0 ? p.n_ctx_orig : 4096;
    corr0 = std::fmax(0.0f, std::floor(yarn_corr_dim(n_rot, n_orig, p.beta_fast, p.freq_base)));
    corr1 = std::fmin(static_cast<float>(n_rot - 1), std::ceil(yarn_corr_dim(n_rot, n_orig, p.beta_slow, p.freq_base)));
    mscale *= 1.0f + 0.1f * std::log(1.0f / p.freq_scale);
  }
  float theta_base = static_cast<float>(pos);
  for (int i = 0; i < half; ++i) {
    float theta_extrap = theta_base;
    if (p.freq_factors) theta_extrap /= p.freq_factors[i];
    const float theta_interp = p.freq_scale * theta_extrap;
    float theta = theta_interp;
    if (p.ext_factor != 0.0f) {
      const float mix = yarn_ramp(corr0, corr1, 2 * i) * p.ext_factor;
      theta = theta_interp * (1 - mix) + theta_extrap * mix;
    }
    cs[i] = std::cos(theta) * mscale;
    sn[i] = std::sin(theta) * mscale;
    theta_base *= theta_scale;
  }
}

void rope_apply(float* x, int n_head, int head_dim, const RopeParams& p, const float* cs, const float* sn) {
  const int half = rope_pairs(head_dim, p);
  for (int h = 0; h < n_head; ++h) {
    float* v = x + static_cast<int64_t>(h) * head_dim;
    if (p.style == RopeStyle::Normal) {
      for (int i = 0; i < half; ++i) {
        const float a = v[2 * i], b = v[2 * i + 1];
        v[2 * i] = a * cs[i] - b * sn[i];
        v[2 * i + 1] = a * sn[i] + b * cs[i];
      }
    } else {
      for (int i = 0; i < half; ++i) {
        const float a = v[i], b = v[i + half];
        v[i] = a * cs[i] - b * sn[i];
        v[i + half] = a * sn[i] + b * cs[i];
      }
    }
  }
}

void rope(float* x, int n_head, int head_dim, int32_t pos, const RopeParams& p) {
  constexpr int kMaxHalf = 512;
  NT_CHECK(rope_pairs(head_dim, p) <= kMaxHalf);
  float cs[kMaxHalf], sn[kMaxHalf];
  rope_angles(head_dim, pos, p, cs, sn);
  rope_apply(x, n_head, head_dim, p, cs, sn);
}

void convert_row_from_f32(DType dst_type, const float* src, void* dst, int64_t n) {
  switch (dst_type) {
    case DType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * 4); return;
    case DType::F16: {
      auto* d = static_cast<uint16_t*>(dst);
      if (simd_level() >= SimdLevel::Avx2) return detail::f32_to_f16_row_avx2(src, d, n);  // same rounding
      for (int64_t i = 0; i < n; ++i) d[i] = fp32_to_fp16(src[i]);
      return;
    }
    case DType::BF16: {
      auto* d = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = fp32_to_bf16(src[i]);
      return;
    }
    case DType::Q8_0: {
      NT_CHECK(n % QK8_0 == 0);
      auto* b = static_cast<BlockQ8_0*>(dst);
      for (int64_t ib = 0; ib < n / QK8_0; ++ib) {
        const float* s = src + ib * QK8_0;
        float amax = 0;
        for (int j = 0; j < QK8_0; ++j) amax = std::fmax(amax, std::fabs(s[j]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[ib].d = fp32_to_fp16(d);
        for (int j = 0; j < QK8_0; ++j) b[ib].qs[j] = static_cast<int8_t>(std::round(s[j] * id));
      }
      return;
    }
    default: NT_CHECK(false && "convert_row_from_f32: unsupported destination type");
  }
}

void convert_row_to_f32(DType src_type, const void* src, float* dst, int64_t n) {
  dequantize_row(src_type, src, dst, n);
}

}  // namespace nt

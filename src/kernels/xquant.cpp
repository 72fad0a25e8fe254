#include "kernels/xquant.h"

#include "core/check.h"
#include "kernels/cpu_features.h"

#include <cmath>
#include <cstring>

namespace nt::detail {

namespace {

void quantize_one_portable(const float* x, int64_t n, int offset, const XQuant& xq, int64_t t) {
  const auto [qs, ls, dx, g32, g16, lb] = xq.out(t);
  const int64_t nb = xq.npad / 32;
  for (int64_t b = 0; b < nb; ++b) {
    int8_t* q = qs + b * 32;
    if (b * 32 >= n) {
      std::memset(q, 0, 32);
      dx[b] = 0;
    } else {
      const float* s = x + b * 32;
      float amax = 0;
      for (int j = 0; j < 32; ++j) amax = std::fmax(amax, std::fabs(s[j]));
      const float d = amax / 127.0f;
      const float id = d != 0.0f ? 1.0f / d : 0.0f;
      for (int j = 0; j < 32; ++j) q[j] = static_cast<int8_t>(std::nearbyint(s[j] * id));
      dx[b] = d;
    }
    int s16[2] = {0, 0};
    for (int j = 0; j < 32; ++j) s16[j / 16] += q[j];
    if (xq.layout == XLayout::Natural)
      for (int j = 0; j < 8; ++j) ls[b * 8 + j] = -offset * (q[4 * j] + q[4 * j + 1] + q[4 * j + 2] + q[4 * j + 3]);
    g32[b] = dx[b] * static_cast<float>(s16[0] + s16[1]);
    lb[b] = -offset * (s16[0] + s16[1]);
    g16[2 * b] = dx[b] * static_cast<float>(s16[0]);
    g16[2 * b + 1] = dx[b] * static_cast<float>(s16[1]);
  }
  if (xq.layout != XLayout::Natural) {  // permute each 128 elements (xquant.h); lane sums per pair
    for (int64_t c = 0; c < xq.npad / 128; ++c) {
      int8_t tmp[128];
      int8_t* q = qs + c * 128;
      std::memcpy(tmp, q, 128);
      if (xq.layout == XLayout::Quad) {
        for (int g = 0; g < 8; ++g) {
          std::memcpy(q + 8 * g, tmp + 16 * g, 8);
          std::memcpy(q + 64 + 8 * g, tmp + 16 * g + 8, 8);
        }
      } else {
        for (int b = 0; b < 4; ++b) {
          std::memcpy(q + 16 * b, tmp + 32 * b, 16);
          std::memcpy(q + 64 + 16 * b, tmp + 32 * b + 16, 16);
        }
      }
      for (int l = 0; l < 16; ++l) {
        int sum = 0;
        for (int k = 0; k < 4; ++k) sum += q[4 * l + k] + q[64 + 4 * l + k];
        ls[c * 16 + l] = -offset * sum;
      }
    }
  }
}

void quantize_one(const float* x, int64_t n, int offset, const XQuant& xq, int64_t t) {
  if (xq.layout == XLayout::F16) {
    // Only the AVX-512 and AVX2 F16-weight kernels use this layout.
    NT_CHECK(simd_level() >= SimdLevel::Avx2);
    if (simd_level() == SimdLevel::Avx512) convert_row_f16_avx512(x, n, xq, t);
    else convert_row_f16_avx2(x, n, xq, t);
    return;
  }
  if (xq.layout != XLayout::Natural && simd_level() == SimdLevel::Avx512) quantize_row_quad_avx512(x, n, offset, xq, t);
  else if (xq.layout == XLayout::Natural && simd_level() >= SimdLevel::Avx2) quantize_row_natural_avx2(x, n, offset, xq, t);
  else quantize_one_portable(x, n, offset, xq, t);
}

}  // namespace

F16RowScale f16_row_scale(float amax) {
  // 2^e with amax * 2^e in [2^14, 2^15): e = 14 - floor(log2(amax)), from the exponent bits.
  int e = 0;
  if (amax > 0.0f && amax <= 3.4e38f) {
    uint32_t bits;
    std::memcpy(&bits, &amax, 4);
    const int ex = static_cast<int>((bits >> 23) & 0xFF);
    e = ex == 0 ? 14 + 126 : 14 - (ex - 127);  // subnormal amax: scale by 2^140 at most
    if (e > 140) e = 140;
  }
  auto pow2 = [](int k) {
    const uint32_t b = static_cast<uint32_t>(127 + k) << 23;
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  };
  const int e1 = e / 2, e2 = e - e / 2;
  return {pow2(e1), pow2(e2), pow2(-e1) * pow2(-e2)};
}

void quantize_x(const float* x, int64_t ldx, int64_t n, int64_t n_tokens, int offset, XLayout layout, XQuant& xq,
                ThreadPool& pool) {
  xq.n = n;
  xq.npad = (n + 255) / 256 * 256;
  xq.stride = layout == XLayout::F16 ? 2 * xq.npad + 64                // fp16 row, xscale
                                     : 2 * xq.npad + xq.npad / 2 + xq.npad / 8;  // qs, ls (int32 per 4), dx, g32, g16, lb
  xq.offset = offset;
  xq.layout = layout;
  const size_t need = static_cast<size_t>(xq.stride * n_tokens) + 64;
  if (xq.buf.size() < need) xq.buf.resize(need);
  if (n_tokens == 1) {
    quantize_one(x, n, offset, xq, 0);
    return;
  }
  const int n_tasks = static_cast<int>(n_tokens < 4 * pool.n_threads() ? n_tokens : 4 * pool.n_threads());
  pool.run(n_tasks, [&](int task, int) {
    const int64_t t0 = n_tokens * task / n_tasks, t1 = n_tokens * (task + 1) / n_tasks;
    for (int64_t t = t0; t < t1; ++t) quantize_one(x + t * ldx, n, offset, xq, t);
  });
}

}  // namespace nt::detail

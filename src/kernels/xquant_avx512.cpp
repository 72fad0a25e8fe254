// kernels/xquant_avx512.cpp — AVX-512 activation quantization for the Quad and Halves layouts (xquant.h).
// Bit-identical to the portable version: same amax, same d = amax / 127, same x * (1 / d) rounded
// to nearest even (the MXCSR default used by vcvtps2dq).
#include "kernels/simd_avx512.h"
#include "kernels/xquant.h"

namespace nt::detail {

void quantize_row_quad_avx512(const float* x, int64_t n, int offset, const XQuant& xq, int64_t t) {
  const auto [qs, ls, dx, g32, g16, lb] = xq.out(t);
  const __m512 sign = _mm512_set1_ps(-0.0f);
  for (int64_t c = 0; c < xq.npad / 128; ++c) {
    alignas(64) int8_t nat[128];
    for (int k = 0; k < 4; ++k) {
      const int64_t b = c * 4 + k;
      if (b * 32 >= n) {
        std::memset(nat + 32 * k, 0, 32);
        dx[b] = g32[b] = g16[2 * b] = g16[2 * b + 1] = 0.0f;
        lb[b] = 0;
        continue;
      }
      const __m512 v0 = _mm512_loadu_ps(x + 32 * b), v1 = _mm512_loadu_ps(x + 32 * b + 16);
      const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_andnot_ps(sign, v0), _mm512_andnot_ps(sign, v1)));
      const float d = amax / 127.0f;
      const float id = d != 0.0f ? 1.0f / d : 0.0f;
      const __m512i q0 = _mm512_cvtps_epi32(_mm512_mul_ps(v0, _mm512_set1_ps(id)));
      const __m512i q1 = _mm512_cvtps_epi32(_mm512_mul_ps(v1, _mm512_set1_ps(id)));
      _mm_store_si128(reinterpret_cast<__m128i*>(nat + 32 * k), _mm512_cvtepi32_epi8(q0));
      _mm_store_si128(reinterpret_cast<__m128i*>(nat + 32 * k + 16), _mm512_cvtepi32_epi8(q1));
      const int s0 = _mm512_reduce_add_epi32(q0), s1 = _mm512_reduce_add_epi32(q1);
      dx[b] = d;
      g32[b] = d * static_cast<float>(s0 + s1);
      g16[2 * b] = d * static_cast<float>(s0);
      g16[2 * b + 1] = d * static_cast<float>(s1);
      lb[b] = -offset * (s0 + s1);
    }
    const __m512i n0 = _mm512_load_si512(nat), n1 = _mm512_load_si512(nat + 64);
    const bool halves = xq.layout == XLayout::Halves;
    const __m512i i1 = halves ? _mm512_set_epi64(13, 12, 9, 8, 5, 4, 1, 0) : _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i i2 = halves ? _mm512_set_epi64(15, 14, 11, 10, 7, 6, 3, 2) : _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
    const __m512i x1 = _mm512_permutex2var_epi64(n0, i1, n1);
    const __m512i x2 = _mm512_permutex2var_epi64(n0, i2, n1);
    _mm512_storeu_si512(qs + 128 * c, x1);
    _mm512_storeu_si512(qs + 128 * c + 64, x2);
    const __m512i ones = _mm512_set1_epi8(1);
    const __m512i lanesum = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, x1), ones, x2);
    _mm512_storeu_si512(ls + 16 * c, _mm512_mullo_epi32(lanesum, _mm512_set1_epi32(-offset)));
  }
}

void convert_row_f16_avx512(const float* x, int64_t n, const XQuant& xq, int64_t t) {
  auto* h = const_cast<uint16_t*>(xq.h16(t));
  const __m512 sign = _mm512_set1_ps(-0.0f);
  __m512 mx = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) mx = _mm512_max_ps(mx, _mm512_andnot_ps(sign, _mm512_loadu_ps(x + i)));
  const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1);
  if (i < n) mx = _mm512_max_ps(mx, _mm512_andnot_ps(sign, _mm512_maskz_loadu_ps(tail, x + i)));
  const float amax = _mm512_reduce_max_ps(mx);  // a row with inf / NaN may keep e = 0: they propagate as in f32
  const F16RowScale sc = f16_row_scale(amax);
  const __m512 s1 = _mm512_set1_ps(sc.s1), s2 = _mm512_set1_ps(sc.s2);
  constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  for (i = 0; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(h + i),
                        _mm512_cvtps_ph(_mm512_mul_ps(_mm512_mul_ps(_mm512_loadu_ps(x + i), s1), s2), kRound));
  if (i < n)
    _mm256_mask_storeu_epi16(h + i, tail,
                             _mm512_cvtps_ph(_mm512_mul_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(tail, x + i), s1), s2), kRound));
  for (int64_t j = n; j < xq.npad; ++j) h[j] = 0;
  *const_cast<float*>(xq.dx(t)) = sc.inv;
}

}  // namespace nt::detail

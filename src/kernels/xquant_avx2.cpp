// kernels/xquant_avx2.cpp — AVX2 activation quantization for the Natural layout (xquant.h), the
// layout of the AVX2 quantized kernels, and the F16 layout of the AVX2 F16-weight kernel. Natural
// is bit-identical to the portable version for finite input: same amax, same d = amax / 127, same
// x * (1 / d) rounded to nearest even (the MXCSR default used by vcvtps2dq), same integer sums.
#include "kernels/simd_avx2.h"
#include "kernels/xquant.h"

#include <cstring>

namespace nt::detail {

void quantize_row_natural_avx2(const float* x, int64_t n, int offset, const XQuant& xq, int64_t t) {
  const auto [qs, ls, dx, g32, g16, lb] = xq.out(t);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256i ones8 = _mm256_set1_epi8(1);
  const __m256i ones16 = _mm256_set1_epi16(1);
  const __m256i neg_off = _mm256_set1_epi32(-offset);
  // packs work per 128-bit lane: the 32 bytes come out as dwords 0,4,1,5,2,6,3,7 of the order wanted.
  const __m256i unscramble = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  const int64_t nb = xq.npad / 32;
  for (int64_t b = 0; b < nb; ++b) {
    int8_t* q = qs + b * 32;
    if (b * 32 >= n) {  // padding: zero block (n is a multiple of 32 for the quantized types)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), _mm256_setzero_si256());
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(ls + b * 8), _mm256_setzero_si256());
      dx[b] = g32[b] = g16[2 * b] = g16[2 * b + 1] = 0.0f;
      lb[b] = 0;
      continue;
    }
    const float* s = x + b * 32;
    const __m256 v0 = _mm256_loadu_ps(s), v1 = _mm256_loadu_ps(s + 8), v2 = _mm256_loadu_ps(s + 16),
                 v3 = _mm256_loadu_ps(s + 24);
    const __m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_andnot_ps(sign, v0), _mm256_andnot_ps(sign, v1)),
                                   _mm256_max_ps(_mm256_andnot_ps(sign, v2), _mm256_andnot_ps(sign, v3)));
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    const float amax = _mm_cvtss_f32(h);
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const __m256 idv = _mm256_set1_ps(id);
    const __m256i i0 = _mm256_cvtps_epi32(_mm256_mul_ps(v0, idv)), i1 = _mm256_cvtps_epi32(_mm256_mul_ps(v1, idv)),
                  i2 = _mm256_cvtps_epi32(_mm256_mul_ps(v2, idv)), i3 = _mm256_cvtps_epi32(_mm256_mul_ps(v3, idv));
    // |values| <= 127: the saturating packs are exact.
    const __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(i0, i1), _mm256_packs_epi32(i2, i3));
    const __m256i qv = _mm256_permutevar8x32_epi32(p, unscramble);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), qv);
    // Sums of 4 consecutive q (lane j: elements 4j..4j+3), exact in int32.
    const __m256i s4 = _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, qv), ones16);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(ls + b * 8), _mm256_mullo_epi32(s4, neg_off));
    __m128i h16 = _mm_add_epi32(_mm256_castsi256_si128(s4), _mm_srli_si128(_mm256_castsi256_si128(s4), 8));
    __m128i h16b = _mm_add_epi32(_mm256_extracti128_si256(s4, 1), _mm_srli_si128(_mm256_extracti128_si256(s4, 1), 8));
    const int sa = _mm_cvtsi128_si32(h16) + _mm_extract_epi32(h16, 1);
    const int sb = _mm_cvtsi128_si32(h16b) + _mm_extract_epi32(h16b, 1);
    dx[b] = d;
    g32[b] = d * static_cast<float>(sa + sb);
    lb[b] = -offset * (sa + sb);
    g16[2 * b] = d * static_cast<float>(sa);
    g16[2 * b + 1] = d * static_cast<float>(sb);
  }
}


// The F16 layout (xquant.h): the same amax, scale and rounding as convert_row_f16_avx512, 8 lanes
// at a time (max is exact in any order for finite input).
void convert_row_f16_avx2(const float* x, int64_t n, const XQuant& xq, int64_t t) {
  auto* h = const_cast<uint16_t*>(xq.h16(t));
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 mx = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) mx = _mm256_max_ps(mx, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + i)));
  alignas(32) float tail[8] = {};
  const int64_t n_tail = n - i;
  if (n_tail > 0) {
    std::memcpy(tail, x + i, static_cast<size_t>(n_tail) * sizeof(float));
    mx = _mm256_max_ps(mx, _mm256_andnot_ps(sign, _mm256_load_ps(tail)));
  }
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
  const float amax = _mm_cvtss_f32(m4);  // a row with inf / NaN may keep e = 0: they propagate as in f32
  const F16RowScale sc = f16_row_scale(amax);
  const __m256 s1 = _mm256_set1_ps(sc.s1), s2 = _mm256_set1_ps(sc.s2);
  constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  for (i = 0; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(h + i),
                     _mm256_cvtps_ph(_mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), s1), s2), kRound));
  if (n_tail > 0) {
    alignas(16) uint16_t out[8];
    _mm_store_si128(reinterpret_cast<__m128i*>(out), _mm256_cvtps_ph(_mm256_mul_ps(_mm256_mul_ps(_mm256_load_ps(tail), s1), s2), kRound));
    std::memcpy(h + i, out, static_cast<size_t>(n_tail) * sizeof(uint16_t));
  }
  for (int64_t j = n; j < xq.npad; ++j) h[j] = 0;
  *const_cast<float*>(xq.dx(t)) = sc.inv;
}

}  // namespace nt::detail

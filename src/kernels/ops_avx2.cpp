// kernels/ops_avx2.cpp — AVX2 element-wise kernels: exp (Cody-Waite reduction, degree-6
// polynomial, 2^n built in the exponent bits; about 1 ulp), SiLU-gated product, exp-and-sum for
// softmax (inputs below -87 give 0). Each output element depends only on its inputs; sums run over fixed lanes.
#include "kernels/kernels_internal.h"
#include "kernels/simd_avx2.h"

namespace nt::detail {
namespace {

static inline __m256 exp256(__m256 x) {
  const __m256 live = _mm256_cmp_ps(x, _mm256_set1_ps(-87.0f), _CMP_GE_OQ);  // else exp underflows: 0
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(88.5f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.42860682030941723212e-6f), r);
  __m256 p = _mm256_set1_ps(1.0f / 720);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  // n in [-126, 128]: 2^n as two factors so n = 128 does not overflow the exponent field.
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i h = _mm256_srai_epi32(ni, 1);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h, _mm256_set1_epi32(127)), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(ni, h), _mm256_set1_epi32(127)), 23));
  return _mm256_and_ps(_mm256_mul_ps(_mm256_mul_ps(p, s1), s2), live);
}

static inline __m256 load_n(const float* p, int64_t n) {
  alignas(32) float b[8] = {};
  for (int64_t i = 0; i < n; ++i) b[i] = p[i];
  return _mm256_load_ps(b);
}

}  // namespace

void silu_mul_avx2(const float* gate, const float* up, float* out, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 s = _mm256_div_ps(g, _mm256_add_ps(one, exp256(_mm256_sub_ps(_mm256_setzero_ps(), g))));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(s, _mm256_loadu_ps(up + i)));
  }
  if (i < n) {
    const __m256 g = load_n(gate + i, n - i);
    const __m256 s = _mm256_div_ps(g, _mm256_add_ps(one, exp256(_mm256_sub_ps(_mm256_setzero_ps(), g))));
    alignas(32) float o[8];
    _mm256_store_ps(o, _mm256_mul_ps(s, load_n(up + i, n - i)));
    for (int64_t j = 0; i + j < n; ++j) out[i + j] = o[j];
  }
}

void gelu_mul_avx2(const float* gate, const float* up, float* out, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f), c = _mm256_set1_ps(-2.0f * 0.79788456080286535588f);
  const __m256 a = _mm256_set1_ps(0.044715f);
  // g / (1 + exp(-2u)), -2u = -2 sqrt(2/pi) g (1 + a g^2)
  auto gelu = [&](__m256 g) {
    const __m256 arg = _mm256_mul_ps(_mm256_mul_ps(c, g), _mm256_add_ps(one, _mm256_mul_ps(a, _mm256_mul_ps(g, g))));
    return _mm256_div_ps(g, _mm256_add_ps(one, exp256(arg)));
  };
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, _mm256_mul_ps(gelu(_mm256_loadu_ps(gate + i)), _mm256_loadu_ps(up + i)));
  if (i < n) {
    alignas(32) float o[8];
    _mm256_store_ps(o, _mm256_mul_ps(gelu(load_n(gate + i, n - i)), load_n(up + i, n - i)));
    for (int64_t j = 0; i + j < n; ++j) out[i + j] = o[j];
  }
}

float exp_sum_avx2(float* x, int64_t n, float mx) {
  __m256 acc = _mm256_setzero_ps();
  const __m256 mv = _mm256_set1_ps(mx);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv));
    _mm256_storeu_ps(x + i, e);
    acc = _mm256_add_ps(acc, e);
  }
  if (i < n) {
    alignas(32) float e[8];
    _mm256_store_ps(e, exp256(_mm256_sub_ps(load_n(x + i, n - i), mv)));
    for (int64_t j = 0; i + j < n; ++j) x[i + j] = e[j];
    for (int64_t j = n - i; j < 8; ++j) e[j] = 0.0f;
    acc = _mm256_add_ps(acc, _mm256_load_ps(e));
  }
  return hsum256(acc);
}

}  // namespace nt::detail

namespace nt::detail {

// F16C conversion, round to nearest even (as fp32_to_fp16): 8 values per step, the rest one by one
// through the same instruction.
void f32_to_f16_row_avx2(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i)
    dst[i] = static_cast<uint16_t>(_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(src[i]), _MM_FROUND_TO_NEAREST_INT), 0));
}

}  // namespace nt::detail

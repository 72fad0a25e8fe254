// kernels/simd_avx2.h — small AVX2 helpers shared by the *_avx2.cpp units (include only from
// those). Everything is static inline in an anonymous namespace: no symbol leaks into portable code.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace nt::detail {
namespace {

// Fixed-order horizontal sum (the same sequence everywhere, for bit-identical results).
static inline float hsum256(__m256 v) {
  __m128 b = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  b = _mm_add_ps(b, _mm_movehl_ps(b, b));
  b = _mm_add_ss(b, _mm_movehdup_ps(b));
  return _mm_cvtss_f32(b);
}

static inline float h2f_2(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

}  // namespace
}  // namespace nt::detail

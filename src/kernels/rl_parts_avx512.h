// kernels/rl_parts_avx512.h — register-level pieces of the row-lane quantized matmul
// (matmul_rl_avx512.cpp, rl_quartet_avx512.h): exact integer reductions across rows, 128-bit lane
// and dword transposes, the combination of an output's four partial sums, zero-padded copies of a
// unit. Include only from *_avx512.cpp units (everything is inline in an anonymous namespace).
// Must not know: weight formats, tiling, threads.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace nt::detail {
namespace {

// Per 128-bit lane k: [sum of a's 4 ints, b's, c's, d's] (exact integer adds).
inline __m512i reduce4(__m512i a, __m512i b, __m512i c, __m512i d) {
  const __m512i ab = _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
  const __m512i cd = _mm512_add_epi32(_mm512_unpacklo_epi32(c, d), _mm512_unpackhi_epi32(c, d));
  return _mm512_add_epi32(_mm512_unpacklo_epi64(ab, cd), _mm512_unpackhi_epi64(ab, cd));
}
// 4 x 4 transpose of 128-bit lanes: out[L].lane(i) = in[i].lane(L).
inline void transpose128(__m512i (&v)[4]) {
  const __m512i p0 = _mm512_shuffle_i32x4(v[0], v[1], _MM_SHUFFLE(1, 0, 1, 0));
  const __m512i p1 = _mm512_shuffle_i32x4(v[0], v[1], _MM_SHUFFLE(3, 2, 3, 2));
  const __m512i p2 = _mm512_shuffle_i32x4(v[2], v[3], _MM_SHUFFLE(1, 0, 1, 0));
  const __m512i p3 = _mm512_shuffle_i32x4(v[2], v[3], _MM_SHUFFLE(3, 2, 3, 2));
  v[0] = _mm512_shuffle_i32x4(p0, p2, _MM_SHUFFLE(2, 0, 2, 0));
  v[1] = _mm512_shuffle_i32x4(p0, p2, _MM_SHUFFLE(3, 1, 3, 1));
  v[2] = _mm512_shuffle_i32x4(p1, p3, _MM_SHUFFLE(2, 0, 2, 0));
  v[3] = _mm512_shuffle_i32x4(p1, p3, _MM_SHUFFLE(3, 1, 3, 1));
}
inline void transpose128(__m512 (&v)[4]) {
  __m512i w[4];
  for (int i = 0; i < 4; ++i) w[i] = _mm512_castps_si512(v[i]);
  transpose128(w);
  for (int i = 0; i < 4; ++i) v[i] = _mm512_castsi512_ps(w[i]);
}
// 16 x 16 dword transpose: out[c].lane(r) = in[r].lane(c).
inline void transpose16(__m512i (&r)[16]) {
  __m512i t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  __m512i u[16];  // u[4i + m], 128-bit lane L = rows 4i..4i+3 of column 4L + m
  for (int i = 0; i < 4; ++i) {
    u[4 * i + 0] = _mm512_unpacklo_epi64(t[4 * i + 0], t[4 * i + 2]);
    u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i + 0], t[4 * i + 2]);
    u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  for (int m = 0; m < 4; ++m) {
    __m512i v[4] = {u[m], u[4 + m], u[8 + m], u[12 + m]};
    transpose128(v);
    for (int L = 0; L < 4; ++L) r[4 * L + m] = v[L];
  }
}

// y = (p0 + p1) + (p2 + p3), the partial sums by block index mod 4.
inline __m512 combine4(__m512 p0, __m512 p1, __m512 p2, __m512 p3) {
  return _mm512_add_ps(_mm512_add_ps(p0, p1), _mm512_add_ps(p2, p3));
}

alignas(64) constexpr uint8_t kZeroUnit[256] = {};  // >= every unit's bytes

// dst[0, 64 * ceil(kBytes / 64)) = src[0, n) then zeros; only src[0, n) is read (masked loads),
// no library call for the small, variable n.
template <int kBytes>
inline void copy_padded(uint8_t* dst, const uint8_t* src, int64_t n) {
  for (int64_t o = 0; o < kBytes; o += 64) {
    const int64_t k = n - o <= 0 ? 0 : (n - o >= 64 ? 64 : n - o);
    const __mmask64 m = k == 64 ? ~0ull : ((1ull << k) - 1);
    _mm512_storeu_si512(dst + o, _mm512_maskz_loadu_epi8(m, src + o));
  }
}

}  // namespace
}  // namespace nt::detail

// kernels/rl_quartet_avx512.h — one-token decode of the 32-element block types four rows at a
// time (matmul_rl_avx512.cpp's rect picks it): the same block integers and float sequence as the
// row-lane kernels' other paths (see that file's comment). Include only from *_avx512.cpp units.
// Must not know: tiling across threads, models.
#pragma once

#include "kernels/quant_decode_avx512.h"
#include "kernels/rl_parts_avx512.h"

#include <type_traits>

namespace nt::detail {
namespace {

// ---- one token, four rows at a time: four weight streams per thread, not sixteen. A core's
// read bandwidth falls with the number of streams it walks at once (docs/kernels.md).
// Rows i < 4 of one unit: row i at p + i * rb; acc lane 4k + i holds p_k of row i, so a unit's
// four blocks (b mod 4 = k) are one fma over the whole vector.
// Lane 4k + i = v[k]: four blocks' values, each repeated over its 4 rows' lanes.
inline __m512 rep4(const float* v) { return _mm512_permutexvar_ps(idx4x4(), _mm512_castps128_ps512(_mm_loadu_ps(v))); }
// One unit's float step: acc += float(block integers) * (scales * dx), lane 4k + i = row i, block k
// (is[i]: row i's per-lane partial dots, h: the rows' fp16 scales in words 4k + i, dx4: the 4 blocks' dx).
inline void quartet_fma(const __m512i (&is)[4], __m256i h, const float* dx4, __m512& acc) {
  acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(reduce4(is[0], is[1], is[2], is[3])),
                        _mm512_mul_ps(_mm512_cvtph_ps(h), rep4(dx4)), acc);
}

template <class T>
__attribute__((always_inline)) inline void quartet_unit(const uint8_t* p, int64_t rb, int64_t u, const uint8_t* xb,
                                                        const int32_t* ls, const float* dx, const float* gg,
                                                        __m512& acc) {
  static_assert(T::kQuads == 1);
  const int64_t e = u * 128;
  const __m512i x1 = _mm512_loadu_si512(xb + e), x2 = _mm512_loadu_si512(xb + e + 64);
  const __m512i l = _mm512_loadu_si512(ls + e / 8);
  __m512i is[4];
  __m512i hs = _mm512_setzero_si512(), hm = _mm512_setzero_si512();  // fp16 words 4k + i
  for (int i = 0; i < 4; ++i, p += rb) {
    __m512i z0, z1, w1, w2;
    load_unit<T::kUnitBytes>(p, z0, z1);
    __asm__("" : "+v"(z0), "+v"(z1));  // as in decode_unit: one load per part, not one per permute
    T::quad_z(z0, z1, p, w1, w2);
    const __mmask32 row_i = 0x1111u << i;
    hs = _mm512_mask_mov_epi16(hs, row_i, block_words<T::kBlockBytes, 0>(z0, z1));
    if constexpr (T::kMin > 0) hm = _mm512_mask_mov_epi16(hm, row_i, block_words<T::kBlockBytes, 2>(z0, z1));
    is[i] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(l, w1, x1), w2, x2);
  }
  quartet_fma(is, _mm512_castsi512_si256(hs), dx + 4 * u, acc);
  if constexpr (T::kMin > 0) acc = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm512_castsi512_si256(hm)), rep4(gg + 4 * u), acc);
}

// Byte indices of both units' fp16 scales in z0:z1: word 4k + j = unit A's block k (byte 18 k),
// word 16 + 4k + j = unit B's (byte 72 + 18 k), each replicated 4x like WordIdx's.
struct PairScaleIdx {
  alignas(64) int8_t v[64];
  constexpr PairScaleIdx() : v{} {
    for (int w = 0; w < 32; ++w) {
      const int o = (w < 16 ? 0 : 72) + 18 * ((w % 16) / 4);
      v[2 * w] = static_cast<int8_t>(o);
      v[2 * w + 1] = static_cast<int8_t>(o + 1);
    }
  }
};
constexpr PairScaleIdx kPairScaleIdx{};

// Two Q4_0 units (144 bytes) of rows i < 4 at once: three loads per row (64, 64, 16 bytes), the
// second unit picked from the last two at byte offset 8: fewer loads per byte read, which is
// what bounds the streamed decode (docs/kernels.md). The same block integers and float steps as
// two quartet_unit calls.
__attribute__((always_inline)) inline void quartet_pair_q4_0(const uint8_t* p, int64_t rb, int64_t u,
                                                             const uint8_t* xb, const int32_t* ls, const float* dx,
                                                             __m512& acc) {
  const int64_t e = u * 128;
  const __m512i x1a = _mm512_loadu_si512(xb + e), x2a = _mm512_loadu_si512(xb + e + 64);
  const __m512i x1b = _mm512_loadu_si512(xb + e + 128), x2b = _mm512_loadu_si512(xb + e + 192);
  const __m512i la = _mm512_loadu_si512(ls + e / 8), lb = _mm512_loadu_si512(ls + e / 8 + 16);
  __m512i isa[4], isb[4];
  const __m512i sidx = _mm512_load_si512(kPairScaleIdx.v);
  __m512i h = _mm512_setzero_si512();  // fp16 words 4k + i (unit A), 16 + 4k + i (unit B)
  for (int i = 0; i < 4; ++i, p += rb) {
    __m512i z0 = _mm512_loadu_si512(p), z1 = _mm512_loadu_si512(p + 64);
    __m512i z2 = _mm512_zextsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 128)));
    __asm__("" : "+v"(z0), "+v"(z1), "+v"(z2));  // one load per part, not one per permute
    h = _mm512_mask_mov_epi16(h, 0x11111111u << i, _mm512_permutex2var_epi8(z0, sidx, z1));
    __m512i w1, w2;
    nibbles_halves<18, 2>(z0, z1, w1, w2);
    isa[i] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(la, w1, x1a), w2, x2a);
    nibbles_halves<18, 10>(z1, z2, w1, w2);
    isb[i] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(lb, w1, x1b), w2, x2b);
  }
  quartet_fma(isa, _mm512_castsi512_si256(h), dx + 4 * u, acc);
  quartet_fma(isb, _mm512_extracti64x4_epi64(h, 1), dx + 4 * u + 4, acc);
}

// Rows row0 + i * rb (i < 4) for one token into out[0, 4); each stream prefetches `ahead` bytes on.
template <class T>
__attribute__((noinline)) void decode_quartet(const uint8_t* row0, int64_t rb, int64_t row_bytes, int64_t n_cols,
                                              int64_t ahead, const XQuant& xq, int64_t t, float* out) {
  const uint8_t* xb = reinterpret_cast<const uint8_t*>(xq.qs(t));
  const int32_t* ls = xq.ls(t);
  const float* dx = xq.dx(t);
  const float* gg = xq.g32(t);
  const int64_t n_full = n_cols / 128, n_units = (n_cols + 127) / 128;
  // The four streams' bytes [base, base + n) `ahead` bytes on, one prefetch per 64 bytes.
  auto prefetch = [&](const uint8_t* base, int64_t n) {
    const uint8_t* pf = base + ahead;
    for (int r = 0; r < 4; ++r, pf += rb)
      for (int64_t k = 0; k < n; k += 64) _mm_prefetch(reinterpret_cast<const char*>(pf + k), _MM_HINT_T0);
  };
  __m512 acc = _mm512_setzero_ps();
  int64_t u = 0;
  if constexpr (std::is_same_v<T, Q4_0>)
    for (; u + 2 <= n_full; u += 2) {
      prefetch(row0 + u * T::kUnitBytes, 2 * T::kUnitBytes);
      quartet_pair_q4_0(row0 + u * T::kUnitBytes, rb, u, xb, ls, dx, acc);
    }
  for (; u < n_full; ++u) {
    prefetch(row0 + u * T::kUnitBytes, T::kUnitBytes);
    quartet_unit<T>(row0 + u * T::kUnitBytes, rb, u, xb, ls, dx, gg, acc);
  }
  if (n_units > n_full) {  // the rows' tails side by side, zero-padded (d = 0; x padding is 0)
    alignas(64) uint8_t tail[4][(T::kUnitBytes + 63) / 64 * 64];
    for (int r = 0; r < 4; ++r)
      copy_padded<static_cast<int>(sizeof tail[0])>(tail[r], row0 + r * rb + n_full * T::kUnitBytes,
                                                     row_bytes - n_full * T::kUnitBytes);
    quartet_unit<T>(&tail[0][0], sizeof tail[0], n_full, xb, ls, dx, gg, acc);
  }
  // (p0 + p1) + (p2 + p3), as combine4.
  const __m128 p01 = _mm_add_ps(_mm512_castps512_ps128(acc), _mm512_extractf32x4_ps(acc, 1));
  const __m128 p23 = _mm_add_ps(_mm512_extractf32x4_ps(acc, 2), _mm512_extractf32x4_ps(acc, 3));
  _mm_storeu_ps(out, _mm_add_ps(p01, p23));
}

// ---- a few tokens (continuous batching's decode steps), four rows at a time: each unit of the
// four rows is decoded once and dotted with every token's activations, so the rows stream once per
// step as in a one-token decode. Per token the same block integers and float steps as
// quartet_unit (so the outputs equal decode_quartet's and the packed path's bit for bit).
template <class T, int NT>
__attribute__((always_inline)) inline void quartet_unit_tokens(const uint8_t* p, int64_t rb, int64_t u,
                                                               const XQuant& xq, int64_t t0, __m512 (&acc)[NT]) {
  static_assert(T::kQuads == 1);
  const int64_t e = u * 128;
  __m512i w1[4], w2[4];
  __m512i hs = _mm512_setzero_si512(), hm = _mm512_setzero_si512();  // fp16 words 4k + i
  for (int i = 0; i < 4; ++i, p += rb) {
    __m512i z0, z1;
    load_unit<T::kUnitBytes>(p, z0, z1);
    __asm__("" : "+v"(z0), "+v"(z1));  // one load per part, not one per permute
    T::quad_z(z0, z1, p, w1[i], w2[i]);
    const __mmask32 row_i = 0x1111u << i;
    hs = _mm512_mask_mov_epi16(hs, row_i, block_words<T::kBlockBytes, 0>(z0, z1));
    if constexpr (T::kMin > 0) hm = _mm512_mask_mov_epi16(hm, row_i, block_words<T::kBlockBytes, 2>(z0, z1));
  }
  const __m512 sc = _mm512_cvtph_ps(_mm512_castsi512_si256(hs));
  for (int t = 0; t < NT; ++t) {
    const uint8_t* xb = reinterpret_cast<const uint8_t*>(xq.qs(t0 + t));
    const __m512i x1 = _mm512_loadu_si512(xb + e), x2 = _mm512_loadu_si512(xb + e + 64);
    const __m512i l = _mm512_loadu_si512(xq.ls(t0 + t) + e / 8);
    __m512i is[4];
    for (int i = 0; i < 4; ++i) is[i] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(l, w1[i], x1), w2[i], x2);
    acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(reduce4(is[0], is[1], is[2], is[3])),
                             _mm512_mul_ps(sc, rep4(xq.dx(t0 + t) + 4 * u)), acc[t]);
    if constexpr (T::kMin > 0)
      acc[t] = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm512_castsi512_si256(hm)), rep4(xq.g32(t0 + t) + 4 * u), acc[t]);
  }
}

// Rows row0 + i * rb (i < 4) for tokens t0 .. t0 + NT into out[t * 4 + i]; each stream prefetches
// `ahead` bytes on.
template <class T, int NT>
__attribute__((noinline)) void decode_quartet_tokens(const uint8_t* row0, int64_t rb, int64_t row_bytes,
                                                     int64_t n_cols, int64_t ahead, const XQuant& xq, int64_t t0,
                                                     float* out) {
  const int64_t n_full = n_cols / 128, n_units = (n_cols + 127) / 128;
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t u = 0; u < n_full; ++u) {
    const uint8_t* pf = row0 + u * T::kUnitBytes + ahead;
    for (int r = 0; r < 4; ++r, pf += rb)
      for (int64_t k = 0; k < T::kUnitBytes; k += 64) _mm_prefetch(reinterpret_cast<const char*>(pf + k), _MM_HINT_T0);
    quartet_unit_tokens<T, NT>(row0 + u * T::kUnitBytes, rb, u, xq, t0, acc);
  }
  if (n_units > n_full) {  // the rows' tails side by side, zero-padded (d = 0; x padding is 0)
    alignas(64) uint8_t tail[4][(T::kUnitBytes + 63) / 64 * 64];
    for (int r = 0; r < 4; ++r)
      copy_padded<static_cast<int>(sizeof tail[0])>(tail[r], row0 + r * rb + n_full * T::kUnitBytes,
                                                     row_bytes - n_full * T::kUnitBytes);
    quartet_unit_tokens<T, NT>(&tail[0][0], sizeof tail[0], n_full, xq, t0, acc);
  }
  for (int t = 0; t < NT; ++t) {  // (p0 + p1) + (p2 + p3), as combine4
    const __m128 p01 = _mm_add_ps(_mm512_castps512_ps128(acc[t]), _mm512_extractf32x4_ps(acc[t], 1));
    const __m128 p23 = _mm_add_ps(_mm512_extractf32x4_ps(acc[t], 2), _mm512_extractf32x4_ps(acc[t], 3));
    _mm_storeu_ps(out + 4 * t, _mm_add_ps(p01, p23));
  }
}

}  // namespace
}  // namespace nt::detail

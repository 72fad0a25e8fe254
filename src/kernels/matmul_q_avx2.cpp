// kernels/matmul_q_avx2.cpp — K-quant matmul (Q2_K..Q6_K) with AVX2 (no VNNI), and the AVX2
// kernel table (the types with 32-element blocks are in matmul_q32_avx2.cpp). 32 elements per
// step: weights decoded to unsigned bytes (q + offset), then
//   isum = madd(maddubs(w_u8, x_i8), 1) + (-offset * lanesum(x))    exact (no i16 saturation:
//   w_u8 <= 63)
//   acc += float(isum) * (w_scale * x_scale)
// Min terms accumulate in 8 lanes (one per scale group), summed at the end. Tiles of any size run
// the same per-output sequence (determinism contract).
#include "kernels/kernels_internal.h"
#include "kernels/quant_decode_avx2.h"

#include <type_traits>

namespace nt::detail {
namespace {

// A tile's tokens in the quantized activations (xquant.h): token t's row at x0 + t * stride (qs at
// +0, ls at +npad, dx at +2 npad, g32 and g16 after dx). The unit loop steps one pointer per token:
// NT tokens' five pointers each do not fit the general registers.
struct XRows {
  const uint8_t* x0;
  int64_t stride, npad;
  XRows(const XQuant& xq, int64_t t0)
      : x0(reinterpret_cast<const uint8_t*>(xq.qs(t0))), stride(xq.stride), npad(xq.npad) {}
  const int8_t* qs(const uint8_t* xt) const { return reinterpret_cast<const int8_t*>(xt); }
  const int32_t* ls(const uint8_t* xt) const { return reinterpret_cast<const int32_t*>(xt + npad); }
  const float* dx(const uint8_t* xt) const { return reinterpret_cast<const float*>(xt + 2 * npad); }
  const float* g32(const uint8_t* xt) const { return dx(xt) + npad / 32; }
  const float* g16(const uint8_t* xt) const { return dx(xt) + npad / 16; }
};

template <class T, int NR, int NT>
__attribute__((always_inline)) inline void unit_step(__m256 (&acc)[NR][NT], __m256 (&mv)[NR][NT],
                                                     const uint8_t* const (&up)[NR], const XRows& xr, int64_t u) {
  St st[NR];
  for (int r = 0; r < NR; ++r) T::prep(up[r], st[r]);
  const __m256i ones = _mm256_set1_epi16(1);
  for (int b = 0; b < T::kBlocks; ++b) {
    const int64_t e = (u * T::kBlocks + b) * 32;
    __m256i wv[NR];
    __m256 av[NR];
    for (int r = 0; r < NR; ++r) {
      wv[r] = T::wq(up[r], b);
      av[r] = T::kS16 ? _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_set1_ps(st[r].a[2 * b])), _mm_set1_ps(st[r].a[2 * b + 1]), 1)
                      : _mm256_set1_ps(st[r].a[b]);
    }
    const uint8_t* xt = xr.x0;
    for (int t = 0; t < NT; ++t, xt += xr.stride) {
      __asm__ volatile("" : "+r"(xt));  // one pointer stepped per token (see XRows)
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xr.qs(xt) + e));
      const __m256i ls = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xr.ls(xt) + e / 4));
      const __m256 dxv = _mm256_broadcast_ss(xr.dx(xt) + e / 32);
      for (int r = 0; r < NR; ++r) {
        __m256i p16;
        if constexpr (T::kSigned) p16 = _mm256_maddubs_epi16(_mm256_sign_epi8(wv[r], wv[r]), _mm256_sign_epi8(xv, wv[r]));
        else p16 = _mm256_maddubs_epi16(wv[r], xv);
        __m256i isum = _mm256_madd_epi16(p16, ones);
        if constexpr (T::kOffset != 0) isum = _mm256_add_epi32(isum, ls);  // ls is 0 without an offset
        acc[r][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(av[r], dxv), acc[r][t]);
      }
    }
  }
  if constexpr (T::kMin > 0) {  // 8 lanes, one per group (Q2_K: groups i and i + 8 share a lane)
    const uint8_t* xt = xr.x0;
    for (int t = 0; t < NT; ++t, xt += xr.stride) {
      const float* g = T::kG16 ? xr.g16(xt) + u * 16 : xr.g32(xt) + u * T::kBlocks;
      for (int r = 0; r < NR; ++r)
        for (int i = 0; i < T::kMin; i += 8)
          mv[r][t] = _mm256_add_ps(mv[r][t], _mm256_mul_ps(_mm256_loadu_ps(st[r].mn + i), _mm256_loadu_ps(g + i)));
    }
  }
}

// One tile: rows r0 + r * rs (r < NR), tokens t0..t0+NT. Each row's stream prefetches `ahead`
// bytes on, at least once per cache line (units under 32 bytes: every second unit).
template <class T, int NR, int NT>
void tile(const MatArgs& a, int64_t r0, int64_t t0, int64_t rs = 1, int64_t ahead = 256) {
  static_assert(T::kBlocks == 8, "K-quant super-blocks (32-element types: matmul_q32_avx2.cpp)");
  const int64_t n_units = a.w.n_cols / (32 * T::kBlocks);
  __m256 acc[NR][NT], mv[NR][NT];
  for (int r = 0; r < NR; ++r)
    for (int t = 0; t < NT; ++t) acc[r][t] = mv[r][t] = _mm256_setzero_ps();
  const uint8_t* rows[NR];
  for (int r = 0; r < NR; ++r) rows[r] = a.w.data + (r0 + r * rs) * a.w.row_bytes;
  constexpr int64_t kPfMask = T::kUnitBytes < 32 ? 1 : 0;
  const XRows xr(*a.xq, t0);
  for (int64_t u = 0; u < n_units; ++u) {
    const uint8_t* up[NR];
    for (int r = 0; r < NR; ++r) {
      up[r] = rows[r] + u * T::kUnitBytes;
      if ((u & kPfMask) == 0)
        for (int k = 0; k < T::kUnitBytes; k += 64) _mm_prefetch(reinterpret_cast<const char*>(up[r] + ahead + k), _MM_HINT_T0);
    }
    unit_step<T, NR, NT>(acc, mv, up, xr, u);
  }
  for (int t = 0; t < NT; ++t)
    for (int r = 0; r < NR; ++r)
      a.y[(t0 + t) * a.ldy + r0 + r * rs] = hsum256(acc[r][t]) - (T::kMin > 0 ? hsum256(mv[r][t]) : 0.0f);
}

// Up to this many tokens (continuous batching's decode steps) the plan streams the rows as in a
// one-token decode and rect gets every token at once: each row unit is read from memory once and
// decoded once per chunk of up to 8 tokens (the 2 x 3 tiles below decode it once per 3 tokens).
constexpr int64_t kStreamTokens = 16;

// Tokens t..t1 of tile step r (S rows `part` apart) in chunks of NT, then NT / 2, ... 1 tokens.
template <class T, int S, int NT>
void token_chunks(const MatArgs& a, int64_t r, int64_t part, int64_t t, int64_t t1) {
  for (; t + NT <= t1; t += NT) tile<T, S, NT>(a, r, t, part, kDecodeStreamAhead);
  if constexpr (NT > 1) token_chunks<T, S, NT / 2>(a, r, part, t, t1);
}

// Tokens t0..t1 of the rows [r0, r1) as S streams a fraction of the rectangle apart (each
// prefetching kDecodeStreamAhead on, like the one-token quartets), the rows past a multiple of S as
// one stream. Chunks as wide as the 16 registers allow: S x NT accumulators (twice for the min
// types), S weight vectors and scales, one token's x.
template <class T, int S>
void streamed_rect(const MatArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  constexpr int kNt = (T::kMin > 0 ? 4 : 8) / S;
  const int64_t part = (r1 - r0) / S;
  for (int64_t j = 0; j < part; ++j) token_chunks<T, S, kNt>(a, r0 + j, part, t0, t1);
  for (int64_t r = r0 + S * part; r < r1; ++r) token_chunks<T, 1, kNt>(a, r, 1, t0, t1);
}

template <class T>
void rect(const MatArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  if (t1 - t0 >= 2 && t1 - t0 <= kStreamTokens) {
    if (t1 - t0 >= 8) streamed_rect<T, 1>(a, r0, r1, t0, t1);
    else streamed_rect<T, 2>(a, r0, r1, t0, t1);
    return;
  }
  // One token (decode): four rows a quarter of the rectangle apart, four streams each walking its
  // rows front to back and prefetching kDecodeStreamAhead (as the AVX-512 quartets), instead of
  // 2-row tiles of adjacent rows (measurements: docs/kernels.md).
  const int64_t n = r1 - r0;
  if (t1 - t0 == 1 && n % 4 == 0 && n >= 8) {
    const int64_t quarter = n / 4;
    for (int64_t j = 0; j < quarter; ++j) tile<T, 4, 1>(a, r0 + j, t0, quarter, kDecodeStreamAhead);
    return;
  }
  // 2 x 3 tiles (6 accumulators + weights, scales and x fit the 16 ymm registers). Token strips
  // outside, row pairs inside: a strip's activations stay in L1 while the rectangle's rows (sized
  // for L2 by the dispatcher) stream past.
  const int64_t r_pairs = r0 + (r1 - r0) / 2 * 2;
  int64_t t = t0;
  for (; t + 3 <= t1; t += 3) {
    for (int64_t r = r0; r < r_pairs; r += 2) tile<T, 2, 3>(a, r, t);
    if (r_pairs < r1) tile<T, 1, 3>(a, r_pairs, t);
  }
  for (; t < t1; ++t) {
    for (int64_t r = r0; r < r_pairs; r += 2) tile<T, 2, 1>(a, r, t);
    if (r_pairs < r1) tile<T, 1, 1>(a, r_pairs, t);
  }
}

template <class T>
const MatmulKernel* kernel() {
  static const MatmulKernel k{true, T::kOffset, XLayout::Natural, rect<T>, 12, kStreamTokens};
  return &k;
}

}  // namespace

const MatmulKernel* matmul_kernel_f_avx2(DType type);

const MatmulKernel* matmul_kernel_q32_avx2(DType type);

const MatmulKernel* matmul_kernel_avx2(DType type) {
  if (const MatmulKernel* k = matmul_kernel_q32_avx2(type)) return k;
  switch (type) {
    case DType::Q2_K: return kernel<Q2_K>();
    case DType::Q3_K: return kernel<Q3_K>();
    case DType::Q4_K: return kernel<Q4_K>();
    case DType::Q5_K: return kernel<Q5_K>();
    case DType::Q6_K: return kernel<Q6_K>();
    default: return matmul_kernel_f_avx2(type);
  }
}

}  // namespace nt::detail

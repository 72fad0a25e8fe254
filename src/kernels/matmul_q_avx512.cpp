// kernels/matmul_q_avx512.cpp — quantized-weight matmul with AVX-512 VNNI for the K-quants with
// scales per 16 elements (Q2_K, Q3_K, Q6_K; the types with scales per 32 use the row-lane kernels
// of matmul_rl_avx512.cpp). Activations come quantized per 32 elements, each 128 elements split
// into two 64-byte halves x1, x2 (the Quad layout of xquant.h); each weight quad decodes into
// unsigned bytes (q + offset) in the same halves w1, w2, so that each 32-bit lane holds 8 elements
// of one 16-element scale group. Then
//   isum = vpdpbusd(vpdpbusd(-offset * lanesum(x), w1, x1), w2, x2)   exact integer dot per lane
//   acc += float(isum) * (w_scale * x_scale)                           per lane, fixed order
// (one float step per 128 elements), and Q2_K adds -min_g * x_scale * sum(x_g) into the same
// accumulators. A tile of NR rows x NT tokens runs exactly the same per-accumulator sequence as a
// 1 x 1 tile, so every output is bit-identical whatever the tiling (determinism contract).
#include "kernels/quant_decode_avx512.h"

namespace nt::detail {
namespace {

// One unit (kQuads quads of 128 elements) of a tile into acc. Min-term types (Q2_K) add
// -min_g * x_scale * sum(x_g) into the same accumulators (mn16 holds -min_g).
// x0 + t * stride: token t's quantized row (xquant.h layout): qs at +0, ls at +npad, dx at +2 npad,
// g32 after dx (npad / 32 floats), g16 after g32. (One running pointer: 16 tokens' pointers do not
// fit the general registers.)
template <class T, int NR, int NT>
__attribute__((always_inline)) inline void unit_step(__m512 (&acc)[NR][NT], const uint8_t* const (&up)[NR],
                                                     const uint8_t* x0, int64_t stride, int64_t npad, int64_t u) {
  St st[NR];
  for (int r = 0; r < NR; ++r) T::prep(up[r], st[r]);
  if constexpr (T::kMin > 0) {
    static_assert(T::kMin == 16 && T::kG16, "the 16-element min term (Q2_K)");
    const uint8_t* xt = x0;
    for (int t = 0; t < NT; ++t, xt += stride) {
      const float* dx = reinterpret_cast<const float*>(xt + 2 * npad);
      const __m512 gv = _mm512_loadu_ps(dx + npad / 16 + u * 16);
      for (int r = 0; r < NR; ++r) acc[r][t] = _mm512_fmadd_ps(st[r].mn16, gv, acc[r][t]);
    }
  }
  for (int q = 0; q < T::kQuads; ++q) {
    const int64_t e = (u * T::kQuads + q) * 128;  // first element of this quad
    __m512i w1[NR], w2[NR];
    __m512 av[NR];
    static_assert(T::kS16 && T::kLayout == XLayout::Quad, "16-element scale groups in the Quad layout");
    const __m512i aidx = _mm512_add_epi32(idx8x2(), _mm512_set1_epi32(8 * q));
    for (int r = 0; r < NR; ++r) {
      T::quad(up[r], q, w1[r], w2[r]);
      av[r] = _mm512_permutexvar_ps(aidx, st[r].a16);
    }
    const uint8_t* xt = x0;
    for (int t = 0; t < NT; ++t, xt += stride) {
      __asm__ volatile("" : "+r"(xt));  // one pointer stepped per token, not NT pointers kept (spilled)
      const uint8_t* xs = xt + e;
      const __m512i x1 = _mm512_loadu_si512(xs), x2 = _mm512_loadu_si512(xs + 64);
      const __m512i ls = _mm512_loadu_si512(xt + npad + e / 2);
      const __m512 dxv = _mm512_permutexvar_ps(
          idx4x4(), _mm512_castps128_ps512(_mm_loadu_ps(reinterpret_cast<const float*>(xt + 2 * npad + e / 8))));
      for (int r = 0; r < NR; ++r) {
        const __m512i isum = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(ls, w1[r], x1), w2[r], x2);
        acc[r][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(av[r], dxv), acc[r][t]);
      }
    }
  }
}

// One tile: rows r0..r0+NR, tokens t0..t0+NT.
// Rows r0 + r * rs (r < NR); each prefetches `ahead` bytes on (0: one tile, NR rows, ahead).
template <class T, int NR, int NT>
void tile(const MatArgs& a, int64_t r0, int64_t t0, int64_t rs = 1, int64_t ahead = 0) {
  const XQuant& xq = *a.xq;
  const int64_t n_full = a.w.n_cols / (128 * T::kQuads);  // whole super-blocks: no tail
  __m512 acc[NR][NT];
  for (int r = 0; r < NR; ++r)
    for (int t = 0; t < NT; ++t) acc[r][t] = _mm512_setzero_ps();
  const uint8_t* rows[NR];
  for (int r = 0; r < NR; ++r) rows[r] = a.w.data + (r0 + r * rs) * a.w.row_bytes;
  const uint8_t* x0 = reinterpret_cast<const uint8_t*>(xq.qs(t0));
  const int64_t npad = xq.npad;
  // Prefetch one tile ahead: rows r0+NR.. at the same unit, every cache line of it. Rows of a
  // rectangle are contiguous, so this walks memory linearly one tile (NR rows) ahead of the loads,
  // enough to cover DRAM latency; prefetches past the matrix are harmless (they never fault).
  const int64_t pf_ahead = ahead > 0 ? ahead : NR * static_cast<int64_t>(a.w.row_bytes);
  for (int64_t u = 0; u < n_full; ++u) {
    const uint8_t* up[NR];
    for (int r = 0; r < NR; ++r) {
      up[r] = rows[r] + u * T::kUnitBytes;
      for (int k = 0; k < T::kUnitBytes; k += 64) _mm_prefetch(reinterpret_cast<const char*>(up[r] + pf_ahead + k), _MM_HINT_T0);
    }
    unit_step<T, NR, NT>(acc, up, x0, xq.stride, npad, u);
  }
  for (int t = 0; t < NT; ++t)
    for (int r = 0; r < NR; ++r) a.y[(t0 + t) * a.ldy + r0 + r * rs] = hsum512(acc[r][t]);
}

// Up to this many tokens (continuous batching's decode steps) the plan streams the rows as in a
// one-token decode and rect gets every token at once: each row unit is read from memory once and
// decoded once per chunk of up to 8 tokens (the 3 x 4 tiles below decode it once per 4 tokens).
constexpr int64_t kStreamTokens = 16;

// Tokens t0..t1 of the rows [r0, r0 + S * part) as S streams `part` rows apart (tile row i of step
// j: row r0 + j + i * part), each prefetching kDecodeStreamAhead on like the one-token quartets;
// each step's rows are dotted with the tokens in chunks of up to 8 (NT x S accumulators, S weight
// pairs and scales, one token's x in the 32 registers), the later chunks reading them from L1.
template <class T, int S>
void streams_tokens(const MatArgs& a, int64_t r0, int64_t part, int64_t t0, int64_t t1) {
  for (int64_t j = 0; j < part; ++j)
    for (int64_t t = t0; t < t1;) {
      const int64_t left = t1 - t;
      if (S <= 2 && left >= 8) {
        tile<T, S, 8>(a, r0 + j, t, part, kDecodeStreamAhead);
        t += 8;
      } else if (S <= 3 && left >= 4) {
        tile<T, S, 4>(a, r0 + j, t, part, kDecodeStreamAhead);
        t += 4;
      } else if (left >= 2) {
        tile<T, S, 2>(a, r0 + j, t, part, kDecodeStreamAhead);
        t += 2;
      } else {
        tile<T, S, 1>(a, r0 + j, t, part, kDecodeStreamAhead);
        t += 1;
      }
    }
}

// The streamed rectangle: fewer streams as the token count (the tiles' width) grows; the rows past
// a multiple of the stream count as one stream.
template <class T, int S>
void streamed_rect(const MatArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  const int64_t part = (r1 - r0) / S;
  streams_tokens<T, S>(a, r0, part, t0, t1);
  streams_tokens<T, 1>(a, r0 + S * part, r1 - r0 - S * part, t0, t1);
}

// 2-16 tokens: streamed_rect. Otherwise 3 x 4 tiles: 12 accumulators + 6 weight vectors + 3 scales +
// x fit the 32 zmm registers. Token strips outside, row strips inside: a strip of 4 tokens' activations stays in L1 while the
// rectangle's weight rows (sized for L2 by the dispatcher) stream past it.
template <class T>
void rect(const MatArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  const int64_t n_tok = t1 - t0;
  if (n_tok >= 2 && n_tok <= kStreamTokens) {
    if (n_tok >= 8) streamed_rect<T, 2>(a, r0, r1, t0, t1);
    else if (n_tok >= 4) streamed_rect<T, 3>(a, r0, r1, t0, t1);
    else streamed_rect<T, 4>(a, r0, r1, t0, t1);
    return;
  }
  const int64_t r_full = r0 + (r1 - r0) / 3 * 3;
  int64_t t = t0;
  for (; t + 4 <= t1; t += 4) {
    for (int64_t r = r0; r < r_full; r += 3) tile<T, 3, 4>(a, r, t);
    for (int64_t r = r_full; r < r1; ++r) tile<T, 1, 4>(a, r, t);
  }
  for (; t < t1; ++t) {
    // One token (decode): four rows a quarter of the rectangle apart, four streams each walking
    // its rows front to back and prefetching kDecodeStreamAhead (as the row-lane quartets), faster
    // than 6-row tiles of adjacent rows (docs/kernels.md). Otherwise 6-row tiles, more rows per step.
    const int64_t n = r1 - r0;
    if (n % 4 == 0 && n >= 8) {
      const int64_t quarter = n / 4;
      for (int64_t j = 0; j < quarter; ++j) tile<T, 4, 1>(a, r0 + j, t, quarter, kDecodeStreamAhead);
      continue;
    }
    int64_t r = r0;
    for (; r + 6 <= r1; r += 6) tile<T, 6, 1>(a, r, t);
    for (; r + 3 <= r1; r += 3) tile<T, 3, 1>(a, r, t);
    for (; r < r1; ++r) tile<T, 1, 1>(a, r, t);
  }
}

template <class T>
const MatmulKernel* kernel() {
  static const MatmulKernel k{true, T::kOffset, T::kLayout, rect<T>, 12, kStreamTokens};
  return &k;
}

}  // namespace

const MatmulKernel* matmul_kernel_f_avx512(DType type);

const MatmulKernel* matmul_kernel_avx512(DType type) {
  if (const MatmulKernel* k = matmul_kernel_rl_avx512(type)) return k;
  switch (type) {
    case DType::Q2_K: return kernel<Q2_K>();
    case DType::Q3_K: return kernel<Q3_K>();
    case DType::Q6_K: return kernel<Q6_K>();
    default: return matmul_kernel_f_avx512(type);
  }
}

}  // namespace nt::detail

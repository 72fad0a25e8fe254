// kernels/attention_avx2.cpp — the two row passes of attention (AttnRowKernels) with AVX2 + FMA +
// F16C, K/V rows in F32, F16 or BF16 and head_dim a multiple of 8. Per element they run exactly the
// sequence of kv_dot / kv_axpy of matmul_f_avx2.cpp (8-lane FMA in dimension order from zero +
// hsum256, then * scale; output FMAs in position order from zero), so results are bit-identical
// to the row-op path. What changes is the schedule: scores take eight positions at a time (eight
// independent FMA chains instead of one, their horizontal sums reduced together), and the
// weighted sum holds up to 64 output columns in registers across all positions (no load/store of
// the output per position, whose store-to-load chain bounded the row-op path), for up to three
// query vectors at once that share each V load.
#include "core/check.h"
#include "kernels/kernels_internal.h"
#include "kernels/kv_rows.h"
#include "kernels/simd_avx2.h"

namespace nt::detail {
namespace {

// 8 elements of a K / V row of type kT (F32, F16 or BF16) at element i, widened to f32.
template <DType kT>
inline __m256 load8(const uint8_t* row, int i) {
  if constexpr (kT == DType::F16) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * i)));
  } else if constexpr (kT == DType::BF16) {  // bf16 is the high half of an f32
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * i)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  } else {
    static_assert(kT == DType::F32);
    return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + i);
  }
}

// hsum256 of 8 accumulators at once: out lane p = hsum256(a[p]), bit for bit. Each add pairs the
// same two values hsum256 pairs (lane i with i + 4, then i + 2, then i + 1); 22 instructions
// instead of 8 x 7.
inline __m256 hsum256_x8(const __m256 (&a)[8]) {
  __m256 x[4];
  for (int k = 0; k < 4; ++k)  // 128-bit lane 0: a[2k] lo + hi; lane 1: a[2k + 1]
    x[k] = _mm256_add_ps(_mm256_permute2f128_ps(a[2 * k], a[2 * k + 1], 0x20), _mm256_permute2f128_ps(a[2 * k], a[2 * k + 1], 0x31));
  __m256 y[2];
  for (int k = 0; k < 2; ++k) {  // lane 0: [b0 + b2, b1 + b3] of a[4k], then of a[4k + 2]; lane 1: a[4k + 1], a[4k + 3]
    const __m256d lo = _mm256_unpacklo_pd(_mm256_castps_pd(x[2 * k]), _mm256_castps_pd(x[2 * k + 1]));
    const __m256d hi = _mm256_unpackhi_pd(_mm256_castps_pd(x[2 * k]), _mm256_castps_pd(x[2 * k + 1]));
    y[k] = _mm256_add_ps(_mm256_castpd_ps(lo), _mm256_castpd_ps(hi));
  }
  // lane 0: a0, a2, a4, a6; lane 1: a1, a3, a5, a7 -> natural order.
  const __m256 w = _mm256_add_ps(_mm256_shuffle_ps(y[0], y[1], _MM_SHUFFLE(2, 0, 2, 0)), _mm256_shuffle_ps(y[0], y[1], _MM_SHUFFLE(3, 1, 3, 1)));
  return _mm256_permutevar8x32_ps(w, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// hsum256 of 4 accumulators at once: lane p = hsum256(a[p]), bit for bit (the same pairings as
// hsum256_x8: lane i with i + 4, then i + 2, then i + 1).
inline __m128 hsum256_x4(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
  // 128-bit lane 0: a0's lo + hi (x) or a2's (y); lane 1: a1's or a3's.
  const __m256 x = _mm256_add_ps(_mm256_permute2f128_ps(a0, a1, 0x20), _mm256_permute2f128_ps(a0, a1, 0x31));
  const __m256 y = _mm256_add_ps(_mm256_permute2f128_ps(a2, a3, 0x20), _mm256_permute2f128_ps(a2, a3, 0x31));
  // lane 0: [b0 + b2, b1 + b3] of a0, then of a2; lane 1: of a1, then of a3.
  const __m256 z = _mm256_add_ps(_mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(x), _mm256_castps_pd(y))),
                                 _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(x), _mm256_castps_pd(y))));
  const __m256 h = _mm256_hadd_ps(z, z);  // lane 0: a0, a2, a0, a2; lane 1: a1, a3, a1, a3
  return _mm_unpacklo_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

// scores[g][pos] = dot(q[g], K[pos]) * scale; mx[g] = their maximum. Positions eight at a time:
// query vectors in threes take them as two tiles of 4 positions x 3 queries (12 chains, the three
// query vectors held in registers, each K vector widened once for all three), the rest of the
// queries one by one over all eight (eight chains, reduced together by hsum256_x8); the positions
// past the last eight one by one. Every score is the same chain over head_dim = 8 * nv in order
// and the same hsum256 pairing whichever way it is computed (measurements: docs/kernels.md).
template <DType kT>
void scores_group(const KvSpan* spans, int n_spans, int32_t n_kv, size_t row_bytes, size_t off, const float* const* q,
                  int n_g, float scale, float* const* scores, float* mx, int nv) {
  for (int g = 0; g < n_g; ++g) mx[g] = -__builtin_inff();
  const uint8_t* blk[8];
  int n_blk = 0;
  int32_t blk_pos = 0;
  const __m256 scale_v = _mm256_set1_ps(scale);
  constexpr int kMaxG = 32;
  NT_CHECK(n_g <= kMaxG);
  __m256 mxv[kMaxG];
  for (int g = 0; g < n_g; ++g) mxv[g] = _mm256_set1_ps(-__builtin_inff());
  const int n_g3 = n_g / 3 * 3;
  const __m128 scale_4 = _mm_set1_ps(scale), ninf_4 = _mm_set1_ps(-__builtin_inff());
  for_each_row<false>(spans, n_spans, n_kv, row_bytes, off, [&](int32_t pos, const uint8_t* row) {
    if (n_blk == 0) blk_pos = pos;
    blk[n_blk++] = row;
    if (n_blk < 8) return;
    n_blk = 0;
    for (int g = 0; g < n_g3; g += 3)
      for (int h = 0; h < 8; h += 4) {
        __m256 acc[4][3];
        for (int i = 0; i < 4; ++i)
          for (int t = 0; t < 3; ++t) acc[i][t] = _mm256_setzero_ps();
        for (int j = 0; j < nv; ++j) {
          __m256 qv[3];
          for (int t = 0; t < 3; ++t) {
            qv[t] = _mm256_loadu_ps(q[g + t] + 8 * j);
            asm("" : "+x"(qv[t]));  // held: GCC would fold the load into each of the four fmas
          }
          for (int i = 0; i < 4; ++i) {
            const __m256 kv = load8<kT>(blk[h + i], 8 * j);
            for (int t = 0; t < 3; ++t) acc[i][t] = _mm256_fmadd_ps(kv, qv[t], acc[i][t]);
          }
        }
        for (int t = 0; t < 3; ++t) {
          const __m128 sv = _mm_mul_ps(hsum256_x4(acc[0][t], acc[1][t], acc[2][t], acc[3][t]), scale_4);
          _mm_storeu_ps(scores[g + t] + blk_pos + h, sv);
          // The four lanes fold into mxv's low half (max is exact in any order; NaN keeps mxv).
          mxv[g + t] = _mm256_max_ps(_mm256_set_m128(ninf_4, sv), mxv[g + t]);
        }
      }
    for (int g = n_g3; g < n_g; ++g) {
      __m256 acc[8];
      for (int i = 0; i < 8; ++i) acc[i] = _mm256_setzero_ps();
      const float* qg = q[g];
      for (int j = 0; j < nv; ++j) {
        const __m256 qv = _mm256_loadu_ps(qg + 8 * j);
        for (int i = 0; i < 8; ++i) acc[i] = _mm256_fmadd_ps(load8<kT>(blk[i], 8 * j), qv, acc[i]);
      }
      const __m256 sv = _mm256_mul_ps(hsum256_x8(acc), scale_v);
      _mm256_storeu_ps(scores[g] + blk_pos, sv);
      mxv[g] = _mm256_max_ps(sv, mxv[g]);  // a NaN score lane keeps mxv, as `s > mx` skips it below
    }
  }, dtype_row_bytes(kT, 8 * uint64_t(nv)));
  for (int g = 0; g < n_g; ++g)
    for (int i = 0; i < n_blk; ++i) {
      __m256 acc = _mm256_setzero_ps();
      for (int j = 0; j < nv; ++j) acc = _mm256_fmadd_ps(load8<kT>(blk[i], 8 * j), _mm256_loadu_ps(q[g] + 8 * j), acc);
      const float s = hsum256(acc) * scale;
      scores[g][blk_pos + i] = s;
      mx[g] = s > mx[g] ? s : mx[g];
    }
  for (int g = 0; g < n_g; ++g) {  // the maximum is exact: the lanes' order does not change it
    alignas(32) float m[8];
    _mm256_store_ps(m, mxv[g]);
    for (int i = 0; i < 8; ++i) mx[g] = m[i] > mx[g] ? m[i] : mx[g];
  }
}

// out[g][c] (columns 8 * j0 .. 8 * (j0 + CH)) = sum over positions, in order, of p[g][pos] *
// V[pos][c], for G query vectors sharing the KV head: each V vector is loaded and widened once for
// all G (G * CH accumulators + G broadcasts + 1 <= 16 registers).
template <int CH, int G, DType kT>
void weighted_cols(const KvSpan* spans, int n_spans, int32_t n_kv, size_t row_bytes, size_t off, const float* const* p,
                   float* const* out, int j0) {
  __m256 acc[G][CH];
  for (int g = 0; g < G; ++g)
    for (int j = 0; j < CH; ++j) acc[g][j] = _mm256_setzero_ps();
  for_each_row<true>(spans, n_spans, n_kv, row_bytes, off, [&](int32_t pos, const uint8_t* row) {
    __m256 pv[G];
    for (int g = 0; g < G; ++g) pv[g] = _mm256_set1_ps(p[g][pos]);
    for (int j = 0; j < CH; ++j) {
      const __m256 v = load8<kT>(row, 8 * (j0 + j));
      for (int g = 0; g < G; ++g) acc[g][j] = _mm256_fmadd_ps(pv[g], v, acc[g][j]);
    }
  }, dtype_row_bytes(kT, 8 * uint64_t(j0 + CH)));  // the lines this pass reads (and earlier ones, cached)
  for (int g = 0; g < G; ++g)
    for (int j = 0; j < CH; ++j) _mm256_storeu_ps(out[g] + 8 * (j0 + j), acc[g][j]);
}

// Columns in passes of at most kCh<G> for G query vectors at a time.
template <int G>
constexpr int kCh = G == 1 ? 8 : 12 / G;
template <int G, DType kT>
void weighted_cols_g(const KvSpan* spans, int n_spans, int32_t n_kv, size_t row_bytes, size_t off, const float* const* p,
                     float* const* out, int nv) {
  using Fn = void (*)(const KvSpan*, int, int32_t, size_t, size_t, const float* const*, float* const*, int);
  auto pick = []<int C>() -> Fn {
    if constexpr (C <= kCh<G>) return weighted_cols<C, G, kT>;
    else return nullptr;
  };
  static const Fn kCols[9] = {nullptr,
                                  pick.template operator()<1>(), pick.template operator()<2>(), pick.template operator()<3>(),
                                  pick.template operator()<4>(), pick.template operator()<5>(), pick.template operator()<6>(),
                                  pick.template operator()<7>(), pick.template operator()<8>()};
  for (int j0 = 0; j0 < nv; j0 += kCh<G>) kCols[nv - j0 < kCh<G> ? nv - j0 : kCh<G>](spans, n_spans, n_kv, row_bytes, off, p, out, j0);
}

// Query vectors in sixes or fours (2 or 3 columns per pass: each V vector widened once for more
// of them), threes (head_dim <= 32: 4 columns, 12 accumulators), then pairs, then one.
template <DType kT>
void weighted_group(const KvSpan* spans, int n_spans, int32_t n_kv, size_t row_bytes, size_t off,
                    const float* const* p, int n_g, float* const* out, int nv) {
  int g = 0;
  for (; g + 6 <= n_g; g += 6) weighted_cols_g<6, kT>(spans, n_spans, n_kv, row_bytes, off, p + g, out + g, nv);
  for (; g + 4 <= n_g; g += 4) weighted_cols_g<4, kT>(spans, n_spans, n_kv, row_bytes, off, p + g, out + g, nv);
  if (nv <= 4)
    for (; g + 3 <= n_g; g += 3) weighted_cols_g<3, kT>(spans, n_spans, n_kv, row_bytes, off, p + g, out + g, nv);
  for (; g + 2 <= n_g; g += 2) weighted_cols_g<2, kT>(spans, n_spans, n_kv, row_bytes, off, p + g, out + g, nv);
  for (; g < n_g; ++g) weighted_cols_g<1, kT>(spans, n_spans, n_kv, row_bytes, off, p + g, out + g, nv);
}

// AttnRowKernels holds plain function pointers: one instantiation per head_dim / 8.
template <int NV, DType kT>
void scores_nv(const KvSpan* spans, int n_spans, int32_t n_kv, size_t row_bytes, size_t off, const float* const* q,
               int n_g, float scale, float* const* scores, float* mx) {
  scores_group<kT>(spans, n_spans, n_kv, row_bytes, off, q, n_g, scale, scores, mx, NV);
}
template <int NV, DType kT>
void weighted_nv(const KvSpan* spans, int n_spans, int32_t n_kv, size_t row_bytes, size_t off, const float* const* p,
                 int n_g, float* const* out) {
  weighted_group<kT>(spans, n_spans, n_kv, row_bytes, off, p, n_g, out, NV);
}

template <int NV>
AttnRowKernels kernels_for(DType k_type, DType v_type) {
  AttnRowKernels r;
  // Runs of 16 query vectors (a prefill block of 8 tokens x 2 heads in one pass over K and V):
  // five 4 x 3 score tiles and a query alone, weighted sums in sixes and a four (docs/kernels.md).
  r.run = 16;
  switch (k_type) {
    case DType::F32: r.scores = scores_nv<NV, DType::F32>; break;
    case DType::F16: r.scores = scores_nv<NV, DType::F16>; break;
    case DType::BF16: r.scores = scores_nv<NV, DType::BF16>; break;
    default: break;
  }
  switch (v_type) {
    case DType::F32: r.weighted = weighted_nv<NV, DType::F32>; break;
    case DType::F16: r.weighted = weighted_nv<NV, DType::F16>; break;
    case DType::BF16: r.weighted = weighted_nv<NV, DType::BF16>; break;
    default: break;
  }
  return r;
}

}  // namespace

AttnRowKernels attn_row_kernels_avx2(int head_dim, DType k_type, DType v_type) {
  if (head_dim % 8 != 0) return {};
  switch (head_dim / 8) {
    case 4: return kernels_for<4>(k_type, v_type);
    case 6: return kernels_for<6>(k_type, v_type);
    case 8: return kernels_for<8>(k_type, v_type);
    case 10: return kernels_for<10>(k_type, v_type);
    case 12: return kernels_for<12>(k_type, v_type);
    case 16: return kernels_for<16>(k_type, v_type);
    case 24: return kernels_for<24>(k_type, v_type);
    case 32: return kernels_for<32>(k_type, v_type);
    default: return {};
  }
}

}  // namespace nt::detail

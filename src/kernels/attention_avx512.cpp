// kernels/attention_avx512.cpp — the two row passes of attention for query heads with AVX-512,
// K/V rows in F32, F16 or BF16 and head_dim = 16 * NV: scores (one dot product per cached position) and
// the weighted sum of V rows, with the whole head_dim of the output held in NV registers across
// positions (no load/store of the output per position). Per element they run exactly the
// sequence of kv_dot / kv_axpy (16-lane FMA in dimension order + hsum512; output FMAs in position
// order from zero), so results are bit-identical to the row-op path. Scores reduce 16 positions'
// sums together (same pairings as hsum512); both passes serve the query heads of one KV head
// together (one K or V load for all). More than four query vectors at once (prefill runs) go to
// the tiled passes (attention_tile_avx512.cpp).
#include "kernels/attention_avx512.h"
#include "kernels/kernels_internal.h"
#include "kernels/kv_rows.h"

namespace nt::detail {
namespace {

// scores[pos] = dot(q, K[pos]) * scale for the first n_kv positions; returns their maximum.
// Positions go 16 at a time (their sums reduced together) while q fits beside 16 accumulators.
template <int NV, DType kT>
float scores_rows(const KvSpan* spans, int n_spans, int32_t n_kv, size_t row_bytes, size_t off, const float* q,
                  float scale, float* scores) {
  __m512 qv[NV];
  for (int j = 0; j < NV; ++j) qv[j] = _mm512_loadu_ps(q + 16 * j);
  float mx = -__builtin_inff();
  __m512 mxv = _mm512_set1_ps(-__builtin_inff());
  const uint8_t* blk[16];
  int n_blk = 0;
  int32_t blk_pos = 0;  // position of blk[0]
  auto one = [&](int32_t pos, const uint8_t* row) {
    __m512 acc = _mm512_setzero_ps();
    for (int j = 0; j < NV; ++j) acc = _mm512_fmadd_ps(load16<kT>(row, 16 * j), qv[j], acc);
    const float sc = hsum512(acc) * scale;
    scores[pos] = sc;
    mx = sc > mx ? sc : mx;
  };
  for_each_row<false>(spans, n_spans, n_kv, row_bytes, off, [&](int32_t pos, const uint8_t* row) {
    if constexpr (NV > 8) {
      one(pos, row);
    } else {
      if (n_blk == 0) blk_pos = pos;
      blk[n_blk++] = row;
      if (n_blk < 16) return;
      n_blk = 0;
      __m512 acc[16];
      for (int p = 0; p < 16; ++p) acc[p] = _mm512_setzero_ps();
#pragma GCC unroll 16
      for (int p = 0; p < 16; ++p) {  // row by row: one pointer live at a time
        const uint8_t* row = blk[p];
        for (int j = 0; j < NV; ++j) acc[p] = _mm512_fmadd_ps(load16<kT>(row, 16 * j), qv[j], acc[p]);
      }
      const __m512 sc = _mm512_mul_ps(hsum512_x16(acc), _mm512_set1_ps(scale));
      _mm512_storeu_ps(scores + blk_pos, sc);
      mxv = _mm512_max_ps(sc, mxv);  // a NaN score lane keeps mxv, as `sc > mx` skips it below
    }
  }, kRowBytes<NV, kT>);
  for (int p = 0; p < n_blk; ++p) one(blk_pos + p, blk[p]);
  const float mb = _mm512_reduce_max_ps(mxv);
  return mb > mx ? mb : mx;
}

// scores_rows for G query heads sharing one KV head, in one pass over K: each K row is loaded and
// widened once for all G heads (a head's slice of a cached row is a few lines of a row holding
// every KV head, so three passes read K from memory about three times; docs/kernels.md) (tiles of
// 4 positions x G heads; the 16-position block's
// accumulators wait in memory for hsum512_x16). Per head and position exactly the sequence of
// scores_rows (the fma chain over head_dim in order, the same horizontal sums, * scale), so the
// scores and their maximum are bit-identical. mx[g] = the maximum of head g's scores.
template <int NV, DType kT, int G>
void scores_rows_g(const KvSpan* spans, int n_spans, int32_t n_kv, size_t row_bytes, size_t off,
                   const float* const* q, float scale, float* const* scores, float* mx) {
  float mxs[G];
  __m512 mxv[G];
  for (int g = 0; g < G; ++g) {
    mxs[g] = -__builtin_inff();
    mxv[g] = _mm512_set1_ps(-__builtin_inff());
  }
  const uint8_t* blk[16];
  int n_blk = 0;
  int32_t blk_pos = 0;  // position of blk[0]
  alignas(64) float part[G][16][16];  // [head][position in block][lane]
  for_each_row<false>(spans, n_spans, n_kv, row_bytes, off, [&](int32_t pos, const uint8_t* row) {
    if (n_blk == 0) blk_pos = pos;
    blk[n_blk++] = row;
    if (n_blk < 16) return;
    n_blk = 0;
    for (int p0 = 0; p0 < 16; p0 += 4) {
      __m512 acc[G][4];
      for (int g = 0; g < G; ++g)
        for (int i = 0; i < 4; ++i) acc[g][i] = _mm512_setzero_ps();
      for (int j = 0; j < NV; ++j) {
        __m512 k[4];
        for (int i = 0; i < 4; ++i) k[i] = load16<kT>(blk[p0 + i], 16 * j);
        for (int g = 0; g < G; ++g) {
          const __m512 qv = _mm512_loadu_ps(q[g] + 16 * j);
          for (int i = 0; i < 4; ++i) acc[g][i] = _mm512_fmadd_ps(k[i], qv, acc[g][i]);
        }
      }
      for (int g = 0; g < G; ++g)
        for (int i = 0; i < 4; ++i) _mm512_store_ps(part[g][p0 + i], acc[g][i]);
    }
    for (int g = 0; g < G; ++g) {
      __m512 a[16];
      for (int p = 0; p < 16; ++p) a[p] = _mm512_load_ps(part[g][p]);
      const __m512 sc = _mm512_mul_ps(hsum512_x16(a), _mm512_set1_ps(scale));
      _mm512_storeu_ps(scores[g] + blk_pos, sc);
      mxv[g] = _mm512_max_ps(sc, mxv[g]);  // a NaN score lane keeps mxv, as in scores_rows
    }
  }, kRowBytes<NV, kT>);
  for (int p = 0; p < n_blk; ++p)
    for (int g = 0; g < G; ++g) {
      __m512 acc = _mm512_setzero_ps();
      for (int j = 0; j < NV; ++j) acc = _mm512_fmadd_ps(load16<kT>(blk[p], 16 * j), _mm512_loadu_ps(q[g] + 16 * j), acc);
      const float sc = hsum512(acc) * scale;
      scores[g][blk_pos + p] = sc;
      mxs[g] = sc > mxs[g] ? sc : mxs[g];
    }
  for (int g = 0; g < G; ++g) {
    const float mb = _mm512_reduce_max_ps(mxv[g]);
    mx[g] = mb > mxs[g] ? mb : mxs[g];
  }
}
template <int NV, DType kT>
void scores_group(const KvSpan* spans, int n_spans, int32_t n_kv, size_t row_bytes, size_t off, const float* const* q,
                  int n_g, float scale, float* const* scores, float* mx) {
  if (n_g > 4) return scores_tiles<NV, kT>(spans, n_spans, n_kv, row_bytes, off, q, n_g, scale, scores, mx);
  if constexpr (NV <= 8) {  // 4 x G accumulators, 4 K rows and a q register
    if (n_g == 2) return scores_rows_g<NV, kT, 2>(spans, n_spans, n_kv, row_bytes, off, q, scale, scores, mx);
    if (n_g == 3) return scores_rows_g<NV, kT, 3>(spans, n_spans, n_kv, row_bytes, off, q, scale, scores, mx);
    if (n_g == 4) return scores_rows_g<NV, kT, 4>(spans, n_spans, n_kv, row_bytes, off, q, scale, scores, mx);
  }
  for (int g = 0; g < n_g; ++g) mx[g] = scores_rows<NV, kT>(spans, n_spans, n_kv, row_bytes, off, q[g], scale, scores[g]);
}

// out = sum over the first n_kv positions, in order, of p[pos] * V[pos].
template <int NV, DType kT>
void weighted_rows(const KvSpan* spans, int n_spans, int32_t n_kv, size_t row_bytes, size_t off, const float* p,
                   float* out) {
  __m512 acc[NV];
  for (int j = 0; j < NV; ++j) acc[j] = _mm512_setzero_ps();
  for_each_row<true>(spans, n_spans, n_kv, row_bytes, off, [&](int32_t pos, const uint8_t* row) {
    const __m512 pv = _mm512_set1_ps(p[pos]);
    for (int j = 0; j < NV; ++j) acc[j] = _mm512_fmadd_ps(pv, load16<kT>(row, 16 * j), acc[j]);
  }, kRowBytes<NV, kT>);
  for (int j = 0; j < NV; ++j) _mm512_storeu_ps(out + 16 * j, acc[j]);
}

// The same for n_g query heads sharing one KV head: each V row is loaded and widened once for all
// of them; per head exactly the sequence of weighted_rows.
template <int NV, DType kT, int G>
void weighted_rows_g(const KvSpan* spans, int n_spans, int32_t n_kv, size_t row_bytes, size_t off,
                     const float* const* p, float* const* out) {
  __m512 acc[G][NV];
  for (int g = 0; g < G; ++g)
    for (int j = 0; j < NV; ++j) acc[g][j] = _mm512_setzero_ps();
  for_each_row<true>(spans, n_spans, n_kv, row_bytes, off, [&](int32_t pos, const uint8_t* row) {
    __m512 pv[G];
    for (int g = 0; g < G; ++g) pv[g] = _mm512_set1_ps(p[g][pos]);
    for (int j = 0; j < NV; ++j) {
      const __m512 v = load16<kT>(row, 16 * j);
      for (int g = 0; g < G; ++g) acc[g][j] = _mm512_fmadd_ps(pv[g], v, acc[g][j]);
    }
  }, kRowBytes<NV, kT>);
  for (int g = 0; g < G; ++g)
    for (int j = 0; j < NV; ++j) _mm512_storeu_ps(out[g] + 16 * j, acc[g][j]);
}
template <int NV, DType kT>
void weighted_group(const KvSpan* spans, int n_spans, int32_t n_kv, size_t row_bytes, size_t off,
                    const float* const* p, int n_g, float* const* out) {
  // G x NV accumulators beside G broadcasts and a V register; more vectors take the tiles.
  if (n_g > 4 || (n_g > 1 && n_g * NV > 24)) return weighted_tiles<NV, kT>(spans, n_spans, n_kv, row_bytes, off, p, n_g, out);
  if constexpr (2 * NV <= 24) if (n_g == 2) return weighted_rows_g<NV, kT, 2>(spans, n_spans, n_kv, row_bytes, off, p, out);
  if constexpr (3 * NV <= 24) if (n_g == 3) return weighted_rows_g<NV, kT, 3>(spans, n_spans, n_kv, row_bytes, off, p, out);
  if constexpr (4 * NV <= 24) if (n_g == 4) return weighted_rows_g<NV, kT, 4>(spans, n_spans, n_kv, row_bytes, off, p, out);
  for (int g = 0; g < n_g; ++g) weighted_rows<NV, kT>(spans, n_spans, n_kv, row_bytes, off, p[g], out[g]);
}

template <int NV>
AttnRowKernels kernels_for(DType k_type, DType v_type) {
  AttnRowKernels r;
  r.run = kTileMaxVectors;
  switch (k_type) {
    case DType::F32: r.scores = scores_group<NV, DType::F32>; break;
    case DType::F16: r.scores = scores_group<NV, DType::F16>; break;
    case DType::BF16: r.scores = scores_group<NV, DType::BF16>; break;
    default: break;
  }
  switch (v_type) {
    case DType::F32: r.weighted = weighted_group<NV, DType::F32>; break;
    case DType::F16: r.weighted = weighted_group<NV, DType::F16>; break;
    case DType::BF16: r.weighted = weighted_group<NV, DType::BF16>; break;
    default: break;
  }
  return r;
}

}  // namespace

AttnRowKernels attn_row_kernels_avx512(int head_dim, DType k_type, DType v_type) {
  if (head_dim % 16 != 0) return {};
  switch (head_dim / 16) {
    case 1: return kernels_for<1>(k_type, v_type);
    case 2: return kernels_for<2>(k_type, v_type);
    case 3: return kernels_for<3>(k_type, v_type);
    case 4: return kernels_for<4>(k_type, v_type);
    case 5: return kernels_for<5>(k_type, v_type);
    case 6: return kernels_for<6>(k_type, v_type);
    case 7: return kernels_for<7>(k_type, v_type);
    case 8: return kernels_for<8>(k_type, v_type);
    case 16: return kernels_for<16>(k_type, v_type);
    default: return {};
  }
}

}  // namespace nt::detail

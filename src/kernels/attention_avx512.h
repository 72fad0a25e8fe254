// kernels/attention_avx512.h — what the AVX-512 attention units (attention_avx512.cpp,
// attention_tile_avx512.cpp) share: the widening load of a K / V row, the 16-way horizontal sum,
// and the tiled passes for many query vectors. Include only from *_avx512.cpp units.
#pragma once

#include "kernels/kernels.h"
#include "kernels/simd_avx512.h"

namespace nt::detail {
namespace {

// 16 elements of a K / V row of type kT (F32, F16 or BF16) at element i, widened to f32.
template <DType kT>
inline __m512 load16(const uint8_t* row, int i) {
  if constexpr (kT == DType::F16) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * i)));
  } else if constexpr (kT == DType::BF16) {  // bf16 is the high half of an f32
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * i)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
  } else {
    static_assert(kT == DType::F32);
    return _mm512_loadu_ps(reinterpret_cast<const float*>(row) + i);
  }
}

// The horizontal sums of 16 accumulators at once: out lane p = hsum512(a[p]), bit for bit. Each
// add pairs the same two values hsum512 pairs (lane i with i + 8, then i + 4, i + 2, i + 1), only
// 16 sums share every shuffle and add (46 instructions instead of 16 x 7).
inline __m512 hsum512_x16(const __m512 (&a)[16]) {
  __m512 x[8], y[4], z[2];
  for (int k = 0; k < 8; ++k)  // lanes 0-7: a[2k] lo256 + hi256; lanes 8-15: a[2k + 1]
    x[k] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * k], a[2 * k + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm512_shuffle_f32x4(a[2 * k], a[2 * k + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  for (int k = 0; k < 4; ++k)  // 128-bit lane m: a[4k + m] lo128 + hi128 of those
    y[k] = _mm512_add_ps(_mm512_shuffle_f32x4(x[2 * k], x[2 * k + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(x[2 * k], x[2 * k + 1], _MM_SHUFFLE(3, 1, 3, 1)));
  for (int k = 0; k < 2; ++k) {  // 128-bit lane m: [b0 + b2, b1 + b3] of a[8k + m], then of a[8k + 4 + m]
    const __m512d lo = _mm512_unpacklo_pd(_mm512_castps_pd(y[2 * k]), _mm512_castps_pd(y[2 * k + 1]));
    const __m512d hi = _mm512_unpackhi_pd(_mm512_castps_pd(y[2 * k]), _mm512_castps_pd(y[2 * k + 1]));
    z[k] = _mm512_add_ps(_mm512_castpd_ps(lo), _mm512_castpd_ps(hi));
  }
  // 128-bit lane m: [c0 + c1] of a[m], a[4 + m], a[8 + m], a[12 + m]; then lane 4m + j -> lane 4j + m.
  const __m512 w = _mm512_add_ps(_mm512_shuffle_ps(z[0], z[1], _MM_SHUFFLE(2, 0, 2, 0)),
                                 _mm512_shuffle_ps(z[0], z[1], _MM_SHUFFLE(3, 1, 3, 1)));
  return _mm512_permutexvar_ps(_mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0), w);
}

// The bytes of a head's slice of a K / V row (head_dim = 16 * NV elements of kT).
template <int NV, DType kT>
constexpr int kRowBytes = 16 * NV * (kT == DType::F32 ? 4 : 2);

}  // namespace

// The most query vectors one call of the tiled passes takes (AttnRowKernels::run on AVX-512).
inline constexpr int kTileMaxVectors = 32;

// The whole-head passes of AttnRowKernels for n_g <= kTileMaxVectors query vectors of one KV head,
// head_dim = 16 * NV (attention_tile_avx512.cpp): each K / V row is loaded and widened once per
// tile of several query vectors. Per (vector, position) exactly the sequence of the one-vector
// passes (scores: 16-lane fma chain over head_dim in order, hsum512, * scale; weighted: output
// fmas in position order from zero), so every result is bit-identical to them.
template <int NV, DType kT>
void scores_tiles(const KvSpan* spans, int n_spans, int32_t n_kv, size_t row_bytes, size_t off, const float* const* q,
                  int n_g, float scale, float* const* scores, float* mx);
template <int NV, DType kT>
void weighted_tiles(const KvSpan* spans, int n_spans, int32_t n_kv, size_t row_bytes, size_t off,
                    const float* const* p, int n_g, float* const* out);

}  // namespace nt::detail

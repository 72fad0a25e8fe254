// kernels/attention_tile_avx512.cpp — the two row passes of attention for many query vectors of
// one KV head at once (a prefill block: several tokens x the query heads sharing the KV head), with
// AVX-512, K/V rows in F32, F16 or BF16, head_dim = 16 * NV. Each K / V row is loaded and widened
// once per tile of query vectors instead of once per vector; per (vector, position) the arithmetic
// is exactly that of attention_avx512.cpp's one-vector passes, so the results are bit-identical:
//   scores: acc = fma(K[16j..], q[16j..], acc) for j in order from zero, hsum512's pairing, * scale;
//   weighted: out = fma(p[pos], V[pos], out) in position order from zero.
#include <array>
#include <utility>

#include "core/check.h"
#include "kernels/attention_avx512.h"
#include "kernels/kernels_internal.h"
#include "kernels/kv_rows.h"

// GCC 12 takes _mm512_cvtph_ps's _mm512_undefined_ps() for an uninitialized read in the
// one-register tiles (a false positive: every lane is written).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace nt::detail {
namespace {

// Score tiles: kScP positions x up to kScNG query vectors (kScP * kScNG accumulators beside kScP
// widened K vectors; q comes from memory, L1-resident). A widening costs about as much as an FMA
// here, so one K vector serves as many query vectors as the registers allow.
constexpr int kScP = 1, kScNG = 16;
// Weighted tiles: kWCh output registers (16 columns each) x up to kWNG query vectors, over blocks of
// kWBlock positions (their V slices stay near while every column tile passes; the next block's rows
// are prefetched meanwhile).
constexpr int kWCh = 2, kWNG = 8, kWBlock = 64;

// Scores of NG query vectors (q: NG rows of 16 * NV floats) at the kScP positions rows[0..]:
// part[(g * 16 + i) * 16 ..] = the 16 lane sums of vector g at position i.
template <int NV, DType kT, int NG>
void score_tile(const uint8_t* const* rows, const float* q, float* part) {
  __m512 acc[kScP][NG];
#pragma GCC unroll 16
  for (int i = 0; i < kScP; ++i)
#pragma GCC unroll 16
    for (int g = 0; g < NG; ++g) acc[i][g] = _mm512_setzero_ps();
  for (int j = 0; j < NV; ++j) {
    __m512 k[kScP];
#pragma GCC unroll 16
    for (int i = 0; i < kScP; ++i) k[i] = load16<kT>(rows[i], 16 * j);
#pragma GCC unroll 16
    for (int g = 0; g < NG; ++g) {
      const __m512 qv = _mm512_loadu_ps(q + (g * NV + j) * 16);
#pragma GCC unroll 16
      for (int i = 0; i < kScP; ++i) acc[i][g] = _mm512_fmadd_ps(k[i], qv, acc[i][g]);
    }
  }
#pragma GCC unroll 16
  for (int g = 0; g < NG; ++g)
#pragma GCC unroll 16
    for (int i = 0; i < kScP; ++i) _mm512_store_ps(part + (g * 16 + i) * 16, acc[i][g]);
}

// out[g][16 * j0 .. + 16 * CH] += sum over positions b0 .. b0 + n, in order, of p[g][pos] * V[pos]
// for NG query vectors (rows[i]: the V row of position b0 + i).
template <DType kT, int CH, int NG>
void weighted_tile(const uint8_t* const* rows, int n, const float* const* p, int32_t b0, float* const* out, int j0) {
  __m512 acc[NG][CH];
  const float* pg[NG];
#pragma GCC unroll 16
  for (int g = 0; g < NG; ++g) {
    pg[g] = p[g] + b0;
#pragma GCC unroll 16
    for (int c = 0; c < CH; ++c) acc[g][c] = _mm512_loadu_ps(out[g] + 16 * (j0 + c));
  }
  for (int i = 0; i < n; ++i) {
    __m512 v[CH];
#pragma GCC unroll 16
    for (int c = 0; c < CH; ++c) v[c] = load16<kT>(rows[i], 16 * (j0 + c));
#pragma GCC unroll 16
    for (int g = 0; g < NG; ++g) {
      const __m512 pv = _mm512_set1_ps(pg[g][i]);
#pragma GCC unroll 16
      for (int c = 0; c < CH; ++c) acc[g][c] = _mm512_fmadd_ps(pv, v[c], acc[g][c]);
    }
  }
#pragma GCC unroll 16
  for (int g = 0; g < NG; ++g)
#pragma GCC unroll 16
    for (int c = 0; c < CH; ++c) _mm512_storeu_ps(out[g] + 16 * (j0 + c), acc[g][c]);
}

// A prefetch of all the cache lines of a head's slice of a K / V row (kRowBytes).
template <int kBytes>
inline void prefetch_row(const uint8_t* row) {
  const char* r = reinterpret_cast<const char*>(row);
#pragma GCC unroll 16
  for (int b = 0; b < kBytes; b += 64) _mm_prefetch(r + b, _MM_HINT_T0);
  _mm_prefetch(r + kBytes - 1, _MM_HINT_T0);  // a slice need not start on a line
}

// Tables of the tiles by their number of query vectors (index NG - 1).
template <int NV, DType kT, int... I>
constexpr auto score_tiles(std::integer_sequence<int, I...>) {
  return std::array{&score_tile<NV, kT, I + 1>...};
}
template <DType kT, int CH, int... I>
constexpr auto weighted_tiles_of(std::integer_sequence<int, I...>) {
  return std::array{&weighted_tile<kT, CH, I + 1>...};
}

// The next group of query vectors from g0 on: the fewest groups of at most max_ng, as even as
// possible (16 vectors in tiles of 8 + 8, not 8 + 8 + 0; 12 as 6 + 6, not 8 + 4).
inline int group_size(int n_g, int g0, int max_ng) {
  const int left = n_g - g0, n_groups = (left + max_ng - 1) / max_ng;
  return (left + n_groups - 1) / n_groups;
}

}  // namespace

template <int NV, DType kT>
void scores_tiles(const KvSpan* spans, int n_spans, int32_t n_kv, size_t row_bytes, size_t off, const float* const* q,
                  int n_g, float scale, float* const* scores, float* mx) {
  NT_CHECK(n_g >= 1 && n_g <= kTileMaxVectors);
  static constexpr auto kTiles = score_tiles<NV, kT>(std::make_integer_sequence<int, kScNG>());
  alignas(64) float qbuf[kTileMaxVectors * 16 * NV];  // the query vectors side by side
  for (int g = 0; g < n_g; ++g)
    for (int j = 0; j < NV; ++j) _mm512_store_ps(qbuf + (g * NV + j) * 16, _mm512_loadu_ps(q[g] + 16 * j));
  alignas(64) float part[kTileMaxVectors * 16 * 16];  // [vector][position in block][lane]
  __m512 mxv[kTileMaxVectors];
  for (int g = 0; g < n_g; ++g) mxv[g] = _mm512_set1_ps(-__builtin_inff());
  const __m512 scale_v = _mm512_set1_ps(scale);
  // 16 positions' scores of every vector: the tiles, then hsum512_x16 per vector.
  auto block = [&](const uint8_t* const* blk, int32_t blk_pos) {
    for (int g0 = 0; g0 < n_g;) {
      const int ng = group_size(n_g, g0, kScNG);
      for (int p0 = 0; p0 < 16; p0 += kScP) kTiles[ng - 1](blk + p0, qbuf + g0 * 16 * NV, part + (g0 * 16 + p0) * 16);
      g0 += ng;
    }
    for (int g = 0; g < n_g; ++g) {
      __m512 a[16];
      for (int p = 0; p < 16; ++p) a[p] = _mm512_load_ps(part + (g * 16 + p) * 16);
      const __m512 sc = _mm512_mul_ps(hsum512_x16(a), scale_v);
      _mm512_storeu_ps(scores[g] + blk_pos, sc);
      mxv[g] = _mm512_max_ps(sc, mxv[g]);  // a NaN score lane keeps mxv, as `sc > mx` skips it below
    }
  };
  // Rows are gathered one block ahead of the block computed, their lines prefetched meanwhile.
  const uint8_t* blk[2][16];
  int32_t blk_pos[2] = {0, 0};
  int cur = 0, n_blk = 0;
  bool pending = false;  // blk[cur ^ 1] is full and not computed yet
  for_each_row<false>(spans, n_spans, n_kv, row_bytes, off, [&](int32_t pos, const uint8_t* row) {
    prefetch_row<kRowBytes<NV, kT>>(row);
    if (n_blk == 0) blk_pos[cur] = pos;
    blk[cur][n_blk++] = row;
    if (n_blk < 16) return;
    n_blk = 0;
    cur ^= 1;
    if (pending) block(blk[cur], blk_pos[cur]);
    pending = true;
  });
  if (pending) block(blk[cur ^ 1], blk_pos[cur ^ 1]);
  for (int g = 0; g < n_g; ++g) {
    float m = -__builtin_inff();
    for (int p = 0; p < n_blk; ++p) {
      __m512 acc = _mm512_setzero_ps();
      for (int j = 0; j < NV; ++j) acc = _mm512_fmadd_ps(load16<kT>(blk[cur][p], 16 * j), _mm512_load_ps(qbuf + (g * NV + j) * 16), acc);
      const float sc = hsum512(acc) * scale;
      scores[g][blk_pos[cur] + p] = sc;
      m = sc > m ? sc : m;
    }
    const float mb = _mm512_reduce_max_ps(mxv[g]);
    mx[g] = mb > m ? mb : m;
  }
}

template <int NV, DType kT>
void weighted_tiles(const KvSpan* spans, int n_spans, int32_t n_kv, size_t row_bytes, size_t off,
                    const float* const* p, int n_g, float* const* out) {
  NT_CHECK(n_g >= 1 && n_g <= kTileMaxVectors);
  static constexpr auto kTiles = weighted_tiles_of<kT, kWCh>(std::make_integer_sequence<int, kWNG>());
  static constexpr auto kTiles1 = weighted_tiles_of<kT, 1>(std::make_integer_sequence<int, kWNG>());
  for (int g = 0; g < n_g; ++g)
    for (int j = 0; j < NV; ++j) _mm512_storeu_ps(out[g] + 16 * j, _mm512_setzero_ps());
  auto block = [&](const uint8_t* const* rows, int32_t b0, int n) {
    for (int j0 = 0; j0 < NV; j0 += kWCh)
      for (int g0 = 0; g0 < n_g;) {
        const int ng = group_size(n_g, g0, kWNG);
        (NV - j0 >= kWCh ? kTiles : kTiles1)[ng - 1](rows, n, p + g0, b0, out + g0, j0);
        g0 += ng;
      }
  };
  // Rows are gathered one block ahead of the block computed, their lines prefetched meanwhile.
  const uint8_t* rows[2][kWBlock];
  int32_t b0[2] = {0, 0};
  int cur = 0, n = 0;
  bool pending = false;
  for_each_row<true>(spans, n_spans, n_kv, row_bytes, off, [&](int32_t pos, const uint8_t* row) {
    prefetch_row<kRowBytes<NV, kT>>(row);
    if (n == 0) b0[cur] = pos;
    rows[cur][n++] = row;
    if (n < kWBlock) return;
    n = 0;
    cur ^= 1;
    if (pending) block(rows[cur], b0[cur], kWBlock);
    pending = true;
  });
  if (pending) block(rows[cur ^ 1], b0[cur ^ 1], kWBlock);
  if (n > 0) block(rows[cur], b0[cur], n);
}

#define NT_TILES(NV)                                                                                             \
  template void scores_tiles<NV, DType::F32>(const KvSpan*, int, int32_t, size_t, size_t, const float* const*, int, \
                                             float, float* const*, float*);                                       \
  template void scores_tiles<NV, DType::F16>(const KvSpan*, int, int32_t, size_t, size_t, const float* const*, int, \
                                             float, float* const*, float*);                                       \
  template void scores_tiles<NV, DType::BF16>(const KvSpan*, int, int32_t, size_t, size_t, const float* const*,     \
                                              int, float, float* const*, float*);                                 \
  template void weighted_tiles<NV, DType::F32>(const KvSpan*, int, int32_t, size_t, size_t, const float* const*,    \
                                               int, float* const*);                                               \
  template void weighted_tiles<NV, DType::F16>(const KvSpan*, int, int32_t, size_t, size_t, const float* const*,    \
                                               int, float* const*);                                               \
  template void weighted_tiles<NV, DType::BF16>(const KvSpan*, int, int32_t, size_t, size_t, const float* const*,   \
                                                int, float* const*);
NT_TILES(1)
NT_TILES(2)
NT_TILES(3)
NT_TILES(4)
NT_TILES(5)
NT_TILES(6)
NT_TILES(7)
NT_TILES(8)
NT_TILES(16)
#undef NT_TILES

}  // namespace nt::detail

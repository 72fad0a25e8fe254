// kernels/rl_tile_avx512.h — the several-token product of the row-lane kernels (matmul_rl_avx512.cpp):
// one or two packed lane groups of 16 rows (pack_group there) times up to 8 tokens of a tile. The
// tile's activations are first gathered block by block (TileX), so that every broadcast of the
// product reads memory at an immediate offset from one running pointer.
// Must not know: weight formats (the packed group is format-free).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/check.h"
#include "kernels/kernels_internal.h"
#include "kernels/rl_parts_avx512.h"
#include "kernels/xquant.h"

namespace nt::detail {

constexpr int kTileBlkBytes = 8 * 64 + 2 * 64;  // packed block: 8 dpbusd steps, scales, mins
constexpr int kTileMaxTokens = 8;

// The quantized activations of a tile of nt <= kTileMaxTokens tokens, per 32-element block b and token t:
//   xw  [n_blocks][nt][32] bytes  the block's two 16-byte halves (Halves layout, xquant.h)
//   lb  [n_blocks][nt] int32, dx [n_blocks][nt] f32, gg [n_blocks][nt] f32 (g32)
struct TileX {
  int nt = 0;
  int64_t n_blocks = 0;
  const uint8_t* xw = nullptr;
  const int32_t* lb = nullptr;
  const float* dx = nullptr;
  const float* gg = nullptr;
};

// Bytes a tile takes per token (a multiple of 64): a tile of nt tokens fits in nt times this.
inline size_t tile_token_bytes(int64_t n_blocks) {
  return (static_cast<size_t>(n_blocks) * (32 + 12) + 63) / 64 * 64;
}

// Gathers tokens [t0, t0 + nt) of xq (n_blocks <= its blocks) into dst (64-byte aligned,
// nt x tile_token_bytes(n_blocks)).
inline TileX gather_tile(const XQuant& xq, int64_t t0, int nt, int64_t n_blocks, uint8_t* dst) {
  const size_t words = static_cast<size_t>(n_blocks) * static_cast<size_t>(nt);
  uint8_t* xw = dst;
  auto* lb = reinterpret_cast<int32_t*>(xw + words * 32);
  auto* dx = reinterpret_cast<float*>(lb + words);
  auto* gg = dx + words;
  for (int t = 0; t < nt; ++t) {
    const auto* qs = reinterpret_cast<const uint8_t*>(xq.qs(t0 + t));
    const int32_t* l = xq.lb(t0 + t);
    const float* d = xq.dx(t0 + t);
    const float* g = xq.g32(t0 + t);
    for (int64_t b = 0; b < n_blocks; ++b) {
      const int64_t o1 = (b >> 2) * 128 + (b & 3) * 16;  // Halves layout
      const size_t i = static_cast<size_t>(b * nt + t);
      _mm_store_si128(reinterpret_cast<__m128i*>(xw + 32 * i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs + o1)));
      _mm_store_si128(reinterpret_cast<__m128i*>(xw + 32 * i + 16),
                      _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs + o1 + 64)));
      lb[i] = l[b];
      dx[i] = d[b];
      gg[i] = g[b];  // always: types with and without a min term may share the activations
    }
  }
  return {nt, n_blocks, xw, lb, dx, gg};
}

// The token tiles of one quantized activation set (MatArgs::x_call), gathered on this thread the
// first time one of its rectangles needs them: every rectangle of a call starts its tiles at the
// same tokens (token blocks of one size, tiles of 8 from their start), a call has tens of row
// chunks per token block, and the outputs that share the activations share the tiles.
class TileCache {
 public:
  TileCache() = default;
  TileCache(const TileCache&) = delete;
  TileCache& operator=(const TileCache&) = delete;
  ~TileCache() { tile_cache_bytes().fetch_sub(held_, std::memory_order_relaxed); }

  const TileX& get(const MatArgs& a, int64_t t, int nt, int64_t n_blocks) {
    NT_CHECK(a.x_call != 0 && t >= 0 && t + nt <= a.n_tokens);
    if (a.x_call != x_call_ || n_blocks != n_blocks_) {
      x_call_ = a.x_call;
      n_blocks_ = n_blocks;
      token_bytes_ = tile_token_bytes(n_blocks);
      const size_t need = static_cast<size_t>(a.n_tokens) * token_bytes_ + 64;
      if (buf_.size() < need) buf_.resize(need);
      tiles_.assign(static_cast<size_t>(a.n_tokens), TileX{});
      const auto held = static_cast<int64_t>(buf_.capacity() + tiles_.capacity() * sizeof(TileX));
      tile_cache_bytes().fetch_add(held - held_, std::memory_order_relaxed);
      held_ = held;
    }
    TileX& tile = tiles_[static_cast<size_t>(t)];
    if (tile.nt != 0 && tile.nt != nt) {
      // Another split of the same tokens (outputs planned with other token blocks): the tiles
      // overlapping this one are stale once it is gathered. This rectangle's other tiles are
      // disjoint from it, so the bytes its copies of them point to stay as they are.
      for (TileX& other : tiles_) other = TileX{};
    }
    if (tile.nt == 0) {
      uint8_t* base = buf_.data() + (64 - reinterpret_cast<uintptr_t>(buf_.data()) % 64) % 64;
      tile = gather_tile(*a.xq, t, nt, n_blocks, base + static_cast<size_t>(t) * token_bytes_);
    }
    return tile;
  }

 private:
  uint64_t x_call_ = 0;
  int64_t n_blocks_ = 0;
  size_t token_bytes_ = 0;
  int64_t held_ = 0;
  std::vector<uint8_t> buf_;
  std::vector<TileX> tiles_;  // by first token; nt == 0: not gathered yet
};

// Tokens [t_off, t_off + NT) of tile x times G packed lane groups pk[g]: y[g][t * ldy + r] for
// lanes r in keep[g]. Four passes over the blocks, one per block index mod 4 (the accumulation
// order of every row-lane path); per block and token, 8 dpbusd per group with the activation
// bytes broadcast once for all G groups, then one cvt, one mul, one fma per group. Step j of all
// tokens and groups comes before step j + 1, so consecutive dpbusd are independent. (A broadcast
// per dpbusd held the dpbusd rate to about half of what one broadcast for two groups gives.)
template <bool kMin, int G, int NT>
void packed_tile(const uint8_t* const (&pk)[G], const TileX& x, int t_off, float* const (&y)[G], int64_t ldy,
                 const __mmask16 (&keep)[G]) {
  static_assert(NT >= 1 && NT <= kTileMaxTokens && G >= 1 && G <= 2);
  __m512 part[4][G][NT];
  auto bcast = [](const void* p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
  };
  const int64_t bs = 32 * x.nt;  // bytes of one block of the tile
  for (int k = 0; k < 4; ++k) {
    __m512 acc[G][NT];
    for (int g = 0; g < G; ++g)
      for (int t = 0; t < NT; ++t) acc[g][t] = _mm512_setzero_ps();
    const uint8_t* xp = x.xw + k * bs + 32 * t_off;
    const int32_t* lp = x.lb + k * x.nt + t_off;
    const float* dp = x.dx + k * x.nt + t_off;
    const float* gp = x.gg + k * x.nt + t_off;
    for (int64_t b = k; b < x.n_blocks; b += 4, xp += 4 * bs, lp += 4 * x.nt, dp += 4 * x.nt, gp += 4 * x.nt) {
      __m512i is[G][NT];
      for (int t = 0; t < NT; ++t) {
        const __m512i l = _mm512_set1_epi32(lp[t]);
        for (int g = 0; g < G; ++g) is[g][t] = l;
      }
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
        __m512i w[G];
        for (int g = 0; g < G; ++g) w[g] = _mm512_load_si512(pk[g] + b * kTileBlkBytes + 64 * j);
#pragma GCC unroll 8
        for (int t = 0; t < NT; ++t) {
          const __m512i xb = bcast(xp + 32 * t + 4 * j);
          for (int g = 0; g < G; ++g) is[g][t] = _mm512_dpbusd_epi32(is[g][t], w[g], xb);
        }
      }
      for (int g = 0; g < G; ++g) {
        const uint8_t* pb = pk[g] + b * kTileBlkBytes;
        const __m512 sw = _mm512_load_ps(pb + 512);
        for (int t = 0; t < NT; ++t) {
          acc[g][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is[g][t]), _mm512_mul_ps(sw, _mm512_set1_ps(dp[t])), acc[g][t]);
          if constexpr (kMin) acc[g][t] = _mm512_fmadd_ps(_mm512_load_ps(pb + 576), _mm512_set1_ps(gp[t]), acc[g][t]);
        }
      }
    }
    for (int g = 0; g < G; ++g)
      for (int t = 0; t < NT; ++t) part[k][g][t] = acc[g][t];
  }
  for (int g = 0; g < G; ++g)
    for (int t = 0; t < NT; ++t)
      _mm512_mask_storeu_ps(y[g] + (t_off + t) * ldy, keep[g],
                            combine4(part[0][g][t], part[1][g][t], part[2][g][t], part[3][g][t]));
}

}  // namespace nt::detail

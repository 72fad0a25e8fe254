// kernels/matmul_rl_avx512.cpp — "row-lane" quantized matmul (AVX-512 VNNI) for the weight types
// with one scale (and min) per 32 elements: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K. One output
// (row r, token t) is four partial sums, one per block index mod 4, added as a pair of pairs:
//   p_k = 0; for each 32-block b = k, k + 4, ... in order:
//     p_k = fma(float(isum_b), s_rb * dx_tb, p_k)       isum_b: the exact integer block dot
//     p_k = fma(m_rb, g_tb, p_k)                         (types with a min term; g = dx * sum x)
//   y = (p_0 + p_1) + (p_2 + p_3)
// Four independent chains: one chain of a fma per block bounds a decode that reads few rows at a
// time by the fma latency. Three paths compute exactly this, so every output is bit-identical
// whatever the token count (determinism contract):
//   several tokens: 16 rows are packed once per rectangle (bytes transposed so that lane r holds
//     row r's 4 bytes of each dpbusd step, scales lined up per block), then each token's block
//     costs 8 vpdpbusd with its activation bytes broadcast from memory, one cvt, one mul, one fma;
//   one token (decode), 16 rows at a time: rows are decoded in the natural layout and their
//     per-lane partial dot products reduced to per-block integers across 4 rows at a time (exact
//     integer adds), scales picked out the same way, then the same float steps with lanes = rows;
//   one token, 4 rows at a time (quartets): the same reduction, then the float steps with lane
//     4k + i = p_k of row i.
#include "kernels/quant_decode_avx512.h"
#include "kernels/rl_parts_avx512.h"
#include "kernels/rl_quartet_avx512.h"
#include "kernels/rl_tile_avx512.h"

#include <type_traits>

namespace nt::detail {
namespace {

constexpr int kGroup = 16;                         // rows per lane group
constexpr int kBlkBytes = kTileBlkBytes;          // packed block: 8 dpbusd steps, scales, mins
constexpr int64_t kPackMinTokens = 2;              // below this, the decode path

// Scales of quad q of a decoded unit, lane 4k..4k+3 = block k (replicated).
template <class T>
inline __m512 rl_scale(const St& st, int q) {
  if constexpr (T::kRep) return st.a16;
  else return _mm512_permutexvar_ps(_mm512_add_epi32(idx4x4(), _mm512_set1_epi32(4 * q)), st.a16);
}
// The coefficient of g (x scale * sum of the block's x) per block, replicated like rl_scale.
template <class T>
inline __m512 rl_min(const St& st, int q) {
  if constexpr (T::kMin == 4) return _mm512_permutexvar_ps(idx4x4(), st.mn16);
  else if constexpr (T::kMin == 8) return _mm512_permutexvar_ps(_mm512_add_epi32(idx4x4(), _mm512_set1_epi32(8 + 4 * q)), st.mn16);
  else return _mm512_setzero_ps();
}

// The rows of a lane group and their units; rows past n_rows read a zero unit, and a partial last
// unit reads zero-padded copies (d = 0, and the activations' padding is 0).
template <class T>
struct GroupRows {
  static_assert(T::kUnitBytes <= static_cast<int>(sizeof kZeroUnit));
  const uint8_t* row[kGroup];
  int64_t n_full = 0, n_units = 0;
  int64_t rb = 0;     // bytes from one lane's row to the next lane's (lane r: row r0 + r * step)
  int64_t ahead = 0;  // bytes from this group's rows to the rows its decode prefetches
  alignas(64) uint8_t tail[kGroup][(T::kUnitBytes + 63) / 64 * 64];

  // Lane r holds row r0 + r * step; the decode prefetches the rows `ahead_rows` further on.
  GroupRows(const MatArgs& a, int64_t r0, int nr, int64_t step = 1, int64_t ahead_rows = kGroup) {
    constexpr int64_t kUnitElems = 128 * T::kQuads;
    n_full = a.w.n_cols / kUnitElems;
    n_units = (a.w.n_cols + kUnitElems - 1) / kUnitElems;
    rb = step * static_cast<int64_t>(a.w.row_bytes);
    ahead = ahead_rows * static_cast<int64_t>(a.w.row_bytes);
    const int64_t tail_bytes = static_cast<int64_t>(a.w.row_bytes) - n_full * T::kUnitBytes;
    for (int r = 0; r < kGroup; ++r) {
      row[r] = r < nr ? a.w.data + (r0 + r * step) * a.w.row_bytes : nullptr;
      if (n_units > n_full)  // rows' tails side by side (stride sizeof tail[0]), zero-padded
        copy_padded<static_cast<int>(sizeof tail[0])>(tail[r], row[r] ? row[r] + n_full * T::kUnitBytes : kZeroUnit,
                                                       row[r] ? tail_bytes : 0);
    }
  }
  const uint8_t* unit(int r, int64_t u) const {
    if (!row[r]) return kZeroUnit;
    return u < n_full ? row[r] + u * T::kUnitBytes : tail[r];
  }
};

// ---- several tokens: pack, then 8 dpbusd per token and block.

// out[k] lane r = s[r][4k], k < 4: block k's scale (or min) of row r, from 16 rows' vectors whose
// lanes 4k..4k+3 hold block k's. Permutes, not gathers: gathers were most of the packing time on
// an Ice Lake-class VM. Pure data movement, so the packed values are exactly the same.
inline void lanes_by_row(const float (*s)[16], __m512 (&out)[4]) {
  const __m512i pick = _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 28, 24, 20, 16, 12, 8, 4, 0);
  __m512 z[4];  // z[m] lane 4i + k = row 4m + i, block k
  for (int m = 0; m < 4; ++m) {
    const __m512 a = _mm512_permutex2var_ps(_mm512_load_ps(s[4 * m]), pick, _mm512_load_ps(s[4 * m + 1]));
    const __m512 b = _mm512_permutex2var_ps(_mm512_load_ps(s[4 * m + 2]), pick, _mm512_load_ps(s[4 * m + 3]));
    z[m] = _mm512_shuffle_f32x4(a, b, 0x44);
  }
  for (int k = 0; k < 4; ++k) {
    const __m512i idx = _mm512_add_epi32(pick, _mm512_set1_epi32(k));
    out[k] = _mm512_shuffle_f32x4(_mm512_permutex2var_ps(z[0], idx, z[1]), _mm512_permutex2var_ps(z[2], idx, z[3]), 0x44);
  }
}

// Packs a lane group: per block, 8 x 64 bytes of weights (step j: lane r = row r's elements
// 4j..4j+3 of the block, as q + offset), then 16 scales and (types with a min term) 16 min
// coefficients.
template <class T>
void pack_group(const GroupRows<T>& g, uint8_t* pk) {
  for (int64_t u = 0; u < g.n_units; ++u) {
    St st[kGroup];
    for (int r = 0; r < kGroup; ++r) T::prep(g.unit(r, u), st[r]);
    for (int q = 0; q < T::kQuads; ++q) {
      uint8_t* pq = pk + (u * T::kQuads + q) * 4 * kBlkBytes;
      __m512i h1[kGroup], h2[kGroup];
      alignas(64) float sc[kGroup][16], mn[kGroup][16];
      for (int r = 0; r < kGroup; ++r) {
        T::quad(g.unit(r, u), q, h1[r], h2[r]);
        _mm512_store_ps(sc[r], rl_scale<T>(st[r], q));
        if constexpr (T::kMin > 0) _mm512_store_ps(mn[r], rl_min<T>(st[r], q));
      }
      transpose16(h1);  // h1[4k + j]: block k, elements 4j..4j+3, lanes = rows
      transpose16(h2);  // elements 16 + 4j..
      __m512 scales[4], mins[4];
      lanes_by_row(sc, scales);
      if constexpr (T::kMin > 0) lanes_by_row(mn, mins);
      for (int k = 0; k < 4; ++k) {
        uint8_t* pb = pq + k * kBlkBytes;
        for (int j = 0; j < 4; ++j) {
          _mm512_store_si512(pb + 64 * j, h1[4 * k + j]);
          _mm512_store_si512(pb + 64 * (4 + j), h2[4 * k + j]);
        }
        _mm512_store_ps(pb + 512, scales[k]);
        if constexpr (T::kMin > 0) _mm512_store_ps(pb + 576, mins[k]);
      }
    }
  }
}

// ---- K-quant scales of 16 rows at once (Q4_K, Q5_K: their units open with prep_k4's 16 bytes).

// Byte permute indices: Z[k] holds rows 4k..4k+3's 16 header bytes (128-bit lane i = row 4k + i).
// kTr[m]: out byte 16 L + r = byte 4m + L of row r (r mod 8 taken from the Z pair of its half).
// kDw: out word r = bytes 0-1 of row r (d), word 16 + r = bytes 2-3 (dmin), same r mod 8 rule.
struct K4Idx {
  alignas(64) uint8_t tr[4][64];
  alignas(64) uint8_t dw[64];
  alignas(64) uint8_t lane[4][64];  // out byte 4r = byte 16 l + r (zero-extension by mask)
  constexpr K4Idx() : tr{}, dw{}, lane{} {
    auto src = [](int r, int b) { const int rr = r % 8; return (rr < 4 ? 16 * rr : 64 + 16 * (rr - 4)) + b; };
    for (int m = 0; m < 4; ++m)
      for (int pos = 0; pos < 64; ++pos) tr[m][pos] = static_cast<uint8_t>(src(pos % 16, 4 * m + pos / 16));
    for (int pos = 0; pos < 64; ++pos) dw[pos] = static_cast<uint8_t>(src((pos % 32) / 2, 2 * (pos / 32) + pos % 2));
    for (int l = 0; l < 4; ++l)
      for (int pos = 0; pos < 64; ++pos) lane[l][pos] = static_cast<uint8_t>(16 * l + pos / 4);
  }
};
constexpr K4Idx kK4Idx{};

// skm[j] (lanes = the 16 rows at base + r * rb): j < 8 d * scale_j, j >= 8 dmin * min_(j-8) — the
// values prep_k4 puts in a16 (same byte unpacking, the same float products), gathered by byte
// permutes instead of 16 per-row preps and a 16 x 16 float transpose.
inline void k4_scales16(const uint8_t* base, int64_t rb, float (&skm)[kGroup][16]) {
  __m512i z[4];
  for (int k = 0; k < 4; ++k) {
    const uint8_t* p = base + 4 * k * rb;
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + rb)), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2 * rb)), 2);
    z[k] = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 3 * rb)), 3);
  }
  const __mmask64 upper_rows = 0xFF00FF00FF00FF00ull;  // byte 16 L + r with r >= 8
  auto gather = [&](const uint8_t* idx_bytes, __mmask64 upper) {
    const __m512i idx = _mm512_load_si512(idx_bytes);
    return _mm512_mask_blend_epi8(upper, _mm512_permutex2var_epi8(z[0], idx, z[1]),
                                  _mm512_permutex2var_epi8(z[2], idx, z[3]));
  };
  const __m512i w0 = gather(kK4Idx.tr[1], upper_rows);  // lane i: byte 4 + i of each row
  const __m512i w1 = gather(kK4Idx.tr[2], upper_rows);
  const __m512i w2 = gather(kK4Idx.tr[3], upper_rows);
  const __m512i dw = gather(kK4Idx.dw, 0xFFFF0000FFFF0000ull);  // words: d of rows 0-15, dmin
  const __m512 d = _mm512_cvtph_ps(_mm512_castsi512_si256(dw));
  const __m512 dmin = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(dw, 1));
  const __m512i m6 = _mm512_set1_epi8(0x3F), m4 = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
  // Per byte (prep_k4): sc 0-3 = w0 & 63, sc 4-7 = (w2 & 15) | ((w0 >> 6) << 4),
  //                     m 0-3 = w1 & 63,  m 4-7 = (w2 >> 4) | ((w1 >> 6) << 4).
  // 16-bit shifts: the masks drop the bits a byte's neighbour shifts in.
  const __m512i v[4] = {
      _mm512_and_si512(w0, m6),
      _mm512_or_si512(_mm512_and_si512(w2, m4), _mm512_and_si512(_mm512_srli_epi16(w0, 2), m30)),
      _mm512_and_si512(w1, m6),
      _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(w2, 4), m4), _mm512_and_si512(_mm512_srli_epi16(w1, 2), m30)),
  };
  for (int h = 0; h < 4; ++h)
    for (int l = 0; l < 4; ++l) {
      const __m512i b = _mm512_maskz_permutexvar_epi8(0x1111111111111111ull, _mm512_load_si512(kK4Idx.lane[l]), v[h]);
      _mm512_store_ps(skm[4 * h + l], _mm512_mul_ps(_mm512_cvtepi32_ps(b), h < 2 ? d : dmin));
    }
}

// ---- one token: natural decode, per-block integers by reduction across 4 rows at a time.
// Per 4 rows and quad: lane partials -> [rows a..d] per block (reduce4), scales likewise (fp16
// words blended, one conversion);
// then the 4 row quartets are transposed so that each block's vector has lanes = the 16 rows.
// One unit of a lane group for one token into acc; row r's unit is at base + r * rb (walked with a
// running pointer: 16 separately computed addresses would not fit the general registers).
template <class T>
__attribute__((always_inline)) inline void decode_unit(const uint8_t* base, int64_t rb, int64_t u, const uint8_t* xb,
                                                       const int32_t* ls, const float* dx, const float* gg,
                                                       __m512 (&acc)[4]) {
  // Super-block types (Q4_K, Q5_K: two quads per unit, a16 = 8 group scales then 8 group
  // minima): one 16 x 16 transpose of the rows' a16 gives every group's scales and minima with
  // lanes = rows (sk[j], -sk[8 + j]); the same values rl_scale / rl_min give the packed path.
  alignas(64) float skm[T::kQuads > 1 ? kGroup : 1][16];  // in memory: not 16 live registers
  if constexpr (T::kQuads > 1) k4_scales16(base, rb, skm);
  for (int q = 0; q < T::kQuads; ++q) {
    const int64_t e = (u * T::kQuads + q) * 128;
    const __m512i x1 = _mm512_loadu_si512(xb + e), x2 = _mm512_loadu_si512(xb + e + 64);
    const __m512i l = _mm512_loadu_si512(ls + e / 8);
    __m512i s[4];
    __m512 sc[4], mn[4];
    const uint8_t* p = base;
    for (int gq = 0; gq < 4; ++gq) {
      __m512i is[4];
      __m512i hs = _mm512_setzero_si512(), hm = _mm512_setzero_si512();  // fp16 words 4k + i
      for (int i = 0; i < 4; ++i, p += rb) {
        __m512i w1, w2;
        if constexpr (T::kQuads == 1) {
          // The unit loaded once (the empty asm keeps the compiler from folding the loads into
          // each permute again: 7 loads per row instead of 3). Row i's block scales (and minima)
          // go into words 4k + i, converted once per 4 rows (faster than per-row conversions,
          // float picks and folded loads; docs/kernels.md).
          __m512i z0, z1;
          load_unit<T::kUnitBytes>(p, z0, z1);
          __asm__("" : "+v"(z0), "+v"(z1));
          T::quad_z(z0, z1, p, w1, w2);
          const __mmask32 row_i = 0x1111u << i;
          hs = _mm512_mask_mov_epi16(hs, row_i, block_words<T::kBlockBytes, 0>(z0, z1));
          if constexpr (T::kMin > 0) hm = _mm512_mask_mov_epi16(hm, row_i, block_words<T::kBlockBytes, 2>(z0, z1));
        } else {
          T::quad(p, q, w1, w2);
        }
        is[i] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(l, w1, x1), w2, x2);
      }
      s[gq] = reduce4(is[0], is[1], is[2], is[3]);  // 128-bit lane k: [rows a..d] of block k
      if constexpr (T::kQuads == 1) {
        sc[gq] = _mm512_cvtph_ps(_mm512_castsi512_si256(hs));  // lane 4k + i: row i, block k
        if constexpr (T::kMin > 0) mn[gq] = _mm512_cvtph_ps(_mm512_castsi512_si256(hm));
      }
    }
    transpose128(s);  // s[k]: block k, lanes = rows
    if constexpr (T::kQuads == 1) {
      transpose128(sc);
      if constexpr (T::kMin > 0) transpose128(mn);
    } else {
      static_assert(T::kMin == 8, "super-block row-lane types keep minima in a16 lanes 8-15");
      for (int k = 0; k < 4; ++k) {
        sc[k] = _mm512_load_ps(skm[4 * q + k]);
        mn[k] = _mm512_sub_ps(_mm512_setzero_ps(), _mm512_load_ps(skm[8 + 4 * q + k]));
      }
    }
    for (int k = 0; k < 4; ++k) {  // block b = e / 32 + k: b mod 4 = k
      const int64_t b = e / 32 + k;
      acc[k] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[k]), _mm512_mul_ps(sc[k], _mm512_set1_ps(dx[b])), acc[k]);
      if constexpr (T::kMin > 0) acc[k] = _mm512_fmadd_ps(mn[k], _mm512_set1_ps(gg[b]), acc[k]);
    }
  }
}

template <class T>
__attribute__((noinline)) void decode_group(const GroupRows<T>& g, const XQuant& xq, int64_t t, float* y,
                                            __mmask16 keep) {
  const uint8_t* xb = reinterpret_cast<const uint8_t*>(xq.qs(t));
  const int32_t* ls = xq.ls(t);
  const float* dx = xq.dx(t);
  const float* gg = xq.g32(t);
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  const int64_t rb = g.rb;
  if (g.row[kGroup - 1]) {  // a whole group: rows are row 0 + r * rb
    for (int64_t u = 0; u < g.n_full; ++u) {
      const uint8_t* base = g.row[0] + u * T::kUnitBytes;
      // Prefetch the next lane group's rows at the same unit (every lane's stream one row group
      // ahead); prefetches past the matrix never fault.
      const uint8_t* pf = base + g.ahead;
      for (int r = 0; r < kGroup; ++r, pf += rb)
        for (int k = 0; k < T::kUnitBytes; k += 64) _mm_prefetch(reinterpret_cast<const char*>(pf + k), _MM_HINT_T0);
      decode_unit<T>(base, rb, u, xb, ls, dx, gg, acc);
    }
  }
  // A partial group's whole units: the 16 rows' units copied together.
  if (!g.row[kGroup - 1]) {
    alignas(64) uint8_t buf[kGroup][T::kUnitBytes];
    for (int64_t u = 0; u < g.n_full; ++u) {
      for (int r = 0; r < kGroup; ++r) std::memcpy(buf[r], g.unit(r, u), T::kUnitBytes);
      decode_unit<T>(&buf[0][0], T::kUnitBytes, u, xb, ls, dx, gg, acc);
    }
  }
  // The zero-padded tail unit, straight from the side-by-side copies.
  if (g.n_units > g.n_full) decode_unit<T>(&g.tail[0][0], sizeof g.tail[0], g.n_full, xb, ls, dx, gg, acc);
  _mm512_mask_storeu_ps(y, keep, combine4(acc[0], acc[1], acc[2], acc[3]));
}

// Decode with strided lanes (rect), for the super-block type the quartets do not cover. Q5_K,
// with a fifth bit plane read apart from the unit, was slower so, and keeps adjacent rows.
template <class T>
constexpr bool kStridedDecode = std::is_same_v<T, Q4_K>;

// Decode four rows at a time (quartet_unit): the 32-element block types.
template <class T>
constexpr bool kQuartetDecode = std::is_same_v<T, Q8_0> || std::is_same_v<T, Q4_0> || std::is_same_v<T, Q4_1> ||
                                std::is_same_v<T, Q5_0> || std::is_same_v<T, Q5_1>;

// Up to this many tokens the quartet types stream their rows as a decode does (the plan hands
// them out like a decode's), each four-row unit decoded once for every token (quartet_unit_tokens):
// packing 16-row groups per call costs more than it saves when few tokens reuse the packs.
constexpr int64_t kStreamTokens = 16;

// Tokens t0 .. t1 of rows row0 + i * step * row_bytes (i < 4), in chunks of 8, 4, 2, 1 tokens.
template <class T>
void quartet_tokens(const MatArgs& a, const uint8_t* row0, int64_t step, int64_t t0, int64_t t1, float* y) {
  const int64_t row_bytes = static_cast<int64_t>(a.w.row_bytes), rb = step * row_bytes;
  alignas(16) float out[8 * 4];
  for (int64_t t = t0; t < t1;) {
    const int64_t left = t1 - t;
    const int nt = left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
    switch (nt) {
      case 8: decode_quartet_tokens<T, 8>(row0, rb, row_bytes, a.w.n_cols, kDecodeStreamAhead, *a.xq, t, out); break;
      case 4: decode_quartet_tokens<T, 4>(row0, rb, row_bytes, a.w.n_cols, kDecodeStreamAhead, *a.xq, t, out); break;
      case 2: decode_quartet_tokens<T, 2>(row0, rb, row_bytes, a.w.n_cols, kDecodeStreamAhead, *a.xq, t, out); break;
      default: decode_quartet_tokens<T, 1>(row0, rb, row_bytes, a.w.n_cols, kDecodeStreamAhead, *a.xq, t, out);
    }
    for (int k = 0; k < nt; ++k)
      for (int r = 0; r < 4; ++r) y[(t + k) * a.ldy + r * step] = out[4 * k + r];
    t += nt;
  }
}

template <class T>
void rect(const MatArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  const int64_t n_tok = t1 - t0;
  if constexpr (kQuartetDecode<T>) {
    const int64_t n = r1 - r0;
    if (n_tok >= kPackMinTokens && n_tok <= kStreamTokens && n % 4 == 0 && n >= 8) {
      // As the one-token quartets below: four streams, a quarter of the rectangle apart.
      const int64_t step = n / 4;
      for (int64_t j = 0; j < step; ++j)
        quartet_tokens<T>(a, a.w.data + (r0 + j) * static_cast<int64_t>(a.w.row_bytes), step, t0, t1, a.y + r0 + j);
      return;
    }
  }
  if (n_tok < kPackMinTokens) {
    const int64_t n = r1 - r0;
    if constexpr (kQuartetDecode<T>) {
      if (n % 4 == 0 && n >= 8) {
        // Four streams, each a quarter of the rectangle walked row by row (row j of every quarter,
        // then row j + 1: each stream reads on where it left off), each prefetching
        // kDecodeStreamAhead (2 KiB) ahead (one row ahead was slower; docs/kernels.md).
        const int64_t step = n / 4, row_bytes = static_cast<int64_t>(a.w.row_bytes);
        for (int64_t j = 0; j < step; ++j) {
          const uint8_t* row0 = a.w.data + (r0 + j) * row_bytes;
          for (int64_t t = t0; t < t1; ++t) {
            alignas(16) float out[4];
            decode_quartet<T>(row0, step * row_bytes, row_bytes, a.w.n_cols, kDecodeStreamAhead, *a.xq, t, out);
            float* y = a.y + t * a.ldy + r0 + j;
            for (int r = 0; r < 4; ++r) y[r * step] = out[r];
          }
        }
        return;
      }
    }
    if (kStridedDecode<T> && n % kGroup == 0 && n > kGroup) {
      // Strided lanes: group j holds rows r0 + j + r * step, so its 16 lanes read 16 streams a
      // rectangle-sixteenth apart, each walking its rows in order (and prefetching its next row),
      // instead of 16 adjacent rows at once. The output lanes are rows step apart.
      const int64_t step = n / kGroup;
      for (int64_t j = 0; j < step; ++j) {
        // The last group prefetches the next rectangle's first group (same split).
        const GroupRows<T> g(a, r0 + j, kGroup, step, j + 1 < step ? 1 : n - j);
        for (int64_t t = t0; t < t1; ++t) {
          alignas(64) float out[kGroup];
          decode_group<T>(g, *a.xq, t, out, static_cast<__mmask16>(0xFFFF));
          float* y = a.y + t * a.ldy + r0 + j;
          for (int r = 0; r < kGroup; ++r) y[r * step] = out[r];
        }
      }
      return;
    }
    for (int64_t rg = r0; rg < r1; rg += kGroup) {
      const int nr = static_cast<int>(r1 - rg < kGroup ? r1 - rg : kGroup);
      const GroupRows<T> g(a, rg, nr);
      for (int64_t t = t0; t < t1; ++t)
        decode_group<T>(g, *a.xq, t, a.y + t * a.ldy + rg, static_cast<__mmask16>((1u << nr) - 1));
    }
    return;
  }
  // The rectangle's lane groups are packed once per call on this thread: the call's other token
  // blocks of the same rows (the plan gives consecutive tasks the same row chunk) reuse the packs.
  constexpr int64_t kUnitElems = 128 * T::kQuads;
  const int64_t n_blocks = (a.w.n_cols + kUnitElems - 1) / kUnitElems * T::kQuads * 4;
  const size_t group_bytes = static_cast<size_t>(n_blocks) * kBlkBytes;
  const int64_t n_groups = (r1 - r0 + kGroup - 1) / kGroup;
  bool fresh = false;
  uint8_t* pks = kernel_pack_cache(static_cast<size_t>(n_groups) * group_bytes, a.call, r0, r1, &fresh);
  if (fresh) {
    for (int64_t gi = 0; gi < n_groups; ++gi) {
      const int64_t rg = r0 + gi * kGroup;
      const GroupRows<T> g(a, rg, static_cast<int>(r1 - rg < kGroup ? r1 - rg : kGroup));
      pack_group<T>(g, pks + gi * group_bytes);
    }
  }
  // The tiles of the token range: 8 tokens each, then 4, 2, 1; their activations gathered once
  // per quantized activation set on this thread (rl_tile_avx512.h).
  constexpr bool kMin = T::kMin > 0;
  thread_local TileCache tile_cache;
  thread_local std::vector<TileX> tiles;  // copies: a later get() may reset the cache's entries
  tiles.clear();
  for (int64_t t = t0; t < t1;) {
    const int nt = t1 - t >= 8 ? 8 : t1 - t >= 4 ? 4 : t1 - t >= 2 ? 2 : 1;
    tiles.push_back(tile_cache.get(a, t, nt, n_blocks));
    t += nt;
  }
  // Lane groups two at a time (one broadcast feeds both), a tile's tokens 8 at a time (more
  // spill: 2 x 8 integer sums and 2 x 8 accumulators fill the 32 registers).
  auto run = [&]<int G>(int64_t gi) {
    const uint8_t* pk[G];
    float* y[G];
    __mmask16 keep[G];
    for (int g = 0; g < G; ++g) {
      const int64_t rg = r0 + (gi + g) * kGroup;
      const int nr = static_cast<int>(r1 - rg < kGroup ? r1 - rg : kGroup);
      pk[g] = pks + (gi + g) * group_bytes;
      y[g] = a.y + t0 * a.ldy + rg;
      keep[g] = static_cast<__mmask16>((1u << nr) - 1);
    }
    for (const TileX& tile : tiles) {
      int t = 0;
      for (; t + kTileMaxTokens <= tile.nt; t += kTileMaxTokens) packed_tile<kMin, G, kTileMaxTokens>(pk, tile, t, y, a.ldy, keep);
      if (t + 4 <= tile.nt) { packed_tile<kMin, G, 4>(pk, tile, t, y, a.ldy, keep); t += 4; }
      if (t + 2 <= tile.nt) { packed_tile<kMin, G, 2>(pk, tile, t, y, a.ldy, keep); t += 2; }
      if (t < tile.nt) packed_tile<kMin, G, 1>(pk, tile, t, y, a.ldy, keep);
      for (int g = 0; g < G; ++g) y[g] += tile.nt * a.ldy;
    }
  };
  int64_t gi = 0;
  for (; gi + 2 <= n_groups; gi += 2) run.template operator()<2>(gi);
  if (gi < n_groups) run.template operator()<1>(gi);
}

template <class T>
const MatmulKernel* kernel() {
  static const MatmulKernel k{true, T::kOffset, XLayout::Halves, rect<T>, kGroup, kQuartetDecode<T> ? kStreamTokens : 1};
  return &k;
}

}  // namespace

const MatmulKernel* matmul_kernel_rl_avx512(DType type) {
  switch (type) {
    case DType::Q8_0: return kernel<Q8_0>();
    case DType::Q4_0: return kernel<Q4_0>();
    case DType::Q4_1: return kernel<Q4_1>();
    case DType::Q5_0: return kernel<Q5_0>();
    case DType::Q5_1: return kernel<Q5_1>();
    case DType::Q4_K: return kernel<Q4_K>();
    case DType::Q5_K: return kernel<Q5_K>();
    default: return nullptr;
  }
}

}  // namespace nt::detail

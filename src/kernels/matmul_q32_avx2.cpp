// kernels/matmul_q32_avx2.cpp — "row-lane" quantized matmul with AVX2 for the weight types with
// one scale (and min) per 32-element block (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K): eight rows
// side by side, lane r of every vector = row r. One output (row r, token t) is one float chain
// over the blocks b in order:
//   acc = fma(float(I_b), s_rb * dx_tb, acc)   I_b: the block's exact integer dot (offset included)
//   macc = macc + mn_rb * g_tb                  (types with a min; value = s * q - mn, g = dx * sum x)
//   y = acc - macc
// Two paths compute exactly this, so every output is bit-identical whatever the token count
// (determinism contract):
//   several tokens: the rectangle's rows are packed once per call (bytes transposed so that lane r
//     of step j holds row r's bytes 4j..4j+3), then each token's block costs 8 maddubs against its
//     activation bytes broadcast from memory, summed in 16 bits where no sum can overflow (4-bit
//     weights: 8 steps, 5-bit: 4), one madd, one cvt, one mul, one fma for eight outputs;
//   one token (decode): eight rows a rectangle-eighth apart (eight streams, each prefetched
//     kStreamAhead on) decoded in the natural layout, their per-lane partial dots reduced to
//     per-block integers across the eight rows (exact integer adds), then the same float steps.
#include "kernels/kernels_internal.h"
#include "kernels/quant_decode_avx2.h"

#include <type_traits>

namespace nt::detail {
namespace {

constexpr int kLanes = 8;
// Bytes each of the eight decode streams prefetches ahead (eight streams: 4 KiB in flight in
// all); kDecodeStreamAhead, the four-stream kernels' distance, was slower here (docs/kernels.md).
constexpr int64_t kStreamAhead = 512;

// The 32 weights of block b of a unit as bytes in element order: unsigned (q + offset), or signed
// for Q8_0.
template <class T>
inline __m256i decode32(const uint8_t* up, int b) {
  if constexpr (std::is_same_v<T, Q4_0>) return nibbles16_bcast(up + 2);
  else return T::wq(up, b);
}
// 16-bit sums of this many maddubs results stay exact (|x| <= 127): 4-bit weights 8 (8 x 2 x 15
// x 127 < 2^15), 5-bit 4; signed Q8_0 (|w| <= 128) one.
template <class T>
constexpr int kRun16 = T::kSigned ? 1
                       : (std::is_same_v<T, Q5_0> || std::is_same_v<T, Q5_1> || std::is_same_v<T, Q5_K>) ? 4
                                                                                                          : 8;
// out[j] lane r = in[r] dword j (an 8 x 8 transpose of 32-bit elements).
inline void transpose8(const __m256i (&w)[kLanes], __m256i (&out)[kLanes]) {
  __m256i t0[8], t1[8];
  for (int k = 0; k < 4; ++k) {
    t0[2 * k] = _mm256_unpacklo_epi32(w[2 * k], w[2 * k + 1]);
    t0[2 * k + 1] = _mm256_unpackhi_epi32(w[2 * k], w[2 * k + 1]);
  }
  for (int k = 0; k < 2; ++k) {
    t1[4 * k + 0] = _mm256_unpacklo_epi64(t0[4 * k + 0], t0[4 * k + 2]);
    t1[4 * k + 1] = _mm256_unpackhi_epi64(t0[4 * k + 0], t0[4 * k + 2]);
    t1[4 * k + 2] = _mm256_unpacklo_epi64(t0[4 * k + 1], t0[4 * k + 3]);
    t1[4 * k + 3] = _mm256_unpackhi_epi64(t0[4 * k + 1], t0[4 * k + 3]);
  }
  // t1[4k + m] 128-bit lane h: rows 4k..4k+3, dword 4h + m.
  for (int m = 0; m < 4; ++m) {
    out[m] = _mm256_permute2x128_si256(t1[m], t1[4 + m], 0x20);
    out[4 + m] = _mm256_permute2x128_si256(t1[m], t1[4 + m], 0x31);
  }
}
// fp16 at byte `off` of 8 units -> 8 floats (lane r = unit r). Each scale goes straight into its
// word of a vector (pinsrw from memory): no GPR shift chain, which in the one-token kernels had
// also pushed the eight row pointers out to the stack.
inline __m256 h2f_8(const uint8_t* const (&up)[kLanes], int off) {
  auto h = [&](int r) {
    uint16_t v;
    std::memcpy(&v, up[r] + off, 2);
    return static_cast<int>(v);
  };
  __m128i v = _mm_cvtsi32_si128(h(0));
  v = _mm_insert_epi16(v, h(1), 1);
  v = _mm_insert_epi16(v, h(2), 2);
  v = _mm_insert_epi16(v, h(3), 3);
  v = _mm_insert_epi16(v, h(4), 4);
  v = _mm_insert_epi16(v, h(5), 5);
  v = _mm_insert_epi16(v, h(6), 6);
  v = _mm_insert_epi16(v, h(7), 7);
  return _mm256_cvtph_ps(v);
}
// Lane r = the sum of v[r]'s eight int32 lanes (exact).
inline __m256i hsum_epi32_x8(const __m256i (&v)[kLanes]) {
  __m256i x[4];
  for (int k = 0; k < 4; ++k)  // 128-bit lane 0: v[2k] lo + hi; lane 1: v[2k + 1]
    x[k] = _mm256_add_epi32(_mm256_permute2x128_si256(v[2 * k], v[2 * k + 1], 0x20),
                            _mm256_permute2x128_si256(v[2 * k], v[2 * k + 1], 0x31));
  __m256i y[2];
  for (int k = 0; k < 2; ++k)
    y[k] = _mm256_add_epi32(_mm256_unpacklo_epi64(x[2 * k], x[2 * k + 1]), _mm256_unpackhi_epi64(x[2 * k], x[2 * k + 1]));
  const __m256 a = _mm256_castsi256_ps(y[0]), b = _mm256_castsi256_ps(y[1]);
  const __m256i w = _mm256_add_epi32(_mm256_castps_si256(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0))),
                                     _mm256_castps_si256(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1))));
  // lanes: v0, v2, v4, v6 | v1, v3, v5, v7
  return _mm256_permutevar8x32_epi32(w, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}
// An 8 x 8 byte transpose: v[r] byte b -> out[b / 2] byte 8 (b % 2) + r.
inline void transpose_bytes8(const uint64_t (&v)[kLanes], __m128i (&out)[4]) {
  __m128i p[4];
  for (int k = 0; k < 4; ++k) {  // word b: bytes b of rows 2k, 2k + 1
    const __m128i x = _mm_set_epi64x(static_cast<int64_t>(v[2 * k + 1]), static_cast<int64_t>(v[2 * k]));
    p[k] = _mm_unpacklo_epi8(x, _mm_srli_si128(x, 8));
  }
  // dword b (b < 4) / b - 4: bytes b of rows 0-3 (q[0], q[1]) or rows 4-7 (q[2], q[3])
  const __m128i q0 = _mm_unpacklo_epi16(p[0], p[1]), q1 = _mm_unpackhi_epi16(p[0], p[1]);
  const __m128i q2 = _mm_unpacklo_epi16(p[2], p[3]), q3 = _mm_unpackhi_epi16(p[2], p[3]);
  out[0] = _mm_unpacklo_epi32(q0, q2);  // blocks 0, 1
  out[1] = _mm_unpackhi_epi32(q0, q2);  // blocks 2, 3
  out[2] = _mm_unpacklo_epi32(q1, q3);  // blocks 4, 5
  out[3] = _mm_unpackhi_epi32(q1, q3);  // blocks 6, 7
}

// The weight scales and min factors (value = a * q - mn) of one unit of eight rows, lane r = row
// r, per block.
template <class T>
struct UnitScales {
  __m256 a[T::kBlocks], mn[T::kBlocks];
  explicit UnitScales(const uint8_t* const (&up)[kLanes]) {
    if constexpr (T::kBlocks == 1) {
      a[0] = h2f_8(up, 0);
      if constexpr (T::kMin > 0) mn[0] = _mm256_sub_ps(_mm256_setzero_ps(), h2f_8(up, 2));  // Q4_1 / Q5_1: + m
    } else {
      // Q4_K / Q5_K: the six-bit scales and mins of each row as in prep_k4 (8 bytes each, byte b =
      // block b), transposed to per-block bytes of the eight rows, then d * sc and dmin * m per lane
      // (the same single rounding as prep_k4's).
      static_assert(std::is_same_v<T, Q4_K> || std::is_same_v<T, Q5_K>, "prep_k4 scale layout");
      uint64_t sc[kLanes], m[kLanes];
      for (int r = 0; r < kLanes; ++r) {
        const uint32_t b = ld32(up[r] + 4), c = ld32(up[r] + 8), e = ld32(up[r] + 12);
        const uint32_t sc_hi = (e & 0x0F0F0F0Fu) | ((b >> 2) & 0x30303030u);
        const uint32_t m_hi = ((e >> 4) & 0x0F0F0F0Fu) | ((c >> 2) & 0x30303030u);
        sc[r] = (b & 0x3F3F3F3Fu) | static_cast<uint64_t>(sc_hi) << 32;
        m[r] = (c & 0x3F3F3F3Fu) | static_cast<uint64_t>(m_hi) << 32;
      }
      const __m256 d = h2f_8(up, 0), dmin = h2f_8(up, 2);
      __m128i ts[4], tm[4];
      transpose_bytes8(sc, ts);
      transpose_bytes8(m, tm);
      for (int k = 0; k < 4; ++k)
        for (int h = 0; h < 2; ++h) {
          const __m128i bs = h ? _mm_srli_si128(ts[k], 8) : ts[k], bm = h ? _mm_srli_si128(tm[k], 8) : tm[k];
          a[2 * k + h] = _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bs)));
          mn[2 * k + h] = _mm256_mul_ps(dmin, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bm)));
        }
    }
  }
};

// The integer dot of one decoded block with x, as 8 int32 partial sums.
template <class T>
inline __m256i block_dot(__m256i w, __m256i xv) {
  const __m256i ones = _mm256_set1_epi16(1);
  if constexpr (T::kSigned) return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(xv, w)), ones);
  else return _mm256_madd_epi16(_mm256_maddubs_epi16(w, xv), ones);
}

// The eight lanes' rows r0 + r * rs; lanes past nr read row r0 again (their outputs are dropped),
// so every lane walks a real row by one unit size.
template <class T>
struct LaneRows {
  const uint8_t* row[kLanes];
  LaneRows(const MatArgs& a, int64_t r0, int nr, int64_t rs) {
    for (int r = 0; r < kLanes; ++r) row[r] = a.w.data + (r0 + (r < nr ? r * rs : 0)) * a.w.row_bytes;
  }
  const uint8_t* unit(int r, int64_t u) const { return row[r] + u * T::kUnitBytes; }
};

// ---- one token: eight rows r0 + r * rs. kEven (all eight lanes real rows, rs apart): the unit
// pointers are written as one base and multiples of one stride. GCC (12) then keeps eight
// pointers each advanced by the unit size, the prefetches at a constant displacement off them,
// instead of eight row bases plus a shared offset and a separate prefetch offset, which was
// slower (as was hiding the stride from the optimizer; docs/kernels.md).
template <class T, bool kEven = false>
void decode8(const MatArgs& a, int64_t r0, int nr, int64_t t, int64_t rs, int64_t ahead) {
  const XQuant& xq = *a.xq;
  const int8_t* xs = xq.qs(t);
  const int32_t* lb = xq.lb(t);
  const float* dx = xq.dx(t);
  const float* g32 = xq.g32(t);
  const int64_t n_units = a.w.n_cols / (32 * T::kBlocks);
  const LaneRows<T> lr(a, r0, nr, rs);
  __m256 acc = _mm256_setzero_ps(), macc = _mm256_setzero_ps();
  constexpr bool kPairs = T::kUnitBytes < 32;  // units walked in pairs, prefetched every second one
  const ptrdiff_t rstride = static_cast<ptrdiff_t>(rs * static_cast<int64_t>(a.w.row_bytes));
  auto unit = [&](int64_t u, bool pf) __attribute__((always_inline)) {
    const uint8_t* up[kLanes];
    if constexpr (kEven) {
      const uint8_t* A = lr.unit(0, u);
      const uint8_t* B = A + 3 * rstride;
      const uint8_t* C = A + 6 * rstride;
      up[0] = A, up[1] = A + rstride, up[2] = A + 2 * rstride, up[3] = B, up[4] = B + rstride, up[5] = B + 2 * rstride,
      up[6] = C, up[7] = C + rstride;
    }
    for (int r = 0; r < kLanes; ++r) {
      if constexpr (!kEven) up[r] = lr.unit(r, u);
      // One prefetch per unit (every second unit under 32 bytes), written without a loop: in a
      // one-trip loop under the parity test GCC built the eight unit pointers in a vector and
      // reloaded them, far slower.
      if constexpr (T::kUnitBytes <= 64) {
        if (pf) _mm_prefetch(reinterpret_cast<const char*>(up[r] + ahead), _MM_HINT_T0);
      } else {
        for (int k = 0; k < T::kUnitBytes; k += 64) _mm_prefetch(reinterpret_cast<const char*>(up[r] + ahead + k), _MM_HINT_T0);
      }
    }
    __m256i isum[T::kBlocks];
    if constexpr (std::is_same_v<T, Q4_0> || std::is_same_v<T, Q4_1>) {
      // Two rows per register (row 2p's 16 nibble bytes in the low half, row 2p + 1's in the
      // high): low nibbles against x[0..15] and high nibbles against x[16..31], both halves at
      // once; the 16-bit sums of the two stay exact (|2 * 15 * 127| * 2 < 2^15). 42 instead of
      // 54 operations per eight row-blocks.
      constexpr int kQs = std::is_same_v<T, Q4_0> ? 2 : 4;
      const __m128i* xb = reinterpret_cast<const __m128i*>(xs + 32 * u);
      const __m256i xlo = _mm256_broadcastsi128_si256(_mm_loadu_si128(xb));
      const __m256i xhi = _mm256_broadcastsi128_si256(_mm_loadu_si128(xb + 1));
      const __m256i m4 = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
      __m256i w[4];
      for (int p = 0; p < 4; ++p) {
        const __m256i v = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(up[2 * p + 1] + kQs),
                                              reinterpret_cast<const __m128i*>(up[2 * p] + kQs));
        const __m256i lo = _mm256_and_si256(v, m4), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
        w[p] = _mm256_madd_epi16(_mm256_add_epi16(_mm256_maddubs_epi16(lo, xlo), _mm256_maddubs_epi16(hi, xhi)), ones);
      }
      // w[p] = row 2p's four partial sums, then row 2p + 1's; lane r of isum = row r's total.
      const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(w[0], w[1]), _mm256_hadd_epi32(w[2], w[3]));
      isum[0] = _mm256_permutevar8x32_epi32(h, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    } else {
      for (int b = 0; b < T::kBlocks; ++b) {
        const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xs + 32 * (u * T::kBlocks + b)));
        __m256i v[kLanes];
        for (int r = 0; r < kLanes; ++r) v[r] = block_dot<T>(decode32<T>(up[r], b), xv);
        isum[b] = hsum_epi32_x8(v);
      }
    }
    const UnitScales<T> sc(up);
    for (int b = 0; b < T::kBlocks; ++b) {
      const int64_t gb = u * T::kBlocks + b;  // the block's index in the row
      if constexpr (T::kOffset != 0) isum[b] = _mm256_add_epi32(isum[b], _mm256_set1_epi32(lb[gb]));
      acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[b]), _mm256_mul_ps(sc.a[b], _mm256_broadcast_ss(dx + gb)), acc);
      if constexpr (T::kMin > 0) macc = _mm256_add_ps(macc, _mm256_mul_ps(sc.mn[b], _mm256_broadcast_ss(g32 + gb)));
    }
  };
  // Units under 32 bytes (prefetched every second unit) go in pairs, the prefetch in the first:
  // half the loop's pointer steps and tests per unit (larger units in pairs streamed slower).
  if constexpr (kPairs) {
    int64_t u = 0;
    for (; u + 2 <= n_units; u += 2) {
      unit(u, true);
      unit(u + 1, false);
    }
    if (u < n_units) unit(u, true);
  } else {
    for (int64_t u = 0; u < n_units; ++u) unit(u, true);
  }
  alignas(32) float y[kLanes];
  _mm256_store_ps(y, _mm256_sub_ps(acc, macc));
  for (int r = 0; r < nr; ++r) a.y[t * a.ldy + r0 + r * rs] = y[r];
}

// ---- several tokens: packed groups of eight rows.
// Per block: 8 steps x 32 bytes (lane r = row r's bytes 4j..4j+3), 8 scales, 8 min factors.
constexpr int kBlkBytes = 8 * 32 + 2 * 32;

// Packs rows [r0, r0 + nr) (nr <= 8; the other lanes repeat row r0) into pk.
template <class T>
void pack8(const MatArgs& a, int64_t r0, int nr, uint8_t* pk) {
  const int64_t n_units = a.w.n_cols / (32 * T::kBlocks);
  const LaneRows<T> lr(a, r0, nr, 1);
  for (int64_t u = 0; u < n_units; ++u) {
    const uint8_t* up[kLanes];
    for (int r = 0; r < kLanes; ++r) up[r] = lr.unit(r, u);
    const UnitScales<T> sc(up);
    for (int b = 0; b < T::kBlocks; ++b) {
      __m256i w[kLanes], steps[kLanes];
      for (int r = 0; r < kLanes; ++r) w[r] = decode32<T>(up[r], b);
      transpose8(w, steps);
      uint8_t* blk = pk + (u * T::kBlocks + b) * kBlkBytes;
      for (int j = 0; j < 8; ++j) _mm256_store_si256(reinterpret_cast<__m256i*>(blk + 32 * j), steps[j]);
      _mm256_store_ps(reinterpret_cast<float*>(blk + 256), sc.a[b]);
      if constexpr (T::kMin > 0) _mm256_store_ps(reinterpret_cast<float*>(blk + 288), sc.mn[b]);
    }
  }
}

// NT tokens of one packed group.
template <class T, int NT>
void group_tile(const MatArgs& a, const uint8_t* pk, int64_t r0, int nr, int64_t t0) {
  const XQuant& xq = *a.xq;
  const int8_t* xs[NT];
  const int32_t* lb[NT];
  const float* dx[NT];
  const float* g32[NT];
  for (int t = 0; t < NT; ++t) xs[t] = xq.qs(t0 + t), lb[t] = xq.lb(t0 + t), dx[t] = xq.dx(t0 + t), g32[t] = xq.g32(t0 + t);
  const int64_t n_blocks = a.w.n_cols / 32;
  __m256 acc[NT], macc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = macc[t] = _mm256_setzero_ps();
  const __m256i ones = _mm256_set1_epi16(1);
  constexpr int kRun = kRun16<T>;
  for (int64_t gb = 0; gb < n_blocks; ++gb) {
    const uint8_t* blk = pk + gb * kBlkBytes;
    __m256i isum[NT];
    for (int t = 0; t < NT; ++t) isum[t] = _mm256_setzero_si256();
    for (int j0 = 0; j0 < 8; j0 += kRun) {
      __m256i s16[NT];
      for (int t = 0; t < NT; ++t) s16[t] = _mm256_setzero_si256();
      for (int j = j0; j < j0 + kRun; ++j) {
        const __m256i w = _mm256_load_si256(reinterpret_cast<const __m256i*>(blk + 32 * j));
        const __m256i wa = T::kSigned ? _mm256_sign_epi8(w, w) : w;
        for (int t = 0; t < NT; ++t) {
          int32_t x4;
          std::memcpy(&x4, xs[t] + 32 * gb + 4 * j, 4);
          const __m256i xb = _mm256_set1_epi32(x4);
          if constexpr (T::kSigned) s16[t] = _mm256_maddubs_epi16(wa, _mm256_sign_epi8(xb, w));
          else s16[t] = _mm256_add_epi16(s16[t], _mm256_maddubs_epi16(wa, xb));
        }
        if constexpr (T::kSigned)
          for (int t = 0; t < NT; ++t) isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(s16[t], ones));
      }
      if constexpr (!T::kSigned)
        for (int t = 0; t < NT; ++t) isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(s16[t], ones));
    }
    const __m256 s = _mm256_load_ps(reinterpret_cast<const float*>(blk + 256));
    for (int t = 0; t < NT; ++t) {
      __m256i I = isum[t];
      if constexpr (T::kOffset != 0) I = _mm256_add_epi32(I, _mm256_set1_epi32(lb[t][gb]));
      acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(I), _mm256_mul_ps(s, _mm256_broadcast_ss(dx[t] + gb)), acc[t]);
    }
    if constexpr (T::kMin > 0) {
      const __m256 mn = _mm256_load_ps(reinterpret_cast<const float*>(blk + 288));
      for (int t = 0; t < NT; ++t) macc[t] = _mm256_add_ps(macc[t], _mm256_mul_ps(mn, _mm256_broadcast_ss(g32[t] + gb)));
    }
  }
  for (int t = 0; t < NT; ++t) {
    const __m256 y = _mm256_sub_ps(acc[t], macc[t]);
    float* out = a.y + (t0 + t) * a.ldy + r0;
    if (nr == kLanes) {
      _mm256_storeu_ps(out, y);
    } else {
      alignas(32) float tmp[kLanes];
      _mm256_store_ps(tmp, y);
      for (int r = 0; r < nr; ++r) out[r] = tmp[r];
    }
  }
}

template <class T>
void rect(const MatArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  const int64_t n = r1 - r0;
  if (t1 - t0 == 1) {
    // Eight rows a rectangle-eighth apart when the rectangle splits so; else groups of adjacent rows.
    if (n % kLanes == 0) {
      const int64_t eighth = n / kLanes;
      for (int64_t j = 0; j < eighth; ++j) decode8<T, true>(a, r0 + j, kLanes, t0, eighth, kStreamAhead);
    } else {
      for (int64_t r = r0; r < r1; r += kLanes)
        decode8<T>(a, r, static_cast<int>(std::min<int64_t>(kLanes, r1 - r)), t0, 1, kLanes * static_cast<int64_t>(a.w.row_bytes));
    }
    return;
  }
  const int64_t n_groups = (n + kLanes - 1) / kLanes;
  const size_t group_bytes = static_cast<size_t>(a.w.n_cols / 32) * kBlkBytes;
  // Packs persist per thread: the call's other token blocks of the same rows (the plan gives
  // consecutive tasks the same row chunk) reuse them.
  bool fresh = false;
  uint8_t* pks = kernel_pack_cache(static_cast<size_t>(n_groups) * group_bytes, a.call, r0, r1, &fresh);
  if (fresh)
    for (int64_t g = 0; g < n_groups; ++g)
      pack8<T>(a, r0 + g * kLanes, static_cast<int>(std::min<int64_t>(kLanes, r1 - r0 - g * kLanes)), pks + g * group_bytes);
  // Token strips of 3 outside, groups inside: a strip's activations stay in L1.
  int64_t t = t0;
  for (; t + 3 <= t1; t += 3)
    for (int64_t g = 0; g < n_groups; ++g)
      group_tile<T, 3>(a, pks + g * group_bytes, r0 + g * kLanes, static_cast<int>(std::min<int64_t>(kLanes, r1 - r0 - g * kLanes)), t);
  for (; t < t1; ++t)
    for (int64_t g = 0; g < n_groups; ++g)
      group_tile<T, 1>(a, pks + g * group_bytes, r0 + g * kLanes, static_cast<int>(std::min<int64_t>(kLanes, r1 - r0 - g * kLanes)), t);
}

template <class T>
const MatmulKernel* kernel() {
  static const MatmulKernel k{true, T::kOffset, XLayout::Natural, rect<T>, 16};
  return &k;
}

}  // namespace

const MatmulKernel* matmul_kernel_q32_avx2(DType type) {
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

// kernels/matmul_q_avx2.cpp — quantized-weight matmul with AVX2 (no VNNI). Same scheme as the
// AVX-512 unit, 32 elements per step: weights decoded to unsigned bytes (q + offset), then
//   isum = madd(maddubs(w_u8, x_i8), 1) + (-offset * lanesum(x))    exact (no i16 saturation:
//   w_u8 <= 63 except Q8_0, which uses |w| and sign(x, w) instead of an offset)
//   acc += float(isum) * (w_scale * x_scale)
// Min terms accumulate in a fixed order: a scalar per output for the 32-element types, 8 lanes
// (one per scale group) for the K-quants, summed at the end. Tiles of any size run the same
// per-output sequence (determinism contract).
#include "kernels/kernels_internal.h"
#include "kernels/simd_avx2.h"

#include <type_traits>

namespace nt::detail {
namespace {

struct St {
  float a[16];   // per-group weight scales (group = 32 or 16 elements)
  float mn[16];  // per-group min factors (value = a*q - mn), kMin of them
};

static inline __m256i lo4() { return _mm256_set1_epi8(0x0F); }
static inline __m256i load256(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
// 16 bytes of nibbles -> 32 bytes [low nibbles, high nibbles].
static inline __m256i nibbles16(const uint8_t* p) {
  const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_and_si256(_mm256_inserti128_si256(_mm256_castsi128_si256(t), _mm_srli_epi16(t, 4), 1), lo4());
}
// 32 bits -> 32 bytes, 0xFF where the bit is set.
static inline __m256i bits_to_bytes(uint32_t bits) {
  const __m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)),
                                        _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0));
  const __m256i sel = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ULL));
  return _mm256_cmpeq_epi8(_mm256_and_si256(v, sel), sel);
}
static inline uint32_t ld32(const uint8_t* p) { uint32_t w; std::memcpy(&w, p, 4); return w; }
// out[i] = d * float(byte i) for the 8 bytes of v (one rounding each, as the scalar d * float(q)).
static inline void store_scaled_u8x8(float* out, uint64_t v, float d) {
  const __m256i w = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<int64_t>(v)));
  _mm256_storeu_ps(out, _mm256_mul_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(w)));
}
// The same for the 16 bytes of v.
static inline void store_scaled_u8(float* out, __m128i v, float d) {
  const __m256 dv = _mm256_set1_ps(d);
  _mm256_storeu_ps(out, _mm256_mul_ps(dv, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(v))));
  _mm256_storeu_ps(out + 8, _mm256_mul_ps(dv, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(v, 8)))));
}

struct Q8_0 {
  static constexpr int kBlock32 = 34, kUnitBytes = 34, kBlocks = 1, kOffset = 0, kMin = 0;
  static constexpr bool kS16 = false, kG16 = false, kSigned = true;
  static void prep(const uint8_t* u, St& s) { s.a[0] = h2f_2(u); }
  static __m256i wq(const uint8_t* u, int) { return load256(u + 2); }
};
struct Q4_0 {
  static constexpr int kBlock32 = 18, kUnitBytes = 18, kBlocks = 1, kOffset = 8, kMin = 0;
  static constexpr bool kS16 = false, kG16 = false, kSigned = false;
  static void prep(const uint8_t* u, St& s) { s.a[0] = h2f_2(u); }
  static __m256i wq(const uint8_t* u, int) { return nibbles16(u + 2); }
};
struct Q4_1 {
  static constexpr int kBlock32 = 20, kUnitBytes = 20, kBlocks = 1, kOffset = 0, kMin = 1;
  static constexpr bool kS16 = false, kG16 = false, kSigned = false;
  static void prep(const uint8_t* u, St& s) { s.a[0] = h2f_2(u); s.mn[0] = -h2f_2(u + 2); }
  static __m256i wq(const uint8_t* u, int) { return nibbles16(u + 4); }
};
struct Q5_0 {
  static constexpr int kBlock32 = 22, kUnitBytes = 22, kBlocks = 1, kOffset = 16, kMin = 0;
  static constexpr bool kS16 = false, kG16 = false, kSigned = false;
  static void prep(const uint8_t* u, St& s) { s.a[0] = h2f_2(u); }
  static __m256i wq(const uint8_t* u, int) {
    return _mm256_or_si256(nibbles16(u + 6), _mm256_and_si256(bits_to_bytes(ld32(u + 2)), _mm256_set1_epi8(16)));
  }
};
struct Q5_1 {
  static constexpr int kBlock32 = 24, kUnitBytes = 24, kBlocks = 1, kOffset = 0, kMin = 1;
  static constexpr bool kS16 = false, kG16 = false, kSigned = false;
  static void prep(const uint8_t* u, St& s) { s.a[0] = h2f_2(u); s.mn[0] = -h2f_2(u + 2); }
  static __m256i wq(const uint8_t* u, int) {
    return _mm256_or_si256(nibbles16(u + 8), _mm256_and_si256(bits_to_bytes(ld32(u + 4)), _mm256_set1_epi8(16)));
  }
};
// Block b (0..7) of a 256-element super-block sits in half b/4, quarter b%4.
static inline __m256i shifted_bits(const uint8_t* p, int shift, int mask) {
  return _mm256_and_si256(_mm256_srli_epi16(load256(p), shift), _mm256_set1_epi8(static_cast<char>(mask)));
}
struct Q2_K {
  static constexpr int kBlock32 = 0, kUnitBytes = 84, kBlocks = 8, kOffset = 0, kMin = 16;
  static constexpr bool kS16 = true, kG16 = true, kSigned = false;
  static void prep(const uint8_t* u, St& s) {
    const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(u));
    const __m128i lo = _mm_and_si128(sc, _mm_set1_epi8(0x0F)), hi = _mm_and_si128(_mm_srli_epi16(sc, 4), _mm_set1_epi8(0x0F));
    store_scaled_u8(s.a, lo, h2f_2(u + 80));
    store_scaled_u8(s.mn, hi, h2f_2(u + 82));
  }
  static __m256i wq(const uint8_t* u, int b) { return shifted_bits(u + 16 + 32 * (b / 4), 2 * (b % 4), 3); }
};
struct Q3_K {
  static constexpr int kBlock32 = 0, kUnitBytes = 110, kBlocks = 8, kOffset = 4, kMin = 0;
  static constexpr bool kS16 = true, kG16 = false, kSigned = false;
  static void prep(const uint8_t* u, St& s) {
    const float d = h2f_2(u + 108);
    const uint8_t* sc = u + 96;
    for (int i = 0; i < 16; ++i) {
      const int lo = i < 8 ? (sc[i] & 0xF) : (sc[i - 8] >> 4);
      const int hi = (sc[8 + (i % 4)] >> (2 * (i / 4))) & 3;
      s.a[i] = d * static_cast<float>((lo | (hi << 4)) - 32);
    }
  }
  static __m256i wq(const uint8_t* u, int b) {
    const int n = b / 4, j = b % 4;
    const __m256i lo = shifted_bits(u + 32 + 32 * n, 2 * j, 3);
    return _mm256_or_si256(lo, _mm256_slli_epi16(shifted_bits(u, 4 * n + j, 1), 2));
  }
};
// The 8 six-bit scales and mins of a Q4_K / Q5_K super-block (bytes q = u + 4 .. u + 15), four
// bytes at a time in general registers: for j < 4, sc_j = q[j] & 63 and m_j = q[j + 4] & 63; for
// j >= 4, the low 4 bits from q[j + 4] (low / high nibble) and bits 4-5 from bits 6-7 of q[j - 4]
// (scales) or q[j] (mins). Then a = d * sc, mn = dmin * m (one rounding each).
static inline void prep_k4(const uint8_t* u, St& s) {
  const uint32_t b = ld32(u + 4), c = ld32(u + 8), e = ld32(u + 12);
  const uint32_t sc_lo = b & 0x3F3F3F3Fu, m_lo = c & 0x3F3F3F3Fu;
  const uint32_t sc_hi = (e & 0x0F0F0F0Fu) | ((b >> 2) & 0x30303030u);
  const uint32_t m_hi = ((e >> 4) & 0x0F0F0F0Fu) | ((c >> 2) & 0x30303030u);
  store_scaled_u8x8(s.a, sc_lo | static_cast<uint64_t>(sc_hi) << 32, h2f_2(u));
  store_scaled_u8x8(s.mn, m_lo | static_cast<uint64_t>(m_hi) << 32, h2f_2(u + 2));
}
struct Q4_K {
  static constexpr int kBlock32 = 0, kUnitBytes = 144, kBlocks = 8, kOffset = 0, kMin = 8;
  static constexpr bool kS16 = false, kG16 = false, kSigned = false;
  static void prep(const uint8_t* u, St& s) { prep_k4(u, s); }
  static __m256i wq(const uint8_t* u, int b) { return shifted_bits(u + 16 + 32 * (b / 2), 4 * (b % 2), 0xF); }
};
struct Q5_K {
  static constexpr int kBlock32 = 0, kUnitBytes = 176, kBlocks = 8, kOffset = 0, kMin = 8;
  static constexpr bool kS16 = false, kG16 = false, kSigned = false;
  static void prep(const uint8_t* u, St& s) { prep_k4(u, s); }
  static __m256i wq(const uint8_t* u, int b) {
    const __m256i lo = shifted_bits(u + 48 + 32 * (b / 2), 4 * (b % 2), 0xF);
    return _mm256_or_si256(lo, _mm256_slli_epi16(shifted_bits(u + 16, b, 1), 4));
  }
};
struct Q6_K {
  static constexpr int kBlock32 = 0, kUnitBytes = 210, kBlocks = 8, kOffset = 32, kMin = 0;
  static constexpr bool kS16 = true, kG16 = false, kSigned = false;
  static void prep(const uint8_t* u, St& s) {
    const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(u + 192));
    const __m256 d = _mm256_set1_ps(h2f_2(u + 208));
    _mm256_storeu_ps(s.a, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(sc))));
    _mm256_storeu_ps(s.a + 8, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(sc, 8)))));
  }
  static __m256i wq(const uint8_t* u, int b) {
    const int n = b / 4, j = b % 4;
    const __m256i lo = shifted_bits(u + 64 * n + 32 * (j % 2), 4 * (j / 2), 0xF);
    return _mm256_or_si256(lo, _mm256_slli_epi16(shifted_bits(u + 128 + 32 * n, 2 * j, 3), 4));
  }
};

// The rows of a tile's NT tokens in the quantized activations (xquant.h), taken once per tile so
// that the unit loop holds them in registers.
template <int NT>
struct XRows {
  const int8_t* qs[NT];
  const int32_t* ls[NT];
  const float* dx[NT];
  const float* g32[NT];
  const float* g16[NT];
  XRows(const XQuant& xq, int64_t t0) {
    for (int t = 0; t < NT; ++t)
      qs[t] = xq.qs(t0 + t), ls[t] = xq.ls(t0 + t), dx[t] = xq.dx(t0 + t), g32[t] = xq.g32(t0 + t), g16[t] = xq.g16(t0 + t);
  }
};

template <class T, int NR, int NT>
__attribute__((always_inline)) inline void unit_step(__m256 (&acc)[NR][NT], float (&macc)[NR][NT], __m256 (&mv)[NR][NT],
                                                     const uint8_t* const (&up)[NR], const XRows<NT>& xr, int64_t u) {
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
    for (int t = 0; t < NT; ++t) {
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xr.qs[t] + e));
      const __m256i ls = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xr.ls[t] + e / 4));
      const __m256 dxv = _mm256_broadcast_ss(xr.dx[t] + e / 32);
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
  if constexpr (T::kMin == 1) {
    for (int t = 0; t < NT; ++t) {
      const float* g = xr.g32[t] + u;
      for (int r = 0; r < NR; ++r) macc[r][t] += st[r].mn[0] * g[0];
    }
  } else if constexpr (T::kMin > 0) {  // 8 lanes, one per group (Q2_K: groups i and i + 8 share a lane)
    for (int t = 0; t < NT; ++t) {
      const float* g = T::kG16 ? xr.g16[t] + u * 16 : xr.g32[t] + u * T::kBlocks;
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
  const int64_t n_units = a.w.n_cols / (32 * T::kBlocks);
  __m256 acc[NR][NT], mv[NR][NT];
  float macc[NR][NT];
  for (int r = 0; r < NR; ++r)
    for (int t = 0; t < NT; ++t) acc[r][t] = mv[r][t] = _mm256_setzero_ps(), macc[r][t] = 0.0f;
  const uint8_t* rows[NR];
  for (int r = 0; r < NR; ++r) rows[r] = a.w.data + (r0 + r * rs) * a.w.row_bytes;
  constexpr int64_t kPfMask = T::kUnitBytes < 32 ? 1 : 0;
  const XRows<NT> xr(*a.xq, t0);
  for (int64_t u = 0; u < n_units; ++u) {
    const uint8_t* up[NR];
    for (int r = 0; r < NR; ++r) {
      up[r] = rows[r] + u * T::kUnitBytes;
      if ((u & kPfMask) == 0)
        for (int k = 0; k < T::kUnitBytes; k += 64) _mm_prefetch(reinterpret_cast<const char*>(up[r] + ahead + k), _MM_HINT_T0);
    }
    unit_step<T, NR, NT>(acc, macc, mv, up, xr, u);
  }
  for (int t = 0; t < NT; ++t)
    for (int r = 0; r < NR; ++r)
      a.y[(t0 + t) * a.ldy + r0 + r * rs] = hsum256(acc[r][t]) - (T::kMin > 1 ? hsum256(mv[r][t]) : macc[r][t]);
}

// Low nibbles then high nibbles of 16 bytes, as nibbles16, from one broadcast load: the high lane
// shifted by 4 (fewer vector uops than a shift and an insert).
static inline __m256i nibbles16_bcast(const uint8_t* p) {
  const __m256i t = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_and_si256(_mm256_srlv_epi64(t, _mm256_set_epi64x(4, 4, 0, 0)), lo4());
}
// The fp16 at offset `off` of four units, widened to floats in one __m128.
static inline __m128 h2f_4(const uint8_t* const (&up)[4], int off) {
  uint64_t h = 0;
  for (int r = 0; r < 4; ++r) {
    uint16_t v;
    std::memcpy(&v, up[r] + off, 2);
    h |= static_cast<uint64_t>(v) << (16 * r);
  }
  return _mm_cvtph_ps(_mm_cvtsi64_si128(static_cast<int64_t>(h)));
}

// Token t's tile of four rows (r0 + r * rs) for the types with one 32-element block per unit: the
// same per-output sequence as tile<T, NR, 1> (each scale product a_w * dx, then
// acc = fma(float(isum), a_w * dx, acc); the min term macc += mn * g32 then subtracted), with the
// four rows' block scales converted together and the activation pointers held in registers.
// Against tile<T, 4, 1> (same streams and prefetch), 0.6B Q4_0 tg32 on an AVX2-only Zen 3:
// 1 thread 19.6 -> 26.6 t/s, 2 threads 35.9 -> 43.0; Q8_0 (bound by bandwidth) unchanged.
template <class T>
void quartet(const MatArgs& a, int64_t r0, int64_t t, int64_t rs, int64_t ahead) {
  static_assert(T::kBlocks == 1 && T::kBlock32 == T::kUnitBytes, "32-element blocks");
  const XQuant& xq = *a.xq;
  const int8_t* xs = xq.qs(t);
  const int32_t* xl = xq.ls(t);
  const float* dx = xq.dx(t);
  const float* g32 = xq.g32(t);
  const int64_t n_units = a.w.n_cols / 32;
  const uint8_t* rows[4];
  for (int r = 0; r < 4; ++r) rows[r] = a.w.data + (r0 + r * rs) * a.w.row_bytes;
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  __m128 macc = _mm_setzero_ps();
  const __m256i ones = _mm256_set1_epi16(1);
  constexpr int64_t kPfMask = T::kUnitBytes < 32 ? 1 : 0;
  for (int64_t u = 0; u < n_units; ++u) {
    const uint8_t* up[4];
    for (int r = 0; r < 4; ++r) {
      up[r] = rows[r] + u * T::kUnitBytes;
      if ((u & kPfMask) == 0) _mm_prefetch(reinterpret_cast<const char*>(up[r] + ahead), _MM_HINT_T0);
    }
    const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xs + 32 * u));
    const __m256i ls = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xl + 8 * u));
    const __m128 sc = _mm_mul_ps(h2f_4(up, 0), _mm_broadcast_ss(dx + u));  // a_w * dx per row
    if constexpr (T::kMin > 0) macc = _mm_add_ps(macc, _mm_mul_ps(_mm_sub_ps(_mm_setzero_ps(), h2f_4(up, 2)), _mm_broadcast_ss(g32 + u)));
    alignas(16) float scs[4];
    _mm_store_ps(scs, sc);  // broadcast back per row by loads: no shuffle uop on the vector pipes
    for (int r = 0; r < 4; ++r) {
      __m256i wv;
      if constexpr (std::is_same_v<T, Q4_0>) wv = nibbles16_bcast(up[r] + 2);
      else wv = T::wq(up[r], 0);
      __m256i p16;
      if constexpr (T::kSigned) p16 = _mm256_maddubs_epi16(_mm256_sign_epi8(wv, wv), _mm256_sign_epi8(xv, wv));
      else p16 = _mm256_maddubs_epi16(wv, xv);
      __m256i isum = _mm256_madd_epi16(p16, ones);
      if constexpr (T::kOffset != 0) isum = _mm256_add_epi32(isum, ls);
      const __m256 s = _mm256_broadcast_ss(scs + r);
      acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), s, acc[r]);
    }
  }
  alignas(16) float m[4];
  _mm_store_ps(m, macc);
  for (int r = 0; r < 4; ++r) a.y[t * a.ldy + r0 + r * rs] = hsum256(acc[r]) - m[r];
}

// NR rows x NT tokens of a type with one 32-element block per unit, the activation pointers held in
// registers: the per-output sequence of tile<T, NR, NT> and quartet<T> (acc = fma(float(isum),
// a_w * dx, acc); macc += mn * g32).
template <class T, int NR, int NT>
void tile32(const MatArgs& a, int64_t r0, int64_t t0) {
  static_assert(T::kBlocks == 1 && T::kBlock32 == T::kUnitBytes, "32-element blocks");
  const XQuant& xq = *a.xq;
  const int8_t* xs[NT];
  const int32_t* xl[NT];
  const float* dx[NT];
  const float* g32[NT];
  for (int t = 0; t < NT; ++t) xs[t] = xq.qs(t0 + t), xl[t] = xq.ls(t0 + t), dx[t] = xq.dx(t0 + t), g32[t] = xq.g32(t0 + t);
  const int64_t n_units = a.w.n_cols / 32;
  const uint8_t* rows[NR];
  for (int r = 0; r < NR; ++r) rows[r] = a.w.data + (r0 + r) * a.w.row_bytes;
  __m256 acc[NR][NT];
  float macc[NR][NT];
  for (int r = 0; r < NR; ++r)
    for (int t = 0; t < NT; ++t) acc[r][t] = _mm256_setzero_ps(), macc[r][t] = 0.0f;
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t u = 0; u < n_units; ++u) {
    __m256i wv[NR];
    __m256 av[NR];
    for (int r = 0; r < NR; ++r) {
      const uint8_t* up = rows[r] + u * T::kUnitBytes;
      _mm_prefetch(reinterpret_cast<const char*>(up + 256), _MM_HINT_T0);
      if constexpr (std::is_same_v<T, Q4_0>) wv[r] = nibbles16_bcast(up + 2);
      else wv[r] = T::wq(up, 0);
      av[r] = _mm256_set1_ps(h2f_2(up));
      if constexpr (T::kMin > 0)
        for (int t = 0; t < NT; ++t) macc[r][t] += -h2f_2(up + 2) * g32[t][u];
    }
    for (int t = 0; t < NT; ++t) {
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xs[t] + 32 * u));
      const __m256 dxv = _mm256_broadcast_ss(dx[t] + u);
      for (int r = 0; r < NR; ++r) {
        __m256i p16;
        if constexpr (T::kSigned) p16 = _mm256_maddubs_epi16(_mm256_sign_epi8(wv[r], wv[r]), _mm256_sign_epi8(xv, wv[r]));
        else p16 = _mm256_maddubs_epi16(wv[r], xv);
        __m256i isum = _mm256_madd_epi16(p16, ones);
        if constexpr (T::kOffset != 0)
          isum = _mm256_add_epi32(isum, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xl[t] + 8 * u)));
        acc[r][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(av[r], dxv), acc[r][t]);
      }
    }
  }
  for (int t = 0; t < NT; ++t)
    for (int r = 0; r < NR; ++r) a.y[(t0 + t) * a.ldy + r0 + r] = hsum256(acc[r][t]) - macc[r][t];
}

template <class T>
void rect(const MatArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  // One token (decode): four rows a quarter of the rectangle apart, four streams each walking its
  // rows front to back and prefetching kDecodeStreamAhead (as the AVX-512 quartets). On an
  // AVX2-only Zen 3 (2 cores), tg32 interleaved A/B against 2-row tiles prefetching 256 bytes on:
  // 0.6B Q4_0 1 thread 11.1 -> 19.9 t/s, 2 threads 19.3 -> 36.6; Q8_0 2 threads 17.1 -> 31.4.
  // Prefetch distances 512-8192 bytes measured alike.
  const int64_t n = r1 - r0;
  if (t1 - t0 == 1 && n % 4 == 0 && n >= 8) {
    const int64_t quarter = n / 4;
    if constexpr (T::kBlocks == 1) {
      for (int64_t j = 0; j < quarter; ++j) quartet<T>(a, r0 + j, t0, quarter, kDecodeStreamAhead);
    } else {
      for (int64_t j = 0; j < quarter; ++j) tile<T, 4, 1>(a, r0 + j, t0, quarter, kDecodeStreamAhead);
    }
    return;
  }
  if constexpr (T::kBlocks == 1) {
    // 2 x 3 tiles. Token strips outside, row pairs inside: a strip's activations stay in L1 while
    // the rectangle's rows (sized for L2 by the dispatcher) stream past. With tile32's hoisted
    // pointers, against tile<T, 2, 3> row pairs outside: 0.6B Q4_0 pp128 at 1 thread on an
    // AVX2-only Zen 3, 31.7 -> 40.2 t/s.
    const int64_t r_pairs = r0 + (r1 - r0) / 2 * 2;
    int64_t t = t0;
    for (; t + 3 <= t1; t += 3) {
      for (int64_t r = r0; r < r_pairs; r += 2) tile32<T, 2, 3>(a, r, t);
      if (r_pairs < r1) tile32<T, 1, 3>(a, r_pairs, t);
    }
    for (; t < t1; ++t) {
      for (int64_t r = r0; r < r_pairs; r += 2) tile32<T, 2, 1>(a, r, t);
      if (r_pairs < r1) tile32<T, 1, 1>(a, r_pairs, t);
    }
    return;
  }
  // 2 x 3 tiles (6 accumulators + weights, scales and x fit the 16 ymm registers), token strips
  // outside as above.
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
  static const MatmulKernel k{true, T::kOffset, XLayout::Natural, rect<T>};
  return &k;
}

}  // namespace

const MatmulKernel* matmul_kernel_f_avx2(DType type);

const MatmulKernel* matmul_kernel_avx2(DType type) {
  switch (type) {
    case DType::Q8_0: return kernel<Q8_0>();
    case DType::Q4_0: return kernel<Q4_0>();
    case DType::Q4_1: return kernel<Q4_1>();
    case DType::Q5_0: return kernel<Q5_0>();
    case DType::Q5_1: return kernel<Q5_1>();
    case DType::Q2_K: return kernel<Q2_K>();
    case DType::Q3_K: return kernel<Q3_K>();
    case DType::Q4_K: return kernel<Q4_K>();
    case DType::Q5_K: return kernel<Q5_K>();
    case DType::Q6_K: return kernel<Q6_K>();
    default: return matmul_kernel_f_avx2(type);
  }
}

}  // namespace nt::detail

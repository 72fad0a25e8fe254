// kernels/matmul_q_avx512.cpp — quantized-weight matmul with AVX-512 VNNI. Activations come
// quantized per 32 elements (xquant.h). Each weight type decodes 64 elements at a time ("pair")
// into unsigned bytes (q + offset) in natural element order plus per-lane float scales; then
//   isum = vpdpbusd(-offset * lanesum(x), w_u8, x_i8)      exact integer dot per 4-element lane
//   acc += float(isum) * (w_scale * x_scale)               per lane, fixed order
// and types with a min term accumulate sum(min_g * x_scale * sum(x_g)) separately. A tile of NR
// rows x NT tokens runs exactly the same per-accumulator sequence as a 1 x 1 tile, so every output
// is bit-identical whatever the tiling (determinism contract).
#include "kernels/kernels_internal.h"
#include "kernels/simd_avx512.h"
#include "tensor/dequant.h"

namespace nt::detail {
namespace {

static inline __m512i idx2x8() { return _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0); }
static inline __m512i idx4x4() { return _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0); }
// The 4 floats at p spread over lanes by idx (p must have 4 readable floats).
static inline __m512 spread(const float* p, __m512i idx) {
  return _mm512_permutexvar_ps(idx, _mm512_castps128_ps512(_mm_loadu_ps(p)));
}
static inline __m512i nib_lo() { return _mm512_set1_epi8(0x0F); }
// Two 16-byte nibble blocks a, b -> 64 bytes [a lo, a hi, b lo, b hi] (each block's natural order).
static inline __m512i nibbles_2x16(const uint8_t* a, const uint8_t* b) {
  const __m256i ab = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a))),
                                             _mm_loadu_si128(reinterpret_cast<const __m128i*>(b)), 1);
  const __m512i z = _mm512_permutexvar_epi64(_mm512_set_epi64(3, 2, 3, 2, 1, 0, 1, 0), _mm512_castsi256_si512(ab));
  return _mm512_and_si512(_mm512_srlv_epi64(z, _mm512_set_epi64(4, 4, 0, 0, 4, 4, 0, 0)), nib_lo());
}
// 32 bytes at p in both halves, shifted right by s0 bits (low half) and s1 bits (high half).
static inline __m512i bcast32_shift(const uint8_t* p, int s0, int s1) {
  const __m512i z = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  const __m512i sh = _mm512_inserti64x4(_mm512_set1_epi64(s0), _mm256_set1_epi64x(s1), 1);
  return _mm512_srlv_epi64(z, sh);
}
// Mask of bytes whose bit b0 (low half) / b1 (high half) is set, for 32 bytes at p in both halves.
static inline __mmask64 bcast32_test(const uint8_t* p, int b0, int b1) {
  const __m512i z = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  const __m512i sel = _mm512_inserti64x4(_mm512_set1_epi8(static_cast<char>(1 << b0)),
                                         _mm256_set1_epi8(static_cast<char>(1 << b1)), 1);
  return _mm512_test_epi8_mask(z, sel);
}

// ---- weight decoders: kUnit elements per prep, kPairs pairs of 64, kMin groups with a min term.
struct Q8_0 {
  static constexpr int kBlock32 = 34, kUnitBytes = 68, kPairs = 1, kOffset = 128, kMin = 0;
  static constexpr bool kG16 = false, kS16 = false;
  struct St { float a[4]; float mn[16]; };
  static void prep(const uint8_t* u, St& s) { s.a[0] = h2f(u); s.a[1] = h2f(u + 34); }
  static __m512i wq(const uint8_t* u, const St&, int) {
    const __m512i z = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(u + 2))),
                                         _mm256_loadu_si256(reinterpret_cast<const __m256i*>(u + 36)), 1);
    return _mm512_xor_si512(z, _mm512_set1_epi8(static_cast<char>(0x80)));
  }
};
struct Q4_0 {
  static constexpr int kBlock32 = 18, kUnitBytes = 36, kPairs = 1, kOffset = 8, kMin = 0;
  static constexpr bool kG16 = false, kS16 = false;
  struct St { float a[4]; float mn[16]; };
  static void prep(const uint8_t* u, St& s) { s.a[0] = h2f(u); s.a[1] = h2f(u + 18); }
  static __m512i wq(const uint8_t* u, const St&, int) { return nibbles_2x16(u + 2, u + 20); }
};
struct Q4_1 {
  static constexpr int kBlock32 = 20, kUnitBytes = 40, kPairs = 1, kOffset = 0, kMin = 2;
  static constexpr bool kG16 = false, kS16 = false;
  struct St { float a[4]; float mn[16]; };
  static void prep(const uint8_t* u, St& s) {
    s.a[0] = h2f(u); s.a[1] = h2f(u + 20);
    s.mn[0] = -h2f(u + 2); s.mn[1] = -h2f(u + 22);
  }
  static __m512i wq(const uint8_t* u, const St&, int) { return nibbles_2x16(u + 4, u + 24); }
};
static inline __mmask64 q5_high(const uint8_t* qh0, const uint8_t* qh1) {
  uint32_t a, b;
  std::memcpy(&a, qh0, 4);
  std::memcpy(&b, qh1, 4);
  return static_cast<__mmask64>(a) | static_cast<__mmask64>(b) << 32;
}
struct Q5_0 {
  static constexpr int kBlock32 = 22, kUnitBytes = 44, kPairs = 1, kOffset = 16, kMin = 0;
  static constexpr bool kG16 = false, kS16 = false;
  struct St { float a[4]; float mn[16]; };
  static void prep(const uint8_t* u, St& s) { s.a[0] = h2f(u); s.a[1] = h2f(u + 22); }
  static __m512i wq(const uint8_t* u, const St&, int) {
    const __m512i z = nibbles_2x16(u + 6, u + 28);
    return _mm512_mask_add_epi8(z, q5_high(u + 2, u + 24), z, _mm512_set1_epi8(16));
  }
};
struct Q5_1 {
  static constexpr int kBlock32 = 24, kUnitBytes = 48, kPairs = 1, kOffset = 0, kMin = 2;
  static constexpr bool kG16 = false, kS16 = false;
  struct St { float a[4]; float mn[16]; };
  static void prep(const uint8_t* u, St& s) {
    s.a[0] = h2f(u); s.a[1] = h2f(u + 24);
    s.mn[0] = -h2f(u + 2); s.mn[1] = -h2f(u + 26);
  }
  static __m512i wq(const uint8_t* u, const St&, int) {
    const __m512i z = nibbles_2x16(u + 8, u + 32);
    return _mm512_mask_add_epi8(z, q5_high(u + 4, u + 28), z, _mm512_set1_epi8(16));
  }
};
struct Q2_K {
  static constexpr int kBlock32 = 0, kUnitBytes = 84, kPairs = 4, kOffset = 0, kMin = 16;
  static constexpr bool kG16 = true, kS16 = true;
  struct St { float a[16]; float mn[16]; };
  static void prep(const uint8_t* u, St& s) {
    const float d = h2f(u + 80), dmin = h2f(u + 82);
    for (int g = 0; g < 16; ++g) {
      s.a[g] = d * static_cast<float>(u[g] & 0xF);
      s.mn[g] = dmin * static_cast<float>(u[g] >> 4);
    }
  }
  static __m512i wq(const uint8_t* u, const St&, int p) {
    const int s = 2 * (p & 1);
    return _mm512_and_si512(bcast32_shift(u + 16 + 32 * (p >> 1), 2 * s, 2 * s + 2), _mm512_set1_epi8(3));
  }
};
struct Q3_K {
  static constexpr int kBlock32 = 0, kUnitBytes = 110, kPairs = 4, kOffset = 4, kMin = 0;
  static constexpr bool kG16 = false, kS16 = true;
  struct St { float a[16]; float mn[16]; };
  static void prep(const uint8_t* u, St& s) {
    const float d = h2f(u + 108);
    for (int g = 0; g < 16; ++g) s.a[g] = d * static_cast<float>(q3k_scale(g, u + 96));
  }
  static __m512i wq(const uint8_t* u, const St&, int p) {
    const int n = p >> 1, s = 2 * (p & 1);
    const __m512i lo = _mm512_and_si512(bcast32_shift(u + 32 + 32 * n, 2 * s, 2 * s + 2), _mm512_set1_epi8(3));
    return _mm512_mask_add_epi8(lo, bcast32_test(u, 4 * n + s, 4 * n + s + 1), lo, _mm512_set1_epi8(4));
  }
};
struct Q4_K {
  static constexpr int kBlock32 = 0, kUnitBytes = 144, kPairs = 4, kOffset = 0, kMin = 8;
  static constexpr bool kG16 = false, kS16 = false;
  struct St { float a[16]; float mn[16]; };
  static void prep(const uint8_t* u, St& s) {
    const float d = h2f(u), dmin = h2f(u + 2);
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, m;
      k_scale_min(j, u + 4, &sc, &m);
      s.a[(j >> 1) * 4 + (j & 1)] = d * sc;
      s.mn[j] = dmin * m;
    }
  }
  static __m512i wq(const uint8_t* u, const St&, int p) {
    return _mm512_and_si512(bcast32_shift(u + 16 + 32 * p, 0, 4), nib_lo());
  }
};
struct Q5_K {
  static constexpr int kBlock32 = 0, kUnitBytes = 176, kPairs = 4, kOffset = 0, kMin = 8;
  static constexpr bool kG16 = false, kS16 = false;
  using St = Q4_K::St;
  static void prep(const uint8_t* u, St& s) { Q4_K::prep(u, s); }
  static __m512i wq(const uint8_t* u, const St&, int p) {
    const __m512i lo = _mm512_and_si512(bcast32_shift(u + 48 + 32 * p, 0, 4), nib_lo());
    return _mm512_mask_add_epi8(lo, bcast32_test(u + 16, 2 * p, 2 * p + 1), lo, _mm512_set1_epi8(16));
  }
};
struct Q6_K {
  static constexpr int kBlock32 = 0, kUnitBytes = 210, kPairs = 4, kOffset = 32, kMin = 0;
  static constexpr bool kG16 = false, kS16 = true;
  struct St { float a[16]; float mn[16]; };
  static void prep(const uint8_t* u, St& s) {
    const float d = h2f(u + 208);
    for (int g = 0; g < 16; ++g) s.a[g] = d * static_cast<float>(static_cast<int8_t>(u[192 + g]));
  }
  static __m512i wq(const uint8_t* u, const St&, int p) {
    const int n = p >> 1;
    const __m512i l = _mm512_loadu_si512(u + 64 * n);
    const __m512i lo = (p & 1) ? _mm512_and_si512(_mm512_srli_epi16(l, 4), nib_lo()) : _mm512_and_si512(l, nib_lo());
    const __m512i h = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(u + 128 + 32 * n)));
    const __m512i hs = (p & 1) ? _mm512_srlv_epi64(h, _mm512_inserti64x4(_mm512_set1_epi64(0), _mm256_set1_epi64x(2), 1))
                               : _mm512_sllv_epi64(h, _mm512_inserti64x4(_mm512_set1_epi64(4), _mm256_set1_epi64x(2), 1));
    return _mm512_or_si512(lo, _mm512_and_si512(hs, _mm512_set1_epi8(0x30)));
  }
};

// One tile: rows r0..r0+NR, tokens t0..t0+NT.
template <class T, int NR, int NT>
void tile(const MatArgs& a, int64_t r0, int64_t t0) {
  const XQuant& xq = *a.xq;
  const int64_t n_cols = a.w.n_cols;
  const bool blocks32 = T::kBlock32 != 0;
  const int64_t n_units = blocks32 ? (n_cols / 32 + 1) / 2 : n_cols / 256;
  const bool tail = blocks32 && (n_cols / 32) % 2 == 1;
  const __m512i aidx = T::kS16 ? idx4x4() : idx2x8();
  __m512 acc[NR][NT], macc[NR][NT];
  for (int r = 0; r < NR; ++r)
    for (int t = 0; t < NT; ++t) acc[r][t] = macc[r][t] = _mm512_setzero_ps();
  const uint8_t* rows[NR];
  for (int r = 0; r < NR; ++r) rows[r] = a.w.data + (r0 + r) * a.w.row_bytes;
  alignas(64) uint8_t tail_buf[NR][T::kUnitBytes + 64];
  for (int64_t u = 0; u < n_units; ++u) {
    const uint8_t* up[NR];
    typename T::St st[NR];
    for (int r = 0; r < NR; ++r) {
      up[r] = rows[r] + u * T::kUnitBytes;
      if (tail && u == n_units - 1) {  // one real block: copy it, the other block is all zero (d = 0)
        std::memset(tail_buf[r], 0, sizeof tail_buf[r]);
        std::memcpy(tail_buf[r], up[r], T::kBlock32 > 0 ? T::kBlock32 : 1);
        up[r] = tail_buf[r];
      }
      if (u + 2 < n_units) _mm_prefetch(reinterpret_cast<const char*>(up[r] + 2 * T::kUnitBytes), _MM_HINT_T0);
      T::prep(up[r], st[r]);
    }
    for (int p = 0; p < T::kPairs; ++p) {
      const int64_t e = u * 64 * T::kPairs + 64 * p;  // first element of this pair
      __m512i wv[NR];
      __m512 av[NR];
      for (int r = 0; r < NR; ++r) {
        wv[r] = T::wq(up[r], st[r], p);
        av[r] = spread(st[r].a + 4 * p, aidx);
      }
      for (int t = 0; t < NT; ++t) {
        const __m512i xv = _mm512_loadu_si512(xq.qs(t0 + t) + e);
        const __m512i ls = _mm512_loadu_si512(xq.ls(t0 + t) + e / 4);
        const __m512 dxv = _mm512_permutexvar_ps(
            idx2x8(), _mm512_castps128_ps512(_mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(xq.dx(t0 + t) + e / 32)))));
        for (int r = 0; r < NR; ++r) {
          const __m512i isum = _mm512_dpbusd_epi32(ls, wv[r], xv);
          acc[r][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(av[r], dxv), acc[r][t]);
        }
      }
    }
    if constexpr (T::kMin > 0) {
      const __mmask16 mk = static_cast<__mmask16>((1u << T::kMin) - 1);
      for (int t = 0; t < NT; ++t) {
        const float* g = T::kG16 ? xq.g16(t0 + t) + u * 16 : xq.g32(t0 + t) + u * (2 * T::kPairs);
        const __m512 gv = _mm512_maskz_loadu_ps(mk, g);
        for (int r = 0; r < NR; ++r) macc[r][t] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mk, st[r].mn), gv, macc[r][t]);
      }
    }
  }
  for (int t = 0; t < NT; ++t)
    for (int r = 0; r < NR; ++r)
      a.y[(t0 + t) * a.ldy + r0 + r] = hsum512(T::kMin > 0 ? _mm512_sub_ps(acc[r][t], macc[r][t]) : acc[r][t]);
}

template <class T>
void rect(const MatArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  int64_t r = r0;
  for (; r + 4 <= r1; r += 4) {
    int64_t t = t0;
    for (; t + 4 <= t1; t += 4) tile<T, 4, 4>(a, r, t);
    for (; t < t1; ++t) tile<T, 4, 1>(a, r, t);
  }
  for (; r < r1; ++r) {
    int64_t t = t0;
    for (; t + 4 <= t1; t += 4) tile<T, 1, 4>(a, r, t);
    for (; t < t1; ++t) tile<T, 1, 1>(a, r, t);
  }
}

template <class T>
const MatmulKernel* kernel() {
  static const MatmulKernel k{true, T::kOffset, rect<T>};
  return &k;
}

}  // namespace

const MatmulKernel* matmul_kernel_f_avx512(DType type);

const MatmulKernel* matmul_kernel_avx512(DType type) {
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
    default: return matmul_kernel_f_avx512(type);
  }
}

}  // namespace nt::detail

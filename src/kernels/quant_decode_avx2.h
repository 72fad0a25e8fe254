// kernels/quant_decode_avx2.h — AVX2 decoding of the quantized weight types' units into unsigned
// bytes (q + offset) of 32 elements and float scales, shared by the AVX2 matmul units (include only
// from *_avx2.cpp files). Everything is static inline in an anonymous namespace.
// Must not know: tiling, activations beyond their 32-element blocks.
#pragma once

#include "kernels/simd_avx2.h"

#include <cstdint>
#include <cstring>

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

// Low nibbles then high nibbles of 16 bytes, as nibbles16, from one broadcast load: the high lane
// shifted by 4 (fewer vector uops than a shift and an insert).
static inline __m256i nibbles16_bcast(const uint8_t* p) {
  const __m256i t = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_and_si256(_mm256_srlv_epi64(t, _mm256_set_epi64x(4, 4, 0, 0)), lo4());
}

}  // namespace
}  // namespace nt::detail

// kernels/quant_decode_avx512.h — AVX-512 (VNNI, VBMI, GFNI) decoders of the quantized weight formats
// into unsigned bytes (q + offset) in the activation layouts of xquant.h, with their scales in
// registers. Shared by the quantized matmul kernels (matmul_q_avx512.cpp, matmul_rl_avx512.cpp);
// include only from *_avx512.cpp units (everything is static inline in an anonymous namespace).
// Must not know: tiling, threads, models.
#pragma once

#include "kernels/kernels_internal.h"
#include "kernels/simd_avx512.h"

namespace nt::detail {
namespace {

static inline __m512i nib_lo() { return _mm512_set1_epi8(0x0F); }
// Each byte's high nibble (b >> 4) in one GF(2) affine op (output bit i = input bit i + 4, i < 4)
// instead of a shift and a mask.
static inline __m512i nib_hi(__m512i v) { return _mm512_gf2p8affine_epi64_epi8(v, _mm512_set1_epi64(0x1020408000000000ll), 0); }
static inline __m512i idx4x4() { return _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0); }
static inline __m512i idx8x2() { return _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0); }
// Two natural pairs (128 elements) -> even / odd 8-byte groups.
static inline void split_quad(__m512i n0, __m512i n1, __m512i& w1, __m512i& w2) {
  w1 = _mm512_permutex2var_epi64(n0, _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0), n1);
  w2 = _mm512_permutex2var_epi64(n0, _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1), n1);
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

// ---- weight decoders. prep() builds a unit's scales in registers (no store/reload):
//   a16: lane scales, pair p of a unit uses lanes idx(p) (2 groups of 32 or 4 groups of 16)
//   mn16: minus the min term's per-group factors, lined up with the x group sums the tile loads.
struct St {
  __m512 a16, mn16;
};
static inline uint32_t ld32(const uint8_t* p) { uint32_t w; std::memcpy(&w, p, 4); return w; }
static inline __m512 bytes_to_ps(__m128i v) { return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(v)); }

// 32-element block types: a unit is 4 blocks (one quad), decoded straight into the Halves layout
// (xquant.h) with byte permutes (VBMI) from two loads; a16 comes out with lane j = block j / 4's
// scale (kRep: no lane permute needed), mn16 lanes 0-3 hold the blocks' minima.
// Byte-index tables of fp16 words (bytes 2j, 2j + 1 = the word at byte offset o_j), built at
// compile time like Gather16's:
//   kRep: word j -> the fp16 at byte kOff + (j / 4) * kStride (each block's scale replicated 4x);
//   else: words 0-3 -> kOff + j * kStride (the rest the word at byte 0, multiplied with masked-off
//   zeros).
template <int kStride, int kOff, bool kRep>
struct WordIdx {
  struct Table {
    alignas(64) int8_t v[64];
  };
  static constexpr Table make() {
    Table t{};
    for (int j = 0; j < 16; ++j) {
      const int o = kRep ? kOff + (j / 4) * kStride : (j < 4 ? kOff + j * kStride : 0);
      t.v[2 * j] = static_cast<int8_t>(o);
      t.v[2 * j + 1] = static_cast<int8_t>(o + 1);
    }
    return t;
  }
  static constexpr Table kTable = make();
  static __m512i idx() { return _mm512_load_si512(kTable.v); }
};
// Byte indices: byte 16 b + i -> base + b * stride + i (b = 0..3, i = 0..15), a constant table
// (built at compile time: a runtime-built table would cost a store-forwarding stall per use).
template <int kStride, int kBase>
struct Gather16 {
  struct Table {
    alignas(64) int8_t v[64];
  };
  static constexpr Table make() {
    Table t{};
    for (int b = 0; b < 4; ++b)
      for (int i = 0; i < 16; ++i) t.v[16 * b + i] = static_cast<int8_t>(kBase + b * kStride + i);
    return t;
  }
  static constexpr Table kTable = make();
  static __m512i idx() { return _mm512_load_si512(kTable.v); }
};
// The unit's first 64 bytes and the rest (kRest bytes, masked: nothing past the unit is read).
template <int kUnit>
static inline void load_unit(const uint8_t* u, __m512i& z0, __m512i& z1) {
  z0 = _mm512_loadu_si512(u);
  // The rest: Q4_1 / Q5_1 with a plain 128 / 256-bit load, Q5_0 a masked 256-bit one; Q4_0's
  // 8 bytes keep the masked load (a 64-bit load was slower; docs/kernels.md).
  if constexpr (kUnit >= 128) z1 = _mm512_loadu_si512(u + 64);  // a plain load: shared with the decoder's
  else if constexpr (kUnit == 80) z1 = _mm512_zextsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(u + 64)));
  else if constexpr (kUnit == 96) z1 = _mm512_zextsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(u + 64)));
  else if constexpr (kUnit == 88) z1 = _mm512_zextsi256_si512(_mm256_maskz_loadu_epi8(0xFFFFFFu, u + 64));
  else z1 = _mm512_maskz_loadu_epi8(static_cast<__mmask64>((1ull << (kUnit - 64)) - 1), u + 64);
}
// The fifth bits of 4 Q5 blocks (qh words `stride` apart) as byte masks for the two halves.
static inline void q5_high(const uint8_t* qh, int stride, __mmask64& m1, __mmask64& m2) {
  uint64_t a = 0, b = 0;
  for (int i = 0; i < 4; ++i) {
    const uint32_t h = ld32(qh + i * stride);
    a |= static_cast<uint64_t>(h & 0xFFFFu) << (16 * i);  // elements 0-15
    b |= static_cast<uint64_t>(h >> 16) << (16 * i);      // elements 16-31
  }
  m1 = a;
  m2 = b;
}
// 4-bit blocks: 16 nibble bytes at qs_off + b * kB; lows are elements 0-15, highs 16-31.
template <int kB, int kQs>
static inline void nibbles_halves(__m512i z0, __m512i z1, __m512i& w1, __m512i& w2) {
  const __m512i y = _mm512_permutex2var_epi8(z0, Gather16<kB, kQs>::idx(), z1);
  w1 = _mm512_and_si512(y, nib_lo());
  w2 = nib_hi(y);
}
// 16 fp16 words of the unit loaded in z0:z1, picked by WordIdx (kRep: word 4k + j = block k's
// fp16 at byte kOff; else words 0-3), still fp16: the decode path blends 4 rows' words before one
// conversion. A byte permute (vpermt2b), not a word one: vpermt2w was slower in the one-token
// decode with blended scales (matmul_rl_avx512.cpp; docs/kernels.md).
template <int kB, int kOff, bool kRep = true>
static inline __m512i block_words(__m512i z0, __m512i z1) {
  return _mm512_permutex2var_epi8(z0, WordIdx<kB, kOff, kRep>::idx(), z1);
}
// The same words of the unit at u, as floats: a16 (scales, replicated) and mn16 (minima, lanes 0-3).
template <int kB, int kOff, bool kRep>
static inline __m512 block_floats(const uint8_t* u) {
  __m512i z0, z1;
  load_unit<4 * kB>(u, z0, z1);
  return _mm512_cvtph_ps(_mm512_castsi512_si256(block_words<kB, kOff, kRep>(z0, z1)));
}
// The 32-element block types' shared parts: prep (scales, and minima at byte 2 where kMin) and
// quad (the unit loaded, then the type's quad_z on the loaded bytes; the one-token path loads once
// itself and calls quad_z).
template <class D>
struct Block32 {
  static constexpr int kQuads = 1;
  static constexpr bool kG16 = false, kS16 = false, kRep = true;
  static constexpr XLayout kLayout = XLayout::Halves;
  static void prep(const uint8_t* u, St& s) {
    s.a16 = block_floats<D::kBlockBytes, 0, true>(u);
    if constexpr (D::kMin > 0) s.mn16 = block_floats<D::kBlockBytes, 2, false>(u);
  }
  static void quad(const uint8_t* u, int, __m512i& w1, __m512i& w2) {
    __m512i z0, z1;
    load_unit<D::kUnitBytes>(u, z0, z1);
    D::quad_z(z0, z1, u, w1, w2);
  }
};
struct Q8_0 : Block32<Q8_0> {
  static constexpr int kBlockBytes = 34, kUnitBytes = 136, kOffset = 128, kMin = 0;  // block: 32 elements
  static void quad_z(__m512i z0, __m512i z1, const uint8_t* u, __m512i& w1, __m512i& w2) {
    const __m512i sign = _mm512_set1_epi8(static_cast<char>(0x80));
    // elements 0-15 of each block: bytes 2 + 34 b + i of u[0, 128); 16-31: 18 + 34 b + i, all from
    // the same two 64-byte loads (prep's), except block 3's last 8 (u[128, 136): their indices wrap
    // and qword 7 is then replaced by a broadcast of those 8 bytes). Two 512-bit loads per unit
    // instead of four.
    w1 = _mm512_permutex2var_epi8(z0, Gather16<34, 2>::idx(), z1);
    w2 = _mm512_permutex2var_epi8(z0, Gather16<34, 18>::idx(), z1);
    w2 = _mm512_mask_broadcastq_epi64(w2, 0x80, _mm_loadl_epi64(reinterpret_cast<const __m128i*>(u + 128)));
    w1 = _mm512_xor_si512(w1, sign);
    w2 = _mm512_xor_si512(w2, sign);
  }
};
struct Q4_0 : Block32<Q4_0> {
  static constexpr int kBlockBytes = 18, kUnitBytes = 72, kOffset = 8, kMin = 0;  // block: 32 elements
  static void quad_z(__m512i z0, __m512i z1, const uint8_t*, __m512i& w1, __m512i& w2) {
    nibbles_halves<18, 2>(z0, z1, w1, w2);
  }
};
struct Q4_1 : Block32<Q4_1> {
  static constexpr int kBlockBytes = 20, kUnitBytes = 80, kOffset = 0, kMin = 4;  // block: 32 elements
  static void quad_z(__m512i z0, __m512i z1, const uint8_t*, __m512i& w1, __m512i& w2) {
    nibbles_halves<20, 4>(z0, z1, w1, w2);
  }
};
struct Q5_0 : Block32<Q5_0> {
  static constexpr int kBlockBytes = 22, kUnitBytes = 88, kOffset = 16, kMin = 0;  // block: 32 elements
  static void quad_z(__m512i z0, __m512i z1, const uint8_t* u, __m512i& w1, __m512i& w2) {
    nibbles_halves<22, 6>(z0, z1, w1, w2);
    __mmask64 m1, m2;
    q5_high(u + 2, 22, m1, m2);
    w1 = _mm512_mask_add_epi8(w1, m1, w1, _mm512_set1_epi8(16));
    w2 = _mm512_mask_add_epi8(w2, m2, w2, _mm512_set1_epi8(16));
  }
};
struct Q5_1 : Block32<Q5_1> {
  static constexpr int kBlockBytes = 24, kUnitBytes = 96, kOffset = 0, kMin = 4;  // block: 32 elements
  static void quad_z(__m512i z0, __m512i z1, const uint8_t* u, __m512i& w1, __m512i& w2) {
    nibbles_halves<24, 8>(z0, z1, w1, w2);
    __mmask64 m1, m2;
    q5_high(u + 4, 24, m1, m2);
    w1 = _mm512_mask_add_epi8(w1, m1, w1, _mm512_set1_epi8(16));
    w2 = _mm512_mask_add_epi8(w2, m2, w2, _mm512_set1_epi8(16));
  }
};
// K-quants: a unit is a 256-element super-block (two quads), decoded as natural pairs then split.
template <class T>
static inline void quad_from_pairs(const uint8_t* u, int q, __m512i& w1, __m512i& w2) {
  if constexpr (T::kLayout == XLayout::Quad) {
    split_quad(T::wq(u, 2 * q), T::wq(u, 2 * q + 1), w1, w2);
  } else {  // Halves: the first / second 16 elements of each 32-group are 128-bit lanes 0, 2 / 1, 3
    const __m512i n0 = T::wq(u, 2 * q), n1 = T::wq(u, 2 * q + 1);
    w1 = _mm512_shuffle_i64x2(n0, n1, _MM_SHUFFLE(2, 0, 2, 0));
    w2 = _mm512_shuffle_i64x2(n0, n1, _MM_SHUFFLE(3, 1, 3, 1));
  }
}
struct Q2_K {
  static constexpr int kUnitBytes = 84, kQuads = 2, kOffset = 0, kMin = 16;
  static constexpr bool kG16 = true, kS16 = true;
  static constexpr bool kRep = false;
  static constexpr XLayout kLayout = XLayout::Quad;
  static void prep(const uint8_t* u, St& s) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(u));
    const __m128i lo = _mm_set1_epi8(0x0F);
    s.a16 = _mm512_mul_ps(bytes_to_ps(_mm_and_si128(v, lo)), _mm512_set1_ps(h2f(u + 80)));
    s.mn16 = _mm512_mul_ps(bytes_to_ps(_mm_and_si128(_mm_srli_epi16(v, 4), lo)), _mm512_set1_ps(-h2f(u + 82)));
  }
  static __m512i wq(const uint8_t* u, int p) {
    const int s = 2 * (p & 1);
    return _mm512_and_si512(bcast32_shift(u + 16 + 32 * (p >> 1), 2 * s, 2 * s + 2), _mm512_set1_epi8(3));
  }
  static void quad(const uint8_t* u, int q, __m512i& w1, __m512i& w2) { quad_from_pairs<Q2_K>(u, q, w1, w2); }
};
struct Q3_K {
  static constexpr int kUnitBytes = 110, kQuads = 2, kOffset = 4, kMin = 0;
  static constexpr bool kG16 = false, kS16 = true;
  static constexpr bool kRep = false;
  static constexpr XLayout kLayout = XLayout::Quad;
  static void prep(const uint8_t* u, St& s) {
    const uint32_t w0 = ld32(u + 96), w1 = ld32(u + 100), w2 = ld32(u + 104);
    const uint32_t m4 = 0x0F0F0F0Fu, m2 = 0x03030303u;
    const __m128i v = _mm_set_epi32(static_cast<int>(((w1 >> 4) & m4) | (((w2 >> 6) & m2) << 4)),
                                    static_cast<int>(((w0 >> 4) & m4) | (((w2 >> 4) & m2) << 4)),
                                    static_cast<int>((w1 & m4) | (((w2 >> 2) & m2) << 4)),
                                    static_cast<int>((w0 & m4) | ((w2 & m2) << 4)));
    const __m512 sc = _mm512_sub_ps(bytes_to_ps(v), _mm512_set1_ps(32.0f));
    s.a16 = _mm512_mul_ps(sc, _mm512_set1_ps(h2f(u + 108)));
  }
  static __m512i wq(const uint8_t* u, int p) {
    const int n = p >> 1, s = 2 * (p & 1);
    const __m512i lo = _mm512_and_si512(bcast32_shift(u + 32 + 32 * n, 2 * s, 2 * s + 2), _mm512_set1_epi8(3));
    return _mm512_mask_add_epi8(lo, bcast32_test(u, 4 * n + s, 4 * n + s + 1), lo, _mm512_set1_epi8(4));
  }
  static void quad(const uint8_t* u, int q, __m512i& w1, __m512i& w2) { quad_from_pairs<Q3_K>(u, q, w1, w2); }
};
// Q4_K / Q5_K scales: lanes 0-7 d * scale_j, lanes 8-15 dmin * min_j (the tile loads the x group
// sums into lanes 8-15 for these types, so lanes 0-7 of mn16 meet zeros there).
static inline void prep_k4(const uint8_t* u, St& s) {
  // One 16-byte load: dwords [d | dmin, w0, w1, w2] (w = the 12 packed 6-bit scale bytes). Per byte:
  //   sc 0-3 = w0 & 63            sc 4-7 = (w2 & 15) | ((w0 >> 6) << 4)
  //   m  0-3 = w1 & 63            m  4-7 = (w2 >> 4) | ((w1 >> 6) << 4)
  const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(u));
  const __m128i p = _mm_shuffle_epi32(x, _MM_SHUFFLE(3, 2, 3, 1));  // [w0, w2, w1, w2]
  const __m128i q = _mm_shuffle_epi32(x, _MM_SHUFFLE(2, 2, 1, 1));  // [w0, w0, w1, w1]
  const __m128i lo = _mm_and_si128(_mm_srlv_epi32(p, _mm_set_epi32(4, 0, 0, 0)),
                                   _mm_set_epi32(0x0F0F0F0F, 0x3F3F3F3F, 0x0F0F0F0F, 0x3F3F3F3F));
  const __m128i hi = _mm_and_si128(_mm_srli_epi32(q, 2), _mm_set_epi32(0x30303030, 0, 0x30303030, 0));
  const __m128i v = _mm_or_si128(lo, hi);
  const __m512 dd = _mm512_permutexvar_ps(_mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0),
                                          _mm512_castps128_ps512(_mm_cvtph_ps(x)));
  s.a16 = _mm512_mul_ps(bytes_to_ps(v), dd);
  s.mn16 = _mm512_sub_ps(_mm512_setzero_ps(), s.a16);
}
struct Q4_K {
  static constexpr int kUnitBytes = 144, kQuads = 2, kOffset = 0, kMin = 8;
  static constexpr bool kG16 = false, kS16 = false;
  static constexpr bool kRep = false;
  static constexpr XLayout kLayout = XLayout::Halves;
  static void prep(const uint8_t* u, St& s) { prep_k4(u, s); }
  static __m512i wq(const uint8_t* u, int p) { return _mm512_and_si512(bcast32_shift(u + 16 + 32 * p, 0, 4), nib_lo()); }
  // Halves straight from the quad's 64 nibble bytes z: w1 = [lo z0-15, hi z0-15, lo z32-47, hi
  // z32-47] (groups 4q..4q+3, elements 0-15), w2 the same from bytes 16-31 and 48-63.
  static void quad(const uint8_t* u, int q, __m512i& w1, __m512i& w2) {
    const __m512i z = _mm512_loadu_si512(u + 16 + 64 * q);
    const __m512i sh = _mm512_set_epi64(4, 4, 0, 0, 4, 4, 0, 0);
    w1 = _mm512_and_si512(_mm512_srlv_epi64(_mm512_shuffle_i64x2(z, z, _MM_SHUFFLE(2, 2, 0, 0)), sh), nib_lo());
    w2 = _mm512_and_si512(_mm512_srlv_epi64(_mm512_shuffle_i64x2(z, z, _MM_SHUFFLE(3, 3, 1, 1)), sh), nib_lo());
  }
};
struct Q5_K {
  static constexpr int kUnitBytes = 176, kQuads = 2, kOffset = 0, kMin = 8;
  static constexpr bool kG16 = false, kS16 = false;
  static constexpr bool kRep = false;
  static constexpr XLayout kLayout = XLayout::Halves;
  static void prep(const uint8_t* u, St& s) { prep_k4(u, s); }
  static __m512i wq(const uint8_t* u, int p) {
    const __m512i lo = _mm512_and_si512(bcast32_shift(u + 48 + 32 * p, 0, 4), nib_lo());
    return _mm512_mask_add_epi8(lo, bcast32_test(u + 16, 2 * p, 2 * p + 1), lo, _mm512_set1_epi8(16));
  }
  static void quad(const uint8_t* u, int q, __m512i& w1, __m512i& w2) { quad_from_pairs<Q5_K>(u, q, w1, w2); }
};
struct Q6_K {
  static constexpr int kUnitBytes = 210, kQuads = 2, kOffset = 32, kMin = 0;
  static constexpr bool kG16 = false, kS16 = true;
  static constexpr bool kRep = false;
  static constexpr XLayout kLayout = XLayout::Quad;
  static void prep(const uint8_t* u, St& s) {
    const __m512 sc = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(u + 192))));
    s.a16 = _mm512_mul_ps(sc, _mm512_set1_ps(h2f(u + 208)));
  }
  static __m512i wq(const uint8_t* u, int p) {
    const int n = p >> 1;
    const __m512i l = _mm512_loadu_si512(u + 64 * n);
    const __m512i lo = (p & 1) ? nib_hi(l) : _mm512_and_si512(l, nib_lo());
    const __m512i h = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(u + 128 + 32 * n)));
    const __m512i hs = (p & 1) ? _mm512_srlv_epi64(h, _mm512_inserti64x4(_mm512_set1_epi64(0), _mm256_set1_epi64x(2), 1))
                               : _mm512_sllv_epi64(h, _mm512_inserti64x4(_mm512_set1_epi64(4), _mm256_set1_epi64x(2), 1));
    return _mm512_or_si512(lo, _mm512_and_si512(hs, _mm512_set1_epi8(0x30)));
  }
  static void quad(const uint8_t* u, int q, __m512i& w1, __m512i& w2) { quad_from_pairs<Q6_K>(u, q, w1, w2); }
};

}  // namespace
}  // namespace nt::detail

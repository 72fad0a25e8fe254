// tensor/quant_blocks.h — the byte layout of each quantized block exactly as GGUF stores it.
// Owns: block structs and their size checks. Must not know: how blocks are computed with.
// All multi-byte fields are little-endian; fp16 fields are IEEE half stored as uint16_t.
#pragma once

#include <cstdint>

namespace nt {

constexpr int QK4_0 = 32, QK4_1 = 32, QK5_0 = 32, QK5_1 = 32, QK8_0 = 32, QK8_1 = 32;
constexpr int QK_K = 256;         // super-block size of the K-quants
constexpr int K_SCALE_SIZE = 12;  // packed 6-bit scales/mins of Q4_K and Q5_K

struct BlockQ4_0 { uint16_t d; uint8_t qs[QK4_0 / 2]; };               // x = (q - 8) * d
struct BlockQ4_1 { uint16_t d, m; uint8_t qs[QK4_1 / 2]; };            // x = q * d + m
struct BlockQ5_0 { uint16_t d; uint8_t qh[4]; uint8_t qs[QK5_0 / 2]; };  // x = (q - 16) * d
struct BlockQ5_1 { uint16_t d, m; uint8_t qh[4]; uint8_t qs[QK5_1 / 2]; };
struct BlockQ8_0 { uint16_t d; int8_t qs[QK8_0]; };                    // x = q * d
struct BlockQ8_1 { uint16_t d, s; int8_t qs[QK8_1]; };                 // s = d * sum(qs)

struct BlockQ2_K {
  uint8_t scales[QK_K / 16];  // low 4 bits scale, high 4 bits min, per 16 elements
  uint8_t qs[QK_K / 4];       // 2-bit quants
  uint16_t d, dmin;
};
struct BlockQ3_K {
  uint8_t hmask[QK_K / 8];  // high bit of each quant
  uint8_t qs[QK_K / 4];     // low 2 bits
  uint8_t scales[12];       // 16 6-bit scales
  uint16_t d;
};
struct BlockQ4_K {
  uint16_t d, dmin;
  uint8_t scales[K_SCALE_SIZE];  // 8 6-bit scales and 8 6-bit mins
  uint8_t qs[QK_K / 2];
};
struct BlockQ5_K {
  uint16_t d, dmin;
  uint8_t scales[K_SCALE_SIZE];
  uint8_t qh[QK_K / 8];
  uint8_t qs[QK_K / 2];
};
struct BlockQ6_K {
  uint8_t ql[QK_K / 2];      // low 4 bits
  uint8_t qh[QK_K / 4];      // high 2 bits
  int8_t scales[QK_K / 16];  // 8-bit scales
  uint16_t d;
};
struct BlockQ8_K {  // activations for K-quant dot products
  float d;
  int8_t qs[QK_K];
  int16_t bsums[QK_K / 16];
};

static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20 && sizeof(BlockQ5_0) == 22 &&
              sizeof(BlockQ5_1) == 24 && sizeof(BlockQ8_0) == 34 && sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockQ2_K) == 84 && sizeof(BlockQ3_K) == 110 && sizeof(BlockQ4_K) == 144 &&
              sizeof(BlockQ5_K) == 176 && sizeof(BlockQ6_K) == 210 && sizeof(BlockQ8_K) == 292);

}  // namespace nt

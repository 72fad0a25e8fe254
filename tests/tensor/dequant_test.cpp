// Reference dequantization against hand-built blocks: each test packs chosen integer quants and
// scales into the GGUF byte layout with its own packing code (the inverse direction of the
// dequantizer) and checks every element against the value computed from the chosen numbers.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "tensor/dequant.h"
#include "tensor/fp16.h"
#include "tensor/quant_blocks.h"

namespace nt {
namespace {

// Values exactly representable in fp16 so the expectations are exact.
constexpr float kD = 0.25f, kDmin = 0.125f;

TEST(Dequant, F32F16BF16) {
  const float vals[4] = {1.5f, -2.0f, 0.0f, 65504.0f};
  float out[4];
  dequantize_row(DType::F32, vals, out, 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], vals[i]);
  const uint16_t h[4] = {0x3e00, 0xc000, 0x0000, 0x7bff};  // 1.5, -2, 0, 65504
  dequantize_row(DType::F16, h, out, 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], vals[i]);
  const uint16_t b[3] = {0x3fc0, 0xc000, 0x0001};  // 1.5, -2, smallest bf16 subnormal
  dequantize_row(DType::BF16, b, out, 3);
  EXPECT_EQ(out[0], 1.5f);
  EXPECT_EQ(out[1], -2.0f);
  EXPECT_EQ(out[2], 9.18354961579912e-41f);
}

TEST(Dequant, Q4_0AndQ4_1) {
  BlockQ4_0 b0[2];
  BlockQ4_1 b1[2];
  std::vector<int> q(64);
  for (int i = 0; i < 64; ++i) q[i] = (i * 7 + 3) % 16;
  for (int blk = 0; blk < 2; ++blk) {
    b0[blk].d = fp32_to_fp16(kD * (blk + 1));
    b1[blk].d = fp32_to_fp16(kD * (blk + 1));
    b1[blk].m = fp32_to_fp16(-kDmin);
    for (int j = 0; j < 16; ++j) {
      b0[blk].qs[j] = static_cast<uint8_t>(q[blk * 32 + j] | q[blk * 32 + j + 16] << 4);
      b1[blk].qs[j] = b0[blk].qs[j];
    }
  }
  float out0[64], out1[64];
  dequantize_row(DType::Q4_0, b0, out0, 64);
  dequantize_row(DType::Q4_1, b1, out1, 64);
  for (int i = 0; i < 64; ++i) {
    const float d = kD * (i / 32 + 1);
    EXPECT_EQ(out0[i], (q[i] - 8) * d) << i;
    EXPECT_EQ(out1[i], q[i] * d - kDmin) << i;
  }
}

TEST(Dequant, Q5_0AndQ5_1) {
  BlockQ5_0 b0{};
  BlockQ5_1 b1{};
  int q[32];
  for (int i = 0; i < 32; ++i) q[i] = (i * 11 + 5) % 32;
  b0.d = b1.d = fp32_to_fp16(kD);
  b1.m = fp32_to_fp16(kDmin);
  uint32_t qh = 0;
  for (int i = 0; i < 32; ++i) qh |= static_cast<uint32_t>(q[i] >> 4) << i;  // element i's bit 4
  for (int j = 0; j < 16; ++j) b0.qs[j] = b1.qs[j] = static_cast<uint8_t>((q[j] & 15) | (q[j + 16] & 15) << 4);
  std::memcpy(b0.qh, &qh, 4);
  std::memcpy(b1.qh, &qh, 4);
  float o0[32], o1[32];
  dequantize_row(DType::Q5_0, &b0, o0, 32);
  dequantize_row(DType::Q5_1, &b1, o1, 32);
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(o0[i], (q[i] - 16) * kD) << i;
    EXPECT_EQ(o1[i], q[i] * kD + kDmin) << i;
  }
}

TEST(Dequant, Q8_0) {
  BlockQ8_0 b{};
  b.d = fp32_to_fp16(kD);
  for (int i = 0; i < 32; ++i) b.qs[i] = static_cast<int8_t>(i * 9 - 128 + (i == 0));
  float o[32];
  dequantize_row(DType::Q8_0, &b, o, 32);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(o[i], b.qs[i] * kD);
}

// K-quants: element i of a super-block belongs to group i / 16 (or i / 32 for Q4_K/Q5_K).
TEST(Dequant, Q2_K) {
  BlockQ2_K b{};
  int q[256], sc[16], mn[16];
  for (int i = 0; i < 256; ++i) q[i] = (i * 5 + i / 7) % 4;
  for (int g = 0; g < 16; ++g) sc[g] = (g * 3 + 1) % 16, mn[g] = (g * 5 + 2) % 16;
  for (int g = 0; g < 16; ++g) b.scales[g] = static_cast<uint8_t>(sc[g] | mn[g] << 4);
  for (int i = 0; i < 256; ++i) {  // element i: half i/128, shift (i%128)/32, byte i%32
    const int half = i / 128, s = (i % 128) / 32, l = i % 32;
    b.qs[half * 32 + l] |= static_cast<uint8_t>(q[i] << (2 * s));
  }
  b.d = fp32_to_fp16(kD);
  b.dmin = fp32_to_fp16(kDmin);
  float o[256];
  dequantize_row(DType::Q2_K, &b, o, 256);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(o[i], kD * sc[i / 16] * q[i] - kDmin * mn[i / 16]) << i;
}

TEST(Dequant, Q3_K) {
  BlockQ3_K b{};
  int q[256], sc[16];
  for (int i = 0; i < 256; ++i) q[i] = (i * 3 + i / 5) % 8 - 4;  // -4..3
  for (int g = 0; g < 16; ++g) sc[g] = (g * 13 + 7) % 64 - 32;  // -32..31
  for (int g = 0; g < 16; ++g) {  // 6-bit value v = sc + 32: low 4 bits, then 2 high bits
    const int v = sc[g] + 32;
    if (g < 8) b.scales[g] |= static_cast<uint8_t>(v & 15);
    else b.scales[g - 8] |= static_cast<uint8_t>((v & 15) << 4);
    b.scales[8 + g % 4] |= static_cast<uint8_t>((v >> 4) << (2 * (g / 4)));
  }
  for (int i = 0; i < 256; ++i) {
    const int half = i / 128, s = (i % 128) / 32, l = i % 32;
    const int u = q[i] + 4;  // 0..7: low 2 bits in qs, bit 2 in hmask
    b.qs[half * 32 + l] |= static_cast<uint8_t>((u & 3) << (2 * s));
    if (u & 4) b.hmask[l] |= static_cast<uint8_t>(1u << (4 * half + s));
  }
  b.d = fp32_to_fp16(kD);
  float o[256];
  dequantize_row(DType::Q3_K, &b, o, 256);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(o[i], kD * sc[i / 16] * q[i]) << i;
}

// Packs 8 6-bit scales and mins the Q4_K/Q5_K way.
void pack_k4_scales(const int* sc, const int* mn, uint8_t* out) {
  std::memset(out, 0, 12);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      out[j] |= static_cast<uint8_t>(sc[j] & 63);
      out[j + 4] |= static_cast<uint8_t>(mn[j] & 63);
    } else {
      out[j + 4] |= static_cast<uint8_t>((sc[j] & 15) | (mn[j] & 15) << 4);
      out[j - 4] |= static_cast<uint8_t>((sc[j] >> 4) << 6);
      out[j] |= static_cast<uint8_t>((mn[j] >> 4) << 6);
    }
  }
}

TEST(Dequant, Q4_KAndQ5_K) {
  BlockQ4_K b4{};
  BlockQ5_K b5{};
  int q[256], sc[8], mn[8];
  for (int i = 0; i < 256; ++i) q[i] = (i * 7 + i / 9) % 32;
  for (int g = 0; g < 8; ++g) sc[g] = (g * 23 + 5) % 64, mn[g] = (g * 29 + 60) % 64;
  pack_k4_scales(sc, mn, b4.scales);
  pack_k4_scales(sc, mn, b5.scales);
  for (int i = 0; i < 256; ++i) {  // group g = i/32: chunk g/2, low nibble for even g
    const int g = i / 32, l = i % 32, c = g / 2;
    const int sh = (g % 2) * 4;
    b4.qs[c * 32 + l] |= static_cast<uint8_t>((q[i] & 15) << sh);
    b5.qs[c * 32 + l] |= static_cast<uint8_t>((q[i] & 15) << sh);
    if (q[i] & 16) b5.qh[l] |= static_cast<uint8_t>(1u << g);
  }
  b4.d = b5.d = fp32_to_fp16(kD);
  b4.dmin = b5.dmin = fp32_to_fp16(kDmin);
  float o4[256], o5[256];
  dequantize_row(DType::Q4_K, &b4, o4, 256);
  dequantize_row(DType::Q5_K, &b5, o5, 256);
  for (int i = 0; i < 256; ++i) {
    const int g = i / 32;
    EXPECT_EQ(o4[i], kD * sc[g] * (q[i] & 15) - kDmin * mn[g]) << i;
    EXPECT_EQ(o5[i], kD * sc[g] * q[i] - kDmin * mn[g]) << i;
  }
}

TEST(Dequant, Q6_K) {
  BlockQ6_K b{};
  int q[256], sc[16];
  for (int i = 0; i < 256; ++i) q[i] = (i * 37 + i / 3) % 64 - 32;
  for (int g = 0; g < 16; ++g) sc[g] = (g * 17 + 3) % 200 - 100;
  for (int g = 0; g < 16; ++g) b.scales[g] = static_cast<int8_t>(sc[g]);
  for (int i = 0; i < 256; ++i) {  // half i/128; quarter j=(i%128)/32; byte l=i%32
    const int half = i / 128, j = (i % 128) / 32, l = i % 32, u = q[i] + 32;
    const int ql_idx = half * 64 + l + (j % 2) * 32;
    b.ql[ql_idx] |= static_cast<uint8_t>((u & 15) << ((j / 2) * 4));
    b.qh[half * 32 + l] |= static_cast<uint8_t>((u >> 4) << (2 * j));
  }
  b.d = fp32_to_fp16(kD);
  float o[256];
  dequantize_row(DType::Q6_K, &b, o, 256);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(o[i], kD * sc[i / 16] * q[i]) << i;
}

TEST(Dequant, MultipleSuperBlocksUseTheirOwnScales) {
  BlockQ6_K b[2]{};
  for (int k = 0; k < 2; ++k) {
    b[k].d = fp32_to_fp16(k == 0 ? 1.0f : -2.0f);
    for (int g = 0; g < 16; ++g) b[k].scales[g] = 1;
    std::memset(b[k].ql, 0x11, sizeof b[k].ql);  // low nibble 1 everywhere, high bits 0 -> q = 1 - 32
  }
  float o[512];
  dequantize_row(DType::Q6_K, b, o, 512);
  EXPECT_EQ(o[0], -31.0f);
  EXPECT_EQ(o[511], 62.0f);
}

}  // namespace
}  // namespace nt

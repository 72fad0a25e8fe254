#include "tensor/dequant.h"

#include <cstring>

#include "core/check.h"
#include "tensor/fp16.h"
#include "tensor/quant_blocks.h"

namespace nt {

namespace {

float h2f(uint16_t h) { return fp16_to_fp32(h); }

void deq_q4_0(const BlockQ4_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += QK4_0) {
    const float d = h2f(b[i].d);
    for (int j = 0; j < QK4_0 / 2; ++j) {
      y[j] = static_cast<float>((b[i].qs[j] & 0xF) - 8) * d;
      y[j + QK4_0 / 2] = static_cast<float>((b[i].qs[j] >> 4) - 8) * d;
    }
  }
}

void deq_q4_1(const BlockQ4_1* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += QK4_1) {
    const float d = h2f(b[i].d), m = h2f(b[i].m);
    for (int j = 0; j < QK4_1 / 2; ++j) {
      y[j] = static_cast<float>(b[i].qs[j] & 0xF) * d + m;
      y[j + QK4_1 / 2] = static_cast<float>(b[i].qs[j] >> 4) * d + m;
    }
  }
}

uint32_t load_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

void deq_q5_0(const BlockQ5_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += QK5_0) {
    const float d = h2f(b[i].d);
    const uint32_t qh = load_u32(b[i].qh);
    for (int j = 0; j < QK5_0 / 2; ++j) {
      const int h0 = static_cast<int>((qh >> j) & 1u) << 4;
      const int h1 = static_cast<int>((qh >> (j + 16)) & 1u) << 4;
      y[j] = static_cast<float>(((b[i].qs[j] & 0xF) | h0) - 16) * d;
      y[j + QK5_0 / 2] = static_cast<float>(((b[i].qs[j] >> 4) | h1) - 16) * d;
    }
  }
}

void deq_q5_1(const BlockQ5_1* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += QK5_1) {
    const float d = h2f(b[i].d), m = h2f(b[i].m);
    const uint32_t qh = load_u32(b[i].qh);
    for (int j = 0; j < QK5_1 / 2; ++j) {
      const int h0 = static_cast<int>((qh >> j) & 1u) << 4;
      const int h1 = static_cast<int>((qh >> (j + 16)) & 1u) << 4;
      y[j] = static_cast<float>((b[i].qs[j] & 0xF) | h0) * d + m;
      y[j + QK5_1 / 2] = static_cast<float>((b[i].qs[j] >> 4) | h1) * d + m;
    }
  }
}

void deq_q8_0(const BlockQ8_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += QK8_0) {
    const float d = h2f(b[i].d);
    for (int j = 0; j < QK8_0; ++j) y[j] = static_cast<float>(b[i].qs[j]) * d;
  }
}

// Q2_K: 16 groups of 16; scales[g] low nibble = scale, high nibble = min. Within each 128-half,
// byte l of qs (32 bytes) holds elements 32*s + l for shift s = 0..3 (2 bits each).
void deq_q2_k(const BlockQ2_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = h2f(b[i].d), dmin = h2f(b[i].dmin);
    const uint8_t* q = b[i].qs;
    int g = 0;
    for (int half = 0; half < 2; ++half, q += 32) {
      for (int s = 0; s < 4; ++s) {
        for (int k = 0; k < 2; ++k, ++g) {
          const float dl = d * static_cast<float>(b[i].scales[g] & 0xF);
          const float ml = dmin * static_cast<float>(b[i].scales[g] >> 4);
          for (int l = 0; l < 16; ++l) *y++ = dl * static_cast<float>((q[16 * k + l] >> (2 * s)) & 3) - ml;
        }
      }
    }
  }
}

// Q3_K: 16 groups of 16 with signed 6-bit scales; low 2 bits as in Q2_K, the third bit in hmask
// (bit 4*half + s of hmask[l]); a clear high bit means the value is 4 lower.
void deq_q3_k(const BlockQ3_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = h2f(b[i].d);
    const uint8_t* q = b[i].qs;
    int g = 0;
    for (int half = 0; half < 2; ++half, q += 32) {
      for (int s = 0; s < 4; ++s) {
        const uint8_t m = static_cast<uint8_t>(1u << (4 * half + s));
        for (int k = 0; k < 2; ++k, ++g) {
          const float dl = d * static_cast<float>(q3k_scale(g, b[i].scales));
          for (int l = 16 * k; l < 16 * k + 16; ++l) {
            const int v = ((q[l] >> (2 * s)) & 3) - ((b[i].hmask[l] & m) ? 0 : 4);
            *y++ = dl * static_cast<float>(v);
          }
        }
      }
    }
  }
}

// Q4_K: 8 groups of 32; chunk c (64 elements) uses qs[32c..32c+32): low nibbles are group 2c,
// high nibbles group 2c+1. x = d*sc*q - dmin*m.
void deq_q4_k(const BlockQ4_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = h2f(b[i].d), dmin = h2f(b[i].dmin);
    const uint8_t* q = b[i].qs;
    for (int c = 0; c < 4; ++c, q += 32) {
      uint8_t sc, m;
      k_scale_min(2 * c, b[i].scales, &sc, &m);
      const float d1 = d * sc, m1 = dmin * m;
      k_scale_min(2 * c + 1, b[i].scales, &sc, &m);
      const float d2 = d * sc, m2 = dmin * m;
      for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0xF) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
    }
  }
}

// Q5_K: as Q4_K plus a fifth bit: bit 2c of qh[l] for group 2c, bit 2c+1 for group 2c+1.
void deq_q5_k(const BlockQ5_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = h2f(b[i].d), dmin = h2f(b[i].dmin);
    const uint8_t* q = b[i].qs;
    for (int c = 0; c < 4; ++c, q += 32) {
      uint8_t sc, m;
      k_scale_min(2 * c, b[i].scales, &sc, &m);
      const float d1 = d * sc, m1 = dmin * m;
      k_scale_min(2 * c + 1, b[i].scales, &sc, &m);
      const float d2 = d * sc, m2 = dmin * m;
      for (int l = 0; l < 32; ++l)
        *y++ = d1 * static_cast<float>((q[l] & 0xF) + (((b[i].qh[l] >> (2 * c)) & 1) << 4)) - m1;
      for (int l = 0; l < 32; ++l)
        *y++ = d2 * static_cast<float>((q[l] >> 4) + (((b[i].qh[l] >> (2 * c + 1)) & 1) << 4)) - m2;
    }
  }
}

// Q6_K: 16 groups of 16 with int8 scales; per 128-half, ql (64 bytes) gives the low nibbles and
// qh (32 bytes) two high bits for each of the four 32-element quarters; value - 32.
void deq_q6_k(const BlockQ6_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = h2f(b[i].d);
    const uint8_t* ql = b[i].ql;
    const uint8_t* qh = b[i].qh;
    const int8_t* sc = b[i].scales;
    for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sc += 8, y += 128) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | ((qh[l] & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = d * static_cast<float>(sc[is + 0]) * static_cast<float>(q1);
        y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
        y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
        y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
      }
    }
  }
}

}  // namespace

void dequantize_row(DType type, const void* src, float* dst, int64_t n) {
  const DTypeInfo& info = dtype_info(type);
  NT_CHECK(n % info.block_size == 0);
  const int64_t nb = n / info.block_size;
  switch (type) {
    case DType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * 4); return;
    case DType::F16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(s[i]);
      return;
    }
    case DType::BF16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(s[i]);
      return;
    }
    case DType::Q4_0: deq_q4_0(static_cast<const BlockQ4_0*>(src), dst, nb); return;
    case DType::Q4_1: deq_q4_1(static_cast<const BlockQ4_1*>(src), dst, nb); return;
    case DType::Q5_0: deq_q5_0(static_cast<const BlockQ5_0*>(src), dst, nb); return;
    case DType::Q5_1: deq_q5_1(static_cast<const BlockQ5_1*>(src), dst, nb); return;
    case DType::Q8_0: deq_q8_0(static_cast<const BlockQ8_0*>(src), dst, nb); return;
    case DType::Q2_K: deq_q2_k(static_cast<const BlockQ2_K*>(src), dst, nb); return;
    case DType::Q3_K: deq_q3_k(static_cast<const BlockQ3_K*>(src), dst, nb); return;
    case DType::Q4_K: deq_q4_k(static_cast<const BlockQ4_K*>(src), dst, nb); return;
    case DType::Q5_K: deq_q5_k(static_cast<const BlockQ5_K*>(src), dst, nb); return;
    case DType::Q6_K: deq_q6_k(static_cast<const BlockQ6_K*>(src), dst, nb); return;
    default: NT_CHECK(false && "dequantize_row: unsupported type");
  }
}

}  // namespace nt

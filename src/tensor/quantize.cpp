// tensor/quantize.cpp — the quantize_row dispatcher and the 32-element block formats
// (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) plus F16/BF16. K-quants are in quantize_k.cpp.
#include "tensor/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/check.h"
#include "tensor/fp16.h"
#include "tensor/nearest_int.h"
#include "tensor/quant_blocks.h"
#include "tensor/quantize_k.h"

namespace nt {

namespace {

// Symmetric block: x ~ d * (q - zero), q in [0, 2*zero - 1]. Tries scales around amax / zero
// (sign taken from the largest-magnitude value, so the extreme lands on -zero exactly) and keeps
// the one with the least squared error. Writes q into `q`, returns d.
float quantize_sym_block(const float* x, int n, int zero, uint8_t* q, QuantEffort effort) {
  float amax = 0, vmax = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > amax) { amax = std::fabs(x[i]); vmax = x[i]; }
  if (amax == 0) {
    for (int i = 0; i < n; ++i) q[i] = static_cast<uint8_t>(zero);
    return 0;
  }
  const int qmax = 2 * zero - 1;
  float best_d = 0, best_err = INFINITY;
  const int n_try = effort == QuantEffort::kBest ? 9 : 1;
  for (int t = 0; t < n_try; ++t) {
    // t = 0 maps vmax to -zero; others stretch the grid slightly so more values land near levels
    const float d = vmax / -(static_cast<float>(zero) - 0.125f * static_cast<float>(t));
    const float id = 1.0f / d;
    float err = 0;
    for (int i = 0; i < n; ++i) {
      int v = std::clamp(nearest_int(x[i] * id) + zero, 0, qmax);
      float e = x[i] - d * static_cast<float>(v - zero);
      err += e * e;
    }
    if (err < best_err) { best_err = err; best_d = d; }
  }
  // store with the fp16-rounded scale so the rounding sees the scale the decoder uses
  best_d = fp16_to_fp32(fp32_to_fp16(best_d));
  const float id = best_d != 0 ? 1.0f / best_d : 0;
  for (int i = 0; i < n; ++i) q[i] = static_cast<uint8_t>(std::clamp(nearest_int(x[i] * id) + zero, 0, qmax));
  return best_d;
}

// Asymmetric block: x ~ d * q + m, q in [0, qmax].
void quantize_asym_block(const float* x, int n, int qmax, uint8_t* q, float& d_out, float& m_out) {
  float lo = x[0], hi = x[0];
  for (int i = 1; i < n; ++i) { lo = std::min(lo, x[i]); hi = std::max(hi, x[i]); }
  float d = (hi - lo) / static_cast<float>(qmax);
  d = fp16_to_fp32(fp32_to_fp16(d));
  const float m = fp16_to_fp32(fp32_to_fp16(lo));
  const float id = d != 0 ? 1.0f / d : 0;
  for (int i = 0; i < n; ++i) q[i] = static_cast<uint8_t>(std::clamp(nearest_int((x[i] - m) * id), 0, qmax));
  d_out = d;
  m_out = m;
}

void pack_nibbles(const uint8_t* q, uint8_t* qs) {  // element j low nibble, j + 16 high nibble
  for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>((q[j] & 0xF) | ((q[j + 16] & 0xF) << 4));
}
uint32_t high_bits(const uint8_t* q) {  // bit 4 of each of the 32 quants
  uint32_t h = 0;
  for (int j = 0; j < 32; ++j) h |= static_cast<uint32_t>((q[j] >> 4) & 1) << j;
  return h;
}

void row_q4_0(const float* x, BlockQ4_0* y, int64_t nb, QuantEffort e) {
  uint8_t q[32];
  for (int64_t b = 0; b < nb; ++b, x += 32) {
    y[b].d = fp32_to_fp16(quantize_sym_block(x, 32, 8, q, e));
    pack_nibbles(q, y[b].qs);
  }
}
void row_q5_0(const float* x, BlockQ5_0* y, int64_t nb, QuantEffort e) {
  uint8_t q[32];
  for (int64_t b = 0; b < nb; ++b, x += 32) {
    y[b].d = fp32_to_fp16(quantize_sym_block(x, 32, 16, q, e));
    pack_nibbles(q, y[b].qs);
    uint32_t h = high_bits(q);
    std::memcpy(y[b].qh, &h, 4);
  }
}
void row_q4_1(const float* x, BlockQ4_1* y, int64_t nb) {
  uint8_t q[32];
  for (int64_t b = 0; b < nb; ++b, x += 32) {
    float d, m;
    quantize_asym_block(x, 32, 15, q, d, m);
    y[b].d = fp32_to_fp16(d);
    y[b].m = fp32_to_fp16(m);
    pack_nibbles(q, y[b].qs);
  }
}
void row_q5_1(const float* x, BlockQ5_1* y, int64_t nb) {
  uint8_t q[32];
  for (int64_t b = 0; b < nb; ++b, x += 32) {
    float d, m;
    quantize_asym_block(x, 32, 31, q, d, m);
    y[b].d = fp32_to_fp16(d);
    y[b].m = fp32_to_fp16(m);
    pack_nibbles(q, y[b].qs);
    uint32_t h = high_bits(q);
    std::memcpy(y[b].qh, &h, 4);
  }
}
void row_q8_0(const float* x, BlockQ8_0* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b, x += 32) {
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0 ? 1.0f / d : 0;
    y[b].d = fp32_to_fp16(d);
    for (int j = 0; j < 32; ++j) y[b].qs[j] = static_cast<int8_t>(std::clamp(nearest_int(x[j] * id), -127, 127));
  }
}

}  // namespace

bool can_quantize(DType type) {
  switch (type) {
    case DType::F32: case DType::F16: case DType::BF16: case DType::Q4_0: case DType::Q4_1:
    case DType::Q5_0: case DType::Q5_1: case DType::Q8_0: case DType::Q4_K: case DType::Q5_K:
    case DType::Q6_K:
      return true;
    default:
      return false;
  }
}

void quantize_row(DType type, const float* src, void* dst, int64_t n, QuantEffort effort) {
  NT_CHECK(can_quantize(type));
  const DTypeInfo& info = dtype_info(type);
  NT_CHECK(n % info.block_size == 0);
  const int64_t nb = n / info.block_size;
  switch (type) {
    case DType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * 4); break;
    case DType::F16: {
      auto* y = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) y[i] = fp32_to_fp16(src[i]);
      break;
    }
    case DType::BF16: {
      auto* y = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) y[i] = fp32_to_bf16(src[i]);
      break;
    }
    case DType::Q4_0: row_q4_0(src, static_cast<BlockQ4_0*>(dst), nb, effort); break;
    case DType::Q4_1: row_q4_1(src, static_cast<BlockQ4_1*>(dst), nb); break;
    case DType::Q5_0: row_q5_0(src, static_cast<BlockQ5_0*>(dst), nb, effort); break;
    case DType::Q5_1: row_q5_1(src, static_cast<BlockQ5_1*>(dst), nb); break;
    case DType::Q8_0: row_q8_0(src, static_cast<BlockQ8_0*>(dst), nb); break;
    case DType::Q4_K: quantize_row_q4_k(src, static_cast<BlockQ4_K*>(dst), nb, effort); break;
    case DType::Q5_K: quantize_row_q5_k(src, static_cast<BlockQ5_K*>(dst), nb, effort); break;
    case DType::Q6_K: quantize_row_q6_k(src, static_cast<BlockQ6_K*>(dst), nb, effort); break;
    default: NT_CHECK(false && "unreachable");
  }
}

}  // namespace nt

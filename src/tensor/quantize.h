// tensor/quantize.h — reference quantizers: rows of float to the GGUF block formats.
// Owns: float -> F16/BF16/Q4_0/Q4_1/Q5_0/Q5_1/Q8_0/Q4_K/Q5_K/Q6_K encoding, including the scale
// searches that make the low-bit formats accurate. Must not know: models, files, tensor names
// (which type a tensor gets is the model layer's quant_mix).
//
// Decoding is tensor/dequant.h; quantize then dequantize gives the rounding error measured in
// tests/tensor/quantize_test.cpp.
#pragma once

#include <cstdint>

#include "tensor/dtype.h"

namespace nt {

enum class QuantEffort {
  kBest,  // full scale/min search (quantize)
  kFast,  // one candidate per block (synth: random weights, speed over accuracy)
};

// True when quantize_row can produce `type`.
bool can_quantize(DType type);

// Encodes n floats (n a multiple of the type's block size) into dtype_row_bytes(type, n) bytes.
// Deterministic: the same input always gives the same bytes. NT_CHECKs can_quantize(type).
void quantize_row(DType type, const float* src, void* dst, int64_t n,
                  QuantEffort effort = QuantEffort::kBest);

}  // namespace nt

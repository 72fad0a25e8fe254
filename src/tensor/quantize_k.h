// tensor/quantize_k.h — internal: the K-quant row encoders behind quantize_row (quantize.h).
// Must not know: anything outside the block formats.
#pragma once

#include <cstdint>

#include "tensor/quant_blocks.h"
#include "tensor/quantize.h"

namespace nt {

void quantize_row_q4_k(const float* x, BlockQ4_K* y, int64_t nb, QuantEffort effort);
void quantize_row_q5_k(const float* x, BlockQ5_K* y, int64_t nb, QuantEffort effort);
void quantize_row_q6_k(const float* x, BlockQ6_K* y, int64_t nb, QuantEffort effort);

}  // namespace nt

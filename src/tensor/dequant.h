// tensor/dequant.h — scalar reference dequantization of one row of any supported tensor type,
// exactly as GGUF defines each block layout (see quant_blocks.h). This is the test oracle for the
// SIMD kernels and the fallback for code that needs plain floats.
// Must not know: models, files, SIMD.
#pragma once

#include <cstdint>

#include "tensor/dtype.h"

namespace nt {

// dst[0..n) = the values stored in src (n elements of `type`; n a multiple of the block size).
// type must satisfy dtype_supported(type) (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K,
// Q3_K, Q4_K, Q5_K, Q6_K); anything else is a programmer error (NT_CHECK).
void dequantize_row(DType type, const void* src, float* dst, int64_t n);

// The 6-bit (scale, min) pair j (0..7) of a Q4_K / Q5_K super-block's packed scales[12].
inline void k_scale_min(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// The signed 6-bit scale i (0..15) of a Q3_K super-block's packed scales[12] (value - 32).
inline int q3k_scale(int i, const uint8_t* s) {
  const int lo = i < 8 ? (s[i] & 0xF) : (s[i - 8] >> 4);
  const int hi = (s[8 + (i % 4)] >> (2 * (i / 4))) & 3;
  return (lo | (hi << 4)) - 32;
}

}  // namespace nt

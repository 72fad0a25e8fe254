// kernels/kernels_internal.h — what the dispatcher (matmul.cpp, attention.cpp) sees of the
// ISA-specific translation units (*_avx2.cpp, *_avx512.cpp). Never call an ISA function on a CPU
// without that ISA: go through simd_level().
#pragma once

#include <cstdint>

#include "kernels/kernels.h"

namespace nt::detail {

// Each returns false when it has no kernel for w.type (the caller falls back to a lower level).
bool matmul_avx512(const MatView& w, const float* x, int64_t ldx, float* y, int64_t ldy, int64_t n_tokens,
                   ThreadPool& pool);
bool matmul_avx2(const MatView& w, const float* x, int64_t ldx, float* y, int64_t ldy, int64_t n_tokens,
                 ThreadPool& pool);
void matmul_scalar(const MatView& w, const float* x, int64_t ldx, float* y, int64_t ldy, int64_t n_tokens,
                   ThreadPool& pool);

// f32 dot product of a row stored as `type` (F32 / F16 / Q8_0 for KV rows) with f32 q, and
// out += p * row. n a multiple of 32 for Q8_0.
struct KvRowOps {
  float (*dot)(DType type, const uint8_t* row, const float* q, int n);
  void (*axpy)(DType type, const uint8_t* row, float p, float* out, int n);
};
KvRowOps kv_row_ops_scalar();
KvRowOps kv_row_ops_avx2();
KvRowOps kv_row_ops_avx512();

// Splits [0, n) into `parts` contiguous ranges; range i is [split_begin(n, parts, i), ...(i + 1)).
inline int64_t split_begin(int64_t n, int64_t parts, int64_t i) { return n * i / parts; }

}  // namespace nt::detail

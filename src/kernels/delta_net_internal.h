// kernels/delta_net_internal.h — what delta_net.cpp dispatches to in the ISA units
// (delta_net_avx2.cpp, delta_net_avx512.cpp): the inner loops of the delta rule and the short
// convolution. The scalar versions (delta_net.cpp) are the references.
#pragma once

#include <cstdint>

namespace nt::detail {

struct DeltaNetOps {
  // One recurrence step of one head: S [dk][dv] (rows dv apart), decay = exp(g).
  void (*step)(float* S, int dk, int dv, const float* q, const float* k, const float* v, float decay, float beta,
               float scale, float* o) = nullptr;
  // C[r][j] = init + sum over i ascending of A[r][i] * B[i][j], r < m, j < n, i < kk;
  // init = c_scale * C[r][j] when accumulate, else 0. Row-major with strides lda / ldb / ldc.
  void (*gemm)(const float* A, int64_t lda, const float* B, int64_t ldb, float* C, int64_t ldc, int m, int n, int kk,
               bool accumulate, float c_scale) = nullptr;
  // The convolution without its SiLU for channels [c0, c1) (short_conv_silu's x, w, state, y),
  // taps summed in order with separate multiply and add: bit-identical at every level.
  void (*conv)(const float* x, int64_t ldx, int64_t n_tokens, const float* w, int kernel, int64_t n_channels,
               int64_t c0, int64_t c1, float* state, float* y, int64_t ldy) = nullptr;
};

const DeltaNetOps& delta_net_ops_scalar();
const DeltaNetOps& delta_net_ops_avx2();
const DeltaNetOps& delta_net_ops_avx512();
// The ops of simd_level().
const DeltaNetOps& delta_net_ops_current();

}  // namespace nt::detail

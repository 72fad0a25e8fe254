// kernels/matmul.cpp — the reference matmul and the dispatcher to the SIMD levels, plus the scalar
// level (dequantize a weight row once, dot it with every token in a fixed float order).
#include <algorithm>
#include <vector>

#include "core/check.h"
#include "kernels/cpu_features.h"
#include "kernels/kernels.h"
#include "kernels/kernels_internal.h"
#include "tensor/dequant.h"

namespace nt {

void matmul_ref(const MatView& w, const float* x, int64_t ldx, float* y, int64_t ldy, int64_t n_tokens) {
  NT_CHECK(dtype_supported(w.type));
  std::vector<float> row(static_cast<size_t>(w.n_cols));
  for (int64_t r = 0; r < w.n_rows; ++r) {
    dequantize_row(w.type, w.data + r * w.row_bytes, row.data(), w.n_cols);
    for (int64_t t = 0; t < n_tokens; ++t) {
      const float* xt = x + t * ldx;
      double acc = 0;
      for (int64_t i = 0; i < w.n_cols; ++i) acc += static_cast<double>(row[i]) * xt[i];
      y[t * ldy + r] = static_cast<float>(acc);
    }
  }
}

namespace detail {

void matmul_scalar(const MatView& w, const float* x, int64_t ldx, float* y, int64_t ldy, int64_t n_tokens,
                   ThreadPool& pool) {
  const int64_t n_tasks = std::min<int64_t>(w.n_rows, 4 * pool.n_threads());
  pool.run(static_cast<int>(n_tasks), [&](int task, int) {
    std::vector<float> row(static_cast<size_t>(w.n_cols));
    const int64_t r0 = split_begin(w.n_rows, n_tasks, task), r1 = split_begin(w.n_rows, n_tasks, task + 1);
    for (int64_t r = r0; r < r1; ++r) {
      dequantize_row(w.type, w.data + r * w.row_bytes, row.data(), w.n_cols);
      for (int64_t t = 0; t < n_tokens; ++t) {
        const float* xt = x + t * ldx;
        float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int64_t i = 0;
        for (; i + 8 <= w.n_cols; i += 8)
          for (int l = 0; l < 8; ++l) acc[l] += row[i + l] * xt[i + l];
        for (; i < w.n_cols; ++i) acc[i & 7] += row[i] * xt[i];
        y[t * ldy + r] = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
      }
    }
  });
}

}  // namespace detail

void matmul(const MatView& w, const float* x, int64_t ldx, float* y, int64_t ldy, int64_t n_tokens,
            ThreadPool& pool) {
  NT_CHECK(dtype_supported(w.type));
  NT_CHECK(w.n_cols % dtype_info(w.type).block_size == 0);
  if (n_tokens <= 0 || w.n_rows <= 0) return;
  const SimdLevel level = simd_level();
  if (level >= SimdLevel::Avx512 && detail::matmul_avx512(w, x, ldx, y, ldy, n_tokens, pool)) return;
  if (level >= SimdLevel::Avx2 && detail::matmul_avx2(w, x, ldx, y, ldy, n_tokens, pool)) return;
  detail::matmul_scalar(w, x, ldx, y, ldy, n_tokens, pool);
}

}  // namespace nt

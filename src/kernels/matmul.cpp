// kernels/matmul.cpp — the reference matmul, the scalar level, and the dispatcher that quantizes
// activations once and splits the output into rectangles (row chunks x token blocks) over the pool.
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

namespace {

int64_t split_at(int64_t n, int64_t parts, int64_t i) { return n * i / parts; }

// Scalar level: dequantize each weight row once, dot it with every token in a fixed float order.
void matmul_scalar(const MatView& w, const float* x, int64_t ldx, float* y, int64_t ldy, int64_t n_tokens,
                   ThreadPool& pool) {
  const int64_t n_tasks = std::min<int64_t>(w.n_rows, 4 * pool.n_threads());
  pool.run(static_cast<int>(n_tasks), [&](int task, int) {
    std::vector<float> row(static_cast<size_t>(w.n_cols));
    const int64_t r0 = split_at(w.n_rows, n_tasks, task), r1 = split_at(w.n_rows, n_tasks, task + 1);
    for (int64_t r = r0; r < r1; ++r) {
      dequantize_row(w.type, w.data + r * w.row_bytes, row.data(), w.n_cols);
      for (int64_t t = 0; t < n_tokens; ++t) {
        const float* xt = x + t * ldx;
        float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int64_t i = 0;
        for (; i + 8 <= w.n_cols; i += 8)
          for (int l = 0; l < 8; ++l) acc[l] += row[i + l] * xt[i + l];
        for (int l = 0; i < w.n_cols; ++i, ++l) acc[l] += row[i] * xt[i];
        y[t * ldy + r] = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
      }
    }
  });
}

// Token block: the quantized activations of this many tokens stay in L2 while a row chunk's
// weights stream through L1.
constexpr int64_t kTokenBlock = 64;

void run_kernel(const detail::MatmulKernel& k, const MatView& w, const float* x, int64_t ldx, float* y, int64_t ldy,
                int64_t n_tokens, ThreadPool& pool) {
  thread_local detail::XQuant xq;
  detail::MatArgs a{w, x, ldx, nullptr, y, ldy};
  if (k.quantized_x) {
    detail::quantize_x(x, ldx, w.n_cols, n_tokens, k.x_offset, k.x_quad, xq, pool);
    a.xq = &xq;
  }
  const int64_t n_tb0 = (n_tokens + kTokenBlock - 1) / kTokenBlock;
  const int64_t tb = ((n_tokens + n_tb0 - 1) / n_tb0 + 11) / 12 * 12;
  const int64_t n_tb = (n_tokens + tb - 1) / tb;  // balanced, whole tiles of 3 and 4
  // Row chunks (multiples of 4 rows): enough tasks for dynamic balance, small enough for L2 reuse.
  const int64_t want_tasks = 4 * static_cast<int64_t>(pool.n_threads());
  const int64_t n_rc_min = (want_tasks + n_tb - 1) / n_tb;
  int64_t rc = (w.n_rows + n_rc_min - 1) / n_rc_min;
  if (n_tokens > 1) rc = std::min<int64_t>(rc, 60);
  rc = std::max<int64_t>(12, (rc + 11) / 12 * 12);  // whole tiles of 2, 3 and 4 rows
  const int64_t n_rc = (w.n_rows + rc - 1) / rc;
  if (n_rc * n_tb == 1) {
    k.rect(a, 0, w.n_rows, 0, n_tokens);
    return;
  }
  pool.run(static_cast<int>(n_rc * n_tb), [&](int task, int) {
    const int64_t ri = task / n_tb, ti = task % n_tb;
    const int64_t r0 = ri * rc, r1 = std::min(w.n_rows, r0 + rc);
    const int64_t t0 = ti * tb, t1 = std::min(n_tokens, t0 + tb);
    k.rect(a, r0, r1, t0, t1);
  });
}

}  // namespace

void matmul(const MatView& w, const float* x, int64_t ldx, float* y, int64_t ldy, int64_t n_tokens,
            ThreadPool& pool) {
  NT_CHECK(dtype_supported(w.type));
  NT_CHECK(w.n_cols % dtype_info(w.type).block_size == 0);
  if (n_tokens <= 0 || w.n_rows <= 0) return;
  const SimdLevel level = simd_level();
  const detail::MatmulKernel* k = nullptr;
  if (level >= SimdLevel::Avx512) k = detail::matmul_kernel_avx512(w.type);
  if (!k && level >= SimdLevel::Avx2) k = detail::matmul_kernel_avx2(w.type);
  if (k) run_kernel(*k, w, x, ldx, y, ldy, n_tokens, pool);
  else matmul_scalar(w, x, ldx, y, ldy, n_tokens, pool);
}

}  // namespace nt

// kernels/delta_net_avx2.cpp — AVX2 inner loops of the Gated DeltaNet kernels
// (delta_net_internal.h), the AVX-512 unit's structure at 8 lanes: the recurrence step over strips
// of value columns, a register-blocked gemm and the short convolution. Ragged edges use
// maskload / maskstore; each output element sees the same operations wherever it falls.
#include "kernels/delta_net_internal.h"
#include "kernels/simd_avx2.h"

namespace nt::detail {
namespace {

// All-ones in the lanes below rem.
inline __m256i lane_mask(int64_t rem) {
  const int r = rem >= 8 ? 8 : rem <= 0 ? 0 : static_cast<int>(rem);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(r), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline __m256 mload(const float* p, __m256i m) { return _mm256_maskload_ps(p, m); }
inline void mstore(float* p, __m256i m, __m256 v) { _mm256_maskstore_ps(p, m, v); }

template <int NV>
void step_strip(float* S, int dk, int dv, int j0, const float* q, const float* k, const float* v, float decay,
                float beta, float scale, float* o) {
  __m256i m[NV];
  __m256 sk[NV], ov[NV];
  for (int u = 0; u < NV; ++u) {
    m[u] = lane_mask(dv - j0 - 8 * u);
    sk[u] = _mm256_setzero_ps();
    ov[u] = _mm256_setzero_ps();
  }
  const __m256 dec = _mm256_set1_ps(decay);
  for (int i = 0; i < dk; ++i) {
    const float* row = S + static_cast<int64_t>(i) * dv + j0;
    const __m256 kb = _mm256_set1_ps(k[i]);
    for (int u = 0; u < NV; ++u) sk[u] = _mm256_fmadd_ps(kb, _mm256_mul_ps(dec, mload(row + 8 * u, m[u])), sk[u]);
  }
  const __m256 bv = _mm256_set1_ps(beta);
  for (int u = 0; u < NV; ++u) sk[u] = _mm256_mul_ps(_mm256_sub_ps(mload(v + j0 + 8 * u, m[u]), sk[u]), bv);  // d
  for (int i = 0; i < dk; ++i) {
    float* row = S + static_cast<int64_t>(i) * dv + j0;
    const __m256 kb = _mm256_set1_ps(k[i]), qb = _mm256_set1_ps(q[i]);
    for (int u = 0; u < NV; ++u) {
      const __m256 s = _mm256_fmadd_ps(kb, sk[u], _mm256_mul_ps(dec, mload(row + 8 * u, m[u])));
      mstore(row + 8 * u, m[u], s);
      ov[u] = _mm256_fmadd_ps(qb, s, ov[u]);
    }
  }
  const __m256 sc = _mm256_set1_ps(scale);
  for (int u = 0; u < NV; ++u) mstore(o + j0 + 8 * u, m[u], _mm256_mul_ps(ov[u], sc));
}

void step_avx2(float* S, int dk, int dv, const float* q, const float* k, const float* v, float decay, float beta,
               float scale, float* o) {
  for (int j0 = 0; j0 < dv; j0 += 32) {
    const int rem = dv - j0;
    if (rem > 16) step_strip<4>(S, dk, dv, j0, q, k, v, decay, beta, scale, o);
    else if (rem > 8) step_strip<2>(S, dk, dv, j0, q, k, v, decay, beta, scale, o);
    else step_strip<1>(S, dk, dv, j0, q, k, v, decay, beta, scale, o);
  }
}

// MR rows x 2 vectors of C.
template <int MR>
void gemm_block(const float* A, int64_t lda, const float* B, int64_t ldb, float* C, int64_t ldc, int j0, int n, int kk,
                bool accumulate, float c_scale) {
  __m256i m[2];
  __m256 acc[MR][2];
  const __m256 cs = _mm256_set1_ps(c_scale);
  for (int u = 0; u < 2; ++u) m[u] = lane_mask(n - j0 - 8 * u);
  for (int r = 0; r < MR; ++r)
    for (int u = 0; u < 2; ++u)
      acc[r][u] = accumulate ? _mm256_mul_ps(cs, mload(C + r * ldc + j0 + 8 * u, m[u])) : _mm256_setzero_ps();
  for (int i = 0; i < kk; ++i) {
    const float* b = B + i * ldb + j0;
    const __m256 b0 = mload(b, m[0]), b1 = mload(b + 8, m[1]);
    for (int r = 0; r < MR; ++r) {
      const __m256 a = _mm256_set1_ps(A[r * lda + i]);
      acc[r][0] = _mm256_fmadd_ps(a, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(a, b1, acc[r][1]);
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int u = 0; u < 2; ++u) mstore(C + r * ldc + j0 + 8 * u, m[u], acc[r][u]);
}

void gemm_avx2(const float* A, int64_t lda, const float* B, int64_t ldb, float* C, int64_t ldc, int m, int n, int kk,
               bool accumulate, float c_scale) {
  for (int j0 = 0; j0 < n; j0 += 16) {
    int r = 0;
    for (; r + 4 <= m; r += 4) gemm_block<4>(A + r * lda, lda, B, ldb, C + r * ldc, ldc, j0, n, kk, accumulate, c_scale);
    for (; r < m; ++r) gemm_block<1>(A + r * lda, lda, B, ldb, C + r * ldc, ldc, j0, n, kk, accumulate, c_scale);
  }
}

void conv_avx2(const float* x, int64_t ldx, int64_t n_tokens, const float* w, int kernel, int64_t n_channels,
               int64_t c0, int64_t c1, float* state, float* y, int64_t ldy) {
  const int64_t ns = kernel - 1;
  auto win = [&](int64_t p) { return p < ns ? state + p * n_channels : x + (p - ns) * ldx; };
  for (int64_t c = c0; c < c1; c += 8) {
    const __m256i m = lane_mask(c1 - c);
    for (int64_t t = 0; t < n_tokens; ++t) {
      __m256 acc = _mm256_setzero_ps();
      for (int i = 0; i < kernel; ++i)
        acc = _mm256_add_ps(acc, _mm256_mul_ps(mload(w + i * n_channels + c, m), mload(win(t + i) + c, m)));
      mstore(y + t * ldy + c, m, acc);
    }
    for (int64_t r = 0; r < ns; ++r) mstore(state + r * n_channels + c, m, mload(win(n_tokens + r) + c, m));
  }
}

}  // namespace

const DeltaNetOps& delta_net_ops_avx2() {
  static const DeltaNetOps ops{step_avx2, gemm_avx2, conv_avx2};
  return ops;
}

}  // namespace nt::detail

// kernels/delta_net_avx512.cpp — AVX-512 inner loops of the Gated DeltaNet kernels
// (delta_net_internal.h): the recurrence step over strips of value columns, a register-blocked
// gemm and the short convolution. Ragged edges use masked loads and stores; each output
// element sees the same operations in the same order whatever the strip or block it falls in.
#include "kernels/delta_net_internal.h"
#include "kernels/simd_avx512.h"

namespace nt::detail {
namespace {

inline __mmask16 lane_mask(int64_t rem) {
  return rem >= 16 ? static_cast<__mmask16>(0xFFFF) : rem <= 0 ? static_cast<__mmask16>(0)
                                                                : static_cast<__mmask16>((1u << rem) - 1);
}

// Columns [j0, j0 + 16 NV) of one step (masks cut them at dv): first S^T k over the decayed rows,
// then the rows rewritten (decay, plus k_i d) while S^T q accumulates.
template <int NV>
void step_strip(float* S, int dk, int dv, int j0, const float* q, const float* k, const float* v, float decay,
                float beta, float scale, float* o) {
  __mmask16 m[NV];
  __m512 sk[NV], ov[NV];
  for (int u = 0; u < NV; ++u) {
    m[u] = lane_mask(dv - j0 - 16 * u);
    sk[u] = _mm512_setzero_ps();
    ov[u] = _mm512_setzero_ps();
  }
  const __m512 dec = _mm512_set1_ps(decay);
  for (int i = 0; i < dk; ++i) {
    const float* row = S + static_cast<int64_t>(i) * dv + j0;
    const __m512 kb = _mm512_set1_ps(k[i]);
    for (int u = 0; u < NV; ++u)
      sk[u] = _mm512_fmadd_ps(kb, _mm512_mul_ps(dec, _mm512_maskz_loadu_ps(m[u], row + 16 * u)), sk[u]);
  }
  const __m512 bv = _mm512_set1_ps(beta);
  for (int u = 0; u < NV; ++u)
    sk[u] = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m[u], v + j0 + 16 * u), sk[u]), bv);  // d
  for (int i = 0; i < dk; ++i) {
    float* row = S + static_cast<int64_t>(i) * dv + j0;
    const __m512 kb = _mm512_set1_ps(k[i]), qb = _mm512_set1_ps(q[i]);
    for (int u = 0; u < NV; ++u) {
      const __m512 s = _mm512_fmadd_ps(kb, sk[u], _mm512_mul_ps(dec, _mm512_maskz_loadu_ps(m[u], row + 16 * u)));
      _mm512_mask_storeu_ps(row + 16 * u, m[u], s);
      ov[u] = _mm512_fmadd_ps(qb, s, ov[u]);
    }
  }
  const __m512 sc = _mm512_set1_ps(scale);
  for (int u = 0; u < NV; ++u) _mm512_mask_storeu_ps(o + j0 + 16 * u, m[u], _mm512_mul_ps(ov[u], sc));
}

void step_avx512(float* S, int dk, int dv, const float* q, const float* k, const float* v, float decay, float beta,
                 float scale, float* o) {
  for (int j0 = 0; j0 < dv; j0 += 128) {
    const int rem = dv - j0;
    if (rem > 64) step_strip<8>(S, dk, dv, j0, q, k, v, decay, beta, scale, o);
    else if (rem > 32) step_strip<4>(S, dk, dv, j0, q, k, v, decay, beta, scale, o);
    else if (rem > 16) step_strip<2>(S, dk, dv, j0, q, k, v, decay, beta, scale, o);
    else step_strip<1>(S, dk, dv, j0, q, k, v, decay, beta, scale, o);
  }
}

// MR rows x 4 vectors of C.
template <int MR>
void gemm_block(const float* A, int64_t lda, const float* B, int64_t ldb, float* C, int64_t ldc, int j0, int n, int kk,
                bool accumulate, float c_scale) {
  __mmask16 m[4];
  __m512 acc[MR][4];
  const __m512 cs = _mm512_set1_ps(c_scale);
  for (int u = 0; u < 4; ++u) m[u] = lane_mask(n - j0 - 16 * u);
  for (int r = 0; r < MR; ++r)
    for (int u = 0; u < 4; ++u)
      acc[r][u] = accumulate ? _mm512_mul_ps(cs, _mm512_maskz_loadu_ps(m[u], C + r * ldc + j0 + 16 * u))
                             : _mm512_setzero_ps();
  for (int i = 0; i < kk; ++i) {
    const float* b = B + i * ldb + j0;
    __m512 bv[4];
    for (int u = 0; u < 4; ++u) bv[u] = _mm512_maskz_loadu_ps(m[u], b + 16 * u);
    for (int r = 0; r < MR; ++r) {
      const __m512 a = _mm512_set1_ps(A[r * lda + i]);
      for (int u = 0; u < 4; ++u) acc[r][u] = _mm512_fmadd_ps(a, bv[u], acc[r][u]);
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int u = 0; u < 4; ++u) _mm512_mask_storeu_ps(C + r * ldc + j0 + 16 * u, m[u], acc[r][u]);
}

void gemm_avx512(const float* A, int64_t lda, const float* B, int64_t ldb, float* C, int64_t ldc, int m, int n, int kk,
                 bool accumulate, float c_scale) {
  for (int j0 = 0; j0 < n; j0 += 64) {
    int r = 0;
    for (; r + 4 <= m; r += 4) gemm_block<4>(A + r * lda, lda, B, ldb, C + r * ldc, ldc, j0, n, kk, accumulate, c_scale);
    for (; r < m; ++r) gemm_block<1>(A + r * lda, lda, B, ldb, C + r * ldc, ldc, j0, n, kk, accumulate, c_scale);
  }
}

void conv_avx512(const float* x, int64_t ldx, int64_t n_tokens, const float* w, int kernel, int64_t n_channels,
                 int64_t c0, int64_t c1, float* state, float* y, int64_t ldy) {
  const int64_t ns = kernel - 1;
  auto win = [&](int64_t p) { return p < ns ? state + p * n_channels : x + (p - ns) * ldx; };
  for (int64_t c = c0; c < c1; c += 16) {
    const __mmask16 m = lane_mask(c1 - c);
    for (int64_t t = 0; t < n_tokens; ++t) {
      __m512 acc = _mm512_setzero_ps();
      for (int i = 0; i < kernel; ++i)
        acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, w + i * n_channels + c),
                                               _mm512_maskz_loadu_ps(m, win(t + i) + c)));
      _mm512_mask_storeu_ps(y + t * ldy + c, m, acc);
    }
    for (int64_t r = 0; r < ns; ++r)
      _mm512_mask_storeu_ps(state + r * n_channels + c, m, _mm512_maskz_loadu_ps(m, win(n_tokens + r) + c));
  }
}

}  // namespace

const DeltaNetOps& delta_net_ops_avx512() {
  static const DeltaNetOps ops{step_avx512, gemm_avx512, conv_avx512};
  return ops;
}

}  // namespace nt::detail

// kernels/delta_net_chunked.cpp — the gated delta rule over chunks of tokens (prefill).
//
// Within a chunk of n tokens starting from state S0, with G_t = g_1 + .. + g_t (cumulative log
// decay) and u_s = beta_s (v_s - exp(g_s) S_{s-1}^T k_s) the corrected value written at token s:
//   S_t = exp(G_t) S0 + sum_{s<=t} exp(G_t - G_s) k_s u_s^T
// so the u_s solve a unit lower-triangular system (I + A) U = beta V - diag(beta exp(G)) K S0 with
// A[t][s] = beta_t exp(G_t - G_s) (k_t . k_s) for s < t. Forward substitution gives
// W = (I + A)^-1 beta V and Kc = (I + A)^-1 diag(beta exp(G)) K, then
//   U = W - Kc S0
//   o_t = scale * (exp(G_t) S0^T q_t + sum_{s<=t} exp(G_t - G_s) (q_t . k_s) u_s)
//   S_n = exp(G_n) S0 + sum_s exp(G_n - G_s) k_s u_s^T
// Every product (K K^T, Q K^T, the rows of the substitution, those with S0 and into S_n) is the
// ISA ops' gemm; decays only enter as exp(G_t - G_s) <= 1, never as a quotient of two
// exponentials, with G_t - G_s summed directly.
#include <cmath>

#include "core/check.h"
#include "kernels/delta_net.h"
#include "kernels/delta_net_internal.h"
#include "kernels/kernels_internal.h"

namespace nt {

namespace {

struct ChunkScratch {
  float *eG, *A, *P, *E, *Kc, *U, *Y, *KgT;
};

ChunkScratch chunk_scratch(int C, int dk, int dv) {
  const size_t floats = static_cast<size_t>(C) + 3 * static_cast<size_t>(C) * C +
                        static_cast<size_t>(C) * dk * 2 + static_cast<size_t>(C) * dv * 2;
  float* p = reinterpret_cast<float*>(detail::kernel_scratch(floats * sizeof(float)));
  ChunkScratch s;
  s.eG = p;
  s.A = s.eG + C;
  s.P = s.A + static_cast<size_t>(C) * C;
  s.E = s.P + static_cast<size_t>(C) * C;
  s.Kc = s.E + static_cast<size_t>(C) * C;
  s.U = s.Kc + static_cast<size_t>(C) * dk;
  s.Y = s.U + static_cast<size_t>(C) * dv;
  s.KgT = s.Y + static_cast<size_t>(C) * dv;  // [dk][C]
  return s;
}

// One chunk of n tokens (token t of the chunk is token t0 + t of io) for v head h.
void chunk_head(const detail::DeltaNetOps& o, const DeltaNetShape& sh, const DeltaNetIo& io, int64_t t0, int n, int C,
                float* S, int h, const ChunkScratch& w) {
  const int dk = sh.head_k_dim, dv = sh.head_v_dim, hk = h % sh.n_k_heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dk));
  const float* q = io.q + t0 * io.ldq + static_cast<int64_t>(hk) * dk;
  const float* k = io.k + t0 * io.ldk + static_cast<int64_t>(hk) * dk;
  const float* v = io.v + t0 * io.ldv + static_cast<int64_t>(h) * dv;
  const float* g = io.g + t0 * io.ldg + h;
  const float* beta = io.beta + t0 * io.ldg + h;
  float* out = io.out + t0 * io.ldo + static_cast<int64_t>(h) * dv;
  auto kr = [&](int t) { return k + t * io.ldk; };

  // Exponentials go through exp_sum (the level's vector exp; its sum is not used).
  float acc = 0.0f;
  for (int t = 0; t < n; ++t) w.eG[t] = acc += g[t * io.ldg];
  detail::exp_sum(w.eG, n, 0.0f);
  // K K^T and Q K^T as products with K transposed (KgT's buffer, rewritten at the end); only their
  // lower triangles are used.
  for (int s = 0; s < n; ++s)
    for (int i = 0; i < dk; ++i) w.KgT[i * C + s] = kr(s)[i];
  o.gemm(k, io.ldk, w.KgT, C, w.A, C, n, n, dk, false, 0.0f);
  o.gemm(q, io.ldq, w.KgT, C, w.P, C, n, n, dk, false, 0.0f);
  // -A (strictly lower) and P (lower with the diagonal; the output's intra-chunk weights), weighted
  // by E[t][s] = exp(g_{s+1} + .. + g_t). Each such sum runs outwards from the diagonal: a
  // difference of two prefix sums would lose its digits when the prefix sums are large.
  for (int t = 0; t < n; ++t) {
    const float bt = beta[t * io.ldg];
    float* et = w.E + t * C;
    float d = 0.0f;
    for (int s = t - 1; s >= 0; --s) et[s] = d += g[(s + 1) * io.ldg];
    detail::exp_sum(et, t, 0.0f);
    for (int s = 0; s < t; ++s) {
      w.A[t * C + s] = -(bt * et[s] * w.A[t * C + s]);
      w.P[t * C + s] = et[s] * w.P[t * C + s];
    }
  }
  // Forward substitution, one row-times-matrix product per token: U <- W = (I + A)^-1 beta V and
  // Kc <- -(I + A)^-1 diag(beta exp(G)) K (negated, so that U = W - Kc S0 is one more product).
  for (int t = 0; t < n; ++t) {
    const float bt = beta[t * io.ldg], bk = -(bt * w.eG[t]);
    float* ut = w.U + t * dv;
    float* kct = w.Kc + t * dk;
    const float* vt = v + t * io.ldv;
    const float* kt = kr(t);
    for (int j = 0; j < dv; ++j) ut[j] = bt * vt[j];
    for (int i = 0; i < dk; ++i) kct[i] = bk * kt[i];
    if (t == 0) continue;
    o.gemm(w.A + t * C, C, w.U, dv, ut, dv, 1, dv, t, true, 1.0f);
    o.gemm(w.A + t * C, C, w.Kc, dk, kct, dk, 1, dk, t, true, 1.0f);
  }
  o.gemm(w.Kc, dk, S, dv, w.U, dv, n, dv, dk, true, 1.0f);  // U = W - Kc S0
  // Outputs: Y = Q S0, then row t = exp(G_t) Y_t + P_t U.
  o.gemm(q, io.ldq, S, dv, w.Y, dv, n, dv, dk, false, 0.0f);
  for (int t = 0; t < n; ++t) {
    float* yt = w.Y + t * dv;
    o.gemm(w.P + t * C, C, w.U, dv, yt, dv, 1, dv, t + 1, true, w.eG[t]);
    float* ot = out + t * io.ldo;
    for (int j = 0; j < dv; ++j) ot[j] = yt[j] * scale;
  }
  // State: S = exp(G_n) S0 + KgT U with KgT[i][s] = exp(g_{s+1} + .. + g_n) k_s[i].
  float* e = w.Y;  // free again
  float d = 0.0f;
  for (int s = n - 1; s >= 0; --s) {
    e[s] = d;
    if (s > 0) d += g[s * io.ldg];
  }
  detail::exp_sum(e, n, 0.0f);
  for (int s = 0; s < n; ++s) {
    const float* ks = kr(s);
    for (int i = 0; i < dk; ++i) w.KgT[i * C + s] = e[s] * ks[i];
  }
  o.gemm(w.KgT, C, w.U, dv, S, dv, dk, dv, n, true, w.eG[n - 1]);
}

}  // namespace

void delta_net_chunked(const DeltaNetShape& s, const DeltaNetIo& io, int64_t n_tokens, float* state,
                       ThreadPool& pool, int chunk) {
  NT_CHECK(s.n_k_heads > 0 && s.n_v_heads > 0 && s.n_v_heads % s.n_k_heads == 0);
  NT_CHECK(s.head_k_dim > 0 && s.head_v_dim > 0 && chunk >= 1);
  const auto& o = detail::delta_net_ops_current();
  pool.run(s.n_v_heads, [&](int h, int) {
    const ChunkScratch w = chunk_scratch(chunk, s.head_k_dim, s.head_v_dim);
    float* S = state + static_cast<int64_t>(h) * s.head_k_dim * s.head_v_dim;
    for (int64_t t0 = 0; t0 < n_tokens; t0 += chunk) {
      const int n = static_cast<int>(n_tokens - t0 < chunk ? n_tokens - t0 : chunk);
      chunk_head(o, s, io, t0, n, chunk, S, h, w);
    }
  });
}

}  // namespace nt

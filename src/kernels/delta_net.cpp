// kernels/delta_net.cpp — the Gated DeltaNet kernels' scalar references, their dispatch and the
// parallel drivers (convolution, norms, gates, decode and scan). The chunked prefill is in
// delta_net_chunked.cpp.
#include "kernels/delta_net.h"

#include <cmath>

#include "core/check.h"
#include "kernels/cpu_features.h"
#include "kernels/delta_net_internal.h"
#include "kernels/kernels.h"

namespace nt {

namespace detail {
namespace {

// The recurrence step as written in delta_net.h, one pass per operation. o holds S^T k, then d,
// then the output.
void step_scalar(float* S, int dk, int dv, const float* q, const float* k, const float* v, float decay, float beta,
                 float scale, float* o) {
  for (int i = 0; i < dk; ++i)
    for (int j = 0; j < dv; ++j) S[i * dv + j] = decay * S[i * dv + j];
  for (int j = 0; j < dv; ++j) o[j] = 0.0f;
  for (int i = 0; i < dk; ++i)
    for (int j = 0; j < dv; ++j) o[j] += k[i] * S[i * dv + j];
  for (int j = 0; j < dv; ++j) o[j] = (v[j] - o[j]) * beta;
  for (int i = 0; i < dk; ++i)
    for (int j = 0; j < dv; ++j) S[i * dv + j] += k[i] * o[j];
  for (int j = 0; j < dv; ++j) o[j] = 0.0f;
  for (int i = 0; i < dk; ++i)
    for (int j = 0; j < dv; ++j) o[j] += q[i] * S[i * dv + j];
  for (int j = 0; j < dv; ++j) o[j] *= scale;
}

void gemm_scalar(const float* A, int64_t lda, const float* B, int64_t ldb, float* C, int64_t ldc, int m, int n, int kk,
                 bool accumulate, float c_scale) {
  for (int r = 0; r < m; ++r) {
    float* c = C + r * ldc;
    for (int j = 0; j < n; ++j) c[j] = accumulate ? c_scale * c[j] : 0.0f;
    for (int i = 0; i < kk; ++i) {
      const float a = A[r * lda + i];
      const float* b = B + i * ldb;
      for (int j = 0; j < n; ++j) c[j] += a * b[j];
    }
  }
}

void conv_scalar(const float* x, int64_t ldx, int64_t n_tokens, const float* w, int kernel, int64_t n_channels,
                 int64_t c0, int64_t c1, float* state, float* y, int64_t ldy) {
  const int64_t ns = kernel - 1;
  // Row p of the window: state row p, then input row p - ns.
  auto win = [&](int64_t p) { return p < ns ? state + p * n_channels : x + (p - ns) * ldx; };
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t c = c0; c < c1; ++c) {
      float acc = 0.0f;
      for (int i = 0; i < kernel; ++i) acc += w[i * n_channels + c] * win(t + i)[c];
      y[t * ldy + c] = acc;
    }
  // Rows ascending: row r reads window row n_tokens + r >= r, not yet overwritten.
  for (int64_t r = 0; r < ns; ++r) {
    const float* src = win(n_tokens + r);
    for (int64_t c = c0; c < c1; ++c) state[r * n_channels + c] = src[c];
  }
}

}  // namespace

const DeltaNetOps& delta_net_ops_scalar() {
  static const DeltaNetOps ops{step_scalar, gemm_scalar, conv_scalar};
  return ops;
}

const DeltaNetOps& delta_net_ops_current() {
  switch (simd_level()) {
    case SimdLevel::Avx512: return delta_net_ops_avx512();
    case SimdLevel::Avx2: return delta_net_ops_avx2();
    default: return delta_net_ops_scalar();
  }
}

}  // namespace detail

namespace {

const detail::DeltaNetOps& ops() { return detail::delta_net_ops_current(); }

constexpr int64_t kConvBlock = 256;  // channels per convolution task

// SiLU of y's rows [n_rows] over channels [c0, c1) through the dispatched silu_mul (times ones).
void silu_rows(float* y, int64_t ldy, int64_t n_rows, int64_t c0, int64_t c1) {
  static const struct Ones {
    float v[kConvBlock];
    Ones() {
      for (float& f : v) f = 1.0f;
    }
  } ones;
  for (int64_t t = 0; t < n_rows; ++t)
    for (int64_t c = c0; c < c1; c += kConvBlock) {
      const int64_t n = c1 - c < kConvBlock ? c1 - c : kConvBlock;
      silu_mul(y + t * ldy + c, ones.v, y + t * ldy + c, n);
    }
}

void check_shape(const DeltaNetShape& s) {
  NT_CHECK(s.n_k_heads > 0 && s.n_v_heads > 0 && s.n_v_heads % s.n_k_heads == 0);
  NT_CHECK(s.head_k_dim > 0 && s.head_v_dim > 0);
}

}  // namespace

int64_t delta_net_state_floats(const DeltaNetShape& s) {
  return static_cast<int64_t>(s.n_v_heads) * s.head_k_dim * s.head_v_dim;
}

void short_conv_weights_time_major(const float* w_gguf, int kernel, int64_t n_channels, float* out) {
  for (int64_t c = 0; c < n_channels; ++c)
    for (int i = 0; i < kernel; ++i) out[i * n_channels + c] = w_gguf[c * kernel + i];
}

void short_conv_silu_ref(const float* x, int64_t ldx, int64_t n_tokens, const float* w, int kernel,
                         int64_t n_channels, float* state, float* y, int64_t ldy) {
  NT_CHECK(kernel >= 1 && n_tokens >= 0);
  detail::delta_net_ops_scalar().conv(x, ldx, n_tokens, w, kernel, n_channels, 0, n_channels, state, y, ldy);
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t c = 0; c < n_channels; ++c) {
      const float g = y[t * ldy + c];
      y[t * ldy + c] = g / (1.0f + std::exp(-g));
    }
}

void short_conv_silu(const float* x, int64_t ldx, int64_t n_tokens, const float* w, int kernel, int64_t n_channels,
                     float* state, float* y, int64_t ldy, ThreadPool& pool) {
  NT_CHECK(kernel >= 1 && n_tokens >= 0);
  const auto& o = ops();
  const int n_blocks = static_cast<int>((n_channels + kConvBlock - 1) / kConvBlock);
  pool.run(n_blocks, [&](int b, int) {
    const int64_t c0 = b * kConvBlock, c1 = c0 + kConvBlock < n_channels ? c0 + kConvBlock : n_channels;
    o.conv(x, ldx, n_tokens, w, kernel, n_channels, c0, c1, state, y, ldy);
    silu_rows(y, ldy, n_tokens, c0, c1);
  });
}

void short_conv_silu_decode(const float* x, int64_t ldx, int n_seqs, const float* w, int kernel, int64_t n_channels,
                            float* const* states, float* y, int64_t ldy, ThreadPool& pool) {
  NT_CHECK(kernel >= 1);
  const auto& o = ops();
  const int n_blocks = static_cast<int>((n_channels + kConvBlock - 1) / kConvBlock);
  pool.run(n_seqs * n_blocks, [&](int task, int) {
    const int s = task / n_blocks, b = task % n_blocks;
    const int64_t c0 = b * kConvBlock, c1 = c0 + kConvBlock < n_channels ? c0 + kConvBlock : n_channels;
    float* ys = y + s * ldy;
    o.conv(x + s * ldx, ldx, 1, w, kernel, n_channels, c0, c1, states[s], ys, ldy);
    silu_rows(ys, ldy, 1, c0, c1);
  });
}

void l2_norm(const float* x, float* y, int64_t n, float eps) {
  // Sum of squares in double over 8 fixed lanes (as rms_norm), then llama.cpp's two float steps.
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) acc[l] += static_cast<double>(x[i + l]) * x[i + l];
  for (; i < n; ++i) acc[0] += static_cast<double>(x[i]) * x[i];
  const double ss = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  const float nf = static_cast<float>(n);
  const float mean = static_cast<float>(ss / static_cast<double>(n));
  const float s1 = 1.0f / std::sqrt(mean + eps / nf), s2 = 1.0f / std::sqrt(nf);
  for (int64_t j = 0; j < n; ++j) y[j] = x[j] * s1 * s2;
}

void delta_net_gates(const float* alpha, const float* b, const float* dt_bias, const float* ssm_a, int n_v_heads,
                     int64_t n_tokens, int64_t ld, float* g, float* beta) {
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int h = 0; h < n_v_heads; ++h) {
      const int64_t i = t * ld + h;
      const float a = alpha[i] + dt_bias[h];
      const float sp = a > 20.0f ? a : std::log(1.0f + std::exp(a));  // softplus, as ggml
      const float bb = b[i];
      g[i] = sp * ssm_a[h];
      beta[i] = 1.0f / (1.0f + std::exp(-bb));
    }
}

void gated_rms_norm(const float* o, const float* z, const float* w, float* y, int64_t n_rows, int64_t dim, float eps) {
  for (int64_t r = 0; r < n_rows; ++r) {
    rms_norm(o + r * dim, w, y + r * dim, dim, eps);
    silu_mul(z + r * dim, y + r * dim, y + r * dim, dim);
  }
}

namespace {

// Token t's pointers for v head h.
struct HeadRows {
  const float *q, *k, *v;
  float g, beta;
  float* out;
};
HeadRows head_rows(const DeltaNetShape& s, const DeltaNetIo& io, int64_t t, int h) {
  const int hk = h % s.n_k_heads;
  return {io.q + t * io.ldq + static_cast<int64_t>(hk) * s.head_k_dim,
          io.k + t * io.ldk + static_cast<int64_t>(hk) * s.head_k_dim,
          io.v + t * io.ldv + static_cast<int64_t>(h) * s.head_v_dim,
          io.g[t * io.ldg + h],
          io.beta[t * io.ldg + h],
          io.out + t * io.ldo + static_cast<int64_t>(h) * s.head_v_dim};
}

void scan_head(const detail::DeltaNetOps& o, const DeltaNetShape& s, const DeltaNetIo& io, int64_t n_tokens,
               float* state, int h) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(s.head_k_dim));
  float* S = state + static_cast<int64_t>(h) * s.head_k_dim * s.head_v_dim;
  for (int64_t t = 0; t < n_tokens; ++t) {
    const HeadRows r = head_rows(s, io, t, h);
    o.step(S, s.head_k_dim, s.head_v_dim, r.q, r.k, r.v, std::exp(r.g), r.beta, scale, r.out);
  }
}

}  // namespace

void delta_net_decode(const DeltaNetShape& s, const DeltaNetIo& io, int n_seqs, float* const* states,
                      ThreadPool& pool) {
  check_shape(s);
  const auto& o = ops();
  pool.run(n_seqs * s.n_v_heads, [&](int task, int) {
    const int seq = task / s.n_v_heads, h = task % s.n_v_heads;
    DeltaNetIo one = io;  // token seq only
    one.q += seq * io.ldq;
    one.k += seq * io.ldk;
    one.v += seq * io.ldv;
    one.g += seq * io.ldg;
    one.beta += seq * io.ldg;
    one.out += seq * io.ldo;
    scan_head(o, s, one, 1, states[seq], h);
  });
}

void delta_net_scan(const DeltaNetShape& s, const DeltaNetIo& io, int64_t n_tokens, float* state, ThreadPool& pool) {
  check_shape(s);
  const auto& o = ops();
  pool.run(s.n_v_heads, [&](int h, int) { scan_head(o, s, io, n_tokens, state, h); });
}

void delta_net_scan_ref(const DeltaNetShape& s, const DeltaNetIo& io, int64_t n_tokens, float* state) {
  check_shape(s);
  for (int h = 0; h < s.n_v_heads; ++h) scan_head(detail::delta_net_ops_scalar(), s, io, n_tokens, state, h);
}

}  // namespace nt

// kernels/delta_net.h — the kernels of a Gated DeltaNet (linear attention) layer, as qwen35 uses
// them (docs/qwen35.md): the causal short convolution with its SiLU, L2 norm of q/k heads, the
// decay/update gates, the gated delta-rule recurrence (one-step decode, token-by-token scan and a
// chunked prefill) and the gated RMS norm of the output.
// Must not know: models, GGUF, where the per-sequence state lives (it sees only float spans).
//
// Each kernel has a scalar reference (`*_ref`, the oracle of the tests); the dispatched versions run
// at the SIMD level of cpu_features.h. DETERMINISM: every output depends only on its inputs and, for
// the chunked form, on the chunk size and where the call starts; never on the thread count.
#pragma once

#include <cstdint>

#include "core/thread_pool.h"

namespace nt {

// One Gated DeltaNet layer's head layout. v head h reads q/k head h % n_k_heads (the tiled order in
// which llama.cpp's converter stores the heads of qwen35 GGUF files).
struct DeltaNetShape {
  int n_k_heads = 0;   // q/k heads (ssm.group_count)
  int n_v_heads = 0;   // v heads = state heads (ssm.time_step_rank); a multiple of n_k_heads
  int head_k_dim = 0;  // ssm.state_size
  int head_v_dim = 0;  // ssm.inner_size / n_v_heads
};
// Floats of one sequence's recurrent state: n_v_heads matrices [head_k_dim][head_v_dim] (row i of
// head h = key component i, contiguous over the value components).
int64_t delta_net_state_floats(const DeltaNetShape& s);

// ---- Causal short convolution (depthwise over time) + SiLU ----
// x [n_tokens, ldx]: n_channels inputs per token. w [kernel][n_channels]: tap i of every channel
// (time-major; short_conv_weights_time_major converts GGUF's ssm_conv1d [n_channels][kernel]).
// state [kernel - 1][n_channels]: the previous kernel - 1 inputs, oldest first (zeros at start).
// y[t][c] = silu(sum_i w[i][c] * win[t + i][c]) with win = state rows then x rows, the taps summed
// in order i = 0.. in float; the state becomes the last kernel - 1 rows of win. n_tokens = 1 is the
// decode step. Parallel over channel blocks. y may not alias x.
void short_conv_silu(const float* x, int64_t ldx, int64_t n_tokens, const float* w, int kernel, int64_t n_channels,
                     float* state, float* y, int64_t ldy, ThreadPool& pool);
// One decode step for n_seqs sequences at once: token s (x + s * ldx) with its own state states[s].
void short_conv_silu_decode(const float* x, int64_t ldx, int n_seqs, const float* w, int kernel, int64_t n_channels,
                            float* const* states, float* y, int64_t ldy, ThreadPool& pool);
void short_conv_silu_ref(const float* x, int64_t ldx, int64_t n_tokens, const float* w, int kernel,
                         int64_t n_channels, float* state, float* y, int64_t ldy);
void short_conv_weights_time_major(const float* w_gguf, int kernel, int64_t n_channels, float* out);

// ---- Norms and gates ----
// y = x / sqrt(sum x^2 + eps), computed as llama.cpp's qwen35 graph does (rms_norm with eps / n,
// then times 1/sqrt(n)); n elements, y may alias x.
void l2_norm(const float* x, float* y, int64_t n, float eps);
// Per token t and v head h (index t * ld + h, in place allowed):
//   g[t][h] = ssm_a[h] * softplus(alpha[t][h] + dt_bias[h])   (log of the decay, <= 0; ssm_a = -exp(A_log))
//   beta[t][h] = sigmoid(b[t][h])
void delta_net_gates(const float* alpha, const float* b, const float* dt_bias, const float* ssm_a, int n_v_heads,
                     int64_t n_tokens, int64_t ld, float* g, float* beta);
// y = rms_norm(o, w) * silu(z) per head: n_rows rows of dim (o, z, y contiguous rows), w [dim].
void gated_rms_norm(const float* o, const float* z, const float* w, float* y, int64_t n_rows, int64_t dim, float eps);

// ---- Gated delta rule ----
// Inputs of n tokens of one layer (token t's rows at t * ld*): q, k [n_k_heads * head_k_dim]
// L2-normalised; v [n_v_heads * head_v_dim]; g, beta [n_v_heads] per token (delta_net_gates);
// out [n_v_heads * head_v_dim]. Per token and v head, with S the head's state [dk][dv]:
//   S = exp(g) * S;  d = beta * (v - S^T k);  S = S + k d^T;  o = (S^T q) / sqrt(head_k_dim)
struct DeltaNetIo {
  const float* q = nullptr;
  int64_t ldq = 0;
  const float* k = nullptr;
  int64_t ldk = 0;
  const float* v = nullptr;
  int64_t ldv = 0;
  const float* g = nullptr;
  const float* beta = nullptr;
  int64_t ldg = 0;
  float* out = nullptr;
  int64_t ldo = 0;
};
// One step for n_seqs sequences at once: token s of io belongs to the sequence of states[s].
// Parallel over (sequence, head).
void delta_net_decode(const DeltaNetShape& s, const DeltaNetIo& io, int n_seqs, float* const* states,
                      ThreadPool& pool);
// n_tokens of one sequence, one step after another (the decode step's arithmetic: a prefill this
// way and one decode per token give bit-identical outputs and states). Parallel over heads.
void delta_net_scan(const DeltaNetShape& s, const DeltaNetIo& io, int64_t n_tokens, float* state, ThreadPool& pool);
// The same recurrence in chunks of `chunk` tokens (the first chunk starts at token 0 of the call;
// the last may be shorter): within a chunk the updates are solved together (WY form: a unit
// lower-triangular system for the chunk's corrected values) and the state is read and written
// once per chunk. Agrees with delta_net_scan to float rounding (tests: delta_net_test.cpp), and a
// sequence split across calls at multiples of `chunk` gives bit-identical outputs and states.
// Parallel over heads.
constexpr int kDeltaNetChunk = 64;
void delta_net_chunked(const DeltaNetShape& s, const DeltaNetIo& io, int64_t n_tokens, float* state,
                       ThreadPool& pool, int chunk = kDeltaNetChunk);
// The scalar reference of the recurrence (token by token, single-threaded, the float operations
// written above in plain loops): the scalar level of delta_net_scan / delta_net_decode.
void delta_net_scan_ref(const DeltaNetShape& s, const DeltaNetIo& io, int64_t n_tokens, float* state);

}  // namespace nt

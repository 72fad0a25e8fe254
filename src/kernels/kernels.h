// kernels/kernels.h — the compute kernels the forward pass calls. Owns: matrix products for every
// weight type, norms, RoPE, softmax, gated FFN activation, grouped-query attention, row conversions.
// Must not know: models, GGUF, the KV cache's bookkeeping (it sees only spans of rows).
//
// Each kernel has a scalar reference (`*_ref`, the test oracle) and SIMD versions (AVX2, AVX-512
// with VNNI/BF16) chosen once at run time from the CPU's features (see cpu_features.h).
//
// DETERMINISM CONTRACT (the generation issue guarantees byte-identical output across thread counts
// and prefill chunk sizes): for every kernel, the value computed for one output element depends only
// on the inputs of that element — never on n_tokens, on how work is split between threads, or on
// which thread runs it. Reductions run in a fixed order per element.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/thread_pool.h"
#include "tensor/dtype.h"

namespace nt {

// A weight matrix as stored in GGUF: n_rows rows of n_cols elements (ne0 = n_cols, contiguous).
struct MatView {
  DType type = DType::F32;
  int64_t n_cols = 0;  // ne0: elements per row (the dot-product length)
  int64_t n_rows = 0;  // ne1: output features
  const uint8_t* data = nullptr;
  size_t row_bytes = 0;  // bytes per row (dtype_row_bytes(type, n_cols))
};

// y = x · Wᵀ for a batch of token rows:
//   x [n_tokens, w.n_cols] f32, row stride ldx (elements)
//   y [n_tokens, w.n_rows] f32, row stride ldy (elements)
// Parallel over the pool. Any supported weight type (dtype_supported).
void matmul(const MatView& w, const float* x, int64_t ldx, float* y, int64_t ldy, int64_t n_tokens,
            ThreadPool& pool);
// Several products of one input, y_i = x · W_iᵀ (e.g. Q/K/V, or gate/up), in one parallel pass:
// the activations are quantized once and the pool forks once. Every W_i has the same n_cols;
// at most 8 outputs. Results are bit-identical to separate matmul calls.
// Epilogues run on each finished rectangle by the thread that computed it (no pass of their own
// on one thread while the others wait), with the same float operations as after the call:
//   residual: residual[t, r] += y[t, r]   (add_inplace; y keeps the product)
//   swiglu_up = j: y[t, r] = silu(y[t, r]) * y_j[t, r]   (silu_mul; output j: same rows, ldy)
struct MatmulOut {
  const MatView* w = nullptr;
  float* y = nullptr;  // [n_tokens, ldy]
  int64_t ldy = 0;
  float* residual = nullptr;  // [n_tokens, ldy] or nullptr
  int swiglu_up = -1;         // index of the output this one gates, or -1
};
void matmul_multi(const MatmulOut* outs, int n_outs, const float* x, int64_t ldx, int64_t n_tokens,
                  ThreadPool& pool);
// Scalar reference: dequantizes each row and accumulates in double. Single-threaded.
void matmul_ref(const MatView& w, const float* x, int64_t ldx, float* y, int64_t ldy, int64_t n_tokens);

// Row conversions (activations <-> storage types: F32, F16, BF16, Q8_0 for the KV cache).
void convert_row_from_f32(DType dst_type, const float* src, void* dst, int64_t n);
void convert_row_to_f32(DType src_type, const void* src, float* dst, int64_t n);  // any supported type

// y = x / rms(x) * w   (one row of n; w may be nullptr for no weight)
void rms_norm(const float* x, const float* w, float* y, int64_t n, float eps);
// out = silu(gate) * up, n elements
void silu_mul(const float* gate, const float* up, float* out, int64_t n);
// out = gelu(gate) * up with GELU's tanh form, 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))) (gemma3);
// gelu_mul_ref is that formula in float, the scalar level and the oracle of the SIMD levels, which
// evaluate it as g / (1 + exp(-2 sqrt(2/pi) (g + 0.044715 g^3))).
void gelu_mul(const float* gate, const float* up, float* out, int64_t n);
void gelu_mul_ref(const float* gate, const float* up, float* out, int64_t n);
// y += x
void add_inplace(float* y, const float* x, int64_t n);
// In-place softmax of n values; returns nothing, exact in the sense of max-subtracted exp.
void softmax_inplace(float* x, int64_t n);

enum class RopeStyle { Normal, NeoX };  // Normal: pairs (2i, 2i+1) (llama); NeoX: (i, i + n_rot/2) (qwen)

struct RopeParams {
  RopeStyle style = RopeStyle::Normal;
  int n_rot = 0;              // rotated dims per head (<= head_dim); the rest pass through
  float freq_base = 10000.f;  // theta
  float freq_scale = 1.f;     // 1 / linear scaling factor
  // YaRN (ext_factor > 0 enables it), as in the GGUF rope.scaling.* keys
  float ext_factor = 0.f;
  float attn_factor = 1.f;
  float beta_fast = 32.f;
  float beta_slow = 1.f;
  int n_ctx_orig = 0;
  const float* freq_factors = nullptr;  // [n_rot/2] divisors per frequency (Llama 3 rope_freqs), or null
};
// Rotates x [n_head, head_dim] for position pos in place: rope_angles, then rope_apply.
void rope(float* x, int n_head, int head_dim, int32_t pos, const RopeParams& p);
// The rotation of position pos: cos and sin of every rotated pair, cs / sn [rope_pairs(..)] each
// (what every head and layer of a token shares, so a forward pass computes it once per token).
int rope_pairs(int head_dim, const RopeParams& p);
void rope_angles(int head_dim, int32_t pos, const RopeParams& p, float* cs, float* sn);
void rope_apply(float* x, int n_head, int head_dim, const RopeParams& p, const float* cs, const float* sn);

// Attention of one query token over a run of cached positions, for heads [head_begin, head_end):
//   q   [n_head, head_dim] f32 (already RoPE'd)
//   K/V rows live in spans; span s holds spans[s].n consecutive positions, each a row
//   [n_head_kv, head_dim] of k_type / v_type (a KV cache type, kv_types.h), rows k_row_bytes / v_row_bytes apart.
//   Attends to the first n_kv positions over the spans in order (causal masking is the caller's
//   choice of n_kv). Query head h uses KV head h / (n_head / n_head_kv).
//   out [n_head, head_dim] f32; scale is usually 1/sqrt(head_dim).
// Single-threaded; callers parallelise over tokens and head ranges. Scores are reduced in position
// order whatever the span layout, so paging does not change results.
struct KvSpan {
  const uint8_t* k = nullptr;
  const uint8_t* v = nullptr;
  int32_t n = 0;
};
void attention(const float* q, int n_head, int n_head_kv, int head_dim, int head_begin, int head_end,
               DType k_type, size_t k_row_bytes, DType v_type, size_t v_row_bytes, const KvSpan* spans,
               int n_spans, int32_t n_kv, float scale, float* out);
// The same for n_q query tokens of one sequence at once (prefill): token j's queries at q + j * ldq,
// its first n_kv[j] positions, its output at out + j * ldo. Bit-identical to n_q attention()
// calls; the tokens share each K / V row load (the whole-head passes serve several of them).
void attention_block(const float* q, int64_t ldq, int n_q, const int32_t* n_kv, int n_head, int n_head_kv,
                     int head_dim, int head_begin, int head_end, DType k_type, size_t k_row_bytes, DType v_type,
                     size_t v_row_bytes, const KvSpan* spans, int n_spans, float scale, float* out, int64_t ldo);
void attention_ref(const float* q, int n_head, int n_head_kv, int head_dim, int head_begin, int head_end,
                   DType k_type, size_t k_row_bytes, DType v_type, size_t v_row_bytes,
                   const KvSpan* spans, int n_spans, int32_t n_kv, float scale, float* out);

// Which SIMD level the dispatcher chose ("avx512", "avx2", "scalar"); NEXTTOK_SIMD=scalar|avx2|avx512
// in the environment caps it (for tests and comparisons).
const char* kernels_simd_level();

}  // namespace nt

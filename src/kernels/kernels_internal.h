// kernels/kernels_internal.h — what the dispatcher (matmul.cpp, attention.cpp) sees of the
// ISA-specific translation units (*_avx2.cpp, *_avx512.cpp). Never call an ISA function on a CPU
// without that ISA: go through simd_level(). ISA units use no STL containers (their inline
// instantiations could be picked by the linker for portable code).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "kernels/kernels.h"
#include "kernels/xquant.h"

namespace nt::detail {

// Everything a rectangle of matmul outputs needs. xq is set for quantized weight types.
struct MatArgs {
  MatView w;
  const float* x = nullptr;  // [n_tokens, ldx] f32 (float weight types)
  int64_t ldx = 0;
  const XQuant* xq = nullptr;  // quantized activations (quantized weight types)
  float* y = nullptr;
  int64_t ldy = 0;
  // Unique per matrix per matmul call (never 0): rectangles of the same call may reuse what an
  // earlier rectangle on the same thread prepared from these weights (the row-lane packs).
  uint64_t call = 0;
  // Unique per quantized activations per matmul call (never 0 when xq is set): the outputs of a
  // call that share xq may share what a thread prepared from it (the row-lane token tiles).
  uint64_t x_call = 0;
  int64_t n_tokens = 0;  // the call's tokens (xq holds them)
};

// A matmul kernel of one ISA for one weight type: computes y for rows [r0, r1) and tokens
// [t0, t1). Every output is bit-identical whichever rectangle it is computed in.
struct MatmulKernel {
  bool quantized_x = false;  // needs quantize_x(.., x_offset, x_layout, ..) first
  int x_offset = 0;
  XLayout x_layout = XLayout::Natural;  // the activations' byte order (xquant.h)
  void (*rect)(const MatArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) = nullptr;
  int row_align = 12;  // rectangles start at multiples of this many rows (the kernel's tile height)
  // Up to this many tokens the rows are streamed as in a one-token decode: the plan splits rows
  // only (decode-sized chunks, contiguous shares per thread) and rect gets every token at once.
  int64_t stream_tokens = 1;
};
// How many bytes ahead each weight stream of a one-token decode of quantized rows prefetches (the
// row-lane quartets and the K-quant quartered tiles; measurements at matmul_rl_avx512.cpp's rect).
constexpr int64_t kDecodeStreamAhead = 2048;

// nullptr when that ISA has no kernel for the type.
const MatmulKernel* matmul_kernel_avx512(DType type);
const MatmulKernel* matmul_kernel_avx2(DType type);
// The row-lane kernels (matmul_rl_avx512.cpp) for the types with 32-element scales.
const MatmulKernel* matmul_kernel_rl_avx512(DType type);
// Per-thread scratch of at least `bytes` (64-byte aligned), valid until the thread's next call.
uint8_t* kernel_scratch(size_t bytes);
// A second per-thread buffer (64-byte aligned) whose contents persist between calls, for packs of
// the weight rows [r0, r1) of matmul call `call` (MatArgs::call). *fresh is set when the buffer does
// not hold exactly that pack (another call, other rows, or reallocated): the caller must pack. One
// key per thread for every kernel and type, so a pack is never taken for another's.
uint8_t* kernel_pack_cache(size_t bytes, uint64_t call, int64_t r0, int64_t r1, bool* fresh);
// Bytes held by every thread's row-lane token tiles (rl_tile_avx512.h: TileCache), which
// matmul_scratch_bytes counts.
std::atomic<int64_t>& tile_cache_bytes();

// The read probe's loop (read_probe.h: read_streams), per ISA.
uint64_t read_streams_avx512(const uint8_t* p, size_t n_lines, size_t stride, int n_streams);
uint64_t read_streams_avx2(const uint8_t* p, size_t n_lines, size_t stride, int n_streams);

// f32 dot product of a KV row stored as `type` (a KV cache type, kv_types.h) with f32 q, and out += p * row.
struct KvRowOps {
  float (*dot)(DType type, const uint8_t* row, const float* q, int n);
  void (*axpy)(DType type, const uint8_t* row, float p, float* out, int n);
};
KvRowOps kv_row_ops_scalar();
KvRowOps kv_row_ops_avx2();
KvRowOps kv_row_ops_avx512();

// Whole-head passes of attention (attention_avx512.cpp, attention_avx2.cpp) over the first n_kv positions of the
// spans, rows `off` bytes into each K / V row: scores of one query head q [head_dim] (returns their
// maximum), and out[g] = sum of p[g][pos] * V[pos] for n_g query heads sharing that KV head.
// Bit-identical to the KvRowOps loop. Null where the ISA has no version for that head_dim / row type.
struct AttnRowKernels {
  // scores[g][pos] = dot(q[g], K[pos]) * scale for n_g query heads of one KV head; mx[g] = their maximum.
  void (*scores)(const KvSpan* spans, int n_spans, int32_t n_kv, size_t row_bytes, size_t off, const float* const* q,
                 int n_g, float scale, float* const* scores, float* mx) = nullptr;
  void (*weighted)(const KvSpan* spans, int n_spans, int32_t n_kv, size_t row_bytes, size_t off,
                   const float* const* p, int n_g, float* const* out) = nullptr;
  // Query vectors the two passes take at once in prefill (attention_block's runs; n_g <= run <= 32).
  int run = 4;
};
AttnRowKernels attn_row_kernels_avx512(int head_dim, DType k_type, DType v_type);
AttnRowKernels attn_row_kernels_avx2(int head_dim, DType k_type, DType v_type);

// Element-wise kernels per ISA: out = silu(gate) * up; x[i] = exp(x[i] - mx) returning the sum.
void silu_mul_avx512(const float* gate, const float* up, float* out, int64_t n);
void silu_mul_avx2(const float* gate, const float* up, float* out, int64_t n);
// out = gelu(gate) * up (tanh form, as the sigmoid of twice its argument).
void gelu_mul_avx512(const float* gate, const float* up, float* out, int64_t n);
void gelu_mul_avx2(const float* gate, const float* up, float* out, int64_t n);
float exp_sum_avx512(float* x, int64_t n, float mx);
float exp_sum_avx2(float* x, int64_t n, float mx);
// n floats to fp16 (round to nearest even), AVX2 + F16C.
void f32_to_f16_row_avx2(const float* src, uint16_t* dst, int64_t n);
// Dispatches exp_sum to the current level (scalar: std::exp, float lane sums).
float exp_sum(float* x, int64_t n, float mx);

}  // namespace nt::detail

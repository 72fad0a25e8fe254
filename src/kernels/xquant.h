// kernels/xquant.h — activation rows quantized once per matmul call for the integer dot products
// of the quantized weight types. Layout per token (n padded to npad, a multiple of 256):
//   qs  int8  [npad]      round(x / dx) per 32-element block, in the order of XLayout
//   ls  int32 [npad / 4]  -offset * (sum of 4 consecutive qs): the start value of an integer dot
//                         against weights stored unsigned as (q + offset)
//   dx  f32   [npad / 32] block scale (amax / 127)
//   g32 f32   [npad / 32] dx * sum of the block's qs   (for weight types with a min/offset term)
//   g16 f32   [npad / 16] dx * sum of 16 qs            (Q2_K mins are per 16 elements)
//   lb  int32 [npad / 32] -offset * sum of the block's qs (the row-lane kernels' start value)
// Must not know: weight formats beyond their offset.
#pragma once

#include <cstdint>
#include <vector>

#include "core/thread_pool.h"

namespace nt::detail {

// Order of the qs bytes within each 128 elements (4 blocks b0..b3 of 32). The AVX-512 kernels
// chain two vpdpbusd over the two 64-byte halves of a quad into one int32 lane, so both halves'
// lane j must belong to the same scale group:
//   Natural: element order (AVX2 and scalar kernels).
//   Quad:    the even 8-byte groups, then the odd ones: lane j of either half covers 16-element
//            group 2 (j / 4) + (j % 4) / 2 (for types with scales per 16 elements).
//   Halves:  elements 0-15 of b0..b3, then elements 16-31 of b0..b3: lane j of either half is in
//            block j / 4 (types with scales per 32; their weights decode to this order cheaply).
// ls holds, per lane, -offset * the sum of that lane's 8 bytes over both halves (non-Natural).
//   F16:     not integers: fp16 (x * 2^e) [npad] (round to nearest even), then the float 2^-e
//            (xscale). e is chosen per token from its largest |x| (that times 2^e in [2^14, 2^15),
//            e = 0 for an all-zero or non-finite row), so no element overflows fp16; the scaling
//            itself is exact, so each element carries one fp16 rounding: relative error <= 2^-11,
//            or absolute <= 2^-40 * max|x| for elements below 2^-28 * max|x| (fp16 subnormals).
//            For the F16-weight kernels: 16 elements per 256-bit load instead of a 512-bit one.
enum class XLayout { Natural = 0, Quad = 1, Halves = 2, F16 = 3 };

struct XQuant {
  int64_t n = 0, npad = 0, stride = 0;  // stride: bytes per token
  int offset = 0;
  XLayout layout = XLayout::Natural;
  std::vector<uint8_t> buf;

  const int8_t* qs(int64_t t) const { return reinterpret_cast<const int8_t*>(buf.data() + t * stride); }
  const int32_t* ls(int64_t t) const { return reinterpret_cast<const int32_t*>(buf.data() + t * stride + npad); }
  const float* dx(int64_t t) const { return reinterpret_cast<const float*>(buf.data() + t * stride + 2 * npad); }
  const float* g32(int64_t t) const { return dx(t) + npad / 32; }
  const float* g16(int64_t t) const { return dx(t) + npad / 16; }
  const int32_t* lb(int64_t t) const { return reinterpret_cast<const int32_t*>(g16(t) + npad / 16); }
  // F16 layout: the scaled fp16 row and the factor 2^-e that undoes the scale.
  const uint16_t* h16(int64_t t) const { return reinterpret_cast<const uint16_t*>(buf.data() + t * stride); }
  float xscale(int64_t t) const { return *dx(t); }

  // Token t's arrays for writing (the quantizers fill them; the const buffer accessors above are
  // for the kernels that read them).
  struct Out {
    int8_t* qs;
    int32_t* ls;
    float *dx, *g32, *g16;
    int32_t* lb;
  };
  Out out(int64_t t) const {
    return {const_cast<int8_t*>(qs(t)), const_cast<int32_t*>(ls(t)), const_cast<float*>(dx(t)),
            const_cast<float*>(g32(t)), const_cast<float*>(g16(t)),  const_cast<int32_t*>(lb(t))};
  }
};

// Quantizes n_tokens rows of x (row stride ldx) into xq (reusing its buffer); parallel over tokens
// when there are several. Each row's result depends only on that row.
void quantize_x(const float* x, int64_t ldx, int64_t n, int64_t n_tokens, int offset, XLayout layout, XQuant& xq,
                ThreadPool& pool);

// Bytes of the calling thread's quantized activations that matmul_multi keeps between calls (sized
// for the most tokens x columns one call has had), plus every thread's row-lane token tiles.
size_t matmul_scratch_bytes();

// The AVX-512 version of one token's quantization in the Quad or Halves layout
// (xquant_avx512.cpp); only called when the CPU has AVX-512.
void quantize_row_quad_avx512(const float* x, int64_t n, int offset, const XQuant& xq, int64_t t);
// The AVX2 version of one token's quantization in the Natural layout (xquant_avx2.cpp); only
// called when the CPU has AVX2.
void quantize_row_natural_avx2(const float* x, int64_t n, int offset, const XQuant& xq, int64_t t);
// The F16 layout's scaling of a row whose largest |x| is amax: 2^e as two float factors s1 * s2
// (2^e alone may exceed the float exponent range) and inv = 2^-e (the row's xscale). e = 0 for an
// all-zero or non-finite amax.
struct F16RowScale {
  float s1 = 1.0f, s2 = 1.0f, inv = 1.0f;
};
F16RowScale f16_row_scale(float amax);
// One token's conversion to the F16 layout, per ISA (only the F16-weight kernels of that ISA ask
// for the layout); bit-identical to each other: x * s1 * s2 (exact) rounded to fp16, nearest even.
void convert_row_f16_avx512(const float* x, int64_t n, const XQuant& xq, int64_t t);
void convert_row_f16_avx2(const float* x, int64_t n, const XQuant& xq, int64_t t);

}  // namespace nt::detail

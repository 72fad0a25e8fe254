// kernels/matmul_f_avx2.cpp — F32 / F16 / BF16 weight matmul with AVX2 + FMA + F16C (weights
// widened to f32 in registers), and the KV-row dot/axpy of attention. Tiles of any size run the
// same per-output sequence (determinism contract). Activations are read as f32, except for F16
// weights: there they come in the F16 layout of xquant.h (per-token scaled fp16, as on AVX-512),
// half the bytes per load and registers enough for 4 x 3 tiles.
#include "kernels/kernels_internal.h"
#include "kernels/simd_avx2.h"
#include "tensor/quant_blocks.h"

namespace nt::detail {
namespace {

// Loads of 8 weights at element i; the tail variant reads only the first `n` (< 8) elements.
struct LF32 {
  static constexpr int64_t kBytes = 4;
  static __m256 load(const uint8_t* row, int64_t i) { return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + i); }
};
struct LF16 {
  static constexpr int64_t kBytes = 2;
  static __m256 load(const uint8_t* row, int64_t i) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * i)));
  }
};
struct LBF16 {
  static constexpr int64_t kBytes = 2;
  static __m256 load(const uint8_t* row, int64_t i) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * i)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  }
};
template <class L>
static inline __m256 load_tail(const uint8_t* row, int64_t i, int64_t n) {
  alignas(32) uint8_t buf[32] = {};
  std::memcpy(buf, row + L::kBytes * i, static_cast<size_t>(L::kBytes * n));
  return L::load(buf, 0);
}
static inline __m256 load_x_tail(const float* x, int64_t n) {
  alignas(32) float buf[8] = {};
  std::memcpy(buf, x, static_cast<size_t>(n) * 4);
  return _mm256_load_ps(buf);
}

// Activation rows as the tiles read them: f32 rows of a.x, or the scaled fp16 rows of a.xq (the
// F16 layout of xquant.h, zero-padded to npad, so an 8-element load at any i < n stays in the row).
struct X32 {
  using Row = const float*;
  static constexpr bool kScaled = false;
  static Row row(const MatArgs& a, int64_t t) { return a.x + t * a.ldx; }
  static __m256 load(Row r, int64_t i) { return _mm256_loadu_ps(r + i); }
  static __m256 load_tail(Row r, int64_t i, int64_t n) { return load_x_tail(r + i, n); }
};
struct X16 {
  using Row = const uint16_t*;
  static constexpr bool kScaled = true;
  static Row row(const MatArgs& a, int64_t t) { return a.xq->h16(t); }
  static __m256 load(Row r, int64_t i) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r + i))); }
  static __m256 load_tail(Row r, int64_t i, int64_t) { return load(r, i); }
  static float scale(const MatArgs& a, int64_t t) { return a.xq->xscale(t); }
};

// One tile: rows r0 + r * rs (r < NR), tokens t0..t0+NT. ahead > 0: each row's stream prefetches
// that many bytes on, once per cache line. Every accumulator runs lane j over the elements
// i = j mod 8 in order, then hsum256 (times the token's exact power-of-two factor for X16), in
// any tile shape and either loop order: XRegs holds the NT activation vectors in registers and
// loads one weight row at a time (the 4 x 3 F16 tiles: 12 accumulators + 3 + 1 registers),
// otherwise the NR weight vectors stay and the activations are loaded per token.
template <class L, class X, int NR, int NT, bool XRegs = false>
void tile(const MatArgs& a, int64_t r0, int64_t t0, int64_t rs = 1, int64_t ahead = 0) {
  const int64_t n = a.w.n_cols;
  __m256 acc[NR][NT];
  for (int r = 0; r < NR; ++r)
    for (int t = 0; t < NT; ++t) acc[r][t] = _mm256_setzero_ps();
  const uint8_t* rows[NR];
  for (int r = 0; r < NR; ++r) rows[r] = a.w.data + (r0 + r * rs) * a.w.row_bytes;
  typename X::Row xs[NT];
  for (int t = 0; t < NT; ++t) xs[t] = X::row(a, t0 + t);
  auto step = [&](auto load_w, auto load_x) {
    if constexpr (XRegs) {
      __m256 xv[NT];
      for (int t = 0; t < NT; ++t) xv[t] = load_x(t);
      for (int r = 0; r < NR; ++r) {
        const __m256 wv = load_w(r);
        for (int t = 0; t < NT; ++t) acc[r][t] = _mm256_fmadd_ps(wv, xv[t], acc[r][t]);
      }
    } else {
      __m256 wv[NR];
      for (int r = 0; r < NR; ++r) wv[r] = load_w(r);
      for (int t = 0; t < NT; ++t) {
        const __m256 xv = load_x(t);
        for (int r = 0; r < NR; ++r) acc[r][t] = _mm256_fmadd_ps(wv[r], xv, acc[r][t]);
      }
    }
  };
  int64_t i = 0;
  if constexpr (!XRegs && NT > 1) {
    // Two steps per trip (same per-lane order): faster for the F32 prefill tiles; the 4 x 3 F16
    // tiles with held activations were slower with two, so they keep one (docs/kernels.md).
    for (; i + 16 <= n; i += 16) {
      step([&](int r) { return L::load(rows[r], i); }, [&](int t) { return X::load(xs[t], i); });
      step([&](int r) { return L::load(rows[r], i + 8); }, [&](int t) { return X::load(xs[t], i + 8); });
    }
  }
  for (; i + 8 <= n; i += 8) {
    if (ahead > 0 && (i * L::kBytes) % 64 == 0)
      for (int r = 0; r < NR; ++r) _mm_prefetch(reinterpret_cast<const char*>(rows[r] + i * L::kBytes + ahead), _MM_HINT_T0);
    step([&](int r) { return L::load(rows[r], i); }, [&](int t) { return X::load(xs[t], i); });
  }
  if (i < n)
    step([&](int r) { return load_tail<L>(rows[r], i, n - i); }, [&](int t) { return X::load_tail(xs[t], i, n - i); });
  for (int t = 0; t < NT; ++t) {
    float* y = a.y + (t0 + t) * a.ldy + r0;
    if constexpr (X::kScaled) {
      const float sc = X::scale(a, t0 + t);  // a power of two: exact
      for (int r = 0; r < NR; ++r) y[r * rs] = hsum256(acc[r][t]) * sc;
    } else {
      for (int r = 0; r < NR; ++r) y[r * rs] = hsum256(acc[r][t]);
    }
  }
}

template <class L, class X>
void rect(const MatArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  // Decode (fewer than 3 tokens): four rows a quarter of the rectangle apart,
  // four streams each read front to back and prefetched kDecodeStreamAhead on (four independent
  // fma chains). One row at a time was bound by its single fma chain and by the hardware
  // prefetcher (measurements: docs/kernels.md).
  if (t1 - t0 < 3) {
    const int64_t n = r1 - r0;
    if (n % 4 == 0 && n >= 8) {
      const int64_t quarter = n / 4;
      for (int64_t j = 0; j < quarter; ++j)
        for (int64_t t = t0; t < t1; ++t) tile<L, X, 4, 1>(a, r0 + j, t, quarter, kDecodeStreamAhead);
      return;
    }
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t t = t0; t < t1; ++t) tile<L, X, 1, 1>(a, r, t);
    return;
  }
  // Prefill. F16 weights with fp16 activations: 4 x 3 tiles, activations in registers (near the
  // core's FMA peak; column blocks or token strips outside the rows did not beat it).
  // F32 / BF16 weights: 3 x 4 tiles of f32 activations, the 3 weight vectors held (12
  // accumulators + 3 + 1 registers). Measurements: docs/kernels.md.
  constexpr int NR = X::kScaled ? 4 : 3, NT = X::kScaled ? 3 : 4;
  constexpr bool kXRegs = X::kScaled;
  int64_t r = r0;
  for (; r + NR <= r1; r += NR) {
    int64_t t = t0;
    for (; t + NT <= t1; t += NT) tile<L, X, NR, NT, kXRegs>(a, r, t);
    // A remainder of two tokens (512 = 3 * 170 + 2) as one NR x 2 tile, not two NR x 1.
    if constexpr (NT == 3)
      if (t + 2 == t1) tile<L, X, NR, 2, kXRegs>(a, r, t), t += 2;
    for (; t < t1; ++t) tile<L, X, NR, 1>(a, r, t);
  }
  for (; r < r1; ++r) {
    int64_t t = t0;
    for (; t + 3 <= t1; t += 3) tile<L, X, 1, 3>(a, r, t);
    for (; t < t1; ++t) tile<L, X, 1, 1>(a, r, t);
  }
}

// Rows of the float KV types (L: LF32, LF16, LBF16): 8-lane FMA in dimension order from zero +
// hsum256; out += p * row with one FMA per element (the tail: multiply, then add).
template <class L>
float kv_dot_f(const uint8_t* row, const float* q, int n) {
  __m256 acc = _mm256_setzero_ps();
  int i = 0;
  for (; i + 8 <= n; i += 8) acc = _mm256_fmadd_ps(L::load(row, i), _mm256_loadu_ps(q + i), acc);
  if (i < n) acc = _mm256_fmadd_ps(load_tail<L>(row, i, n - i), load_x_tail(q + i, n - i), acc);
  return hsum256(acc);
}
template <class L>
void kv_axpy_f(const uint8_t* row, float p, float* out, int n) {
  const __m256 pv = _mm256_set1_ps(p);
  int i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, _mm256_fmadd_ps(pv, L::load(row, i), _mm256_loadu_ps(out + i)));
  if (i < n) {
    alignas(32) float v[8];
    _mm256_store_ps(v, load_tail<L>(row, i, n - i));
    for (int k = 0; i + k < n; ++k) out[i + k] += p * v[k];
  }
}

float kv_dot(DType type, const uint8_t* row, const float* q, int n) {
  switch (type) {
    case DType::F32: return kv_dot_f<LF32>(row, q, n);
    case DType::F16: return kv_dot_f<LF16>(row, q, n);
    case DType::BF16: return kv_dot_f<LBF16>(row, q, n);
    default: break;
  }
  __m256 acc = _mm256_setzero_ps();  // Q8_0
  for (int b = 0; b < n / QK8_0; ++b) {
    const uint8_t* blk = row + b * 34;
    __m256 s = _mm256_setzero_ps();
    for (int k = 0; k < 4; ++k) {
      const __m256 v = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk + 2 + 8 * k))));
      s = _mm256_fmadd_ps(v, _mm256_loadu_ps(q + 32 * b + 8 * k), s);
    }
    acc = _mm256_fmadd_ps(s, _mm256_set1_ps(h2f_2(blk)), acc);
  }
  return hsum256(acc);
}

void kv_axpy(DType type, const uint8_t* row, float p, float* out, int n) {
  switch (type) {
    case DType::F32: return kv_axpy_f<LF32>(row, p, out, n);
    case DType::F16: return kv_axpy_f<LF16>(row, p, out, n);
    case DType::BF16: return kv_axpy_f<LBF16>(row, p, out, n);
    default: break;
  }
  for (int b = 0; b < n / QK8_0; ++b) {  // Q8_0
    const uint8_t* blk = row + b * 34;
    const __m256 pd = _mm256_set1_ps(p * h2f_2(blk));
    for (int k = 0; k < 4; ++k) {
      const __m256 v = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk + 2 + 8 * k))));
      float* o = out + 32 * b + 8 * k;
      _mm256_storeu_ps(o, _mm256_fmadd_ps(pd, v, _mm256_loadu_ps(o)));
    }
  }
}

}  // namespace

const MatmulKernel* matmul_kernel_f_avx2(DType type) {
  static const MatmulKernel f32{false, 0, XLayout::Natural, rect<LF32, X32>}, f16{true, 0, XLayout::F16, rect<LF16, X16>},
      bf16{false, 0, XLayout::Natural, rect<LBF16, X32>};
  switch (type) {
    case DType::F32: return &f32;
    case DType::F16: return &f16;
    case DType::BF16: return &bf16;
    default: return nullptr;
  }
}

KvRowOps kv_row_ops_avx2() { return {kv_dot, kv_axpy}; }

}  // namespace nt::detail

// kernels/matmul_f_avx512.cpp — F32 / F16 / BF16 weight matmul with AVX-512 FMA (weights widened
// to f32 in registers), and the KV-row dot/axpy of attention. Tiles of NR rows x NT tokens run the
// same per-accumulator sequence as 1 x 1 (determinism contract). Activations are read as f32,
// except for F16 weights: there they come in the F16 layout of xquant.h (per-token scaled fp16,
// one rounding per element, as llama.cpp rounds them for F16 weights), which halves the bytes the
// tile loads per step; each output is then multiplied by its token's exact power-of-two factor.
#include "kernels/kernels_internal.h"
#include "kernels/simd_avx512.h"
#include "tensor/quant_blocks.h"

#include <algorithm>

namespace nt::detail {
namespace {

// kDecodeRows: rows per decode tile (see rect).
struct LF32 {
  static constexpr int64_t kBytes = 4;
  static constexpr int kDecodeRows = 4;
  static __m512 load(const uint8_t* row, int64_t i) { return _mm512_loadu_ps(reinterpret_cast<const float*>(row) + i); }
  static __m512 load_mask(const uint8_t* row, int64_t i, __mmask16 m) {
    return _mm512_maskz_loadu_ps(m, reinterpret_cast<const float*>(row) + i);
  }
};
struct LF16 {
  static constexpr int64_t kBytes = 2;
  static constexpr int kDecodeRows = 1;
  static __m512 load(const uint8_t* row, int64_t i) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * i)));
  }
  static __m512 load_mask(const uint8_t* row, int64_t i, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, row + 2 * i));
  }
};
struct LBF16 {
  static constexpr int64_t kBytes = 2;
  static constexpr int kDecodeRows = 1;
  static __m512 widen(__m256i h) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)); }
  static __m512 load(const uint8_t* row, int64_t i) {
    return widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * i)));
  }
  static __m512 load_mask(const uint8_t* row, int64_t i, __mmask16 m) { return widen(_mm256_maskz_loadu_epi16(m, row + 2 * i)); }
};

// Activation rows as the tiles read them: f32 rows of a.x, or the scaled fp16 rows of a.xq.
struct X32 {
  using Row = const float*;
  static constexpr bool kScaled = false;
  static Row row(const MatArgs& a, int64_t t) { return a.x + t * a.ldx; }
  static __m512 load(Row r, int64_t i) { return _mm512_loadu_ps(r + i); }
  static __m512 load_mask(Row r, int64_t i, __mmask16 m) { return _mm512_maskz_loadu_ps(m, r + i); }
};
struct X16 {
  using Row = const uint16_t*;
  static constexpr bool kScaled = true;
  static Row row(const MatArgs& a, int64_t t) { return a.xq->h16(t); }
  static __m512 load(Row r, int64_t i) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r + i))); }
  static __m512 load_mask(Row r, int64_t i, __mmask16 m) { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, r + i)); }
  static float scale(const MatArgs& a, int64_t t) { return a.xq->xscale(t); }
};

// Columns [c0, c1) of an NR x NT tile (c0 a multiple of 16). The 16-lane accumulators start from
// part unless c0 is the row's start, and go back to it unless c1 is the row's end, so cutting the
// columns into blocks leaves every lane's fma sequence, and so the result, unchanged.
template <class L, class X, int NR, int NT>
void tile(const MatArgs& a, int64_t r0, int64_t t0, int64_t c0, int64_t c1, float* part, int64_t rs = 1) {
  const bool first = c0 == 0, last = c1 == a.w.n_cols;
  __m512 acc[NR][NT];
  for (int r = 0; r < NR; ++r)
    for (int t = 0; t < NT; ++t) acc[r][t] = first ? _mm512_setzero_ps() : _mm512_load_ps(part + 16 * (r * NT + t));
  const uint8_t* rows[NR];
  for (int r = 0; r < NR; ++r) rows[r] = a.w.data + (r0 + r * rs) * a.w.row_bytes;
  typename X::Row xs[NT];
  for (int t = 0; t < NT; ++t) xs[t] = X::row(a, t0 + t);
  int64_t i = c0;
  // Prefetch one tile ahead (rows r0+NR.., same columns): a linear walk NR rows ahead of the loads
  // (see matmul_q_avx512.cpp); one prefetch per cache line. The one-token tiles of rows far apart
  // (rs > 1: four streams, each walking its rows front to back) prefetch kStreamAhead bytes on in
  // each stream instead (into its next row at a row's end); one-row tiles do not prefetch (see rect).
  constexpr int64_t kStreamAhead = 1024;
  constexpr bool kPrefetch = NT == 6 || L::kDecodeRows > 1 || (NT == 1 && NR == 4);
  const int64_t pf_ahead = NT == 1 && rs > 1 ? kStreamAhead : NR * static_cast<int64_t>(a.w.row_bytes);
  for (; i + 16 <= c1; i += 16) {
    __m512 wv[NR];
    if (kPrefetch && (i * L::kBytes) % 64 == 0)
      for (int r = 0; r < NR; ++r) _mm_prefetch(reinterpret_cast<const char*>(rows[r] + i * L::kBytes + pf_ahead), _MM_HINT_T0);
    for (int r = 0; r < NR; ++r) wv[r] = L::load(rows[r], i);
    for (int t = 0; t < NT; ++t) {
      const __m512 xv = X::load(xs[t], i);
      for (int r = 0; r < NR; ++r) acc[r][t] = _mm512_fmadd_ps(wv[r], xv, acc[r][t]);
    }
  }
  if (i < c1) {
    const __mmask16 m = static_cast<__mmask16>((1u << (c1 - i)) - 1);
    __m512 wv[NR];
    for (int r = 0; r < NR; ++r) wv[r] = L::load_mask(rows[r], i, m);
    for (int t = 0; t < NT; ++t) {
      const __m512 xv = X::load_mask(xs[t], i, m);
      for (int r = 0; r < NR; ++r) acc[r][t] = _mm512_fmadd_ps(wv[r], xv, acc[r][t]);
    }
  }
  if (!last) {
    for (int r = 0; r < NR; ++r)
      for (int t = 0; t < NT; ++t) _mm512_store_ps(part + 16 * (r * NT + t), acc[r][t]);
    return;
  }
  for (int t = 0; t < NT; ++t) {
    float* y = a.y + (t0 + t) * a.ldy + r0;
    if constexpr (X::kScaled) {
      const float sc = X::scale(a, t0 + t);  // a power of two: exact
      for (int r = 0; r < NR; ++r) y[r * rs] = hsum512(acc[r][t]) * sc;
    } else {
      for (int r = 0; r < NR; ++r) y[r * rs] = hsum512(acc[r][t]);
    }
  }
}

// Tiles of 4 rows x 6 tokens (24 accumulators). Token strips outside, row strips inside: the
// strip's activations stay in L1 while the rectangle's weight rows stream past. F32 rows longer than
// 1.5 column blocks are cut into blocks so that the strip's activations (6 x 512 floats, 12 KiB)
// still fit in L1 beside the weights (F16 / BF16, half the weight bytes, gained nothing from it
// and are not cut; measurements: docs/kernels.md).
constexpr int64_t kColBlock = 512;

template <class L, class X>
void rect(const MatArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  const int64_t n = a.w.n_cols;
  const int64_t r_full = r0 + (r1 - r0) / 4 * 4;
  const int64_t n_cb = L::kBytes < 4 || X::kScaled || 2 * n <= 3 * kColBlock ? 1 : (n + kColBlock - 1) / kColBlock;
  // [r1 - r0 rows][6 tokens][16 lanes]: the strip's accumulators between column blocks.
  float* part = n_cb > 1 ? reinterpret_cast<float*>(kernel_scratch(static_cast<size_t>(r1 - r0) * 6 * 16 * sizeof(float)))
                         : nullptr;
  auto part_at = [&](int64_t r) { return part ? part + (r - r0) * 6 * 16 : nullptr; };
  int64_t t = t0;
  for (; t + 6 <= t1; t += 6)
    for (int64_t cb = 0; cb < n_cb; ++cb) {
      const int64_t c0 = cb * kColBlock, c1 = n_cb == 1 ? n : std::min(n, c0 + kColBlock);
      for (int64_t r = r0; r < r_full; r += 4) tile<L, X, 4, 6>(a, r, t, c0, c1, part_at(r));
      for (int64_t r = r_full; r < r1; ++r) tile<L, X, 1, 6>(a, r, t, c0, c1, part_at(r));
    }
  // The last t1 - t < 6 tokens (all of decode) go through each row once with all of them, in tiles
  // of L::kDecodeRows rows. For the 2-byte types that is one row, no software prefetch: each row is
  // read front to back, which the hardware prefetcher follows better than the software prefetches
  // of 4-row tiles. Adjacent rows side by side (streams a row apart) are slow; for one token, rows
  // far apart share a tile instead (long streams; one fma chain per row is bound by the fma
  // latency, several overlap): quarters, see strip. F32 keeps 4-row tiles (one row was slower).
  // Measurements: docs/kernels.md.
  if (t == t1) return;
  const int64_t k = t1 - t;
  auto strip = [&]<int NT>() {
    int64_t r = r0;
    if constexpr (L::kDecodeRows == 1 && NT == 1) {
      // One token: rows a quarter of the rectangle apart in one 4-row tile (four independent fma
      // chains, each still its output's single chain), so four streams far apart, each front to
      // back; a remainder of 2-3 rows pairs rows half of it apart. Each stream prefetches 1 KiB
      // ahead of its loads (kStreamAhead; one row ahead was slower). Measurements: docs/kernels.md.
      const int64_t quarter = (r1 - r0) / 4;
      for (; r < r0 + quarter; ++r) tile<L, X, 4, 1>(a, r, t, 0, n, nullptr, quarter);
      r = r0 + 4 * quarter;
      const int64_t half = (r1 - r) / 2;
      for (const int64_t rh = r + half; r < rh; ++r) tile<L, X, 2, 1>(a, r, t, 0, n, nullptr, half);
      r += half;
    }
    if constexpr (L::kDecodeRows > 1)
      for (; r + L::kDecodeRows <= r1; r += L::kDecodeRows) tile<L, X, L::kDecodeRows, NT>(a, r, t, 0, n, nullptr);
    for (; r < r1; ++r) tile<L, X, 1, NT>(a, r, t, 0, n, nullptr);
  };
  switch (k) {
    case 1: strip.template operator()<1>(); break;
    case 2: strip.template operator()<2>(); break;
    case 3: strip.template operator()<3>(); break;
    case 4: strip.template operator()<4>(); break;
    default: strip.template operator()<5>(); break;
  }
}

// ---- KV rows for attention (head_dim elements; Q8_0 rows are whole blocks).
// Rows of the float KV types (L: LF32, LF16, LBF16): 16-lane FMA in dimension order from zero +
// hsum512; out += p * row with one FMA per element.
template <class L>
float kv_dot_f(const uint8_t* row, const float* q, int n) {
  __m512 acc = _mm512_setzero_ps();
  int i = 0;
  for (; i + 16 <= n; i += 16) acc = _mm512_fmadd_ps(L::load(row, i), _mm512_loadu_ps(q + i), acc);
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    acc = _mm512_fmadd_ps(L::load_mask(row, i, m), _mm512_maskz_loadu_ps(m, q + i), acc);
  }
  return hsum512(acc);
}
template <class L>
void kv_axpy_f(const uint8_t* row, float p, float* out, int n) {
  const __m512 pv = _mm512_set1_ps(p);
  int i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, _mm512_fmadd_ps(pv, L::load(row, i), _mm512_loadu_ps(out + i)));
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(out + i, m, _mm512_fmadd_ps(pv, L::load_mask(row, i, m), _mm512_maskz_loadu_ps(m, out + i)));
  }
}

float kv_dot(DType type, const uint8_t* row, const float* q, int n) {
  switch (type) {
    case DType::F32: return kv_dot_f<LF32>(row, q, n);
    case DType::F16: return kv_dot_f<LF16>(row, q, n);
    case DType::BF16: return kv_dot_f<LBF16>(row, q, n);
    default: break;
  }
  __m512 acc = _mm512_setzero_ps();  // Q8_0
  for (int b = 0; b < n / QK8_0; ++b) {
    const uint8_t* blk = row + b * 34;
    const __m128i q8a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2));
    const __m128i q8b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 18));
    const __m512 s = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q8a)), _mm512_loadu_ps(q + 32 * b),
                                     _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q8b)), _mm512_loadu_ps(q + 32 * b + 16)));
    acc = _mm512_fmadd_ps(s, _mm512_set1_ps(h2f(blk)), acc);
  }
  return hsum512(acc);
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
    const __m512 pd = _mm512_set1_ps(p * h2f(blk));
    for (int h = 0; h < 2; ++h) {
      const __m512 v = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2 + 16 * h))));
      float* o = out + 32 * b + 16 * h;
      _mm512_storeu_ps(o, _mm512_fmadd_ps(pd, v, _mm512_loadu_ps(o)));
    }
  }
}

}  // namespace

const MatmulKernel* matmul_kernel_f_avx512(DType type) {
  static const MatmulKernel f32{false, 0, XLayout::Natural, rect<LF32, X32>}, f16{true, 0, XLayout::F16, rect<LF16, X16>},
      bf16{false, 0, XLayout::Natural, rect<LBF16, X32>};
  switch (type) {
    case DType::F32: return &f32;
    case DType::F16: return &f16;
    case DType::BF16: return &bf16;
    default: return nullptr;
  }
}

KvRowOps kv_row_ops_avx512() { return {kv_dot, kv_axpy}; }

}  // namespace nt::detail

// kernels/attention_avx512.cpp — the two row passes of attention for one query head with AVX-512,
// K/V rows in F32 or F16 and head_dim = 16 * NV: scores (one dot product per cached position) and
// the weighted sum of V rows, with the whole head_dim of the output held in NV registers across
// positions (no load/store of the output per position). Per element they run exactly the
// sequence of kv_dot / kv_axpy (16-lane FMA in dimension order + hsum512; output FMAs in position
// order from zero), so results are bit-identical to the row-op path.
#include "kernels/kernels_internal.h"
#include "kernels/simd_avx512.h"

namespace nt::detail {
namespace {

template <bool kF16>
inline __m512 load16(const uint8_t* row, int i) {
  if constexpr (kF16) return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * i)));
  else return _mm512_loadu_ps(reinterpret_cast<const float*>(row) + i);
}

// Calls fn(pos, row) for the first n_kv positions in span order; row = the K (kV = false) or V row
// of that position, `off` bytes in.
template <bool kV, class F>
inline void for_each_row(const KvSpan* spans, int n_spans, int32_t n_kv, size_t row_bytes, size_t off, F&& fn) {
  int32_t pos = 0;
  for (int s = 0; s < n_spans && pos < n_kv; ++s) {
    const int32_t n = spans[s].n < n_kv - pos ? spans[s].n : n_kv - pos;
    const uint8_t* base = (kV ? spans[s].v : spans[s].k) + off;
    for (int32_t i = 0; i < n; ++i, ++pos) fn(pos, base + static_cast<size_t>(i) * row_bytes);
  }
}

// scores[pos] = dot(q, K[pos]) * scale for the first n_kv positions; returns their maximum.
template <int NV, bool kF16>
float scores_rows(const KvSpan* spans, int n_spans, int32_t n_kv, size_t row_bytes, size_t off, const float* q,
                  float scale, float* scores) {
  __m512 qv[NV];
  for (int j = 0; j < NV; ++j) qv[j] = _mm512_loadu_ps(q + 16 * j);
  float mx = -__builtin_inff();
  for_each_row<false>(spans, n_spans, n_kv, row_bytes, off, [&](int32_t pos, const uint8_t* row) {
    __m512 acc = _mm512_setzero_ps();
    for (int j = 0; j < NV; ++j) acc = _mm512_fmadd_ps(load16<kF16>(row, 16 * j), qv[j], acc);
    const float sc = hsum512(acc) * scale;
    scores[pos] = sc;
    mx = sc > mx ? sc : mx;
  });
  return mx;
}

// out = sum over the first n_kv positions, in order, of p[pos] * V[pos].
template <int NV, bool kF16>
void weighted_rows(const KvSpan* spans, int n_spans, int32_t n_kv, size_t row_bytes, size_t off, const float* p,
                   float* out) {
  __m512 acc[NV];
  for (int j = 0; j < NV; ++j) acc[j] = _mm512_setzero_ps();
  for_each_row<true>(spans, n_spans, n_kv, row_bytes, off, [&](int32_t pos, const uint8_t* row) {
    const __m512 pv = _mm512_set1_ps(p[pos]);
    for (int j = 0; j < NV; ++j) acc[j] = _mm512_fmadd_ps(pv, load16<kF16>(row, 16 * j), acc[j]);
  });
  for (int j = 0; j < NV; ++j) _mm512_storeu_ps(out + 16 * j, acc[j]);
}

template <int NV>
AttnRowKernels kernels_for(DType k_type, DType v_type) {
  AttnRowKernels r;
  if (k_type == DType::F16) r.scores = scores_rows<NV, true>;
  else if (k_type == DType::F32) r.scores = scores_rows<NV, false>;
  if (v_type == DType::F16) r.weighted = weighted_rows<NV, true>;
  else if (v_type == DType::F32) r.weighted = weighted_rows<NV, false>;
  return r;
}

}  // namespace

AttnRowKernels attn_row_kernels_avx512(int head_dim, DType k_type, DType v_type) {
  if (head_dim % 16 != 0) return {};
  switch (head_dim / 16) {
    case 1: return kernels_for<1>(k_type, v_type);
    case 2: return kernels_for<2>(k_type, v_type);
    case 3: return kernels_for<3>(k_type, v_type);
    case 4: return kernels_for<4>(k_type, v_type);
    case 5: return kernels_for<5>(k_type, v_type);
    case 6: return kernels_for<6>(k_type, v_type);
    case 7: return kernels_for<7>(k_type, v_type);
    case 8: return kernels_for<8>(k_type, v_type);
    case 16: return kernels_for<16>(k_type, v_type);
    default: return {};
  }
}

}  // namespace nt::detail

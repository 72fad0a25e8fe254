// kernels/attention.cpp — grouped-query attention of one query token, or of a block of query
// tokens of one sequence, over KV spans: the double precision reference and the dispatching
// version (whole-head passes or row dot/axpy from the chosen SIMD level).
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/check.h"
#include "kernels/cpu_features.h"
#include "kernels/kernels.h"
#include "kernels/kernels_internal.h"
#include "kernels/kv_types.h"
#include "tensor/dequant.h"
#include "tensor/fp16.h"
#include "tensor/quant_blocks.h"

namespace nt {

namespace {

// Calls fn(pos, k_row, v_row) for the first n_kv positions in span order.
template <class F>
void for_each_pos(const KvSpan* spans, int n_spans, int32_t n_kv, size_t k_row_bytes, size_t v_row_bytes, F&& fn) {
  int32_t pos = 0;
  for (int s = 0; s < n_spans && pos < n_kv; ++s)
    for (int32_t i = 0; i < spans[s].n && pos < n_kv; ++i, ++pos)
      fn(pos, spans[s].k + static_cast<size_t>(i) * k_row_bytes, spans[s].v + static_cast<size_t>(i) * v_row_bytes);
}

void check_kv_type(DType t, int head_dim) { NT_CHECK(check_kv_cache_type(t, head_dim).ok()); }

}  // namespace

void attention_ref(const float* q, int n_head, int n_head_kv, int head_dim, int head_begin, int head_end,
                   DType k_type, size_t k_row_bytes, DType v_type, size_t v_row_bytes, const KvSpan* spans,
                   int n_spans, int32_t n_kv, float scale, float* out) {
  check_kv_type(k_type, head_dim);
  check_kv_type(v_type, head_dim);
  const int group = n_head / n_head_kv;
  std::vector<double> scores(static_cast<size_t>(n_kv));
  std::vector<float> row(static_cast<size_t>(head_dim));
  std::vector<double> acc(static_cast<size_t>(head_dim));
  for (int h = head_begin; h < head_end; ++h) {
    const int kvh = h / group;
    const size_t k_off = dtype_row_bytes(k_type, static_cast<uint64_t>(kvh) * head_dim);
    const size_t v_off = dtype_row_bytes(v_type, static_cast<uint64_t>(kvh) * head_dim);
    const float* qh = q + static_cast<int64_t>(h) * head_dim;
    double mx = -INFINITY;
    for_each_pos(spans, n_spans, n_kv, k_row_bytes, v_row_bytes, [&](int32_t pos, const uint8_t* k, const uint8_t*) {
      dequantize_row(k_type, k + k_off, row.data(), head_dim);
      double s = 0;
      for (int i = 0; i < head_dim; ++i) s += static_cast<double>(qh[i]) * row[i];
      scores[pos] = s * scale;
      mx = std::fmax(mx, scores[pos]);
    });
    double sum = 0;
    for (int32_t p = 0; p < n_kv; ++p) sum += (scores[p] = std::exp(scores[p] - mx));
    std::fill(acc.begin(), acc.end(), 0.0);
    for_each_pos(spans, n_spans, n_kv, k_row_bytes, v_row_bytes, [&](int32_t pos, const uint8_t*, const uint8_t* v) {
      dequantize_row(v_type, v + v_off, row.data(), head_dim);
      for (int i = 0; i < head_dim; ++i) acc[i] += scores[pos] * row[i];
    });
    float* o = out + static_cast<int64_t>(h) * head_dim;
    for (int i = 0; i < head_dim; ++i) o[i] = n_kv > 0 ? static_cast<float>(acc[i] / sum) : 0.0f;
  }
}

namespace detail {

namespace {

float dot_scalar(DType type, const uint8_t* row, const float* q, int n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  if (type == DType::F32) {
    const auto* r = reinterpret_cast<const float*>(row);
    for (int i = 0; i < n; ++i) acc[i & 7] += r[i] * q[i];
  } else if (type == DType::F16) {
    const auto* r = reinterpret_cast<const uint16_t*>(row);
    for (int i = 0; i < n; ++i) acc[i & 7] += fp16_to_fp32(r[i]) * q[i];
  } else if (type == DType::BF16) {
    const auto* r = reinterpret_cast<const uint16_t*>(row);
    for (int i = 0; i < n; ++i) acc[i & 7] += bf16_to_fp32(r[i]) * q[i];
  } else {
    const auto* b = reinterpret_cast<const BlockQ8_0*>(row);
    for (int ib = 0; ib < n / QK8_0; ++ib) {
      float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      for (int j = 0; j < QK8_0; ++j) s[j & 7] += static_cast<float>(b[ib].qs[j]) * q[ib * QK8_0 + j];
      const float d = fp16_to_fp32(b[ib].d);
      for (int l = 0; l < 8; ++l) acc[l] += s[l] * d;
    }
  }
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

void axpy_scalar(DType type, const uint8_t* row, float p, float* out, int n) {
  if (type == DType::F32) {
    const auto* r = reinterpret_cast<const float*>(row);
    for (int i = 0; i < n; ++i) out[i] += p * r[i];
  } else if (type == DType::F16) {
    const auto* r = reinterpret_cast<const uint16_t*>(row);
    for (int i = 0; i < n; ++i) out[i] += p * fp16_to_fp32(r[i]);
  } else if (type == DType::BF16) {
    const auto* r = reinterpret_cast<const uint16_t*>(row);
    for (int i = 0; i < n; ++i) out[i] += p * bf16_to_fp32(r[i]);
  } else {
    const auto* b = reinterpret_cast<const BlockQ8_0*>(row);
    for (int ib = 0; ib < n / QK8_0; ++ib) {
      const float pd = p * fp16_to_fp32(b[ib].d);
      for (int j = 0; j < QK8_0; ++j) out[ib * QK8_0 + j] += pd * static_cast<float>(b[ib].qs[j]);
    }
  }
}

}  // namespace

KvRowOps kv_row_ops_scalar() { return {dot_scalar, axpy_scalar}; }

}  // namespace detail

void attention(const float* q, int n_head, int n_head_kv, int head_dim, int head_begin, int head_end,
               DType k_type, size_t k_row_bytes, DType v_type, size_t v_row_bytes, const KvSpan* spans,
               int n_spans, int32_t n_kv, float scale, float* out) {
  attention_block(q, 0, 1, &n_kv, n_head, n_head_kv, head_dim, head_begin, head_end, k_type, k_row_bytes, v_type,
                  v_row_bytes, spans, n_spans, scale, out, 0);
}

void attention_block(const float* q, int64_t ldq, int n_q, const int32_t* n_kv, int n_head, int n_head_kv,
                     int head_dim, int head_begin, int head_end, DType k_type, size_t k_row_bytes, DType v_type,
                     size_t v_row_bytes, const KvSpan* spans, int n_spans, float scale, float* out, int64_t ldo) {
  check_kv_type(k_type, head_dim);
  check_kv_type(v_type, head_dim);
  const SimdLevel level = simd_level();
  const detail::KvRowOps ops = level == SimdLevel::Avx512 ? detail::kv_row_ops_avx512()
                               : level == SimdLevel::Avx2 ? detail::kv_row_ops_avx2()
                                                          : detail::kv_row_ops_scalar();
  const detail::AttnRowKernels fast = level == SimdLevel::Avx512 ? detail::attn_row_kernels_avx512(head_dim, k_type, v_type)
                                      : level == SimdLevel::Avx2   ? detail::attn_row_kernels_avx2(head_dim, k_type, v_type)
                                                                   : detail::AttnRowKernels{};
  const int group = n_head / n_head_kv;
  int32_t n_max = 0, n_common = n_q > 0 ? n_kv[0] : 0;
  for (int j = 0; j < n_q; ++j) {
    NT_CHECK(n_kv[j] >= 0);
    n_max = std::max(n_max, n_kv[j]);
    n_common = std::min(n_common, n_kv[j]);
  }
  // Query vectors (token j, head h) served together: one pass over K and one over V for all of
  // them. The positions all of them attend (the first n_common) go through the whole-head passes;
  // each token's own later positions through the row ops, continuing the same per-element
  // sequence (a score is one dot product; an output column adds p * V in position order), so
  // every output is bit-identical to attending the token alone.
  // Query vectors served by one pass over K and one over V: the ISA kernels' run (at most kMaxRun).
  constexpr int kMaxRun = 32;
  const int run = fast.run;
  NT_CHECK(run >= 1 && run <= kMaxRun);
  thread_local std::vector<float> scores;
  if (scores.size() < static_cast<size_t>(n_max) * kMaxRun) scores.resize(static_cast<size_t>(n_max) * kMaxRun);
  // The span holding position n_common, found once: each token's later positions walk on from it.
  int s_common = 0;
  int32_t base_common = 0;
  while (s_common < n_spans && base_common + spans[s_common].n <= n_common) base_common += spans[s_common++].n;
  auto row_from = [&](int& s, int32_t& base, int32_t pos, bool v, size_t row_bytes, size_t off) {
    while (pos >= base + spans[s].n) {
      base += spans[s++].n;
      NT_CHECK(s < n_spans);  // callers keep pos below the cached positions
    }
    return (v ? spans[s].v : spans[s].k) + static_cast<size_t>(pos - base) * row_bytes + off;
  };
  if (fast.scores && fast.weighted && n_common > 0) {
    for (int h0 = head_begin; h0 < head_end;) {
      const int kvh = h0 / group;
      const int h1 = std::min(head_end, (kvh + 1) * group);  // query heads [h0, h1) share KV head kvh
      const size_t k_off = dtype_row_bytes(k_type, static_cast<uint64_t>(kvh) * head_dim);
      const size_t v_off = dtype_row_bytes(v_type, static_cast<uint64_t>(kvh) * head_dim);
      const int n_vec = n_q * (h1 - h0);
      for (int v0 = 0; v0 < n_vec; v0 += run) {
        const int n_run = std::min(run, n_vec - v0);
        const float* qs[kMaxRun];
        float* sc[kMaxRun];
        float* o[kMaxRun];
        float mx[kMaxRun], inv[kMaxRun];
        int tok[kMaxRun];
        for (int g = 0; g < n_run; ++g) {
          const int j = (v0 + g) / (h1 - h0), h = h0 + (v0 + g) % (h1 - h0);
          tok[g] = j;
          qs[g] = q + j * ldq + static_cast<int64_t>(h) * head_dim;
          o[g] = out + j * ldo + static_cast<int64_t>(h) * head_dim;
          sc[g] = scores.data() + static_cast<size_t>(g) * n_max;
        }
        fast.scores(spans, n_spans, n_common, k_row_bytes, k_off, qs, n_run, scale, sc, mx);
        for (int g = 0; g < n_run; ++g) {
          int cs = s_common;
          int32_t cbase = base_common;
          for (int32_t pos = n_common; pos < n_kv[tok[g]]; ++pos) {
            const float s = ops.dot(k_type, row_from(cs, cbase, pos, false, k_row_bytes, k_off), qs[g], head_dim) * scale;
            sc[g][pos] = s;
            mx[g] = s > mx[g] ? s : mx[g];
          }
          inv[g] = 1.0f / detail::exp_sum(sc[g], n_kv[tok[g]], mx[g]);  // sc[g]: the weights p
        }
        fast.weighted(spans, n_spans, n_common, v_row_bytes, v_off, sc, n_run, o);
        for (int g = 0; g < n_run; ++g) {
          int cs = s_common;
          int32_t cbase = base_common;
          for (int32_t pos = n_common; pos < n_kv[tok[g]]; ++pos)
            ops.axpy(v_type, row_from(cs, cbase, pos, true, v_row_bytes, v_off), sc[g][pos], o[g], head_dim);
          for (int i = 0; i < head_dim; ++i) o[g][i] *= inv[g];
        }
      }
      h0 = h1;
    }
    return;
  }
  for (int j = 0; j < n_q; ++j) {
    const float* qj = q + j * ldq;
    float* oj = out + j * ldo;
    for (int h = head_begin; h < head_end; ++h) {
      const int kvh = h / group;
      const size_t k_off = dtype_row_bytes(k_type, static_cast<uint64_t>(kvh) * head_dim);
      const size_t v_off = dtype_row_bytes(v_type, static_cast<uint64_t>(kvh) * head_dim);
      const float* qh = qj + static_cast<int64_t>(h) * head_dim;
      float* o = oj + static_cast<int64_t>(h) * head_dim;
      float mx = -INFINITY;
      for_each_pos(spans, n_spans, n_kv[j], k_row_bytes, v_row_bytes, [&](int32_t pos, const uint8_t* k, const uint8_t*) {
        const float s = ops.dot(k_type, k + k_off, qh, head_dim) * scale;
        scores[pos] = s;
        mx = s > mx ? s : mx;
      });
      const float sum = n_kv[j] > 0 ? detail::exp_sum(scores.data(), n_kv[j], mx) : 0.0f;
      for (int i = 0; i < head_dim; ++i) o[i] = 0;
      for_each_pos(spans, n_spans, n_kv[j], k_row_bytes, v_row_bytes, [&](int32_t pos, const uint8_t*, const uint8_t* v) {
        ops.axpy(v_type, v + v_off, scores[pos], o, head_dim);
      });
      const float inv = n_kv[j] > 0 ? 1.0f / sum : 0.0f;
      for (int i = 0; i < head_dim; ++i) o[i] *= inv;
    }
  }
}

}  // namespace nt

// kernels/attention.cpp — grouped-query attention of one query token over KV spans: the double
// precision reference and the dispatching version (row dot/axpy from the chosen SIMD level).
#include <cmath>
#include <vector>

#include "core/check.h"
#include "kernels/cpu_features.h"
#include "kernels/kernels.h"
#include "kernels/kernels_internal.h"
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

void check_kv_type(DType t, int head_dim) {
  NT_CHECK(t == DType::F32 || t == DType::F16 || t == DType::Q8_0);
  NT_CHECK(t != DType::Q8_0 || head_dim % QK8_0 == 0);
}

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
  constexpr int kMaxRun = 4;  // query heads of one KV head served by one weighted pass
  thread_local std::vector<float> scores;
  if (scores.size() < static_cast<size_t>(n_kv) * kMaxRun) scores.resize(static_cast<size_t>(n_kv) * kMaxRun);
  if (fast.scores && fast.weighted && n_kv > 0) {  // the same sequence per element, whole head in registers
    for (int h = head_begin; h < head_end;) {
      const int kvh = h / group;
      int n_run = 1;
      while (n_run < kMaxRun && h + n_run < head_end && (h + n_run) / group == kvh) ++n_run;
      const size_t k_off = dtype_row_bytes(k_type, static_cast<uint64_t>(kvh) * head_dim);
      const size_t v_off = dtype_row_bytes(v_type, static_cast<uint64_t>(kvh) * head_dim);
      const float* qs[kMaxRun];
      float* sc[kMaxRun];
      float mx[kMaxRun];
      for (int g = 0; g < n_run; ++g) {
        qs[g] = q + static_cast<int64_t>(h + g) * head_dim;
        sc[g] = scores.data() + static_cast<size_t>(g) * n_kv;
      }
      fast.scores(spans, n_spans, n_kv, k_row_bytes, k_off, qs, n_run, scale, sc, mx);
      float* o[kMaxRun];
      float inv[kMaxRun];
      for (int g = 0; g < n_run; ++g) {
        inv[g] = 1.0f / detail::exp_sum(sc[g], n_kv, mx[g]);  // sc[g]: the weights p of head h + g
        o[g] = out + static_cast<int64_t>(h + g) * head_dim;
      }
      fast.weighted(spans, n_spans, n_kv, v_row_bytes, v_off, sc, n_run, o);
      for (int g = 0; g < n_run; ++g)
        for (int i = 0; i < head_dim; ++i) o[g][i] *= inv[g];
      h += n_run;
    }
    return;
  }
  for (int h = head_begin; h < head_end; ++h) {
    const int kvh = h / group;
    const size_t k_off = dtype_row_bytes(k_type, static_cast<uint64_t>(kvh) * head_dim);
    const size_t v_off = dtype_row_bytes(v_type, static_cast<uint64_t>(kvh) * head_dim);
    const float* qh = q + static_cast<int64_t>(h) * head_dim;
    float* o = out + static_cast<int64_t>(h) * head_dim;
    float mx = -INFINITY;
    for_each_pos(spans, n_spans, n_kv, k_row_bytes, v_row_bytes, [&](int32_t pos, const uint8_t* k, const uint8_t*) {
      const float s = ops.dot(k_type, k + k_off, qh, head_dim) * scale;
      scores[pos] = s;
      mx = s > mx ? s : mx;
    });
    const float sum = n_kv > 0 ? detail::exp_sum(scores.data(), n_kv, mx) : 0.0f;
    for (int i = 0; i < head_dim; ++i) o[i] = 0;
    for_each_pos(spans, n_spans, n_kv, k_row_bytes, v_row_bytes, [&](int32_t pos, const uint8_t*, const uint8_t* v) {
      ops.axpy(v_type, v + v_off, scores[pos], o, head_dim);
    });
    const float inv = n_kv > 0 ? 1.0f / sum : 0.0f;
    for (int i = 0; i < head_dim; ++i) o[i] *= inv;
  }
}

}  // namespace nt

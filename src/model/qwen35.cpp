// model/qwen35.cpp — the qwen35 architecture (Qwen3.5, dense): a hybrid of Gated DeltaNet layers
// (linear attention with a fixed-size recurrent state per sequence) and gated full-attention
// layers, in the pattern the metadata gives (attention.recurrent_layers flags, else every
// full_attention_interval-th layer attends, default 4). Attention layers: Q/K norms, a sigmoid
// output gate per head from the Q projection (per head head_dim q rows then head_dim gate rows),
// partial NeoX RoPE (for text tokens every M-RoPE section sees the same position, so
// rope.dimension_sections does not change the rotation). Both kinds: attn_norm before, and
// post_attention_norm as the FFN's pre-norm. Shapes and the kernel map: docs/qwen35.md.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/check.h"
#include "core/strings.h"
#include "model/architectures.h"

namespace nt {

Status qwen35_read_config(const GgufFile& f, ModelConfig& c) {
  const std::string p = c.arch_name + ".";
  // Multi-token-prediction blocks follow the trunk's layers; a plain forward pass does not run them.
  const uint64_t n_nextn = f.get_u64(p + "nextn_predict_layers").value_or(0);
  if (n_nextn >= static_cast<uint64_t>(c.n_layer))
    return make_error("%s: nextn_predict_layers %llu leaves no layers of %d", f.path().c_str(),
                      static_cast<unsigned long long>(n_nextn), c.n_layer);
  const int n_layer_all = c.n_layer;
  c.n_layer -= static_cast<int>(n_nextn);
  auto get = [&](const char* key, int& out, uint64_t hi) -> Status {
    const auto v = f.get_u64(p + key);
    if (!v) return make_error("%s: missing key '%s%s'", f.path().c_str(), p.c_str(), key);
    if (*v < 1 || *v > hi)
      return make_error("%s: key '%s%s' = %llu is out of range [1, %llu]", f.path().c_str(), p.c_str(), key,
                        static_cast<unsigned long long>(*v), static_cast<unsigned long long>(hi));
    out = static_cast<int>(*v);
    return {};
  };
  int inner = 0;
  NT_TRY(get("ssm.conv_kernel", c.ssm_conv_kernel, 64));
  NT_TRY(get("ssm.inner_size", inner, 1 << 20));
  NT_TRY(get("ssm.state_size", c.ssm.head_k_dim, 1 << 12));
  NT_TRY(get("ssm.time_step_rank", c.ssm.n_v_heads, 1 << 12));
  NT_TRY(get("ssm.group_count", c.ssm.n_k_heads, 1 << 12));
  if (c.ssm.n_v_heads % c.ssm.n_k_heads != 0)
    return make_error("%s: ssm.time_step_rank %d is not a multiple of ssm.group_count %d", f.path().c_str(),
                      c.ssm.n_v_heads, c.ssm.n_k_heads);
  if (inner != c.ssm.n_v_heads * c.ssm.head_k_dim)
    return make_error("%s: ssm.inner_size %d must be ssm.time_step_rank x ssm.state_size (%d x %d)",
                      f.path().c_str(), inner, c.ssm.n_v_heads, c.ssm.head_k_dim);
  c.ssm.head_v_dim = c.ssm.head_k_dim;
  c.attn_output_gate = true;

  c.recurrent_layers.assign(static_cast<size_t>(c.n_layer), 0);
  const std::string rk = p + "attention.recurrent_layers";
  if (const GgufValue* arr = f.get_array(rk)) {
    const GgufType et = arr->elem_type;
    const bool flags = et != GgufType::STRING && et != GgufType::ARRAY && et != GgufType::FLOAT32 && et != GgufType::FLOAT64;
    if (arr->n != static_cast<uint64_t>(n_layer_all) || !flags)
      return make_error("%s: %s must hold one flag per layer (%d)", f.path().c_str(), rk.c_str(), n_layer_all);
    for (int il = 0; il < c.n_layer; ++il)
      c.recurrent_layers[static_cast<size_t>(il)] =
          et == GgufType::BOOL ? arr->raw[il] != 0 : arr->int_at(uint64_t(il)) != 0;
  } else {
    const uint64_t every = f.get_u64(p + "full_attention_interval").value_or(4);
    if (every == 0) return make_error("%s: full_attention_interval must be at least 1", f.path().c_str());
    for (int il = 0; il < c.n_layer; ++il) c.recurrent_layers[static_cast<size_t>(il)] = (uint64_t(il) + 1) % every != 0;
  }
  return {};
}

Status qwen35_load_layer(const WeightLoader& wl, const ModelConfig& c, int il, LayerWeights& l) {
  auto vec = [&](const char* s, int64_t n, const float*& out) { return wl.vector_into(layer_tensor(il, s), n, out); };
  auto mat = [&](const char* s, int64_t cols, int64_t rows, MatView& out) {
    return wl.matrix_into(layer_tensor(il, s), cols, rows, out);
  };
  if (!c.is_recurrent(il)) {
    NT_TRY(vec("attn_q_norm.weight", c.head_dim, l.q_norm));
    return vec("attn_k_norm.weight", c.head_dim, l.k_norm);
  }
  const DeltaNetShape& sh = c.ssm;
  const int64_t channels = c.ssm_conv_channels(), v_dim = int64_t(sh.n_v_heads) * sh.head_v_dim;
  NT_TRY(mat("attn_qkv.weight", c.n_embd, channels, l.ssm_qkv));
  NT_TRY(mat("attn_gate.weight", c.n_embd, v_dim, l.ssm_gate));
  NT_TRY(mat("ssm_beta.weight", c.n_embd, sh.n_v_heads, l.ssm_beta));
  NT_TRY(mat("ssm_alpha.weight", c.n_embd, sh.n_v_heads, l.ssm_alpha));
  NT_TRY(mat("ssm_out.weight", v_dim, c.n_embd, l.ssm_out));
  NT_TRY(vec("ssm_dt.bias", sh.n_v_heads, l.ssm_dt_bias));
  NT_TRY(vec("ssm_a", sh.n_v_heads, l.ssm_a));
  NT_TRY(vec("ssm_norm.weight", sh.head_v_dim, l.ssm_norm));
  MatView conv;  // [channels rows of kernel taps]: converted once to the kernel's time-major layout
  NT_TRY(mat("ssm_conv1d.weight", c.ssm_conv_kernel, channels, conv));
  std::vector<float> rows(static_cast<size_t>(channels * c.ssm_conv_kernel));
  for (int64_t ch = 0; ch < channels; ++ch)
    convert_row_to_f32(conv.type, conv.data + size_t(ch) * conv.row_bytes, rows.data() + ch * c.ssm_conv_kernel,
                       c.ssm_conv_kernel);
  std::vector<float> tm(rows.size());
  short_conv_weights_time_major(rows.data(), c.ssm_conv_kernel, channels, tm.data());
  l.ssm_conv = wl.own(std::move(tm));
  return {};
}

void Model::delta_net_layer(int il, const Batch& batch, KvStore& kv, ThreadPool& pool, ForwardScratch& s,
                            const float* xn, float* x) const {
  const ModelConfig& c = cfg_;
  const LayerWeights& l = w_.layers[static_cast<size_t>(il)];
  const DeltaNetShape& sh = c.ssm;
  const int64_t T = batch.size(), E = c.n_embd, C = c.ssm_conv_channels();
  const int64_t Hv = sh.n_v_heads, Dv = Hv * sh.head_v_dim, Kd = int64_t(sh.n_k_heads) * sh.head_k_dim;
  const int K = c.ssm_conv_kernel;
  auto grow = [](std::vector<float>& v, int64_t n) {
    if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
  };
  grow(s.ssm_qkv, T * C);
  grow(s.ssm_conv, T * std::max(C, E));
  grow(s.ssm_z, T * Dv);
  grow(s.ssm_ab, T * 2 * Hv);
  grow(s.ssm_o, T * std::max(Dv, E));
  float *qkv = s.ssm_qkv.data(), *cv = s.ssm_conv.data(), *z = s.ssm_z.data(), *ab = s.ssm_ab.data(),
        *o = s.ssm_o.data();
  {
    const MatmulOut outs[4] = {{&l.ssm_qkv, qkv, C}, {&l.ssm_gate, z, Dv}, {&l.ssm_alpha, ab, 2 * Hv},
                               {&l.ssm_beta, ab + Hv, 2 * Hv}};
    matmul_multi(outs, 4, xn, E, T, pool);
  }
  // This layer's part of each sequence's state: the conv state, then the delta state.
  const int64_t layer_off = c.recurrent_floats_per_layer() * (il - c.kv_layer(il));
  const int64_t conv_floats = int64_t(K - 1) * C;
  auto conv_state = [&](int32_t seq) { return kv.recurrent_state(seq) + layer_off; };
  auto delta_state = [&](int32_t seq) { return kv.recurrent_state(seq) + layer_off + conv_floats; };

  // Runs of consecutive batch tokens of one sequence, in batch order (a sequence's runs in
  // position order). When every run is one token of a distinct sequence, the decode kernels take
  // them all at once; they compute what the scan would, bit for bit.
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (int64_t t = 0; t < T;) {
    int64_t n = 1;
    while (t + n < T && batch.seq[size_t(t + n)] == batch.seq[size_t(t)]) ++n;
    runs.emplace_back(t, n);
    t += n;
  }
  bool decode = true;
  for (size_t i = 0; i < runs.size() && decode; ++i) {
    decode = runs[i].second == 1;
    for (size_t j = 0; j < i && decode; ++j) decode = batch.seq[size_t(runs[j].first)] != batch.seq[size_t(runs[i].first)];
  }
  std::vector<float*> states;
  if (decode) {
    for (int64_t t = 0; t < T; ++t) states.push_back(conv_state(batch.seq[size_t(t)]));
    short_conv_silu_decode(qkv, C, static_cast<int>(T), l.ssm_conv, K, C, states.data(), cv, C, pool);
  } else {
    for (auto [t0, n] : runs)
      short_conv_silu(qkv + t0 * C, C, n, l.ssm_conv, K, C, conv_state(batch.seq[size_t(t0)]), cv + t0 * C, C, pool);
  }
  // L2 norm of every q and k head; the gates in place of alpha and beta.
  const int n_qk_heads = 2 * sh.n_k_heads;
  pool.run(static_cast<int>(T), [&](int t, int) {
    for (int h = 0; h < n_qk_heads; ++h) {
      float* r = cv + t * C + int64_t(h) * sh.head_k_dim;
      l2_norm(r, r, sh.head_k_dim, c.rms_eps);
    }
  });
  delta_net_gates(ab, ab + Hv, l.ssm_dt_bias, l.ssm_a, static_cast<int>(Hv), T, 2 * Hv, ab, ab + Hv);
  DeltaNetIo io;
  io.q = cv;
  io.k = cv + Kd;
  io.v = cv + 2 * Kd;
  io.ldq = io.ldk = io.ldv = C;
  io.g = ab;
  io.beta = ab + Hv;
  io.ldg = 2 * Hv;
  io.out = o;
  io.ldo = Dv;
  if (decode) {
    for (int64_t t = 0; t < T; ++t) states[size_t(t)] = delta_state(batch.seq[size_t(t)]);
    delta_net_decode(sh, io, static_cast<int>(T), states.data(), pool);
  } else {
    auto part = [&](int64_t t0) {
      DeltaNetIo r = io;
      r.q += t0 * C;
      r.k += t0 * C;
      r.v += t0 * C;
      r.g += t0 * 2 * Hv;
      r.beta += t0 * 2 * Hv;
      r.out += t0 * Dv;
      return r;
    };
    // Every whole window of kDeltaNetChunk positions aligned in the sequence (from a multiple of
    // the chunk) takes the chunked form, the unaligned head and tail the scan: a position is
    // computed the same way however steps split the sequence, as long as the splits fall on
    // multiples of the chunk (the scheduler cuts prompt chunks there, docs/qwen35.md). Windows
    // past batch.chunked_until (generated tokens, recomputed) go token by token too.
    constexpr int64_t W = kDeltaNetChunk;
    for (auto [t0, n] : runs) {
      float* st = delta_state(batch.seq[size_t(t0)]);
      const int64_t head = std::min<int64_t>(n, (W - batch.pos[size_t(t0)] % W) % W);
      const int64_t until = batch.chunked_until.empty() ? INT64_MAX : batch.chunked_until[size_t(t0)];
      const int64_t room = std::max<int64_t>(0, until - (batch.pos[size_t(t0)] + head));
      const int64_t body = std::min(n - head, room) / W * W, tail = n - head - body;
      if (head > 0) delta_net_scan(sh, part(t0), head, st, pool);
      if (body > 0) delta_net_chunked(sh, part(t0 + head), body, st, pool);
      if (tail > 0) delta_net_scan(sh, part(t0 + head + body), tail, st, pool);
    }
  }
  pool.run(static_cast<int>(T), [&](int t, int) {
    gated_rms_norm(o + t * Dv, z + t * Dv, l.ssm_norm, o + t * Dv, Hv, sh.head_v_dim, c.rms_eps);
  });
  const MatmulOut out{&l.ssm_out, cv, E, x};  // x += ssm_out · o
  matmul_multi(&out, 1, o, Dv, T, pool);
}

}  // namespace nt

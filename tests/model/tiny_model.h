// tests/model/tiny_model.h — writes small random llama/qwen2/qwen3 GGUFs (F32, or quantized layer
// matrices) and computes their logits with a straightforward, independent implementation (double
// precision, no KV cache, every position recomputed from scratch) to check the engine against.
#pragma once

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gguf/gguf_writer.h"
#include "tensor/quantize.h"

namespace nt::test {

struct TinySpec {
  std::string arch = "llama";
  int n_vocab = 97, n_embd = 64, n_layer = 2, n_head = 4, n_head_kv = 2, head_dim = 16, n_ff = 96;
  float rope_base = 10000.f, eps = 1e-5f;
  uint32_t seed = 1;
};

struct TinyWeights {
  std::vector<float> tok_embd, out_norm, output;
  struct Layer {
    std::vector<float> attn_norm, wq, wk, wv, wo, bq, bk, bv, q_norm, k_norm, ffn_norm, gate, up, down;
  };
  std::vector<Layer> layers;
};

inline TinyWeights make_weights(const TinySpec& s) {
  std::mt19937 rng(s.seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  auto rnd = [&](size_t n, float scale) {
    std::vector<float> v(n);
    for (auto& x : v) x = nd(rng) * scale;
    return v;
  };
  auto ones_ish = [&](size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = 1.f + 0.1f * nd(rng);
    return v;
  };
  TinyWeights w;
  const size_t E = s.n_embd, Q = size_t(s.n_head) * s.head_dim, K = size_t(s.n_head_kv) * s.head_dim, F = s.n_ff;
  w.tok_embd = rnd(size_t(s.n_vocab) * E, 1.f);
  w.out_norm = ones_ish(E);
  w.output = rnd(size_t(s.n_vocab) * E, 1.f / std::sqrt(float(E)));
  for (int l = 0; l < s.n_layer; ++l) {
    TinyWeights::Layer L;
    L.attn_norm = ones_ish(E);
    L.wq = rnd(Q * E, 1.f / std::sqrt(float(E)));
    L.wk = rnd(K * E, 1.f / std::sqrt(float(E)));
    L.wv = rnd(K * E, 1.f / std::sqrt(float(E)));
    L.wo = rnd(E * Q, 1.f / std::sqrt(float(Q)));
    if (s.arch == "qwen2") { L.bq = rnd(Q, 0.1f); L.bk = rnd(K, 0.1f); L.bv = rnd(K, 0.1f); }
    if (s.arch == "qwen3") { L.q_norm = ones_ish(s.head_dim); L.k_norm = ones_ish(s.head_dim); }
    L.ffn_norm = ones_ish(E);
    L.gate = rnd(F * E, 1.f / std::sqrt(float(E)));
    L.up = rnd(F * E, 1.f / std::sqrt(float(E)));
    L.down = rnd(E * F, 1.f / std::sqrt(float(F)));
    w.layers.push_back(std::move(L));
  }
  return w;
}

// matrix_type: the type of the layer matrices (wq .. down), quantized row by row; the rest stays F32.
inline bool write_tiny_gguf(const TinySpec& s, const TinyWeights& w, const std::string& path, std::string* err,
                            DType matrix_type = DType::F32) {
  GgufWriter g;
  const std::string a = s.arch;
  g.set_str("general.architecture", a);
  g.set_str("general.name", "tiny-" + a);
  g.set_u32(a + ".context_length", 256);
  g.set_u32(a + ".embedding_length", uint32_t(s.n_embd));
  g.set_u32(a + ".block_count", uint32_t(s.n_layer));
  g.set_u32(a + ".feed_forward_length", uint32_t(s.n_ff));
  g.set_u32(a + ".attention.head_count", uint32_t(s.n_head));
  g.set_u32(a + ".attention.head_count_kv", uint32_t(s.n_head_kv));
  if (s.head_dim * s.n_head != s.n_embd) {
    g.set_u32(a + ".attention.key_length", uint32_t(s.head_dim));
    g.set_u32(a + ".attention.value_length", uint32_t(s.head_dim));
  }
  g.set_f32(a + ".attention.layer_norm_rms_epsilon", s.eps);
  g.set_f32(a + ".rope.freq_base", s.rope_base);
  struct T { std::string name; const std::vector<float>* d; std::vector<uint64_t> ne; bool matrix = false; };
  std::vector<T> ts;
  const uint64_t E = s.n_embd, Q = uint64_t(s.n_head) * s.head_dim, K = uint64_t(s.n_head_kv) * s.head_dim, F = s.n_ff;
  ts.push_back({"token_embd.weight", &w.tok_embd, {E, uint64_t(s.n_vocab)}});
  ts.push_back({"output_norm.weight", &w.out_norm, {E}});
  ts.push_back({"output.weight", &w.output, {E, uint64_t(s.n_vocab)}});
  for (int l = 0; l < s.n_layer; ++l) {
    const auto& L = w.layers[size_t(l)];
    const std::string p = "blk." + std::to_string(l) + ".";
    ts.push_back({p + "attn_norm.weight", &L.attn_norm, {E}});
    ts.push_back({p + "attn_q.weight", &L.wq, {E, Q}, true});
    ts.push_back({p + "attn_k.weight", &L.wk, {E, K}, true});
    ts.push_back({p + "attn_v.weight", &L.wv, {E, K}, true});
    ts.push_back({p + "attn_output.weight", &L.wo, {Q, E}, true});
    if (!L.bq.empty()) {
      ts.push_back({p + "attn_q.bias", &L.bq, {Q}});
      ts.push_back({p + "attn_k.bias", &L.bk, {K}});
      ts.push_back({p + "attn_v.bias", &L.bv, {K}});
    }
    if (!L.q_norm.empty()) {
      ts.push_back({p + "attn_q_norm.weight", &L.q_norm, {uint64_t(s.head_dim)}});
      ts.push_back({p + "attn_k_norm.weight", &L.k_norm, {uint64_t(s.head_dim)}});
    }
    ts.push_back({p + "ffn_norm.weight", &L.ffn_norm, {E}});
    ts.push_back({p + "ffn_gate.weight", &L.gate, {E, F}, true});
    ts.push_back({p + "ffn_up.weight", &L.up, {E, F}, true});
    ts.push_back({p + "ffn_down.weight", &L.down, {F, E}, true});
  }
  for (const auto& t : ts) g.add_tensor(t.name, t.matrix ? matrix_type : DType::F32, t.ne);
  auto st = g.begin(path);
  if (!st) { *err = st.error().message; return false; }
  std::vector<uint8_t> q;
  for (const auto& t : ts) {
    if (t.matrix && matrix_type != DType::F32) {
      const int64_t cols = int64_t(t.ne[0]), rows = int64_t(t.ne[1]);
      const size_t row_bytes = dtype_row_bytes(matrix_type, uint64_t(cols));
      q.resize(row_bytes * size_t(rows));
      for (int64_t r = 0; r < rows; ++r)
        quantize_row(matrix_type, t.d->data() + r * cols, q.data() + size_t(r) * row_bytes, cols, QuantEffort::kFast);
      st = g.write_tensor_data(q.data(), q.size());
    } else {
      st = g.write_tensor_data(t.d->data(), t.d->size() * sizeof(float));
    }
    if (!st) { *err = st.error().message; return false; }
  }
  st = g.finish();
  if (!st) { *err = st.error().message; return false; }
  return true;
}

// Logits [n_tokens, n_vocab] of every position, recomputed independently in double precision.
inline std::vector<double> reference_logits(const TinySpec& s, const TinyWeights& w, const std::vector<int>& toks) {
  const int E = s.n_embd, H = s.n_head, HK = s.n_head_kv, D = s.head_dim, F = s.n_ff, T = int(toks.size());
  const bool neox = s.arch != "llama";
  auto rmsnorm = [&](const std::vector<double>& x, const std::vector<float>& g, int off, int n) {
    double ss = 0;
    for (int i = 0; i < n; ++i) ss += x[size_t(off + i)] * x[size_t(off + i)];
    const double r = 1.0 / std::sqrt(ss / n + s.eps);
    std::vector<double> y(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) y[size_t(i)] = x[size_t(off + i)] * r * g[size_t(i)];
    return y;
  };
  auto matvec = [](const std::vector<float>& W, const std::vector<double>& x, int rows, int cols) {
    std::vector<double> y(static_cast<size_t>(rows), 0.0);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) y[size_t(r)] += double(W[size_t(r) * cols + c]) * x[size_t(c)];
    return y;
  };
  auto rope = [&](std::vector<double>& v, int n_heads, int pos) {
    for (int h = 0; h < n_heads; ++h)
      for (int i = 0; i < D / 2; ++i) {
        const double theta = pos * std::pow(double(s.rope_base), -2.0 * i / D);
        const int a = neox ? h * D + i : h * D + 2 * i;
        const int b = neox ? h * D + i + D / 2 : h * D + 2 * i + 1;
        const double x0 = v[size_t(a)], x1 = v[size_t(b)];
        v[size_t(a)] = x0 * std::cos(theta) - x1 * std::sin(theta);
        v[size_t(b)] = x0 * std::sin(theta) + x1 * std::cos(theta);
      }
  };
  std::vector<std::vector<double>> x(static_cast<size_t>(T));
  for (int t = 0; t < T; ++t) x[size_t(t)].assign(w.tok_embd.begin() + long(toks[size_t(t)]) * E,
                                                    w.tok_embd.begin() + long(toks[size_t(t)] + 1) * E);
  for (int l = 0; l < s.n_layer; ++l) {
    const auto& L = w.layers[size_t(l)];
    std::vector<std::vector<double>> q(static_cast<size_t>(T)), k(static_cast<size_t>(T)), v(static_cast<size_t>(T));
    for (int t = 0; t < T; ++t) {
      auto xn = rmsnorm(x[size_t(t)], L.attn_norm, 0, E);
      q[size_t(t)] = matvec(L.wq, xn, H * D, E);
      k[size_t(t)] = matvec(L.wk, xn, HK * D, E);
      v[size_t(t)] = matvec(L.wv, xn, HK * D, E);
      if (!L.bq.empty()) {
        for (int i = 0; i < H * D; ++i) q[size_t(t)][size_t(i)] += L.bq[size_t(i)];
        for (int i = 0; i < HK * D; ++i) { k[size_t(t)][size_t(i)] += L.bk[size_t(i)]; v[size_t(t)][size_t(i)] += L.bv[size_t(i)]; }
      }
      if (!L.q_norm.empty()) {
        for (int h = 0; h < H; ++h) { auto y = rmsnorm(q[size_t(t)], L.q_norm, h * D, D); std::copy(y.begin(), y.end(), q[size_t(t)].begin() + h * D); }
        for (int h = 0; h < HK; ++h) { auto y = rmsnorm(k[size_t(t)], L.k_norm, h * D, D); std::copy(y.begin(), y.end(), k[size_t(t)].begin() + h * D); }
      }
      rope(q[size_t(t)], H, t);
      rope(k[size_t(t)], HK, t);
    }
    for (int t = 0; t < T; ++t) {
      std::vector<double> att(static_cast<size_t>(H * D), 0.0);
      for (int h = 0; h < H; ++h) {
        const int hk = h / (H / HK);
        std::vector<double> sc(static_cast<size_t>(t + 1));
        double mx = -1e300;
        for (int j = 0; j <= t; ++j) {
          double d = 0;
          for (int i = 0; i < D; ++i) d += q[size_t(t)][size_t(h * D + i)] * k[size_t(j)][size_t(hk * D + i)];
          sc[size_t(j)] = d / std::sqrt(double(D));
          mx = std::max(mx, sc[size_t(j)]);
        }
        double sum = 0;
        for (auto& z : sc) { z = std::exp(z - mx); sum += z; }
        for (int j = 0; j <= t; ++j)
          for (int i = 0; i < D; ++i) att[size_t(h * D + i)] += sc[size_t(j)] / sum * v[size_t(j)][size_t(hk * D + i)];
      }
      auto o = matvec(L.wo, att, E, H * D);
      for (int i = 0; i < E; ++i) x[size_t(t)][size_t(i)] += o[size_t(i)];
      auto xn = rmsnorm(x[size_t(t)], L.ffn_norm, 0, E);
      auto g = matvec(L.gate, xn, F, E), u = matvec(L.up, xn, F, E);
      for (int i = 0; i < F; ++i) g[size_t(i)] = g[size_t(i)] / (1.0 + std::exp(-g[size_t(i)])) * u[size_t(i)];
      auto d = matvec(L.down, g, E, F);
      for (int i = 0; i < E; ++i) x[size_t(t)][size_t(i)] += d[size_t(i)];
    }
  }
  std::vector<double> out;
  for (int t = 0; t < T; ++t) {
    auto xn = rmsnorm(x[size_t(t)], w.out_norm, 0, E);
    auto lg = matvec(w.output, xn, s.n_vocab, E);
    out.insert(out.end(), lg.begin(), lg.end());
  }
  return out;
}

}  // namespace nt::test

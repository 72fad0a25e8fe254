// model/model_loader.cpp — Model::load: config, then every tensor checked for presence and shape.
#include "core/strings.h"
#include "model/architectures.h"
#include "model/model.h"

namespace nt {

namespace {

// Rows [r0, r0 + n) of m (a fused tensor's part): rows are whole, so any type splits this way.
MatView row_range(const MatView& m, int64_t r0, int64_t n) {
  MatView v = m;
  v.data = m.data + static_cast<size_t>(r0) * m.row_bytes;
  v.n_rows = n;
  return v;
}

}  // namespace

uint64_t Model::weight_bytes() const {
  uint64_t n = 0;
  for (const auto& t : gguf_.tensors()) n += t.n_bytes;
  return n;
}

Result<std::unique_ptr<Model>> Model::load(const std::string& path) {
  auto f = GgufFile::open(path);
  if (!f) return f.error();
  auto cfg = read_model_config(*f);
  if (!cfg) return cfg.error();
  auto m = std::make_unique<Model>();
  m->gguf_ = std::move(*f);
  m->cfg_ = *cfg;
  ModelConfig& c = m->cfg_;
  ModelWeights& w = m->w_;
  WeightLoader wl(m->gguf_, w.owned);

  const GgufTensor* emb = m->gguf_.find_tensor("token_embd.weight");
  if (!emb) return make_error("%s: missing tensor 'token_embd.weight'", path.c_str());
  c.n_vocab = static_cast<int>(emb->ne[1]);
  auto te = wl.matrix("token_embd.weight", c.n_embd, c.n_vocab);
  if (!te) return te.error();
  w.tok_embd = *te;
  auto on = wl.vector("output_norm.weight", c.n_embd);
  if (!on) return on.error();
  w.output_norm = *on;
  if (wl.has("output.weight")) {
    auto out = wl.matrix("output.weight", c.n_embd, c.n_vocab);
    if (!out) return out.error();
    w.output = *out;
  } else {
    w.output = w.tok_embd;
    w.tied_output = true;
  }
  if (wl.has("rope_freqs.weight")) {
    auto rf = wl.vector("rope_freqs.weight", c.rope.n_rot / 2);
    if (!rf) return rf.error();
    w.rope_freqs.assign(*rf, *rf + c.rope.n_rot / 2);
    c.rope.freq_factors = w.rope_freqs.data();
  }

  const ArchInfo& arch = arch_info(c.arch);
  const int64_t q_dim = int64_t(c.n_head) * c.head_dim, kv_dim = int64_t(c.n_head_kv) * c.head_dim;
  w.layers.resize(static_cast<size_t>(c.n_layer));
  for (int il = 0; il < c.n_layer; ++il) {
    LayerWeights& l = w.layers[static_cast<size_t>(il)];
    auto vec = [&](const char* s, int64_t n, const float*& out) { return wl.vector_into(layer_tensor(il, s), n, out); };
    auto mat = [&](const char* s, int64_t cols, int64_t rows, MatView& out) {
      return wl.matrix_into(layer_tensor(il, s), cols, rows, out);
    };
    NT_TRY(vec("attn_norm.weight", c.n_embd, l.attn_norm));
    if (c.is_recurrent(il)) {
      // a Gated DeltaNet layer: its own tensors (the hook), no attention projections
    } else if (c.attn_output_gate) {  // per head: head_dim Q rows, then head_dim gate rows
      NT_TRY(mat("attn_q.weight", c.n_embd, 2 * q_dim, l.wq));
      NT_TRY(mat("attn_k.weight", c.n_embd, kv_dim, l.wk));
      NT_TRY(mat("attn_v.weight", c.n_embd, kv_dim, l.wv));
    } else if (wl.has(layer_tensor(il, "attn_qkv.weight"))) {  // fused (phi3): Q, K, V rows in that order
      MatView qkv;
      NT_TRY(mat("attn_qkv.weight", c.n_embd, q_dim + 2 * kv_dim, qkv));
      l.wq = row_range(qkv, 0, q_dim);
      l.wk = row_range(qkv, q_dim, kv_dim);
      l.wv = row_range(qkv, q_dim + kv_dim, kv_dim);
    } else {
      NT_TRY(mat("attn_q.weight", c.n_embd, q_dim, l.wq));
      NT_TRY(mat("attn_k.weight", c.n_embd, kv_dim, l.wk));
      NT_TRY(mat("attn_v.weight", c.n_embd, kv_dim, l.wv));
    }
    if (!c.is_recurrent(il)) NT_TRY(mat("attn_output.weight", q_dim, c.n_embd, l.wo));
    NT_TRY(vec(arch.ffn_norm_tensor, c.n_embd, l.ffn_norm));
    if (wl.has(layer_tensor(il, "ffn_gate.weight"))) {
      NT_TRY(mat("ffn_gate.weight", c.n_embd, c.n_ff, l.w_gate));
      NT_TRY(mat("ffn_up.weight", c.n_embd, c.n_ff, l.w_up));
    } else {  // fused (phi3): ffn_up holds the gate rows, then the up rows
      MatView gate_up;
      NT_TRY(mat("ffn_up.weight", c.n_embd, 2 * int64_t(c.n_ff), gate_up));
      l.w_gate = row_range(gate_up, 0, c.n_ff);
      l.w_up = row_range(gate_up, c.n_ff, c.n_ff);
    }
    NT_TRY(mat("ffn_down.weight", c.n_ff, c.n_embd, l.w_down));
    NT_TRY(load_layer_vectors(wl, c, il, arch.layer_vectors, l));
    if (arch.load_layer) NT_TRY(arch.load_layer(wl, c, il, l));
  }
  if (arch.load_model) NT_TRY(arch.load_model(wl, c, w));
  return m;
}

Status load_layer_vectors(const WeightLoader& wl, const ModelConfig& c, int il, std::span<const LayerVector> vectors,
                          LayerWeights& l) {
  for (const LayerVector& v : vectors) {
    auto r = wl.vector(layer_tensor(il, v.tensor), vec_len(v.len, c.n_head, c.n_head_kv, c.head_dim, c.n_embd));
    if (!r) return r.error();
    l.*v.field = *r;
  }
  return {};
}

}  // namespace nt

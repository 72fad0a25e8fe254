// model/llama.cpp — the llama architecture (llama2.c stories, Llama 2/3, Mistral, SmolLM): the
// shared pre-norm decoder layer with normal-style RoPE, no biases; optional Llama 3 rope_freqs
// (read by the loader) and a tied or separate output weight.
#include "model/architectures.h"

namespace nt {

Status llama_load_layer(const WeightLoader& wl, const ModelConfig& c, int il, LayerWeights& l) {
  // Some llama-architecture exports carry attention biases; use them when present.
  if (wl.has(layer_tensor(il, "attn_q.bias"))) {
    auto bq = wl.vector(layer_tensor(il, "attn_q.bias"), int64_t(c.n_head) * c.head_dim);
    if (!bq) return bq.error();
    auto bk = wl.vector(layer_tensor(il, "attn_k.bias"), int64_t(c.n_head_kv) * c.head_dim);
    if (!bk) return bk.error();
    auto bv = wl.vector(layer_tensor(il, "attn_v.bias"), int64_t(c.n_head_kv) * c.head_dim);
    if (!bv) return bv.error();
    l.bq = *bq;
    l.bk = *bk;
    l.bv = *bv;
  }
  return {};
}

}  // namespace nt

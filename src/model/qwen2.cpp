// model/qwen2.cpp — the qwen2 architecture: the shared decoder layer with Q/K/V biases and
// NeoX-style RoPE (style set in model_config.cpp).
#include "model/architectures.h"

namespace nt {

Status load_qkv_bias(const WeightLoader& wl, const ModelConfig& c, int il, LayerWeights& l) {
  auto bq = wl.vector(layer_tensor(il, "attn_q.bias"), int64_t(c.n_head) * c.head_dim);
  if (!bq) return bq.error();
  auto bk = wl.vector(layer_tensor(il, "attn_k.bias"), int64_t(c.n_head_kv) * c.head_dim);
  if (!bk) return bk.error();
  auto bv = wl.vector(layer_tensor(il, "attn_v.bias"), int64_t(c.n_head_kv) * c.head_dim);
  if (!bv) return bv.error();
  l.bq = *bq;
  l.bk = *bk;
  l.bv = *bv;
  return {};
}

Status qwen2_load_layer(const WeightLoader& wl, const ModelConfig& c, int il, LayerWeights& l) {
  return load_qkv_bias(wl, c, il, l);
}

}  // namespace nt

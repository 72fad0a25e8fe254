// model/qwen3.cpp — the qwen3 architecture: the shared decoder layer with per-head RMS norms on Q
// and K (before RoPE), NeoX-style RoPE, an explicit head_dim (attention.key_length), no biases.
#include "model/architectures.h"

namespace nt {

Status qwen3_load_layer(const WeightLoader& wl, const ModelConfig& c, int il, LayerWeights& l) {
  auto qn = wl.vector(layer_tensor(il, "attn_q_norm.weight"), c.head_dim);
  if (!qn) return qn.error();
  auto kn = wl.vector(layer_tensor(il, "attn_k_norm.weight"), c.head_dim);
  if (!kn) return kn.error();
  l.q_norm = *qn;
  l.k_norm = *kn;
  return {};
}

}  // namespace nt

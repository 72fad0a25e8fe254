// model/llama.cpp — the llama architecture (llama2.c stories, Llama 2/3, Mistral, SmolLM): the
// shared pre-norm decoder layer with normal-style RoPE, no biases; optional Llama 3 rope_freqs
// (read by the loader) and a tied or separate output weight.
#include "model/architectures.h"

namespace nt {

Status llama_load_layer(const WeightLoader& wl, const ModelConfig& c, int il, LayerWeights& l) {
  // Some llama-architecture exports carry attention biases; use them when present.
  if (wl.has(layer_tensor(il, "attn_q.bias"))) return load_qkv_bias(wl, c, il, l);
  return {};
}

}  // namespace nt

// model/llama.cpp — the llama architecture's loader hook: some llama-architecture exports carry
// Q/K/V attention biases; use them when present (all three, or an error naming the missing one).
#include "model/architectures.h"

namespace nt {

Status llama_load_layer(const WeightLoader& wl, const ModelConfig& c, int il, LayerWeights& l) {
  if (wl.has(layer_tensor(il, kQkvBias[0].tensor))) return load_layer_vectors(wl, c, il, kQkvBias, l);
  return {};
}

}  // namespace nt

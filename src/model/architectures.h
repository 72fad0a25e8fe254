// model/architectures.h — what each architecture adds to the shared decoder layer. One .cpp per
// architecture (llama.cpp, qwen2.cpp, qwen3.cpp); the shared layer loop lives in forward.cpp.
#pragma once

#include "model/model.h"
#include "model/weight_loader.h"

namespace nt {

// Loads the architecture-specific tensors of layer il (biases, Q/K norms) after the shared ones.
Status llama_load_layer(const WeightLoader& wl, const ModelConfig& c, int il, LayerWeights& l);
Status qwen2_load_layer(const WeightLoader& wl, const ModelConfig& c, int il, LayerWeights& l);
// Q/K/V biases of layer il (defined in qwen2.cpp; llama uses them when a file has them).
Status load_qkv_bias(const WeightLoader& wl, const ModelConfig& c, int il, LayerWeights& l);
Status qwen3_load_layer(const WeightLoader& wl, const ModelConfig& c, int il, LayerWeights& l);

}  // namespace nt

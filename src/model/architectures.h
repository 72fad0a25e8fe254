// model/architectures.h — internal: the pieces the rows of arch_table.cpp are built from (shared
// per-layer vector lists, loader hooks). One <arch>.cpp per architecture that needs a hook
// (llama.cpp, phi3.cpp, gemma3.cpp); the shared layer loop lives in forward.cpp.
#pragma once

#include <span>

#include "model/arch_table.h"
#include "model/model.h"
#include "model/weight_loader.h"

namespace nt {

// Q/K/V biases: required by qwen2, used by llama when a file has them.
extern const LayerVector kQkvBias[3];

// Loads `vectors` of layer il into l (errors name the missing or mis-sized tensor).
Status load_layer_vectors(const WeightLoader& wl, const ModelConfig& c, int il, std::span<const LayerVector> vectors,
                          LayerWeights& l);

// Hooks (ArchInfo::load_layer).
Status llama_load_layer(const WeightLoader& wl, const ModelConfig& c, int il, LayerWeights& l);
Status phi3_load_model(const WeightLoader& wl, const ModelConfig& c, ModelWeights& w);
Status gemma3_read_config(const GgufFile& f, ModelConfig& c);
Status qwen35_read_config(const GgufFile& f, ModelConfig& c);
Status qwen35_load_layer(const WeightLoader& wl, const ModelConfig& c, int il, LayerWeights& l);

}  // namespace nt

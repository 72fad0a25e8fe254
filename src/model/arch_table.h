// model/arch_table.h — the one table of supported architectures. A row names an architecture
// (general.architecture, also the prefix of its metadata keys), its RoPE style, the per-layer
// vectors it adds to the shared decoder layer, and an optional loader hook for anything else.
// Config reading, the model loader, `nexttok synth` and every "not supported" message look
// architectures up here. Adding one: a row in arch_table.cpp, and an <arch>.cpp if it needs a hook.
// Must not know: the forward pass.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/result.h"
#include "kernels/kernels.h"

namespace nt {

struct LayerWeights;
struct ModelConfig;
struct ModelWeights;
class GgufFile;
class WeightLoader;

enum class Arch { Llama, Qwen2, Qwen3, Phi3, Gemma3, Qwen35 };

// Length of a per-layer vector: n_head * head_dim, n_head_kv * head_dim, head_dim, or n_embd.
enum class VecLen { QDim, KvDim, HeadDim, Embd };
int64_t vec_len(VecLen len, int64_t n_head, int64_t n_head_kv, int64_t head_dim, int64_t n_embd);

// A 1-D tensor blk.<il>.<tensor> that an architecture requires in every layer, and its field.
struct LayerVector {
  const char* tensor;                  // e.g. "attn_q.bias"
  VecLen len;
  const float* LayerWeights::*field;   // where the loader puts it
  bool is_norm;                        // a norm weight (synth writes ones), else a bias
};

// Loads what an architecture adds to layer il beyond its layer_vectors (e.g. optional tensors).
using LayerHook = Status (*)(const WeightLoader& wl, const ModelConfig& c, int il, LayerWeights& l);
// Reads the architecture's own metadata keys into c, after the shared ones.
using ConfigHook = Status (*)(const GgufFile& f, ModelConfig& c);
// Loads model-level tensors beyond the shared ones (e.g. LongRoPE factors).
using ModelHook = Status (*)(const WeightLoader& wl, const ModelConfig& c, ModelWeights& w);

// What `nexttok synth` writes beyond the shared decoder layer.
enum class SynthLayout {
  Plain,    // attn_q/k/v, ffn_gate/up
  Fused,    // phi3: attn_qkv, ffn_up holding gate and up, rope_factors_long/short
  Sliding,  // gemma3: sliding_window keys, local RoPE base, logit soft-capping
  Hybrid,   // qwen35: Gated DeltaNet layers (ssm.* keys and tensors) between gated attention layers
};

struct ArchInfo {
  Arch arch;
  const char* name;                            // general.architecture
  const char* summary;                         // what it adds to the shared layer, for help text
  RopeStyle rope;
  std::span<const LayerVector> layer_vectors;  // required in every layer
  LayerHook load_layer;                        // nullptr when layer_vectors are all
  // What `nexttok synth` writes for this family when not told (its trained models' usual values).
  double synth_rope_freq_base;
  float synth_rms_eps;
  bool synth_key_length;  // state attention.key_length even when it is n_embd / n_head
  ConfigHook read_config = nullptr;
  ModelHook load_model = nullptr;
  SynthLayout synth_layout = SynthLayout::Plain;
  const char* ffn_norm_tensor = "ffn_norm.weight";  // the FFN's pre-norm (qwen35: post_attention_norm)
};

std::span<const ArchInfo> arch_table();
// The row for general.architecture `name`; nullptr when this build cannot run it.
const ArchInfo* find_arch(std::string_view name);
const ArchInfo& arch_info(Arch arch);
// "llama, qwen2, qwen3": for "not supported" messages and help text.
std::string supported_arch_names();

}  // namespace nt

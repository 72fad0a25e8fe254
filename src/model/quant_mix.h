// model/quant_mix.h — which type each tensor gets when a model is quantized to a preset
// (f16, q8_0, q4_k_m, ...): llama.cpp's mixing rules, so files compare like for like.
// Owns: preset names and their GGUF file-type ids, the per-tensor type choice (norms and 1-D
// tensors kept, output/attn_v/ffn_down bumps for *_K_M, fallbacks for rows a block cannot hold).
// Must not know: how blocks are encoded (tensor/quantize.h), files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensor/dtype.h"

namespace nt {

struct QuantPreset {
  const char* name;    // "q4_k_m"
  uint32_t ftype;      // general.file_type (llama_ftype)
  DType base;          // the type most weights get
  bool k_mix;          // *_K_M rules (attn_v / ffn_down bumps)
};

// Case-insensitive: f32, f16, bf16, q8_0, q4_0, q4_k_m, q5_k_m, q6_k.
std::optional<QuantPreset> quant_preset_from_name(std::string_view name);
// "f32, f16, bf16, q8_0, q4_0, q4_k_m, q5_k_m, q6_k"
std::string quant_preset_names();
// llama.cpp's name for a general.file_type value ("Q4_K_M", "MOSTLY_F16", ...); "unknown (N)".
std::string ftype_name(uint32_t ftype);

struct TensorDesc {
  std::string name;
  uint32_t n_dims = 1;
  uint64_t ne0 = 1;   // row length
  DType type = DType::F32;  // current type
};

struct TensorPlan {
  DType type;          // type to write
  bool quantized;      // false: kept as is (norms, 1-D, biases)
  bool fallback;       // true when the preferred type could not hold the row length
  DType preferred;     // what the mix wanted before the fallback
};

// Plans every tensor of a model (in file order, which the attn_v / ffn_down counters follow).
// n_layer: the model's block count (for the ffn_down "more bits" layers).
std::vector<TensorPlan> plan_quant_mix(const QuantPreset& preset, const std::vector<TensorDesc>& tensors,
                                       uint64_t n_layer);

}  // namespace nt

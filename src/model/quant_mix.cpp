// model/quant_mix.cpp — llama.cpp's quantization mix rules for the presets we offer (rule facts:
// which tensors stay, which get more bits, the fallback chain for short rows).
#include "model/quant_mix.h"

#include "core/strings.h"

namespace nt {

namespace {

constexpr QuantPreset kPresets[] = {
    {"f32", 0, DType::F32, false},    {"f16", 1, DType::F16, false},   {"bf16", 32, DType::BF16, false},
    {"q8_0", 7, DType::Q8_0, false},  {"q4_0", 2, DType::Q4_0, false}, {"q4_k_m", 15, DType::Q4_K, true},
    {"q5_k_m", 17, DType::Q5_K, true}, {"q6_k", 18, DType::Q6_K, false},
};

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }
bool is_quantized_type(DType t) { return dtype_info(t).block_size > 1; }

// Layers that get more bits in the *_K_M mixes: the first and last eighth, and every third between.
bool use_more_bits(int64_t i, int64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

// A type whose block cannot divide the row falls back to a 32-block type, then to F16.
DType fallback(DType t, uint64_t ne0, bool& fell_back) {
  fell_back = false;
  if (ne0 % dtype_info(t).block_size == 0) return t;
  fell_back = true;
  DType r = t;
  switch (t) {
    case DType::Q4_K: r = DType::Q5_0; break;
    case DType::Q5_K: r = DType::Q5_1; break;
    case DType::Q6_K: r = DType::Q8_0; break;
    case DType::Q2_K: case DType::Q3_K: r = DType::Q4_0; break;
    default: break;
  }
  if (ne0 % dtype_info(r).block_size != 0) r = DType::F16;
  return r;
}

}  // namespace

std::optional<QuantPreset> quant_preset_from_name(std::string_view name) {
  for (const auto& p : kPresets)
    if (iequals(p.name, name)) return p;
  return std::nullopt;
}

std::string quant_preset_names() {
  std::string s;
  for (const auto& p : kPresets) s += (s.empty() ? "" : ", ") + std::string(p.name);
  return s;
}

std::string ftype_name(uint32_t ftype) {
  switch (ftype) {
    case 0: return "ALL_F32";
    case 1: return "MOSTLY_F16";
    case 2: return "MOSTLY_Q4_0";
    case 3: return "MOSTLY_Q4_1";
    case 7: return "MOSTLY_Q8_0";
    case 8: return "MOSTLY_Q5_0";
    case 9: return "MOSTLY_Q5_1";
    case 10: return "MOSTLY_Q2_K";
    case 11: return "MOSTLY_Q3_K_S";
    case 12: return "MOSTLY_Q3_K_M";
    case 13: return "MOSTLY_Q3_K_L";
    case 14: return "MOSTLY_Q4_K_S";
    case 15: return "MOSTLY_Q4_K_M";
    case 16: return "MOSTLY_Q5_K_S";
    case 17: return "MOSTLY_Q5_K_M";
    case 18: return "MOSTLY_Q6_K";
    case 19: return "MOSTLY_IQ2_XXS";
    case 20: return "MOSTLY_IQ2_XS";
    case 21: return "MOSTLY_Q2_K_S";
    case 22: return "MOSTLY_IQ3_XS";
    case 23: return "MOSTLY_IQ3_XXS";
    case 24: return "MOSTLY_IQ1_S";
    case 25: return "MOSTLY_IQ4_NL";
    case 26: return "MOSTLY_IQ3_S";
    case 27: return "MOSTLY_IQ3_M";
    case 28: return "MOSTLY_IQ2_S";
    case 29: return "MOSTLY_IQ2_M";
    case 30: return "MOSTLY_IQ4_XS";
    case 31: return "MOSTLY_IQ1_M";
    case 32: return "MOSTLY_BF16";
    case 36: return "MOSTLY_TQ1_0";
    case 37: return "MOSTLY_TQ2_0";
    case 38: return "MOSTLY_MXFP4_MOE";
    default: return str_printf("unknown (%u)", ftype);
  }
}

std::vector<TensorPlan> plan_quant_mix(const QuantPreset& preset, const std::vector<TensorDesc>& tensors,
                                       uint64_t n_layer) {
  bool has_output = false;
  int64_t n_attn_v = 0;
  for (const auto& t : tensors) {
    if (t.name == "output.weight") has_output = true;
    if (contains(t.name, "attn_v.weight") || contains(t.name, "attn_qkv.weight") || contains(t.name, "attn_kv_b.weight"))
      ++n_attn_v;
  }
  int64_t i_attn_v = 0, i_ffn_down = 0;
  const int64_t n_l = static_cast<int64_t>(n_layer);
  std::vector<TensorPlan> plans;
  plans.reserve(tensors.size());
  for (const auto& t : tensors) {
    // only 2-D+ weight matrices are converted; norms, biases, 1-D tensors keep their type
    bool convert = t.n_dims >= 2 && ends_with(t.name, "weight") && !contains(t.name, "_norm.weight") &&
                   !contains(t.name, "ffn_gate_inp.weight") && !contains(t.name, "position_embd") &&
                   !contains(t.name, "token_types") &&
                   !contains(t.name, "ssm_conv1d");  // read as f32 (llama.cpp never quantizes it)
    if (!convert || preset.base == DType::F32) {
      plans.push_back({t.type, false, false, t.type});
      if (convert) plans.back() = {DType::F32, true, false, DType::F32};
      continue;
    }
    DType want = preset.base;
    if (is_quantized_type(preset.base)) {
      const bool is_output = t.name == "output.weight" || (!has_output && t.name == "token_embd.weight");
      const bool is_attn_v = contains(t.name, "attn_v.weight") || contains(t.name, "attn_qkv.weight") ||
                             contains(t.name, "attn_kv_b.weight");
      if (is_output) {
        // the output projection (or the tied embedding) gets Q6_K, or Q8_0 when the base block
        // cannot hold its rows
        if (t.ne0 % dtype_info(preset.base).block_size != 0) want = DType::Q8_0;
        else if (preset.base != DType::Q8_0) want = DType::Q6_K;
      } else if (is_attn_v) {
        if (preset.k_mix && use_more_bits(i_attn_v, n_attn_v)) want = DType::Q6_K;
        ++i_attn_v;
      } else if (contains(t.name, "ffn_down")) {
        if (preset.k_mix && use_more_bits(i_ffn_down, n_l)) want = DType::Q6_K;
        ++i_ffn_down;
      }
    }
    bool fell = false;
    DType got = is_quantized_type(want) ? fallback(want, t.ne0, fell) : want;
    plans.push_back({got, true, fell, want});
  }
  return plans;
}

}  // namespace nt

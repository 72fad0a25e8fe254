// model/arch_table.cpp — the rows of the architecture table (see arch_table.h).
#include "model/arch_table.h"

#include "core/check.h"
#include "model/architectures.h"

namespace nt {

const LayerVector kQkvBias[3] = {
    {"attn_q.bias", VecLen::QDim, &LayerWeights::bq, false},
    {"attn_k.bias", VecLen::KvDim, &LayerWeights::bk, false},
    {"attn_v.bias", VecLen::KvDim, &LayerWeights::bv, false},
};

namespace {

// Per-head RMS norms on Q and K, applied before RoPE.
const LayerVector kQkNorm[] = {
    {"attn_q_norm.weight", VecLen::HeadDim, &LayerWeights::q_norm, true},
    {"attn_k_norm.weight", VecLen::HeadDim, &LayerWeights::k_norm, true},
};

// Gemma 3: Q/K norms and norms of the attention and FFN outputs before each residual add.
const LayerVector kGemma3Vectors[] = {
    {"attn_q_norm.weight", VecLen::HeadDim, &LayerWeights::q_norm, true},
    {"attn_k_norm.weight", VecLen::HeadDim, &LayerWeights::k_norm, true},
    {"post_attention_norm.weight", VecLen::Embd, &LayerWeights::attn_post_norm, true},
    {"post_ffw_norm.weight", VecLen::Embd, &LayerWeights::ffn_post_norm, true},
};

const ArchInfo kArchTable[] = {
    // llama2.c stories, Llama 2/3, Mistral, SmolLM: the shared pre-norm layer, no biases unless a
    // file has them; optional Llama 3 rope_freqs (read by the model loader).
    {Arch::Llama, "llama", "", RopeStyle::Normal, {}, llama_load_layer, 10000.0, 1e-5f, false},
    {Arch::Qwen2, "qwen2", "q/k/v biases", RopeStyle::NeoX, kQkvBias, nullptr, 1000000.0, 1e-6f, false},
    // Qwen3 files state head_dim (attention.key_length), which need not be n_embd / n_head.
    {Arch::Qwen3, "qwen3", "q/k norms", RopeStyle::NeoX, kQkNorm, nullptr, 1000000.0, 1e-6f, true},
    // Phi-3/3.5/4-mini: fused weights (read by the shared loader), LongRoPE factors (phi3.cpp).
    {Arch::Phi3, "phi3", "fused qkv and gate/up, LongRoPE", RopeStyle::NeoX, {}, nullptr, 10000.0, 1e-5f, false,
     nullptr, phi3_load_model, SynthLayout::Fused},
    // Gemma 3 (gemma3.cpp): sliding-window layers with their own RoPE base, GELU FFN, post-norms.
    {Arch::Gemma3, "gemma3", "sliding window, q/k norms, post-norms, GELU", RopeStyle::NeoX, kGemma3Vectors, nullptr,
     1000000.0, 1e-6f, true, gemma3_read_config, nullptr, SynthLayout::Sliding},
    // Qwen3.5 (qwen35.cpp): Gated DeltaNet layers with a per-sequence recurrent state, and gated
    // full-attention layers with Q/K norms and partial RoPE.
    {Arch::Qwen35, "qwen35", "Gated DeltaNet linear attention, gated attention", RopeStyle::NeoX, {},
     qwen35_load_layer, 10000000.0, 1e-6f, true, qwen35_read_config, nullptr, SynthLayout::Hybrid,
     "post_attention_norm.weight"},
};

}  // namespace

int64_t vec_len(VecLen len, int64_t n_head, int64_t n_head_kv, int64_t head_dim, int64_t n_embd) {
  switch (len) {
    case VecLen::Embd: return n_embd;
    case VecLen::QDim: return n_head * head_dim;
    case VecLen::KvDim: return n_head_kv * head_dim;
    case VecLen::HeadDim: return head_dim;
  }
  NT_CHECK(false && "unknown VecLen");
  return 0;
}

std::span<const ArchInfo> arch_table() { return kArchTable; }

const ArchInfo* find_arch(std::string_view name) {
  for (const ArchInfo& a : kArchTable)
    if (name == a.name) return &a;
  return nullptr;
}

const ArchInfo& arch_info(Arch arch) {
  for (const ArchInfo& a : kArchTable)
    if (a.arch == arch) return a;
  NT_CHECK(false && "architecture missing from kArchTable");
  return kArchTable[0];
}

std::string supported_arch_names() {
  std::string s;
  for (const ArchInfo& a : kArchTable) s += (s.empty() ? "" : ", ") + std::string(a.name);
  return s;
}

}  // namespace nt

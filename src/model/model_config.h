// model/model_config.h — the hyper-parameters the forward pass needs, read from GGUF metadata.
// Owns: defaults and validation of architecture keys (`<arch>.*`). Must not know: tensors' data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "gguf/gguf.h"
#include "kernels/delta_net.h"
#include "kernels/kernels.h"
#include "model/arch_table.h"

namespace nt {

enum class FfnAct { Silu, Gelu };  // the gate's activation: silu(gate) * up, or gelu(gate) * up

struct ModelConfig {
  Arch arch = Arch::Llama;
  std::string arch_name;  // general.architecture
  std::string name;       // general.name (may be empty)
  int n_vocab = 0;
  int n_embd = 0;
  int n_layer = 0;
  int n_head = 0;
  int n_head_kv = 0;
  int head_dim = 0;  // per head, for Q and K (attention.key_length, else n_embd / n_head)
  int n_ff = 0;
  int n_ctx_train = 0;
  float rms_eps = 1e-5f;
  RopeParams rope;  // freq_factors filled by the model loader when a rope_freqs tensor exists

  // What architectures add to the shared layer (defaults: none of it).
  FfnAct ffn_act = FfnAct::Silu;
  float embd_scale = 1.0f;            // token embeddings are multiplied by it (gemma3: sqrt(n_embd))
  float attn_scale = 0.0f;            // scale of Q·K; 0 = 1 / sqrt(head_dim)
  float final_logit_softcap = 0.0f;   // logits = cap * tanh(logits / cap) when > 0
  // Sliding-window attention: layers with swa_layers[il] set attend to the last n_swa positions
  // (their own included) and rotate with rope_swa; n_swa 0 = every layer attends to everything.
  int n_swa = 0;
  std::vector<uint8_t> swa_layers;    // [n_layer] when n_swa > 0
  RopeParams rope_swa;

  // Hybrid recurrent models (qwen35): layers with recurrent_layers[il] set are Gated DeltaNet layers
  // (ssm, conv_kernel; a fixed-size state per sequence), the others gated full attention (the Q
  // projection holds a sigmoid output gate per head when attn_output_gate). Empty: all attention.
  std::vector<uint8_t> recurrent_layers;
  DeltaNetShape ssm;
  int ssm_conv_kernel = 0;
  bool attn_output_gate = false;

  bool is_recurrent(int il) const {
    return !recurrent_layers.empty() && recurrent_layers[static_cast<size_t>(il)] != 0;
  }
  int n_recurrent_layers() const {
    int n = 0;
    for (int il = 0; il < n_layer; ++il) n += is_recurrent(il);
    return n;
  }
  // Layers with a KV cache, and layer il's index among them (its KV cache layer).
  int n_kv_layers() const { return n_layer - n_recurrent_layers(); }
  int kv_layer(int il) const {
    int n = 0;
    for (int j = 0; j < il; ++j) n += !is_recurrent(j);
    return n;
  }
  // Channels of the short convolution (q, k and v of every head) and floats of one sequence's
  // recurrent state over all recurrent layers: per layer the conv state [(kernel - 1) x channels],
  // then the delta state (delta_net_state_floats).
  int64_t ssm_conv_channels() const {
    return 2 * int64_t(ssm.n_k_heads) * ssm.head_k_dim + int64_t(ssm.n_v_heads) * ssm.head_v_dim;
  }
  int64_t recurrent_floats_per_layer() const {
    if (recurrent_layers.empty()) return 0;
    return int64_t(ssm_conv_kernel - 1) * ssm_conv_channels() + delta_net_state_floats(ssm);
  }
  int64_t recurrent_floats() const { return recurrent_floats_per_layer() * n_recurrent_layers(); }

  bool is_swa(int il) const { return n_swa > 0 && swa_layers[static_cast<size_t>(il)] != 0; }
  int n_swa_layers() const {
    int n = 0;
    for (int il = 0; il < n_layer && n_swa > 0; ++il) n += is_swa(il);
    return n;
  }
};

// Reads and validates the config; errors name the missing or invalid key and the file.
Result<ModelConfig> read_model_config(const GgufFile& f);

}  // namespace nt

// model/model_config.h — the hyper-parameters the forward pass needs, read from GGUF metadata.
// Owns: defaults and validation of architecture keys (`<arch>.*`). Must not know: tensors' data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "gguf/gguf.h"
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

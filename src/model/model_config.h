// model/model_config.h — the hyper-parameters the forward pass needs, read from GGUF metadata.
// Owns: defaults and validation of architecture keys (`<arch>.*`). Must not know: tensors' data.
#pragma once

#include <string>

#include "core/result.h"
#include "gguf/gguf.h"
#include "kernels/kernels.h"
#include "model/arch_table.h"

namespace nt {

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
};

// Reads and validates the config; errors name the missing or invalid key and the file.
Result<ModelConfig> read_model_config(const GgufFile& f);

}  // namespace nt

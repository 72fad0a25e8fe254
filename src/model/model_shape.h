// model/model_shape.h — the hyperparameters of a model as its GGUF metadata states them.
// Owns: reading `<arch>.*`, `general.*` and tokenizer summary keys into one struct, the parameter
// and weight-byte totals, and the KV-cache size per token of that shape (kv_store.h computes it).
// Must not know: how the model is run, any one architecture's tensor layout (the key prefix comes
// from general.architecture).
//
// Every field is optional: a vocab-only file may lack model keys (or declare a placeholder shape),
// and a value absent from the file stays nullopt rather than being guessed (head_dim is the one
// derived value: key_length, else n_embd / n_head).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/result.h"
#include "gguf/gguf.h"
#include "tensor/dtype.h"

namespace nt {

struct ModelShape {
  std::optional<std::string> architecture;  // general.architecture
  std::optional<std::string> name;          // general.name
  std::optional<uint64_t> n_ctx_train;      // <arch>.context_length
  std::optional<uint64_t> n_layer;          // <arch>.block_count
  std::optional<uint64_t> n_embd;           // <arch>.embedding_length
  std::optional<uint64_t> n_head;           // <arch>.attention.head_count (max over layers if an array)
  std::optional<uint64_t> n_head_kv;        // <arch>.attention.head_count_kv, default n_head
  std::optional<uint64_t> head_dim;         // <arch>.attention.key_length, else n_embd / n_head
  std::optional<uint64_t> head_dim_v;       // <arch>.attention.value_length, else head_dim
  std::optional<uint64_t> n_ff;             // <arch>.feed_forward_length (max if an array)
  std::optional<double> rms_eps;            // <arch>.attention.layer_norm_rms_epsilon
  std::optional<double> rope_freq_base;     // <arch>.rope.freq_base
  std::optional<uint64_t> rope_dims;        // <arch>.rope.dimension_count
  std::optional<std::string> rope_scaling_type;        // <arch>.rope.scaling.type
  std::optional<double> rope_scaling_factor;           // <arch>.rope.scaling.factor
  std::optional<uint64_t> rope_scaling_orig_ctx;       // <arch>.rope.scaling.original_context_length
  std::optional<uint64_t> n_vocab;          // tokenizer.ggml.tokens count, else <arch>.vocab_size
  std::optional<std::string> tokenizer_model;  // tokenizer.ggml.model ("llama", "gpt2", "bert", ...)

  uint64_t n_tensors = 0;
  uint64_t n_params = 0;      // total elements of all tensors (as llama.cpp counts them)
  uint64_t weight_bytes = 0;  // total bytes of all tensor data

  // Bytes of K and V cache per token (all layers; kv_bytes_per_token in model/kv_store.h) for a
  // cache of k_type / v_type; nullopt when the file lacks n_layer / heads / head_dim. Sliding and
  // recurrent layers change what a model's cache holds: model/cache_footprint.h.
  std::optional<uint64_t> kv_bytes_per_token(DType k_type, DType v_type) const;
  std::optional<uint64_t> kv_bytes_per_token(DType cache_type) const { return kv_bytes_per_token(cache_type, cache_type); }
};

// Reads the shape of `f`. Errors only for values that are present but unusable (wrong type,
// zero heads, head count not dividing n_embd when head_dim must be derived).
Result<ModelShape> read_model_shape(const GgufFile& f);

}  // namespace nt

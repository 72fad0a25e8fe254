// model/cache_footprint.h — the memory a model's cache needs, by kind of layer: full-attention
// layers keep K and V of every position, sliding-window layers (gemma3) of their last n_swa
// positions only, recurrent layers (qwen35's Gated DeltaNet) a fixed state per sequence instead.
// Owns: which layers are which kind (ModelConfig's reading of the metadata, so the architecture
// decides whether a sliding_window key counts) and the byte figures `inspect` and `count` report.
// Must not know: how the cache is paged or shared.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "gguf/gguf.h"
#include "model/model_config.h"
#include "model/model_shape.h"
#include "tensor/dtype.h"

namespace nt {

struct CacheFootprint {
  uint64_t n_layer = 0;
  uint64_t n_full = 0;       // attention layers that keep every position
  uint64_t n_sliding = 0;    // attention layers that keep their last n_swa positions
  uint64_t n_recurrent = 0;  // layers with a fixed state per sequence and no KV cache
  uint64_t n_swa = 0;        // the sliding layers' window in positions (0: none)
  std::vector<int> attention_layers;   // the layers with a KV cache, in order (named by a config only)
  uint64_t layer_bytes_per_token = 0;  // K and V of one token in one attention layer
  uint64_t state_bytes_per_seq = 0;    // one sequence's recurrent state over all recurrent layers
  uint64_t conv_state_bytes_per_seq = 0;  // of which the short convolutions' (the rest: delta-rule states)

  // KV bytes one more token adds for good (the full-attention layers), and while it is inside the
  // window only (the sliding layers); their sum is every attention layer's bytes per token.
  uint64_t full_bytes_per_token() const;
  uint64_t sliding_bytes_per_token() const;
  uint64_t kv_bytes_per_token() const;
  // KV bytes of one sequence of n_tokens: the sliding layers capped at their window (what the cache
  // keeps of them), or every attention layer at every position. Saturate at UINT64_MAX.
  uint64_t kv_bytes(uint64_t n_tokens) const;
  uint64_t kv_bytes_uncapped(uint64_t n_tokens) const;
  // The cache of one sequence of n_tokens: its KV (windows applied) and its recurrent state.
  uint64_t seq_bytes(uint64_t n_tokens) const;
};

// The footprint of `shape` with a cache of k_type / v_type; `config` (when the architecture is one
// nexttok runs) names the sliding and recurrent layers, without it every layer is full attention.
// nullopt when the shape lacks n_layer, KV heads or head sizes.
std::optional<CacheFootprint> cache_footprint(const ModelShape& shape, const ModelConfig* config, DType k_type,
                                              DType v_type);
// The same with the config read from `f` (a file whose config does not read, such as a vocab-only
// file's placeholder shape, counts every layer as full attention).
std::optional<CacheFootprint> cache_footprint(const GgufFile& f, const ModelShape& shape, DType k_type, DType v_type);

// a * b and a + b, saturated at UINT64_MAX (a damaged file may declare a context of 2^64 - 1).
uint64_t saturating_mul(uint64_t a, uint64_t b);
uint64_t saturating_add(uint64_t a, uint64_t b);

}  // namespace nt

// model/cache_footprint.cpp — the cache memory by kind of layer (see cache_footprint.h).
#include "model/cache_footprint.h"

#include <algorithm>
#include <cstdint>

#include "model/kv_store.h"

namespace nt {

uint64_t saturating_mul(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

uint64_t saturating_add(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

uint64_t CacheFootprint::full_bytes_per_token() const { return saturating_mul(n_full, layer_bytes_per_token); }

uint64_t CacheFootprint::sliding_bytes_per_token() const { return saturating_mul(n_sliding, layer_bytes_per_token); }

uint64_t CacheFootprint::kv_bytes_per_token() const {
  return saturating_add(full_bytes_per_token(), sliding_bytes_per_token());
}

uint64_t CacheFootprint::kv_bytes(uint64_t n_tokens) const {
  const uint64_t windowed = n_swa > 0 ? std::min(n_tokens, n_swa) : n_tokens;
  return saturating_add(saturating_mul(full_bytes_per_token(), n_tokens),
                        saturating_mul(sliding_bytes_per_token(), windowed));
}

uint64_t CacheFootprint::kv_bytes_uncapped(uint64_t n_tokens) const {
  return saturating_mul(kv_bytes_per_token(), n_tokens);
}

uint64_t CacheFootprint::seq_bytes(uint64_t n_tokens) const {
  return saturating_add(kv_bytes(n_tokens), state_bytes_per_seq);
}

std::optional<CacheFootprint> cache_footprint(const ModelShape& s, const ModelConfig* c, DType k_type,
                                              DType v_type) {
  if (!s.n_layer || !s.n_head_kv || !s.head_dim || !s.head_dim_v) return std::nullopt;
  CacheFootprint fp;
  // K and V rows of one layer (kv_store.h's one definition); a hybrid model's per-layer head counts
  // name the attention layers' (the shape keeps their maximum).
  fp.layer_bytes_per_token = kv_bytes_per_token(1, *s.n_head_kv, *s.head_dim, *s.head_dim_v, k_type, v_type);
  fp.n_layer = *s.n_layer;
  if (!c) {
    fp.n_full = fp.n_layer;
    return fp;
  }
  for (int il = 0; il < c->n_layer; ++il) {
    if (c->is_recurrent(il)) {
      ++fp.n_recurrent;
      continue;
    }
    fp.attention_layers.push_back(il);
    ++(c->is_swa(il) ? fp.n_sliding : fp.n_full);
  }
  if (fp.n_sliding > 0) fp.n_swa = static_cast<uint64_t>(c->n_swa);
  if (fp.n_recurrent > 0) {
    fp.state_bytes_per_seq = static_cast<uint64_t>(c->recurrent_floats()) * sizeof(float);
    fp.conv_state_bytes_per_seq = static_cast<uint64_t>(c->ssm_conv_kernel - 1) *
                                  static_cast<uint64_t>(c->ssm_conv_channels()) * sizeof(float) *
                                  fp.n_recurrent;
  }
  return fp;
}

std::optional<CacheFootprint> cache_footprint(const GgufFile& f, const ModelShape& shape, DType k_type, DType v_type) {
  auto c = read_model_config(f);
  return cache_footprint(shape, c ? &*c : nullptr, k_type, v_type);
}

}  // namespace nt

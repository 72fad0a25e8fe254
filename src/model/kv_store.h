// model/kv_store.h — what the forward pass needs from a KV cache: its layout (layers, KV heads,
// head_dim, storage types — sized from this, never from a model), the one KV size per token, and
// row access by (layer, seq, pos).
// The kv layer implements KvStore (paged block pool, prefix sharing); the model sees only this.
// Must not know: how blocks are allocated or shared.
#pragma once

#include <cstddef>
#include <cstdint>

#include <vector>

#include "kernels/kernels.h"
#include "tensor/dtype.h"

namespace nt {

// Bytes of K and V for one token over all layers: per layer one K row of n_head_kv x head_dim_k
// values of k_type and one V row of n_head_kv x head_dim_v of v_type (Q8_0: 34 bytes per 32).
// The one definition the cache layout, ModelShape (inspect, count) and memory estimates use.
inline uint64_t kv_bytes_per_token(uint64_t n_layer, uint64_t n_head_kv, uint64_t head_dim_k, uint64_t head_dim_v,
                                   DType k_type, DType v_type) {
  return n_layer * (dtype_row_bytes(k_type, n_head_kv * head_dim_k) + dtype_row_bytes(v_type, n_head_kv * head_dim_v));
}

struct KvLayout {
  int n_layer = 0;
  int n_head_kv = 0;
  int head_dim = 0;
  DType k_type = DType::F16;
  DType v_type = DType::F16;
  int block_size = 32;  // tokens per cache block: the paging unit and the prefix cache's sharing unit
  // The most positions one sequence may hold (0: not stated; the model then assumes its training
  // context). Choices that depend on it, like LongRoPE's factors, are made from it.
  int64_t n_ctx_seq = 0;
  // Sliding-window layers (swa_layers[il] set) attend to their own position and the n_swa - 1
  // before it, no further back: the cache may drop their older rows (0: every layer sees everything).
  int n_swa = 0;
  std::vector<uint8_t> swa_layers;  // [n_layer] when n_swa > 0

  bool is_swa(int il) const { return n_swa > 0 && swa_layers[static_cast<size_t>(il)] != 0; }
  // Floats of one sequence's recurrent state over all recurrent layers (hybrid models such as
  // qwen35; 0: none). Constant in context, held per live sequence beside its KV blocks.
  int64_t recurrent_floats = 0;

  int64_t row_elems() const { return int64_t(n_head_kv) * head_dim; }  // one token, one layer
  size_t k_row_bytes() const { return dtype_row_bytes(k_type, static_cast<uint64_t>(row_elems())); }
  size_t v_row_bytes() const { return dtype_row_bytes(v_type, static_cast<uint64_t>(row_elems())); }
  // K and V of one token over all layers.
  size_t bytes_per_token() const {
    return kv_bytes_per_token(uint64_t(n_layer), uint64_t(n_head_kv), uint64_t(head_dim), uint64_t(head_dim), k_type,
                              v_type);
  }
  size_t bytes_per_block() const { return bytes_per_token() * size_t(block_size); }
};

class KvStore {
 public:
  virtual ~KvStore() = default;
  virtual const KvLayout& layout() const = 0;
  // Row pointers for writing position pos of seq (the caller reserved it beforehand).
  virtual uint8_t* k_row(int layer, int seq, int32_t pos) = 0;
  virtual uint8_t* v_row(int layer, int seq, int32_t pos) = 0;
  // Spans covering positions [0, n_kv) of seq for one layer, in position order. For a sliding layer
  // the spans of positions the window no longer reaches may have null k / v (dropped rows).
  virtual void spans(int layer, int seq, int32_t n_kv, std::vector<KvSpan>& out) const = 0;
  // The recurrent state of seq (layout().recurrent_floats floats, zeros when the sequence is new)
  // and the position of the next token it expects (the tokens before it are folded into the state).
  // Null when the layout has no recurrent state.
  virtual float* recurrent_state(int seq) { (void)seq; return nullptr; }
  virtual int32_t* recurrent_pos(int seq) { (void)seq; return nullptr; }
};

}  // namespace nt

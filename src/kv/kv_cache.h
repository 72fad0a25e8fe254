// kv/kv_cache.h — a paged KV cache: a fixed pool of blocks (block_size tokens each, all layers),
// and per-sequence block tables. Owns: cache memory, block allocation and reference counts,
// sequence lengths. Must not know: models or attention math (it hands out KvSpans of rows).
//
// Memory layout of one block: for each layer, K rows [block_size, n_head_kv * head_dim] then
// V rows [block_size, n_head_kv * head_dim], in the layout's storage types.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "model/kv_store.h"

namespace nt {

class KvCache final : public KvStore {
 public:
  // n_ctx: total token capacity (rounded up to whole blocks).
  static Result<KvCache> create(const KvLayout& layout, int64_t n_ctx);

  const KvLayout& layout() const override { return layout_; }
  size_t total_bytes() const { return storage_bytes_; }

  // Sequences are small integer ids handed out here.
  int new_sequence();
  void free_sequence(int seq);
  int32_t seq_len(int seq) const;
  // Makes room for positions [seq_len, seq_len + n): allocates blocks or fails with a message that
  // says how far over the capacity the request is. Never wraps or overwrites.
  Status reserve(int seq, int32_t n);
  // Marks positions up to new_len as written (after reserve).
  void set_len(int seq, int32_t new_len);
  // Forgets positions >= n (keeps a prefix; frees whole blocks beyond it).
  void truncate(int seq, int32_t n);

  uint8_t* k_row(int layer, int seq, int32_t pos) override;
  uint8_t* v_row(int layer, int seq, int32_t pos) override;
  void spans(int layer, int seq, int32_t n_kv, std::vector<KvSpan>& out) const override;

 private:
  struct Seq {
    bool live = false;
    int32_t len = 0;
    int32_t reserved = 0;
    std::vector<int32_t> blocks;
  };
  uint8_t* block_ptr(int32_t block) { return storage_.get() + size_t(block) * layout_.bytes_per_block(); }
  const uint8_t* block_ptr(int32_t block) const {
    return storage_.get() + size_t(block) * layout_.bytes_per_block();
  }
  size_t layer_offset(int layer) const {
    return size_t(layer) * size_t(layout_.block_size) * (layout_.k_row_bytes() + layout_.v_row_bytes());
  }
  Seq& seq_ref(int seq);
  const Seq& seq_ref(int seq) const;

  KvLayout layout_;
  int32_t n_blocks_ = 0;
  size_t storage_bytes_ = 0;
  std::unique_ptr<uint8_t[]> storage_;
  std::vector<int32_t> free_;      // free block ids (stack)
  std::vector<int32_t> refcount_;  // per block; > 1 once prefix sharing lands
  std::vector<Seq> seqs_;
};

}  // namespace nt

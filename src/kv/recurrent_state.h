// kv/recurrent_state.h — the second kind of per-sequence cache, beside the paged KV: one fixed-size
// recurrent state per live sequence (hybrid models such as qwen35: the convolution and delta-rule
// states of every recurrent layer, KvLayout::recurrent_floats floats), constant in context.
// A state is allocated when its sequence first runs, zeroed when the sequence starts at position 0
// (the forward pass does that), and freed when the sequence ends (finish, cancel, preemption).
// RecurrentKvStore puts a pool beside a KvCacheManager for the forward pass.
// Must not know: models, requests, scheduling.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kv/kv_cache_manager.h"

namespace nt {

class RecurrentStatePool {
 public:
  explicit RecurrentStatePool(int64_t floats_per_seq) : floats_per_seq_(floats_per_seq) {}
  int64_t floats_per_seq() const { return floats_per_seq_; }
  size_t bytes_per_seq() const { return size_t(floats_per_seq_) * sizeof(float); }
  // The state of seq, allocated (zeroed, position 0) on first use.
  float* state(int seq);
  int32_t* pos(int seq);
  void release(int seq);
  // Releases every state whose sequence is not in `live`.
  void retain_only(std::span<const int> live);
  int n_live() const;
  size_t bytes_in_use() const { return size_t(n_live()) * bytes_per_seq(); }

 private:
  struct Slot {
    std::unique_ptr<float[]> data;
    int32_t pos = 0;
  };
  Slot& slot(int seq);
  int64_t floats_per_seq_;
  std::vector<Slot> slots_;  // by sequence id
};

// The KV cache manager's rows plus a pool's recurrent states, as one KvStore.
class RecurrentKvStore final : public KvStore {
 public:
  RecurrentKvStore(KvCacheManager& kv, RecurrentStatePool& pool) : kv_(kv), pool_(pool) {}
  const KvLayout& layout() const override { return kv_.layout(); }
  uint8_t* k_row(int layer, int seq, int32_t pos) override { return kv_.k_row(layer, seq, pos); }
  uint8_t* v_row(int layer, int seq, int32_t pos) override { return kv_.v_row(layer, seq, pos); }
  void spans(int layer, int seq, int32_t n_kv, std::vector<KvSpan>& out) const override {
    kv_.spans(layer, seq, n_kv, out);
  }
  float* recurrent_state(int seq) override { return pool_.state(seq); }
  int32_t* recurrent_pos(int seq) override { return pool_.pos(seq); }

 private:
  KvCacheManager& kv_;
  RecurrentStatePool& pool_;
};

}  // namespace nt

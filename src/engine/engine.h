// engine/engine.h — the one object that owns a model's run-time state: KV cache, thread pool,
// forward scratch, per-sequence token history. It turns requests ("append these tokens to sequence
// s") into batches for Model::forward. One engine thread owns it; compute parallelism happens only
// inside the pool. Must not know: tokenizers, sampling policy, terminals or HTTP.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/thread_pool.h"
#include "kv/kv_cache.h"
#include "model/model.h"

namespace nt {

struct EngineOptions {
  int n_threads = 0;      // 0: physical cores
  int64_t n_ctx = 0;      // total KV capacity in tokens; 0: training context, capped by memory
  int n_batch = 512;      // max tokens per forward call (prefill chunk)
  DType cache_k = DType::F16;
  DType cache_v = DType::F16;
};

// Tokens processed and time spent, accumulated per engine (reset by the caller).
struct EngineCounters {
  int64_t prefill_tokens = 0;
  double prefill_seconds = 0;
  int64_t decode_tokens = 0;
  double decode_seconds = 0;
};

class Engine {
 public:
  static Result<std::unique_ptr<Engine>> create(std::unique_ptr<Model> model, const EngineOptions& opt);

  const Model& model() const { return *model_; }
  const ModelConfig& config() const { return model_->config(); }
  int64_t n_ctx() const { return n_ctx_; }
  int n_batch() const { return n_batch_; }
  int n_threads() const { return pool_.n_threads(); }
  const KvCache& kv() const { return kv_; }
  size_t kv_bytes() const { return kv_.total_bytes(); }
  // Bytes of KV actually used by a sequence of n tokens.
  size_t kv_bytes_for(int64_t n_tokens) const { return kv_.layout().bytes_per_token() * size_t(n_tokens); }
  bool ctx_capped() const { return ctx_capped_; }
  EngineCounters& counters() { return counters_; }
  // The compute pool, for work that must run on the engine's own threads (the bench's probe).
  ThreadPool& pool() { return pool_; }

  int new_sequence();
  void free_sequence(int seq);
  int32_t seq_len(int seq) const { return kv_.seq_len(seq); }
  // Tokens whose K/V are in the cache for seq, in order.
  const std::vector<int32_t>& seq_tokens(int seq) const;

  // Keeps the longest cached prefix of seq shared with `tokens`, minus one if it covers all of
  // `tokens` (the last token must be recomputed to get its logits); drops the rest. Returns the
  // number of positions kept (reused, not recomputed).
  int32_t keep_common_prefix(int seq, const std::vector<int32_t>& tokens);
  // Drops positions >= n of seq.
  void truncate(int seq, int32_t n);

  // Appends n tokens to seq, in forward calls of at most n_batch tokens; returns the logits of the
  // last token ([n_vocab], valid until the next call). Errors (context full, bad token) leave the
  // sequence as it was before the call.
  Result<const float*> append(int seq, const int32_t* tokens, int64_t n);

  // One continuous-batching step: several sequences, each adding some tokens; logits for the last
  // token of each input that wants them, in input order ([n_out, n_vocab]).
  struct SeqInput {
    int seq = 0;
    const int32_t* tokens = nullptr;
    int64_t n = 0;
    bool want_logits = true;
  };
  Result<const float*> step(const std::vector<SeqInput>& inputs);

 private:
  Engine(std::unique_ptr<Model> model, KvCache kv, int n_threads, int64_t n_ctx, int n_batch);

  std::unique_ptr<Model> model_;
  KvCache kv_;
  ThreadPool pool_;
  int64_t n_ctx_;
  int n_batch_;
  bool ctx_capped_ = false;
  ForwardScratch scratch_;
  Batch batch_;
  std::vector<float> logits_;                 // [n_out, n_vocab]
  std::vector<std::vector<int32_t>> tokens_;  // per seq id
  EngineCounters counters_;
};

// MemAvailable from /proc/meminfo in bytes (0 if unknown).
uint64_t available_memory_bytes();

}  // namespace nt

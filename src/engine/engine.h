// engine/engine.h — serves generation requests over one model: owns the paged KV cache with its
// prefix cache, the scheduler, the compute thread pool and every request's state. Requests are
// submitted (and cancelled) from any thread; the engine thread alone runs steps: one step
// schedules tokens of several requests (scheduler.h), runs ONE forward pass for all of them,
// samples each request that got logits with its own Sampler and streams its TokenEvents.
// Must not know: terminals, HTTP, chat templates, CLI flags.
//
// Determinism: a request's tokens and log-probs depend only on its own parameters and seed, not
// on what it is batched with, how its prompt is chunked, prefix-cache hits or preemption (the
// forward pass is per-token deterministic and each Sampler sees only its own request's tokens).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/result.h"
#include "core/thread_pool.h"
#include "engine/forward_model.h"
#include "engine/request.h"
#include "engine/request_state.h"
#include "engine/scheduler.h"
#include "kv/kv_cache_manager.h"
#include "kv/recurrent_state.h"
#include "kv/state_snapshots.h"
#include "tokenizer/tokenizer.h"

namespace nt {

struct EngineOptions {
  int n_threads = 0;   // 0: physical cores
  int64_t n_ctx = 0;   // KV pool in tokens, shared by all requests; 0: see default_ctx_seqs
  int default_ctx_seqs = 1;  // n_ctx 0: room for this many training contexts, capped by memory
  int n_batch = 512;   // token budget of one step (one forward call)
  int n_parallel = 8;  // requests running at once; the others wait
  int block_size = KvLayout{}.block_size;  // tokens per KV block: the paging and prefix-cache unit
  DType cache_k = DType::F16;
  DType cache_v = DType::F16;
  // Hybrid models (recurrent state): the state is snapshot at the end of each prompt (rounded down
  // to a block) and at every multiple of this many tokens (a multiple of block_size; 0: prompt ends
  // only), so a later request sharing the prefix resumes at the latest snapshot inside it.
  int state_snapshot_every = 512;
  // Snapshots kept at most (spare ones evicted first, then least recently used); -1: n_parallel + 2;
  // 0: no prefix reuse.
  int state_snapshots = -1;
};

// A snapshot of the engine's counters (totals since creation), readable from any thread.
struct EngineStats {
  int64_t running = 0;  // requests admitted (holding KV blocks)
  int64_t waiting = 0;  // requests queued, submitted ones not yet seen by a step included
  int block_size = 0;
  int32_t blocks_total = 0, blocks_used = 0, blocks_cached = 0, blocks_free = 0;
  int64_t prefix_queried_tokens = 0;  // tokens looked up in the prefix cache (every admission
                                      // attempt: one that must wait for blocks is looked up again)
  int64_t prefix_hit_tokens = 0;      // of those, found cached
  int64_t requests_finished = 0;      // cancelled and failed ones included
  int64_t prompt_tokens = 0;          // of admitted requests
  int64_t cached_tokens = 0;          // of those, prefix-cache hits at the first admission
  int64_t computed_tokens = 0;        // tokens run through the model (prefill, recompute, decode)
  int64_t generated_tokens = 0;
  int64_t steps = 0;                  // forward passes of the request path
  int64_t preemptions = 0;
  int64_t recurrent_states = 0;  // per-sequence recurrent states held (hybrid models), constant in context
  int64_t recurrent_bytes = 0;
  int64_t state_snapshots = 0;        // recurrent-state snapshots kept for prefix reuse (hybrid models)
  int64_t state_snapshot_bytes = 0;
  int64_t state_snapshots_saved = 0;  // taken since creation
  int64_t state_snapshot_hits = 0;    // admissions resumed from one (a retried admission counts again)
};

class Engine {
 public:
  // `tok` (may be null: then events carry no text, there is no end-of-generation token and stop
  // strings are refused) must outlive the engine.
  static Result<std::unique_ptr<Engine>> create(std::unique_ptr<ForwardModel> model, const EngineOptions& opt,
                                                const Tokenizer* tok = nullptr);
  static Result<std::unique_ptr<Engine>> create(std::unique_ptr<Model> model, const EngineOptions& opt,
                                                const Tokenizer* tok = nullptr);
  ~Engine();

  // --- Any thread.
  // Validates and queues a request; its events go to `sink`, called on the engine thread (a sink
  // may submit or cancel, never step). Errors: InvalidArgument (empty prompt, token outside the
  // vocabulary, sampling parameters, stop strings without a tokenizer), PromptTooLong (prompt +
  // max(1, max_tokens) over context_limit(), with the counts).
  Result<RequestId> submit(RequestParams params, TokenSink sink);
  // Takes effect at the next step: a final event with FinishReason::Cancelled, blocks released.
  // False when the request is unknown or already finished.
  bool cancel(RequestId id);
  EngineStats stats() const;
  // Blocks until something is submitted or cancelled, or max_wait passes (for an idle engine thread).
  void wait_for_work(std::chrono::milliseconds max_wait);

  // --- The engine thread.
  // One step: takes in submissions and cancellations, schedules, runs one forward pass, samples,
  // emits events, finishes requests. Returns whether requests remain.
  bool step();
  void run_until_idle();

  // --- Fixed at creation (any thread).
  const ModelConfig& config() const { return fm_->config(); }
  const ForwardModel& forward_model() const { return *fm_; }
  const Model& model() const;  // the real model (the engine must wrap one)
  const Tokenizer* tokenizer() const { return tok_; }
  int64_t n_ctx() const { return n_ctx_; }                  // the pool, in tokens
  int64_t context_limit() const { return context_limit_; }  // tokens of one request: min(n_ctx, training)
  int n_batch() const { return n_batch_; }
  int n_parallel() const { return n_parallel_; }
  int n_threads() const { return pool_.n_threads(); }
  size_t kv_bytes() const { return kv_->total_bytes(); }
  // KV bytes one request of n_tokens holds (sliding-window layers: their window only).
  size_t kv_bytes_for(int64_t n_tokens) const { return kv_->bytes_for(n_tokens); }
  // One sequence's recurrent state (hybrid models; 0 otherwise), whatever its length.
  size_t recurrent_bytes_per_seq() const { return rs_ ? rs_->bytes_per_seq() : 0; }
  bool ctx_capped() const { return ctx_capped_; }
  // The compute pool, for work that must run on the engine's own threads (the bench's probe).
  ThreadPool& pool() { return pool_; }
  const KvCacheManager& kv() const { return *kv_; }  // engine thread

  // --- Low level (engine thread, no requests in flight): sequences outside the scheduler, for
  // timing forward passes without sampling (bench) and model tests.
  int new_seq();
  void free_seq(int seq);
  int32_t seq_len(int seq) const { return kv_->seq_len(seq); }
  // Appends n tokens to seq in forward calls of at most n_batch tokens; the logits of the last
  // ([n_vocab], valid until the next call). On error the sequence is as before the call.
  Result<const float*> eval(int seq, const int32_t* tokens, int64_t n);
  // One forward call over several sequences; logits for the last token of each input that wants
  // them, in input order ([n_out, n_vocab]).
  struct SeqInput {
    int seq = 0;
    const int32_t* tokens = nullptr;
    int64_t n = 0;
    bool want_logits = true;
  };
  Result<const float*> eval_batch(const std::vector<SeqInput>& inputs);

 private:
  Engine(std::unique_ptr<ForwardModel> model, const Tokenizer* tok, std::unique_ptr<KvCacheManager> kv,
         int n_threads, int64_t n_ctx, const EngineOptions& opt);
  void drain_inbox();
  // Ends a request: releases it, emits `ev` (made final, with the stats) and forgets it.
  void finish(RequestState& r, TokenEvent ev);
  void finish_with_error(RequestState& r, Error e);
  void publish_stats();
  bool has_work() const;

  std::unique_ptr<ForwardModel> fm_;
  const Tokenizer* tok_;
  std::unique_ptr<KvCacheManager> kv_;
  // Hybrid models: per-sequence recurrent states beside the KV cache, and both as one KvStore.
  std::unique_ptr<RecurrentStatePool> rs_;
  std::unique_ptr<RecurrentKvStore> rs_store_;
  std::unique_ptr<StateSnapshots> snaps_;  // null: no prefix reuse for the hybrid model
  // Copies the state of every chunk of the plan that ended at a snapshot point.
  void save_state_snapshots(const StepPlan& plan);
  std::vector<int> ll_live_;  // low-level sequences (new_seq .. free_seq)
  KvStore& kv_store() { return rs_store_ ? static_cast<KvStore&>(*rs_store_) : *kv_; }
  // Frees the states of sequences no request or low-level caller holds (finished, cancelled, preempted).
  void release_recurrent_states();
  ThreadPool pool_;
  int64_t n_ctx_;
  int64_t context_limit_;
  int n_batch_;
  int n_parallel_;
  bool ctx_capped_ = false;
  Scheduler sched_;
  Batch batch_;
  std::vector<float> logits_;  // [n_out, n_vocab]
  std::unordered_map<RequestId, std::unique_ptr<RequestState>> requests_;  // admitted or waiting
  EngineStats acc_;            // engine thread's totals

  // Shared with submitting threads.
  mutable std::mutex inbox_mu_;
  std::condition_variable inbox_cv_;
  std::vector<std::unique_ptr<RequestState>> inbox_new_;
  std::vector<RequestId> inbox_cancel_;
  std::unordered_set<RequestId> live_;  // submitted, not finished
  RequestId next_id_ = 1;
  mutable std::mutex stats_mu_;
  EngineStats snapshot_;

  // Low-level path.
  std::vector<std::vector<int32_t>> ll_tokens_;  // per seq id: tokens whose K/V are cached
  void ll_truncate(int seq, int32_t n);
};

// MemAvailable from /proc/meminfo in bytes (0 if unknown).
uint64_t available_memory_bytes();

}  // namespace nt

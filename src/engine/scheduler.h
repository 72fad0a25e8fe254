// engine/scheduler.h — decides, each engine step, which tokens of which requests the forward pass
// computes, in the shape of vLLM's v1 scheduler: a request is its tokens (prompt + generated) and
// how many of them have K/V cached (n_computed); a step gives each request a count of tokens.
// Owns: the waiting queue and the running list, block reservations, preemption.
// Must not know: models, sampling, tokenizers, threads.
//
// Each step, under a token budget:
//  1. running requests in admission order: one decode token each, or the next prompt chunk of the
//     youngest, which alone can still be prefilling (so decode tokens come first);
//  2. waiting requests, first in first out, while fewer than max_running run: a new one first
//     takes its prompt's cached blocks from the prefix cache (match_prefix), then a chunk.
// Blocks are reserved before a chunk is planned. When a running request cannot get blocks, the
// youngest running request is preempted (its sequence freed — its full blocks stay in the prefix
// cache — n_computed = 0, back to the front of the waiting queue) until it can, or until it is
// the youngest itself and is preempted. No waiting request is admitted in a step that preempted.
// A chunk that reaches the last token wants logits (the next token is sampled from them).
// Hybrid models (set_state_snapshots): a chunk stops at the first snapshot point it reaches (the
// engine copies the recurrent state there) and that chunk ends the step's planning, so only the
// youngest request is still prefilling; admission resumes through the given prefix matcher.
// Models with chunked recurrent prefill (set_prefill_alignment): a chunk that is not a request's
// last cuts at a multiple of the chunk size in its positions.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <vector>

#include "kv/kv_cache_manager.h"

namespace nt {

// A request as the scheduler sees it (the engine's request state derives from it).
struct SchedRequest {
  std::vector<int32_t> tokens;  // prompt + generated; the last one is never cached before its step
  int32_t n_computed = 0;       // tokens whose K/V are in the cache
  int seq = -1;                 // KV sequence while running, -1 while waiting
  int64_t first_hit = -1;       // prefix-cache hit at the first admission (-1: not admitted yet)
  int preemptions = 0;
};

struct ScheduledChunk {
  SchedRequest* req = nullptr;
  int32_t start = 0;  // == req->n_computed when planned
  int32_t n = 0;
  bool want_logits = false;
  bool snapshot_after = false;  // start + n is a snapshot point (set_state_snapshots)
};

// Whether a request of n_tokens tokens (prompt + generated) whose state stands at position `end`
// (a chunk's end) is at a snapshot point: a block boundary that is the last one before its final
// token (its prompt's end, rounded down to a block) or a multiple of `every` (0: none). With a
// prefill alignment `align` (set_prefill_alignment), a last boundary inside a whole window of
// align positions before the final token (n_tokens a multiple of align) moves down to a multiple
// of both, so the window is not cut and prefills in chunked form as when recomputed; and the
// multiple of both below the last boundary is a point too (when above 0): a longer prompt filling
// the window the end falls in (a chat's next turn) resumes there, bit for bit.
bool is_snapshot_point(int32_t end, size_t n_tokens, int block_size, int every, int align = 0);
// Whether a snapshot at `len` may resume a prompt that fills the window of align positions len
// falls in (is_bit_exact_resume): len a multiple of align or of `every`, or no alignment (align 0).
// Otherwise it serves only prompts ending inside that window, and its prompt keeps one at the
// window's start too (is_snapshot_point).
bool serves_longer_prompts(int32_t len, int every, int align);
// Whether a request of n_tokens tokens (prompt + generated) resuming at a snapshot taken at `len`
// by a request whose prompt ended at `chunked_until` computes what it computes from its start, bit
// for bit, under a prefill alignment `align` (0: always): every whole window of align positions
// before len was prefilled in chunked form there exactly when it would be here (the snapshot's
// tokens past its prompt's end were decoded: none may fill a window), and the window len cuts
// (computed token by token) would be cut here too or not be whole (len a multiple of align or of
// `every`, or the window reaching past n_tokens).
bool is_bit_exact_resume(int32_t len, int32_t chunked_until, size_t n_tokens, int every, int align);

struct StepPlan {
  std::vector<ScheduledChunk> chunks;     // the batch, in this order
  std::vector<SchedRequest*> preempted;   // this step's victims (now waiting)
  std::vector<SchedRequest*> admitted;    // moved from waiting to running this step
  int64_t n_tokens = 0;
};

class Scheduler {
 public:
  // token_budget >= 1 tokens per step; max_running >= 1 requests running at once.
  Scheduler(KvCacheManager& kv, int token_budget, int max_running);

  // Queues a new request (at the back of the waiting queue).
  void add(SchedRequest* r);
  // Drops a request from the queue or the running list and frees its sequence.
  void remove(SchedRequest* r);

  // Hybrid models: chunks stop at snapshot points (every: see is_snapshot_point) and a new request
  // takes its cached prefix through `match` (which restores its recurrent state) instead of the
  // KV cache's match_prefix.
  using PrefixMatch = std::function<int32_t(int seq, std::span<const int32_t> tokens)>;
  void set_state_snapshots(int every, PrefixMatch match);
  // Hybrid models whose recurrent layers prefill whole windows of `chunk` aligned positions in
  // one chunked form (qwen35): a prompt chunk that does not reach the request's last token ends
  // at a multiple of `chunk` in its positions (or at a snapshot point), so where a sequence's
  // steps split never depends on the other requests' tokens in the batch. A request whose next
  // multiple lies past the budget left waits for the next step (which ends this step's
  // planning); token_budget >= chunk, so a step with the whole budget always fits one.
  void set_prefill_alignment(int chunk);

  // Plans one step: reserves the blocks of every planned chunk, preempting as needed.
  StepPlan schedule();
  // After the forward pass wrote the plan's K/V: commits them and advances n_computed.
  void commit(const StepPlan& plan);

  // The oldest waiting request (null when none waits).
  SchedRequest* front_waiting() const { return waiting_.empty() ? nullptr : waiting_.front(); }
  size_t n_running() const { return running_.size(); }
  size_t n_waiting() const { return waiting_.size(); }
  int token_budget() const { return token_budget_; }
  int max_running() const { return max_running_; }
  int snapshot_every() const { return snapshot_every_; }
  int prefill_alignment() const { return align_; }  // 0: none

 private:
  // Reserves n tokens for running request r, preempting the youngest running requests while the
  // pool is short; false when r itself was preempted.
  bool reserve_or_preempt(SchedRequest* r, int32_t n, StepPlan& plan);
  void preempt(SchedRequest* victim, StepPlan& plan);

  // n tokens of r from n_computed, cut at the first snapshot point they pass (when snapshots are on).
  int32_t cut_at_snapshot(const SchedRequest* r, int32_t n) const;
  // n tokens of r (already cut at a snapshot point) cut down to a multiple of the alignment unless
  // they reach r's last token or a snapshot point; 0 when no multiple lies within them.
  int32_t cut_aligned(const SchedRequest* r, int32_t n) const;

  KvCacheManager& kv_;
  bool snapshots_ = false;
  int snapshot_every_ = 0;
  PrefixMatch match_;
  int align_ = 0;  // set_prefill_alignment (0: none)
  int token_budget_;
  int max_running_;
  std::deque<SchedRequest*> waiting_;
  std::vector<SchedRequest*> running_;  // admission order: the back is the youngest
};

}  // namespace nt

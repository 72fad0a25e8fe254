#include "engine/scheduler.h"

#include <algorithm>
#include <numeric>

#include "core/check.h"

namespace nt {

Scheduler::Scheduler(KvCacheManager& kv, int token_budget, int max_running)
    : kv_(kv), token_budget_(token_budget), max_running_(max_running) {
  NT_CHECK(token_budget >= 1 && max_running >= 1);
}

bool is_snapshot_point(int32_t end, size_t n_tokens, int block_size, int every, int align) {
  if (end <= 0 || end % block_size != 0 || n_tokens == 0) return false;
  auto last_boundary = static_cast<int32_t>((n_tokens - 1) / size_t(block_size)) * block_size;
  int32_t aligned = last_boundary;  // the end of the last whole window before the final token
  if (align > 0) {
    const int32_t both = std::lcm(block_size, align);
    aligned = last_boundary / both * both;
    if (last_boundary / align * align + align <= static_cast<int64_t>(n_tokens)) last_boundary = aligned;
  }
  return end == last_boundary || end == aligned || (every > 0 && end % every == 0);
}

bool serves_longer_prompts(int32_t len, int every, int align) {
  return align <= 0 || len % align == 0 || (every > 0 && len % every == 0);
}

bool is_bit_exact_resume(int32_t len, int32_t chunked_until, size_t n_tokens, int every, int align) {
  if (align <= 0) return true;
  if (len > chunked_until && len / align != chunked_until / align) return false;
  return len % align == 0 || (every > 0 && len % every == 0) ||
         static_cast<int64_t>(len / align * align + align) > static_cast<int64_t>(n_tokens);
}

void Scheduler::set_state_snapshots(int every, PrefixMatch match) {
  NT_CHECK(every >= 0 && match);
  snapshots_ = true;
  snapshot_every_ = every;
  match_ = std::move(match);
}

int32_t Scheduler::cut_at_snapshot(const SchedRequest* r, int32_t n) const {
  if (!snapshots_) return n;
  const int bs = kv_.block_size();
  const int32_t start = r->n_computed;
  // The first block boundary after start; points lie on block boundaries.
  for (int32_t p = (start / bs + 1) * bs; p < start + n; p += bs)
    if (is_snapshot_point(p, r->tokens.size(), bs, snapshot_every_, align_)) return p - start;
  return n;
}

void Scheduler::set_prefill_alignment(int chunk) {
  NT_CHECK(chunk >= 1 && chunk <= token_budget_);
  align_ = chunk;
}

int32_t Scheduler::cut_aligned(const SchedRequest* r, int32_t n) const {
  const int32_t start = r->n_computed, end = start + n;
  if (align_ == 0 || end == static_cast<int32_t>(r->tokens.size())) return n;
  if (snapshots_ && is_snapshot_point(end, r->tokens.size(), kv_.block_size(), snapshot_every_, align_)) return n;
  return std::max(0, end / align_ * align_ - start);
}

void Scheduler::add(SchedRequest* r) {
  NT_CHECK(r->seq < 0 && !r->tokens.empty());
  waiting_.push_back(r);
}

void Scheduler::remove(SchedRequest* r) {
  if (auto it = std::find(running_.begin(), running_.end(), r); it != running_.end()) running_.erase(it);
  if (auto it = std::find(waiting_.begin(), waiting_.end(), r); it != waiting_.end()) waiting_.erase(it);
  if (r->seq >= 0) kv_.free_seq(r->seq);
  r->seq = -1;
}

void Scheduler::preempt(SchedRequest* victim, StepPlan& plan) {
  NT_CHECK(!running_.empty() && running_.back() == victim);
  // Victims come after the request being planned in running_: none has a chunk in this plan.
  NT_CHECK(std::none_of(plan.chunks.begin(), plan.chunks.end(),
                        [&](const ScheduledChunk& c) { return c.req == victim; }));
  kv_.free_seq(victim->seq);  // full blocks stay findable in the prefix cache
  victim->seq = -1;
  victim->n_computed = 0;
  ++victim->preemptions;
  running_.pop_back();
  waiting_.push_front(victim);  // victims are taken youngest first, so the oldest ends up first
  plan.preempted.push_back(victim);
}

bool Scheduler::reserve_or_preempt(SchedRequest* r, int32_t n, StepPlan& plan) {
  while (!kv_.reserve(r->seq, n)) {
    SchedRequest* victim = running_.back();
    preempt(victim, plan);
    if (victim == r) return false;
  }
  return true;
}

StepPlan Scheduler::schedule() {
  StepPlan plan;
  int64_t budget = token_budget_;
  // n tokens of r, cut from `want` at a snapshot point (a cut chunk ends the step: it stays the
  // only one prefilling).
  auto plan_chunk = [&](SchedRequest* r, int32_t n, int32_t want) {
    const int32_t end = r->n_computed + n;
    const bool last = end == static_cast<int32_t>(r->tokens.size());
    const bool snap = snapshots_ && is_snapshot_point(end, r->tokens.size(), kv_.block_size(), snapshot_every_, align_);
    plan.chunks.push_back({r, r->n_computed, n, last, snap});
    plan.n_tokens += n;
    budget = n < want ? 0 : budget - n;
  };
  // Running requests in admission order. Only the youngest can still be prefilling (a request is
  // admitted with a partial chunk only when that chunk ends the step's budget or is cut at a
  // snapshot point, which ends the step too), so the decode
  // tokens come before any prefill chunk. A request preempted in reserve_or_preempt was the back
  // of running_, so the indices before it stay valid.
  for (size_t i = 0; i < running_.size() && budget > 0; ++i) {
    SchedRequest* r = running_[i];
    const int64_t left = static_cast<int64_t>(r->tokens.size()) - r->n_computed;
    NT_CHECK(left >= 1);
    const auto want = static_cast<int32_t>(std::min(left, budget));
    const int32_t n = cut_aligned(r, cut_at_snapshot(r, want));
    if (n == 0) {  // the youngest, prefilling: its next aligned cut waits for a fuller step
      budget = 0;
      break;
    }
    if (!reserve_or_preempt(r, n, plan)) break;
    plan_chunk(r, n, want);
  }
  if (!plan.preempted.empty()) return plan;
  while (!waiting_.empty() && running_.size() < static_cast<size_t>(max_running_) && budget > 0) {
    SchedRequest* r = waiting_.front();
    r->seq = kv_.new_seq();
    r->n_computed = match_ ? match_(r->seq, r->tokens) : kv_.match_prefix(r->seq, r->tokens);
    const int64_t left = static_cast<int64_t>(r->tokens.size()) - r->n_computed;
    const auto want = static_cast<int32_t>(std::min(left, budget));
    const int32_t n = cut_aligned(r, cut_at_snapshot(r, want));
    if (n == 0 || !kv_.reserve(r->seq, n)) {  // not now: no aligned cut fits, or the pool is held
      kv_.free_seq(r->seq);
      r->seq = -1;
      r->n_computed = 0;
      break;
    }
    if (r->first_hit < 0) r->first_hit = r->n_computed;
    waiting_.pop_front();
    running_.push_back(r);
    plan.admitted.push_back(r);
    plan_chunk(r, n, want);
  }
  return plan;
}

void Scheduler::commit(const StepPlan& plan) {
  for (const ScheduledChunk& c : plan.chunks) {
    SchedRequest* r = c.req;
    NT_CHECK(r->seq >= 0 && r->n_computed == c.start);
    kv_.commit(r->seq, r->tokens, c.n);
    r->n_computed += c.n;
  }
}

}  // namespace nt

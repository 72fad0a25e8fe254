#include "engine/engine.h"

#include <algorithm>
#include <fstream>
#include <string>

#include "core/check.h"
#include "core/strings.h"
#include "kernels/kv_types.h"
#include "kv/prefix_hash.h"

namespace nt {

uint64_t available_memory_bytes() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  uint64_t kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

Engine::Engine(std::unique_ptr<ForwardModel> model, const Tokenizer* tok, std::unique_ptr<KvCacheManager> kv,
               int n_threads, int64_t n_ctx, const EngineOptions& opt)
    : fm_(std::move(model)),
      tok_(tok),
      kv_(std::move(kv)),
      pool_(n_threads),
      n_ctx_(n_ctx),
      context_limit_(fm_->config().n_ctx_train > 0 ? std::min<int64_t>(n_ctx, fm_->config().n_ctx_train) : n_ctx),
      n_batch_(opt.n_batch),
      n_parallel_(opt.n_parallel),
      sched_(*kv_, opt.n_batch, opt.n_parallel) {
  publish_stats();
}

Engine::~Engine() = default;

Result<std::unique_ptr<Engine>> Engine::create(std::unique_ptr<Model> model, const EngineOptions& opt,
                                               const Tokenizer* tok) {
  return create(wrap_model(std::move(model)), opt, tok);
}

Result<std::unique_ptr<Engine>> Engine::create(std::unique_ptr<ForwardModel> model, const EngineOptions& opt,
                                               const Tokenizer* tok) {
  NT_CHECK(model != nullptr);
  const ModelConfig& c = model->config();
  if (opt.n_batch < 1) return make_error("the token budget per step must be at least 1 (got %d)", opt.n_batch);
  if (opt.n_parallel < 1)
    return make_error("the number of requests running at once must be at least 1 (got %d)", opt.n_parallel);
  if (opt.n_ctx < 0)
    return make_error("the context size must not be negative (got %lld)", static_cast<long long>(opt.n_ctx));
  if (opt.block_size < 1) return make_error("the KV block size must be at least 1 (got %d)", opt.block_size);
  if (opt.state_snapshot_every < 0 || (c.recurrent_floats() > 0 && opt.state_snapshot_every % opt.block_size != 0))
    return make_error("the state snapshot interval must be 0 or a multiple of the KV block size %d (got %d)",
                      opt.block_size, opt.state_snapshot_every);
  if (opt.state_snapshots < -1)
    return make_error("the number of state snapshots must be -1 (default), 0 (none) or more (got %d)",
                      opt.state_snapshots);
  for (DType t : {opt.cache_k, opt.cache_v})
    if (Status s = check_kv_cache_type(t, c.head_dim); !s) return s.error();
  if (c.n_kv_layers() == 0) return make_error("a model without attention layers is not supported");
  KvLayout lay;
  lay.n_layer = c.n_kv_layers();  // recurrent layers keep a state per sequence instead (rs_)
  lay.recurrent_floats = c.recurrent_floats();
  lay.n_head_kv = c.n_head_kv;
  lay.head_dim = c.head_dim;
  lay.k_type = opt.cache_k;
  lay.v_type = opt.cache_v;
  lay.block_size = opt.block_size;
  lay.n_swa = c.n_swa;  // sliding-window layers: the cache keeps their window only
  if (c.n_swa > 0) lay.swa_layers = c.swa_layers;
  int64_t n_ctx = opt.n_ctx;
  bool capped = false;
  if (n_ctx == 0) {
    n_ctx = int64_t(c.n_ctx_train) * std::max(1, opt.default_ctx_seqs);
    // Cap the default to half of the available memory, so a 128k-context model still starts.
    const uint64_t avail = available_memory_bytes();
    if (avail > 0) {
      const int64_t fit = static_cast<int64_t>(avail / 2 / lay.bytes_per_token());
      if (fit < n_ctx) {
        n_ctx = std::max<int64_t>(fit / lay.block_size * lay.block_size, lay.block_size);
        capped = true;
      }
    }
  }
  // What one request may hold (context_limit_ below): the model's LongRoPE choice depends on it.
  lay.n_ctx_seq = c.n_ctx_train > 0 ? std::min<int64_t>(n_ctx, c.n_ctx_train) : n_ctx;
  // Sliding groups hold what the running requests (and one low-level sequence) can hold at once.
  auto kv = KvCacheManager::create(lay, n_ctx, prefix_chain_seed(model->identity(), opt.cache_k, opt.cache_v),
                                   opt.n_parallel + 1, opt.n_batch);
  if (!kv) return kv.error();
  const int n_threads = opt.n_threads > 0 ? opt.n_threads : ThreadPool::default_threads();
  std::unique_ptr<Engine> e(new Engine(std::move(model), tok, std::move(*kv), n_threads, n_ctx, opt));
  e->ctx_capped_ = capped;
  if (lay.recurrent_floats > 0) {
    e->rs_ = std::make_unique<RecurrentStatePool>(lay.recurrent_floats);
    e->rs_store_ = std::make_unique<RecurrentKvStore>(*e->kv_, *e->rs_);
    // The recurrent layers prefill whole aligned windows of kDeltaNetChunk positions in chunked
    // form: prompt chunks cut on them. A smaller budget never holds a window (all token by token).
    if (opt.n_batch >= kDeltaNetChunk) e->sched_.set_prefill_alignment(kDeltaNetChunk);
    const int max_snaps = opt.state_snapshots < 0 ? opt.n_parallel + 2 : opt.state_snapshots;
    if (max_snaps > 0) {
      e->snaps_ = std::make_unique<StateSnapshots>(lay.recurrent_floats, max_snaps);
      Engine* self = e.get();
      // Resumes only where the result stays bit for bit the one computed from the start.
      const int align = opt.n_batch >= kDeltaNetChunk ? kDeltaNetChunk : 0, every = opt.state_snapshot_every;
      e->sched_.set_state_snapshots(every, [self, align, every](int seq, std::span<const int32_t> tokens) {
        return match_prefix_with_state(*self->kv_, *self->snaps_, *self->rs_, seq, tokens,
                                       [&](int32_t len, int32_t until) {
                                         return is_bit_exact_resume(len, until, tokens.size(), every, align);
                                       });
      });
    }
  }
  return e;
}

const Model& Engine::model() const {
  const Model* m = fm_->model();
  NT_CHECK(m != nullptr);
  return *m;
}

Result<RequestId> Engine::submit(RequestParams params, TokenSink sink) {
  const int32_t n_vocab = config().n_vocab;
  if (params.prompt.empty()) return make_error("the prompt is empty: a request needs at least one token");
  for (size_t i = 0; i < params.prompt.size(); ++i)
    if (params.prompt[i] < 0 || params.prompt[i] >= n_vocab)
      return make_error("prompt token %d (position %zu) is outside the vocabulary of %d tokens", params.prompt[i], i,
                        n_vocab);
  if (Status st = validate(params.sampling); !st) return st.error();
  if (Status st = validate_for_vocab(params.sampling, n_vocab); !st) return st.error();
  if (params.max_tokens < -1)
    return make_error("max_tokens must be -1 (until the end) or a count >= 0 (got %lld)",
                      static_cast<long long>(params.max_tokens));
  if (params.n_logprobs > n_vocab || params.n_top_logits < 0 || params.n_top_logits > n_vocab ||
      params.n_step_top < 0 || params.n_step_top > n_vocab)
    return make_error("the numbers of log-probs, top logits and step candidates must be from 0 to the vocabulary "
                      "size %d (got %d, %d, %d)", n_vocab, params.n_logprobs, params.n_top_logits, params.n_step_top);
  if (!tok_)
    for (const std::string& s : params.stop)
      if (!s.empty()) return make_error("stop strings need a tokenizer; this engine has none");
  const auto n_prompt = static_cast<int64_t>(params.prompt.size());
  const int64_t need = n_prompt + std::max<int64_t>(1, params.max_tokens);
  if (need > context_limit_) {
    if (params.max_tokens < 0)
      return make_error(ErrorKind::PromptTooLong,
                        "the prompt has %lld tokens; with one token to generate that is %lld, over the limit of %lld "
                        "tokens per request by %lld",
                        static_cast<long long>(n_prompt), static_cast<long long>(need),
                        static_cast<long long>(context_limit_), static_cast<long long>(need - context_limit_));
    return make_error(ErrorKind::PromptTooLong,
                      "the prompt has %lld tokens and %lld more are asked for: %lld in all, over the limit of %lld "
                      "tokens per request by %lld",
                      static_cast<long long>(n_prompt), static_cast<long long>(std::max<int64_t>(1, params.max_tokens)),
                      static_cast<long long>(need), static_cast<long long>(context_limit_),
                      static_cast<long long>(need - context_limit_));
  }
  std::unique_lock lock(inbox_mu_);
  const RequestId id = next_id_++;
  lock.unlock();
  auto r = std::make_unique<RequestState>(id, std::move(params), std::move(sink), tok_, n_vocab, context_limit_);
  lock.lock();
  live_.insert(id);
  inbox_new_.push_back(std::move(r));
  lock.unlock();
  inbox_cv_.notify_all();
  return id;
}

bool Engine::cancel(RequestId id) {
  {
    std::lock_guard lock(inbox_mu_);
    if (!live_.count(id)) return false;
    inbox_cancel_.push_back(id);
  }
  inbox_cv_.notify_all();
  return true;
}

void Engine::wait_for_work(std::chrono::milliseconds max_wait) {
  std::unique_lock lock(inbox_mu_);
  inbox_cv_.wait_for(lock, max_wait, [&] { return !inbox_new_.empty() || !inbox_cancel_.empty(); });
}

EngineStats Engine::stats() const {
  EngineStats s;
  {
    std::lock_guard lock(stats_mu_);
    s = snapshot_;
  }
  std::lock_guard lock(inbox_mu_);
  s.waiting += static_cast<int64_t>(inbox_new_.size());
  return s;
}

void Engine::publish_stats() {
  const KvCacheStats kv = kv_->stats();
  std::lock_guard lock(stats_mu_);
  snapshot_ = acc_;
  snapshot_.running = static_cast<int64_t>(sched_.n_running());
  snapshot_.waiting = static_cast<int64_t>(sched_.n_waiting());
  snapshot_.block_size = kv.block_size;
  snapshot_.blocks_total = kv.blocks_total;
  snapshot_.blocks_used = kv.blocks_used;
  snapshot_.blocks_cached = kv.blocks_cached;
  snapshot_.blocks_free = kv.blocks_free;
  snapshot_.prefix_queried_tokens = kv.prefix_queried_tokens;
  snapshot_.prefix_hit_tokens = kv.prefix_hit_tokens;
  snapshot_.recurrent_states = rs_ ? rs_->n_live() : 0;
  snapshot_.recurrent_bytes = rs_ ? static_cast<int64_t>(rs_->bytes_in_use()) : 0;
  if (snaps_) {
    snapshot_.state_snapshots = snaps_->size();
    snapshot_.state_snapshot_bytes = static_cast<int64_t>(snaps_->bytes());
    snapshot_.state_snapshots_saved = snaps_->saved();
    snapshot_.state_snapshot_hits = snaps_->hits();
  }
}

void Engine::save_state_snapshots(const StepPlan& plan) {
  for (const ScheduledChunk& c : plan.chunks) {
    if (!c.snapshot_after) continue;
    const int32_t end = c.start + c.n;
    // One that serves only prompts ending in its own window is spare: evicted first, never pushing
    // another out (its request keeps one at that window's start, when above 0).
    const SnapshotRank rank = serves_longer_prompts(end, sched_.snapshot_every(), sched_.prefill_alignment())
                                  ? SnapshotRank::Full
                                  : SnapshotRank::Spare;
    snaps_->save(kv_->prefix_key(c.req->seq, end), std::span<const int32_t>(c.req->tokens).first(size_t(end)),
                 rs_->state(c.req->seq), static_cast<int32_t>(static_cast<RequestState&>(*c.req).n_prompt), rank);
  }
}

void Engine::release_recurrent_states() {
  std::vector<int> live = ll_live_;
  for (const auto& [id, r] : requests_)
    if (r->seq >= 0) live.push_back(r->seq);
  rs_->retain_only(live);
}

bool Engine::has_work() const {
  if (!requests_.empty()) return true;
  std::lock_guard lock(inbox_mu_);
  return !inbox_new_.empty() || !inbox_cancel_.empty();
}

void Engine::drain_inbox() {
  std::vector<std::unique_ptr<RequestState>> fresh;
  std::vector<RequestId> cancels;
  {
    std::lock_guard lock(inbox_mu_);
    fresh.swap(inbox_new_);
    cancels.swap(inbox_cancel_);
  }
  for (auto& r : fresh) {
    sched_.add(r.get());
    const RequestId id = r->id;
    requests_.emplace(id, std::move(r));
  }
  for (RequestId id : cancels) {
    auto it = requests_.find(id);
    if (it == requests_.end()) continue;  // finished before the cancel was seen
    TokenEvent ev;
    ev.finish_reason = FinishReason::Cancelled;
    finish(*it->second, std::move(ev));
  }
}

void Engine::finish(RequestState& r, TokenEvent ev) {
  ev.id = r.id;
  ev.finished = true;
  ev.stats = request_stats(r);
  sched_.remove(&r);
  if (rs_) release_recurrent_states();
  {
    std::lock_guard lock(inbox_mu_);
    live_.erase(r.id);
  }
  ++acc_.requests_finished;
  TokenSink sink = std::move(r.sink);
  const RequestId id = r.id;
  requests_.erase(id);  // r is gone from here on
  // Before the final event: whoever it wakes (a server freeing the request's queue slot) must not
  // read it as still running or holding blocks.
  publish_stats();
  if (sink) sink(ev);
}

void Engine::finish_with_error(RequestState& r, Error e) {
  TokenEvent ev;
  ev.finish_reason = FinishReason::Error;
  ev.error = std::move(e);
  finish(r, std::move(ev));
}

bool Engine::step() {
  drain_inbox();
  const StepPlan plan = sched_.schedule();
  if (rs_) release_recurrent_states();
  if (plan.chunks.empty()) {
    // Nothing running and the oldest waiting request cannot get blocks: sequences outside the
    // scheduler (the low-level path) hold the pool. Fail it rather than spin.
    if (sched_.n_running() == 0 && sched_.n_waiting() > 0)
      finish_with_error(static_cast<RequestState&>(*sched_.front_waiting()),
                        make_error(ErrorKind::Capacity, "the KV cache is held by sequences outside the scheduler"));
    publish_stats();
    return has_work();
  }
  ++acc_.steps;
  acc_.preemptions += static_cast<int64_t>(plan.preempted.size());
  const auto now = EngineClock::now();
  for (SchedRequest* s : plan.admitted) {
    auto& r = static_cast<RequestState&>(*s);
    if (r.scheduled) continue;  // re-admitted after a preemption
    r.scheduled = true;
    r.t_scheduled = now;
    acc_.prompt_tokens += r.n_prompt;
    acc_.cached_tokens += r.first_hit;
  }
  batch_.clear();
  int64_t n_out = 0;
  for (const ScheduledChunk& c : plan.chunks) {
    for (int32_t i = 0; i < c.n; ++i)
      batch_.add(c.req->tokens[static_cast<size_t>(c.start + i)], c.start + i, c.req->seq,
                 c.want_logits && i == c.n - 1);
    // Recurrent layers: chunked prefill within the prompt only (recomputed generated tokens go
    // token by token, as they were decoded).
    if (rs_) batch_.chunked_until.insert(batch_.chunked_until.end(), size_t(c.n),
                                         static_cast<int32_t>(static_cast<RequestState&>(*c.req).n_prompt));
    n_out += c.want_logits ? 1 : 0;
  }
  const int32_t n_vocab = config().n_vocab;
  if (static_cast<int64_t>(logits_.size()) < n_out * n_vocab) logits_.resize(static_cast<size_t>(n_out * n_vocab));
  publish_stats();  // readers (a server's /metrics) see this step's admissions while it runs
  if (Status st = fm_->forward(batch_, kv_store(), pool_, logits_.data()); !st) {
    for (const ScheduledChunk& c : plan.chunks)
      finish_with_error(static_cast<RequestState&>(*c.req),
                        make_error(ErrorKind::Internal, "the forward pass failed: %s", st.error().message.c_str()));
    publish_stats();
    return has_work();
  }
  sched_.commit(plan);
  if (snaps_) save_state_snapshots(plan);
  acc_.computed_tokens += plan.n_tokens;
  size_t row = 0;
  for (const ScheduledChunk& c : plan.chunks) {
    if (!c.want_logits) continue;
    auto& r = static_cast<RequestState&>(*c.req);
    const float* lg = logits_.data() + row++ * static_cast<size_t>(n_vocab);
    if (r.params.max_tokens == 0) {  // prefill only
      finish(r, TokenEvent{});
      continue;
    }
    TokenEvent ev = sample_next(r, lg, n_vocab, tok_);
    ++acc_.generated_tokens;
    if (ev.finished) {
      finish(r, std::move(ev));
    } else if (r.sink) {
      r.sink(ev);
    }
  }
  publish_stats();
  return has_work();
}

void Engine::run_until_idle() {
  while (step()) {
  }
}

}  // namespace nt

#include "engine/request_state.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace nt {

RequestState::RequestState(RequestId id_, RequestParams p, TokenSink sink_, const Tokenizer* tok, int32_t n_vocab,
                           int64_t limit)
    : id(id_),
      params(std::move(p)),
      sink(std::move(sink_)),
      n_prompt(static_cast<int64_t>(params.prompt.size())),
      context_limit(limit),
      sampler(params.sampling, n_vocab, static_cast<int32_t>(limit)),
      stops(params.stop) {
  tokens = std::move(params.prompt);
  params.prompt.clear();
  sampler.accept(tokens);  // penalties look back over the prompt too
  if (tok) stream.emplace(*tok);
  t_submit = EngineClock::now();
}

std::vector<int32_t> top_k_ids(const float* logits, int32_t n_vocab, int32_t k) {
  k = std::clamp(k, 0, n_vocab);
  std::vector<int32_t> idx(static_cast<size_t>(n_vocab));
  std::iota(idx.begin(), idx.end(), 0);
  auto better = [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), better);
  idx.resize(static_cast<size_t>(k));
  return idx;
}

namespace {

// log(sum(exp(logits))), accumulated in double in index order (the same value on every run).
double log_sum_exp(const float* logits, int32_t n_vocab) {
  float mx = -std::numeric_limits<float>::infinity();
  for (int32_t v = 0; v < n_vocab; ++v) mx = std::max(mx, logits[v]);
  double sum = 0;
  for (int32_t v = 0; v < n_vocab; ++v) sum += std::exp(double(logits[v]) - double(mx));
  return double(mx) + std::log(sum);
}

double ms_between(EngineClock::time_point a, EngineClock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

TokenEvent sample_next(RequestState& r, const float* logits, int32_t n_vocab, const Tokenizer* tok) {
  const RequestParams& p = r.params;
  TokenEvent ev;
  ev.id = r.id;
  const int32_t t = r.sampler.sample({logits, static_cast<size_t>(n_vocab)}, p.want_step_info ? &ev.step : nullptr,
                                     static_cast<size_t>(std::max(p.n_step_top, 0)));
  r.sampler.accept(t);
  r.tokens.push_back(t);
  ++r.generated;
  r.t_last_token = EngineClock::now();
  if (r.generated == 1) r.t_first_token = r.t_last_token;
  ev.token = t;
  if (p.n_logprobs >= 0) {
    const double lse = log_sum_exp(logits, n_vocab);
    ev.logprob = static_cast<float>(double(logits[t]) - lse);
    for (int32_t id : top_k_ids(logits, n_vocab, p.n_logprobs))
      ev.top_logprobs.push_back({id, static_cast<float>(double(logits[id]) - lse)});
  }
  if (p.n_top_logits > 0)
    for (int32_t id : top_k_ids(logits, n_vocab, p.n_top_logits)) ev.top_logits.push_back({id, logits[id]});

  // The finish rules, in this order: end of generation (no text), stop string, max_tokens, context.
  bool done = false;
  FinishReason why = FinishReason::Length;
  if (tok && tok->is_eog(t)) {
    if (!p.ignore_eos) done = true, why = FinishReason::Eog;
  } else if (r.stream) {
    ev.text = r.stops.push(r.stream->push(t));
    if (r.stops.stopped()) done = true, why = FinishReason::Stop;
  }
  if (!done && p.max_tokens >= 0 && r.generated >= p.max_tokens) done = true, why = FinishReason::Length;
  if (!done && static_cast<int64_t>(r.tokens.size()) >= r.context_limit) done = true, why = FinishReason::Context;
  if (done) {
    ev.finished = true;
    ev.finish_reason = why;
    if (r.stream && !r.stops.stopped()) ev.text += r.stops.push(r.stream->flush());
    if (!r.stops.stopped()) ev.text += r.stops.flush();
  }
  return ev;
}

RequestStats request_stats(const RequestState& r) {
  RequestStats s;
  s.prompt_tokens = r.n_prompt;
  s.cached_tokens = std::max<int64_t>(r.first_hit, 0);
  s.computed_prompt_tokens = s.prompt_tokens - s.cached_tokens;
  s.generated_tokens = r.generated;
  s.preemptions = r.preemptions;
  if (r.scheduled) s.queue_ms = ms_between(r.t_submit, r.t_scheduled);
  if (r.generated > 0) {
    s.ttft_ms = ms_between(r.t_submit, r.t_first_token);
    s.prefill_ms = ms_between(r.t_scheduled, r.t_first_token);
    s.decode_ms = ms_between(r.t_first_token, r.t_last_token);
  }
  if (s.decode_ms > 0) s.decode_tokens_per_s = double(r.generated - 1) / (s.decode_ms / 1000.0);
  s.seed = r.sampler.seed();
  return s;
}

}  // namespace nt

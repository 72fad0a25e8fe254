// engine/request_state.h — one request inside the engine: its scheduling state, its own Sampler,
// stop matcher and text decoder, timestamps; and what turns one row of logits into its next token
// event (sampling, log-probs, text, the finish rules). Internal to the engine (engine thread only).
// Must not know: other requests, batches, threads.
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "engine/request.h"
#include "engine/scheduler.h"
#include "sampling/sampler.h"
#include "sampling/stop_strings.h"
#include "tokenizer/tokenizer.h"

namespace nt {

using EngineClock = std::chrono::steady_clock;

struct RequestState : SchedRequest {
  RequestState(RequestId id, RequestParams p, TokenSink sink, const Tokenizer* tok, int32_t n_vocab,
               int64_t context_limit);

  RequestId id;
  RequestParams params;  // the prompt moved into tokens
  TokenSink sink;
  int64_t n_prompt;
  int64_t context_limit;  // prompt + generated tokens may not exceed this
  int64_t generated = 0;
  Sampler sampler;        // advanced only by this request's tokens (kept across preemption)
  StopMatcher stops;
  std::optional<StreamDecoder> stream;  // with a tokenizer
  EngineClock::time_point t_submit, t_scheduled, t_first_token, t_last_token;
  bool scheduled = false;
};

// Samples the request's next token from its logits row [n_vocab] and appends it to r.tokens.
// The event carries the token, its text, the asked-for log-probs / top logits / step info, and,
// when the token ends the request (end of generation, stop string, max_tokens, context limit),
// finished and the reason.
TokenEvent sample_next(RequestState& r, const float* logits, int32_t n_vocab, const Tokenizer* tok);

// The statistics for r's final event.
RequestStats request_stats(const RequestState& r);

// The k highest logits, descending (ties: lower id first).
std::vector<int32_t> top_k_ids(const float* logits, int32_t n_vocab, int32_t k);

}  // namespace nt

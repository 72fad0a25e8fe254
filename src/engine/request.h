// engine/request.h — a generation request as callers submit it to the engine, and the events it
// streams back: one per sampled token (text, log-probs, step info), the last one marked finished
// with its reason and the request's statistics.
// Must not know: scheduling, KV blocks, models, HTTP.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/result.h"
#include "sampling/sampler.h"

namespace nt {

using RequestId = uint64_t;

enum class FinishReason {
  Stop,       // a stop string appeared (it is not part of the text)
  Length,     // max_tokens generated
  Eog,        // the model produced an end-of-generation token
  Context,    // the request's context limit is full
  Cancelled,  // cancel() was called
  Error,      // see TokenEvent::error
};
// "stop", "length", "eog", "context", "cancelled", "error"
const char* finish_reason_name(FinishReason r);

struct RequestParams {
  std::vector<int32_t> prompt;     // token ids, at least one
  SamplerParams sampling;          // no seed: the engine draws one (reported in RequestStats::seed)
  std::vector<std::string> stop;   // stop strings (need a tokenizer); empty strings are ignored
  int64_t max_tokens = -1;         // -1: until end of generation or the context limit
  bool ignore_eos = false;         // end-of-generation tokens do not finish the request (no text)
  // >= 0: each event carries the chosen token's log-probability and this many most likely
  // alternatives, from the model's distribution before any sampling transform (log-softmax of
  // the raw logits). < 0: none.
  int n_logprobs = -1;
  int n_top_logits = 0;            // > 0: the k highest raw logits (ties: lower id first)
  bool want_step_info = false;     // StepInfo after the sampling transforms (see sampler.h)
  int n_step_top = 0;              // candidates listed in StepInfo::top
};

struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0;
};
struct TokenLogit {
  int32_t token = 0;
  float logit = 0;
};

struct RequestStats {
  int64_t prompt_tokens = 0;
  int64_t cached_tokens = 0;           // prompt tokens found in the prefix cache (first admission)
  int64_t computed_prompt_tokens = 0;  // prompt_tokens - cached_tokens
  int64_t generated_tokens = 0;
  int preemptions = 0;                 // times evicted to make room, then recomputed
  double queue_ms = 0;                 // submit -> first scheduled
  double ttft_ms = 0;                  // submit -> first token sampled
  double prefill_ms = 0;               // first scheduled -> first token
  double decode_ms = 0;                // first token -> last token
  double decode_tokens_per_s = 0;      // tokens after the first / decode_ms
  uint64_t seed = 0;                   // the sampler's seed (the drawn one when none was given)
};

struct TokenEvent {
  RequestId id = 0;
  int32_t token = -1;  // -1: a final event that carries no token (cancelled, error, max_tokens 0)
  std::string text;    // printable text released by this event (never a stop string)
  float logprob = 0;                      // when n_logprobs >= 0
  std::vector<TokenLogprob> top_logprobs;  // n_logprobs, descending
  std::vector<TokenLogit> top_logits;      // n_top_logits, descending
  StepInfo step;                           // when want_step_info
  bool finished = false;
  FinishReason finish_reason = FinishReason::Length;  // when finished
  Error error;                                        // when finish_reason == Error
  RequestStats stats;                                 // when finished
};

// Receives a request's events, on the engine thread, in order; the last one is finished.
using TokenSink = std::function<void(const TokenEvent&)>;

}  // namespace nt

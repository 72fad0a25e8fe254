// server/api_response.h — OpenAI-shaped response bodies built from the engine's TokenEvents:
// whole responses, streamed chunks, usage, llama.cpp's `timings`, and log-probabilities in
// OpenAI's chat and completions shapes.
// Must not know: HTTP, threads, how events are delivered.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>
#include "engine/request.h"
#include "server/api_request.h"

namespace nt::server {

// The raw bytes of one token's text (Tokenizer::token_to_piece), possibly a partial UTF-8 sequence.
using PieceFn = std::function<std::string(int32_t)>;

struct ResponseMeta {
  ApiKind kind = ApiKind::Chat;
  std::string id;      // "chatcmpl-..." / "cmpl-..."
  std::string model;
  int64_t created = 0; // unix seconds
};

// What a request accumulates from its events for a non-streamed answer (and for usage/timings).
struct Accumulated {
  std::string text;
  std::vector<TokenEvent> token_events;  // events that carry a token, when log-probs were asked
  bool finished = false;
  FinishReason reason = FinishReason::Length;
  RequestStats stats;
  int64_t truncated_tokens = 0;  // prompt tokens dropped by `truncate`
};

// "stop" (stop string, end of generation), "length" (max tokens, context full); others map to
// "stop" (never sent for cancelled requests).
const char* api_finish_reason(FinishReason r);

// {"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details": {"cached_tokens"}}
nlohmann::json usage_json(const RequestStats& s);
// llama.cpp's timings: prompt_n (computed prompt tokens), prompt_ms, prompt_per_token_ms,
// prompt_per_second, predicted_n, predicted_ms, predicted_per_token_ms, predicted_per_second, cache_n.
nlohmann::json timings_json(const RequestStats& s);

// Log-probabilities of the given token events (each with logprob and top_logprobs filled):
// chat: {"content": [{"token", "logprob", "bytes", "top_logprobs": [{"token", "logprob", "bytes"}]}]};
// completions: {"tokens", "token_logprobs", "top_logprobs": [{token: logprob}], "text_offset"}
// (text_offset counted in bytes from `offset0`).
nlohmann::json logprobs_json(ApiKind kind, const std::vector<TokenEvent>& events, const PieceFn& piece,
                             int64_t offset0 = 0);

// A whole (non-streamed) response: id, object ("chat.completion" / "text_completion"), created,
// model, choices[0] (message {role: assistant, content} or text; finish_reason; logprobs or null),
// usage, timings, and "truncated" (true with "truncated_tokens" only when truncate dropped tokens).
nlohmann::json response_json(const ResponseMeta& m, const Accumulated& a, bool with_logprobs, const PieceFn& piece);

// One streamed chunk for one event ("chat.completion.chunk" / "text_completion"): the event's text
// as delta.content / text (chat's first chunk also carries delta.role), its logprobs when asked,
// finish_reason on the final event (null before). `text_offset` is the bytes of text sent before.
nlohmann::json chunk_json(const ResponseMeta& m, const TokenEvent& ev, bool first, bool with_logprobs,
                          const PieceFn& piece, int64_t text_offset);
// The final usage chunk of stream_options.include_usage: choices [] and usage (+ timings).
nlohmann::json usage_chunk_json(const ResponseMeta& m, const RequestStats& s);

// Serializes for the wire: invalid UTF-8 in strings becomes U+FFFD (never a throw).
std::string dump_json(const nlohmann::json& j);
// One SSE event: "data: <json>\n\n".
std::string sse_data(const nlohmann::json& j);

}  // namespace nt::server

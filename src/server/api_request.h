// server/api_request.h — the OpenAI-compatible request bodies (/v1/chat/completions,
// /v1/completions) parsed into what the engine runs, and the OpenAI error object every failure
// becomes. Pure functions of the body: no engine, no tokenizer, no sockets (so they are fuzzed).
// Must not know: HTTP, threads, how prompts are tokenized or rendered.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include <nlohmann/json.hpp>
#include "core/result.h"
#include "engine/request.h"

namespace nt::server {

enum class ApiKind { Chat, Completion };

// An OpenAI error object with its HTTP status: {"error": {"message", "type", "param", "code"}}.
struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // "" -> null
  std::string code;   // "" -> null
};
inline ApiError api_error(int status, std::string message, std::string type = "invalid_request_error",
                          std::string param = {}, std::string code = {}) {
  return ApiError{status, std::move(message), std::move(type), std::move(param), std::move(code)};
}
nlohmann::json error_body(const ApiError& e);
// Maps an engine/sampler error: InvalidArgument and PromptTooLong -> 400 (PromptTooLong with code
// "context_length_exceeded"), Capacity -> 429, Cancelled -> 499, Internal -> 500 ("server_error").
// A leading known parameter name ("temperature: ...", "top_p must ...") becomes `param`.
ApiError to_api_error(const Error& e);

enum class Truncate { None, Start, Middle };

struct ParseLimits {
  size_t max_depth = 64;          // JSON nesting
  size_t max_stop = 16;           // stop strings
  size_t max_stop_bytes = 1024;   // per stop string
  size_t max_messages = 65536;
  int max_top_logprobs = 20;
};

struct ApiRequest {
  ApiKind kind = ApiKind::Chat;
  std::string model;             // as sent ("" if absent)
  bool stream = false;
  bool include_usage = false;    // stream_options.include_usage
  // Completions: exactly one of prompt_text / prompt_ids is set.
  std::optional<std::string> prompt_text;
  std::vector<int32_t> prompt_ids;
  // Chat: the messages (array of objects; string content, or text parts joined into a string) and
  // chat_template_kwargs (an object, or null).
  nlohmann::ordered_json messages;
  nlohmann::ordered_json chat_template_kwargs;
  // Sampling (llama-server's defaults where the body is silent), stop strings, max tokens
  // (max_completion_tokens wins over max_tokens; -1 when neither), ignore_eos, n_logprobs (-1: no
  // log-probs; else the number of top alternatives). params.prompt is left empty.
  RequestParams params;
  bool logprobs = false;
  int top_logprobs = 0;
  Truncate truncate = Truncate::None;
};

// Parses a request body. Errors are 400s naming the parameter (a message a user can act on):
// malformed JSON, wrong types, out-of-range values, n != 1, invalid UTF-8, nesting beyond limits.
Result<ApiRequest> parse_api_request(ApiKind kind, std::string_view body, const ParseLimits& limits = {});

}  // namespace nt::server

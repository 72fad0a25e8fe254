// libFuzzer target over the OpenAI request parser and the response shapers: any body must parse
// or fail with an error object (no crash, no exception); a parsed request's values, pushed through
// every response shape with token pieces cut from the input (arbitrary bytes, often invalid
// UTF-8), must serialize to JSON that parses back.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/api_request.h"
#include "server/api_response.h"

namespace {

using namespace nt::server;

// The wire form of j must be valid JSON.
void check_dump(const nlohmann::json& j) {
  const std::string s = dump_json(j);
  if (!nlohmann::json::accept(s)) std::abort();
  if (sse_data(j).size() != s.size() + 8) std::abort();
}

void shape_responses(const ApiRequest& r, std::string_view in) {
  // Pieces: slices of the input, so they hold whatever bytes the fuzzer chose.
  const PieceFn piece = [in](int32_t id) {
    if (in.empty()) return std::string();
    const size_t at = static_cast<size_t>(id) % in.size();
    return std::string(in.substr(at, 1 + static_cast<size_t>(id) % 5));
  };
  std::vector<int32_t> ids = r.prompt_ids;
  if (ids.size() > 16) ids.resize(16);
  if (ids.empty()) ids = {0, 1, 2};
  const int n_top = r.params.n_logprobs > 0 ? r.params.n_logprobs : 0;
  if (r.params.n_logprobs != (r.logprobs ? r.top_logprobs : -1)) std::abort();

  ResponseMeta m;
  m.kind = r.kind;
  m.id = r.kind == ApiKind::Chat ? "chatcmpl-fuzz" : "cmpl-fuzz";
  m.model = r.model;
  m.created = 1;
  Accumulated a;
  int64_t offset = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    nt::TokenEvent ev;
    ev.token = ids[i];
    ev.text = piece(ids[i]);
    ev.logprob = -static_cast<float>(i) * 0.5f;
    for (int k = 0; k < n_top; ++k)
      ev.top_logprobs.push_back(
          {static_cast<int32_t>((int64_t{ids[(i + k) % ids.size()]} + k) % 2147483647), -static_cast<float>(k)});
    ev.finished = i + 1 == ids.size();
    ev.finish_reason = r.params.stop.empty() ? nt::FinishReason::Length : nt::FinishReason::Stop;
    ev.stats.prompt_tokens = static_cast<int64_t>(ids.size());
    ev.stats.generated_tokens = static_cast<int64_t>(i + 1);
    ev.stats.decode_ms = static_cast<double>(i);
    check_dump(chunk_json(m, ev, i == 0, r.logprobs, piece, offset));
    offset += static_cast<int64_t>(ev.text.size());
    a.text += ev.text;
    a.token_events.push_back(ev);
    if (ev.finished) a.stats = ev.stats;
  }
  nt::TokenEvent last;  // a final event without a token
  last.finished = true;
  check_dump(chunk_json(m, last, false, r.logprobs, piece, offset));
  a.finished = true;
  a.reason = nt::FinishReason::Eog;
  a.truncated_tokens = r.truncate == Truncate::None ? 0 : 3;
  check_dump(response_json(m, a, r.logprobs, piece));
  check_dump(usage_chunk_json(m, a.stats));
  // What the parser hands on came from valid JSON text: it serializes strictly (no throw).
  (void)r.messages.dump();
  (void)r.chat_template_kwargs.dump();
  (void)nlohmann::json(r.params.stop).dump();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  ParseLimits limits;
  limits.max_messages = 256;
  for (ApiKind kind : {ApiKind::Chat, ApiKind::Completion}) {
    auto r = parse_api_request(kind, in, limits);
    if (!r.ok()) {
      const ApiError e = to_api_error(r.error());
      if (e.message.empty() || e.status != 400) std::abort();
      check_dump(error_body(e));
      continue;
    }
    if (r->kind != kind) std::abort();
    if (kind == ApiKind::Completion && r->prompt_text.has_value() == !r->prompt_ids.empty()) std::abort();
    shape_responses(*r, in);
  }
  return 0;
}

// server/api_response.cpp — OpenAI-shaped bodies from TokenEvents (see api_response.h).
#include "server/api_response.h"

#include <charconv>
#include <cmath>

namespace nt::server {
namespace {

using nlohmann::json;

// Strings in the output are valid UTF-8: an ill-formed sequence becomes U+FFFD, as dump_json
// would make it (a token's piece may be a partial character).
std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c < 0x80) len = 1;
    else if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c == 0xE0) len = 3, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEC) len = 3;
    else if (c == 0xED) len = 3, hi = 0x9F;  // no surrogates
    else if (c >= 0xEE && c <= 0xEF) len = 3;
    else if (c == 0xF0) len = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) len = 4;
    else if (c == 0xF4) len = 4, hi = 0x8F;
    size_t k = len > 0 ? 1 : 0;  // bytes of the sequence that are well formed so far
    while (k > 0 && k < len && i + k < s.size()) {
      const unsigned char b = static_cast<unsigned char>(s[i + k]);
      if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) break;
      ++k;
    }
    if (len > 0 && k == len) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\xEF\xBF\xBD";  // one replacement per maximal ill-formed subpart (as Unicode advises)
      i += k > 0 ? k : 1;
    }
  }
  return out;
}

// JSON has no NaN/inf: rates and times that are not finite become 0.
double finite(double x) { return std::isfinite(x) ? x : 0.0; }
// A float as the double with the same shortest decimal form, so -0.7f is written -0.7 rather
// than -0.699999988079071. OpenAI reports impossible tokens as -9999 rather than -inf.
double logprob_value(float lp) {
  if (!std::isfinite(lp)) return -9999.0;
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, lp).ptr;
  double d = lp;
  std::from_chars(buf, end, d);
  return d;
}

json bytes_of(const std::string& piece) {
  json b = json::array();
  for (char c : piece) b.push_back(static_cast<int>(static_cast<unsigned char>(c)));
  return b;
}

json chat_entry(const std::string& piece, float logprob) {
  return {{"token", valid_utf8(piece)}, {"logprob", logprob_value(logprob)}, {"bytes", bytes_of(piece)}};
}

json header(const ResponseMeta& m, const char* object) {
  return {{"id", m.id}, {"object", object}, {"created", m.created}, {"model", valid_utf8(m.model)}};
}

}  // namespace

const char* api_finish_reason(FinishReason r) {
  switch (r) {
    case FinishReason::Length:
    case FinishReason::Context:
      return "length";
    default:
      return "stop";
  }
}

json usage_json(const RequestStats& s) {
  return {{"prompt_tokens", s.prompt_tokens},
          {"completion_tokens", s.generated_tokens},
          {"total_tokens", s.prompt_tokens + s.generated_tokens},
          {"prompt_tokens_details", {{"cached_tokens", s.cached_tokens}}}};
}

json timings_json(const RequestStats& s) {
  const double prompt_n = static_cast<double>(s.computed_prompt_tokens);
  const double prompt_ms = finite(s.prefill_ms);
  // Decode time runs from the first token to the last: it covers the tokens after the first.
  const double decode_n = s.generated_tokens > 1 ? static_cast<double>(s.generated_tokens - 1) : 0.0;
  const double decode_ms = finite(s.decode_ms);
  return {{"prompt_n", s.computed_prompt_tokens},
          {"prompt_ms", prompt_ms},
          {"prompt_per_token_ms", prompt_n > 0 ? finite(prompt_ms / prompt_n) : 0.0},
          {"prompt_per_second", prompt_ms > 0 ? finite(prompt_n * 1000.0 / prompt_ms) : 0.0},
          {"predicted_n", s.generated_tokens},
          {"predicted_ms", decode_ms},
          {"predicted_per_token_ms", decode_n > 0 ? finite(decode_ms / decode_n) : 0.0},
          {"predicted_per_second", decode_ms > 0 ? finite(decode_n * 1000.0 / decode_ms) : 0.0},
          {"cache_n", s.cached_tokens}};
}

json logprobs_json(ApiKind kind, const std::vector<TokenEvent>& events, const PieceFn& piece,
                   int64_t offset0) {
  if (kind == ApiKind::Chat) {
    json content = json::array();
    for (const TokenEvent& ev : events) {
      if (ev.token < 0) continue;
      json e = chat_entry(piece(ev.token), ev.logprob);
      json top = json::array();
      for (const TokenLogprob& t : ev.top_logprobs) top.push_back(chat_entry(piece(t.token), t.logprob));
      e["top_logprobs"] = std::move(top);
      content.push_back(std::move(e));
    }
    return {{"content", std::move(content)}};
  }
  json tokens = json::array(), token_logprobs = json::array(), top_logprobs = json::array(),
       text_offset = json::array();
  int64_t offset = offset0;
  for (const TokenEvent& ev : events) {
    if (ev.token < 0) continue;
    const std::string p = piece(ev.token);
    tokens.push_back(valid_utf8(p));
    token_logprobs.push_back(logprob_value(ev.logprob));
    text_offset.push_back(offset);
    offset += static_cast<int64_t>(p.size());
    json top = json::object();
    for (const TokenLogprob& t : ev.top_logprobs) {
      // Two alternatives can share a piece: keep the more likely one.
      const std::string key = valid_utf8(piece(t.token));
      const double lp = logprob_value(t.logprob);
      auto it = top.find(key);
      if (it == top.end() || it->get<double>() < lp) top[key] = lp;
    }
    top_logprobs.push_back(std::move(top));
  }
  return {{"tokens", std::move(tokens)},
          {"token_logprobs", std::move(token_logprobs)},
          {"top_logprobs", std::move(top_logprobs)},
          {"text_offset", std::move(text_offset)}};
}

json response_json(const ResponseMeta& m, const Accumulated& a, bool with_logprobs, const PieceFn& piece) {
  const bool chat = m.kind == ApiKind::Chat;
  json j = header(m, chat ? "chat.completion" : "text_completion");
  json choice = {{"index", 0}};
  if (chat)
    choice["message"] = {{"role", "assistant"}, {"content", a.text}};
  else
    choice["text"] = a.text;
  choice["logprobs"] = with_logprobs ? logprobs_json(m.kind, a.token_events, piece) : json(nullptr);
  choice["finish_reason"] = api_finish_reason(a.reason);
  j["choices"] = json::array({std::move(choice)});
  j["usage"] = usage_json(a.stats);
  j["timings"] = timings_json(a.stats);
  j["truncated"] = a.truncated_tokens > 0;
  if (a.truncated_tokens > 0) j["truncated_tokens"] = a.truncated_tokens;
  return j;
}

json chunk_json(const ResponseMeta& m, const TokenEvent& ev, bool first, bool with_logprobs,
                const PieceFn& piece, int64_t text_offset) {
  const bool chat = m.kind == ApiKind::Chat;
  json j = header(m, chat ? "chat.completion.chunk" : "text_completion");
  json choice = {{"index", 0}};
  if (chat) {
    json delta = json::object();
    if (first) delta["role"] = "assistant";
    if (first || !ev.finished || !ev.text.empty()) delta["content"] = ev.text;
    choice["delta"] = std::move(delta);
  } else {
    choice["text"] = ev.text;
  }
  choice["logprobs"] = with_logprobs && ev.token >= 0
                           ? logprobs_json(m.kind, std::vector<TokenEvent>{ev}, piece, text_offset)
                           : json(nullptr);
  choice["finish_reason"] = ev.finished ? json(api_finish_reason(ev.finish_reason)) : json(nullptr);
  j["choices"] = json::array({std::move(choice)});
  return j;
}

json usage_chunk_json(const ResponseMeta& m, const RequestStats& s) {
  json j = header(m, m.kind == ApiKind::Chat ? "chat.completion.chunk" : "text_completion");
  j["choices"] = json::array();
  j["usage"] = usage_json(s);
  j["timings"] = timings_json(s);
  return j;
}

std::string dump_json(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string sse_data(const json& j) { return "data: " + dump_json(j) + "\n\n"; }

}  // namespace nt::server

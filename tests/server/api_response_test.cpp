// Tests for server/api_response.h: whole responses, stream chunks, usage, timings and both
// log-probability shapes, and that serialization never throws on invalid UTF-8.
#include "server/api_response.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace nt::server {
namespace {

using nlohmann::json;

// Token pieces: 0 "He", 1 "llo", 2 " wor", 3 "\xE2\x82" (a partial euro sign), 4 "ld", 5 "He"
// (a second token with the same piece as 0).
std::string piece_of(int32_t id) {
  switch (id) {
    case 0: return "He";
    case 1: return "llo";
    case 2: return " wor";
    case 3: return "\xE2\x82";
    case 4: return "ld";
    case 5: return "He";
    default: return "?";
  }
}
const PieceFn kPiece = piece_of;

TokenEvent token_event(int32_t token, const std::string& text, float lp,
                       std::vector<TokenLogprob> top = {}) {
  TokenEvent ev;
  ev.token = token;
  ev.text = text;
  ev.logprob = lp;
  ev.top_logprobs = std::move(top);
  return ev;
}

RequestStats stats() {
  RequestStats s;
  s.prompt_tokens = 10;
  s.cached_tokens = 4;
  s.computed_prompt_tokens = 6;
  s.generated_tokens = 5;
  s.prefill_ms = 3.0;
  s.decode_ms = 8.0;
  return s;
}

ResponseMeta meta(ApiKind kind) {
  ResponseMeta m;
  m.kind = kind;
  m.id = kind == ApiKind::Chat ? "chatcmpl-1" : "cmpl-1";
  m.model = "tiny";
  m.created = 1700000000;
  return m;
}

TEST(ApiResponse, FinishReasons) {
  EXPECT_STREQ(api_finish_reason(FinishReason::Stop), "stop");
  EXPECT_STREQ(api_finish_reason(FinishReason::Eog), "stop");
  EXPECT_STREQ(api_finish_reason(FinishReason::Length), "length");
  EXPECT_STREQ(api_finish_reason(FinishReason::Context), "length");
  EXPECT_STREQ(api_finish_reason(FinishReason::Error), "stop");
  EXPECT_STREQ(api_finish_reason(FinishReason::Cancelled), "stop");
}

TEST(ApiResponse, UsageAndTimings) {
  json u = usage_json(stats());
  EXPECT_EQ(u["prompt_tokens"], 10);
  EXPECT_EQ(u["completion_tokens"], 5);
  EXPECT_EQ(u["total_tokens"], 15);
  EXPECT_EQ(u["prompt_tokens_details"]["cached_tokens"], 4);
  json t = timings_json(stats());
  EXPECT_EQ(t["prompt_n"], 6);
  EXPECT_DOUBLE_EQ(t["prompt_ms"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(t["prompt_per_token_ms"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(t["prompt_per_second"].get<double>(), 2000.0);
  EXPECT_EQ(t["predicted_n"], 5);
  EXPECT_DOUBLE_EQ(t["predicted_ms"].get<double>(), 8.0);
  // The decode time covers the 4 tokens after the first.
  EXPECT_DOUBLE_EQ(t["predicted_per_token_ms"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(t["predicted_per_second"].get<double>(), 500.0);
  EXPECT_EQ(t["cache_n"], 4);
  EXPECT_EQ(t.size(), 9u);
}

TEST(ApiResponse, TimingsNeverNaNOrInf) {
  RequestStats s;  // all zero
  json t = timings_json(s);
  for (auto& [k, v] : t.items()) {
    ASSERT_TRUE(v.is_number()) << k;
    EXPECT_EQ(v.get<double>(), 0.0) << k;
  }
  s.computed_prompt_tokens = 3;
  s.generated_tokens = 1;
  s.prefill_ms = std::numeric_limits<double>::quiet_NaN();
  s.decode_ms = std::numeric_limits<double>::infinity();
  t = timings_json(s);
  const std::string d = dump_json(t);
  EXPECT_EQ(d.find("null"), std::string::npos) << d;
  for (auto& [k, v] : t.items()) EXPECT_TRUE(std::isfinite(v.get<double>())) << k;
}

TEST(ApiResponse, ChatWholeResponse) {
  Accumulated a;
  a.text = "Hello";
  a.finished = true;
  a.reason = FinishReason::Eog;
  a.stats = stats();
  json j = response_json(meta(ApiKind::Chat), a, false, kPiece);
  EXPECT_EQ(j["id"], "chatcmpl-1");
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["created"], 1700000000);
  EXPECT_EQ(j["model"], "tiny");
  ASSERT_EQ(j["choices"].size(), 1u);
  const json& c = j["choices"][0];
  EXPECT_EQ(c["index"], 0);
  EXPECT_EQ(c["message"], json({{"role", "assistant"}, {"content", "Hello"}}));
  EXPECT_TRUE(c["logprobs"].is_null());
  EXPECT_EQ(c["finish_reason"], "stop");
  EXPECT_EQ(j["usage"], usage_json(a.stats));
  EXPECT_EQ(j["timings"], timings_json(a.stats));
  EXPECT_EQ(j["truncated"], false);
  EXPECT_FALSE(j.contains("truncated_tokens"));
  a.truncated_tokens = 17;
  a.reason = FinishReason::Length;
  j = response_json(meta(ApiKind::Chat), a, false, kPiece);
  EXPECT_EQ(j["truncated"], true);
  EXPECT_EQ(j["truncated_tokens"], 17);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
}

TEST(ApiResponse, CompletionWholeResponse) {
  Accumulated a;
  a.text = "Hello";
  a.reason = FinishReason::Stop;
  a.stats = stats();
  a.token_events = {token_event(0, "He", -0.5f), token_event(1, "llo", -0.25f)};
  json j = response_json(meta(ApiKind::Completion), a, true, kPiece);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["id"], "cmpl-1");
  const json& c = j["choices"][0];
  EXPECT_EQ(c["index"], 0);
  EXPECT_EQ(c["text"], "Hello");
  EXPECT_FALSE(c.contains("message"));
  EXPECT_EQ(c["finish_reason"], "stop");
  EXPECT_EQ(c["logprobs"]["tokens"], json({"He", "llo"}));
  EXPECT_EQ(c["logprobs"]["text_offset"], json({0, 2}));
  EXPECT_EQ(j["truncated"], false);
}

TEST(ApiResponse, ChatLogprobsShape) {
  std::vector<TokenEvent> evs = {
      token_event(0, "He", -0.5f, {{0, -0.5f}, {2, -1.5f}}),
      token_event(3, "", -std::numeric_limits<float>::infinity(), {{3, -2.0f}}),
  };
  TokenEvent final_ev;  // a final event without a token: no entry
  final_ev.finished = true;
  evs.push_back(final_ev);
  json lp = logprobs_json(ApiKind::Chat, evs, kPiece);
  ASSERT_EQ(lp.size(), 1u);
  const json& content = lp["content"];
  ASSERT_EQ(content.size(), 2u);
  EXPECT_EQ(content[0]["token"], "He");
  EXPECT_DOUBLE_EQ(content[0]["logprob"].get<double>(), -0.5);
  EXPECT_EQ(content[0]["bytes"], json({72, 101}));
  ASSERT_EQ(content[0]["top_logprobs"].size(), 2u);
  EXPECT_EQ(content[0]["top_logprobs"][1]["token"], " wor");
  EXPECT_DOUBLE_EQ(content[0]["top_logprobs"][1]["logprob"].get<double>(), -1.5);
  EXPECT_EQ(content[0]["top_logprobs"][1]["bytes"], json({32, 119, 111, 114}));
  EXPECT_EQ(content[0]["top_logprobs"][1].size(), 3u);
  // The partial UTF-8 piece: raw bytes kept, the string made valid, -inf reported as -9999.
  EXPECT_EQ(content[1]["bytes"], json({0xE2, 0x82}));
  EXPECT_EQ(content[1]["token"], "\xEF\xBF\xBD");
  EXPECT_DOUBLE_EQ(content[1]["logprob"].get<double>(), -9999.0);
  EXPECT_EQ(content[1]["top_logprobs"][0]["bytes"], json({0xE2, 0x82}));
  EXPECT_NO_THROW(content.dump());
}

TEST(ApiResponse, CompletionLogprobsShape) {
  std::vector<TokenEvent> evs = {
      token_event(0, "He", -0.5f, {{0, -0.5f}, {5, -0.7f}, {1, -3.0f}}),
      token_event(5, "He", -0.7f, {{5, -0.2f}, {0, -0.9f}}),
      token_event(3, "", -1.0f, {{3, -1.0f}}),
      token_event(4, "\xE2\x82" "ld", -0.1f, {}),
  };
  TokenEvent final_ev;
  final_ev.finished = true;
  evs.push_back(final_ev);
  json lp = logprobs_json(ApiKind::Completion, evs, kPiece, 100);
  EXPECT_EQ(lp.size(), 4u);
  EXPECT_EQ(lp["tokens"], json({"He", "He", "\xEF\xBF\xBD", "ld"}));
  ASSERT_EQ(lp["token_logprobs"].size(), 4u);
  EXPECT_DOUBLE_EQ(lp["token_logprobs"][1].get<double>(), -0.7);
  // Byte offsets from offset0: "He" 2, "He" 2, partial 2 bytes, "ld".
  EXPECT_EQ(lp["text_offset"], json({100, 102, 104, 106}));
  ASSERT_EQ(lp["top_logprobs"].size(), 4u);
  // Tokens 0 and 5 share the piece "He": the more likely alternative is kept.
  const json& t0 = lp["top_logprobs"][0];
  EXPECT_EQ(t0.size(), 2u);
  EXPECT_NEAR(t0["He"].get<double>(), -0.5, 1e-6);
  EXPECT_NEAR(t0["llo"].get<double>(), -3.0, 1e-6);
  EXPECT_NEAR(lp["top_logprobs"][1]["He"].get<double>(), -0.2, 1e-6);
  EXPECT_EQ(lp["top_logprobs"][2].size(), 1u);
  EXPECT_TRUE(lp["top_logprobs"][2].contains("\xEF\xBF\xBD"));
  EXPECT_EQ(lp["top_logprobs"][3], json::object());
}

TEST(ApiResponse, ChatStreamChunks) {
  const ResponseMeta m = meta(ApiKind::Chat);
  json c = chunk_json(m, token_event(0, "He", -0.5f), true, false, kPiece, 0);
  EXPECT_EQ(c["object"], "chat.completion.chunk");
  EXPECT_EQ(c["id"], "chatcmpl-1");
  EXPECT_EQ(c["created"], 1700000000);
  EXPECT_EQ(c["model"], "tiny");
  EXPECT_EQ(c["choices"][0]["index"], 0);
  EXPECT_EQ(c["choices"][0]["delta"], json({{"role", "assistant"}, {"content", "He"}}));
  EXPECT_TRUE(c["choices"][0]["finish_reason"].is_null());
  EXPECT_TRUE(c["choices"][0]["logprobs"].is_null());
  c = chunk_json(m, token_event(1, "llo", -0.5f), false, false, kPiece, 2);
  EXPECT_EQ(c["choices"][0]["delta"], json({{"content", "llo"}}));
  c = chunk_json(m, token_event(3, "", -0.5f), false, false, kPiece, 5);  // held back text
  EXPECT_EQ(c["choices"][0]["delta"], json({{"content", ""}}));
  TokenEvent fin;
  fin.finished = true;
  fin.finish_reason = FinishReason::Length;
  c = chunk_json(m, fin, false, true, kPiece, 5);
  EXPECT_EQ(c["choices"][0]["delta"], json::object());
  EXPECT_EQ(c["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(c["choices"][0]["logprobs"].is_null());  // no token, no entry
  fin.text = "!";
  fin.token = 4;
  fin.finish_reason = FinishReason::Stop;
  c = chunk_json(m, fin, false, true, kPiece, 5);
  EXPECT_EQ(c["choices"][0]["delta"], json({{"content", "!"}}));
  EXPECT_EQ(c["choices"][0]["finish_reason"], "stop");
  ASSERT_EQ(c["choices"][0]["logprobs"]["content"].size(), 1u);
  EXPECT_EQ(c["choices"][0]["logprobs"]["content"][0]["token"], "ld");
  // A request whose only event is the final one still names the role.
  TokenEvent only;
  only.finished = true;
  c = chunk_json(m, only, true, false, kPiece, 0);
  EXPECT_EQ(c["choices"][0]["delta"], json({{"role", "assistant"}, {"content", ""}}));
}

TEST(ApiResponse, CompletionStreamChunks) {
  const ResponseMeta m = meta(ApiKind::Completion);
  json c = chunk_json(m, token_event(2, " wor", -0.5f, {{2, -0.5f}}), false, true, kPiece, 7);
  EXPECT_EQ(c["object"], "text_completion");
  const json& ch = c["choices"][0];
  EXPECT_EQ(ch["text"], " wor");
  EXPECT_FALSE(ch.contains("delta"));
  EXPECT_TRUE(ch["finish_reason"].is_null());
  EXPECT_EQ(ch["logprobs"]["tokens"], json({" wor"}));
  EXPECT_EQ(ch["logprobs"]["text_offset"], json({7}));
  TokenEvent fin;
  fin.finished = true;
  fin.finish_reason = FinishReason::Eog;
  c = chunk_json(m, fin, false, false, kPiece, 11);
  EXPECT_EQ(c["choices"][0]["text"], "");
  EXPECT_EQ(c["choices"][0]["finish_reason"], "stop");
}

TEST(ApiResponse, UsageChunk) {
  json c = usage_chunk_json(meta(ApiKind::Chat), stats());
  EXPECT_EQ(c["object"], "chat.completion.chunk");
  EXPECT_EQ(c["choices"], json::array());
  EXPECT_EQ(c["usage"]["total_tokens"], 15);
  EXPECT_EQ(c["timings"]["prompt_n"], 6);
  c = usage_chunk_json(meta(ApiKind::Completion), stats());
  EXPECT_EQ(c["object"], "text_completion");
}

TEST(ApiResponse, DumpReplacesInvalidUtf8) {
  json j = {{"text", std::string("a\xff" "b\xE2\x82")}};
  EXPECT_THROW(j.dump(), json::type_error);  // what dump_json must avoid
  std::string d;
  ASSERT_NO_THROW(d = dump_json(j));
  EXPECT_EQ(d, "{\"text\":\"a\xEF\xBF\xBD" "b\xEF\xBF\xBD\"}");
  EXPECT_EQ(sse_data(json{{"a", 1}}), "data: {\"a\":1}\n\n");
  // A whole response whose text ends in a partial character.
  Accumulated a;
  a.text = "x\xE2\x82";
  const std::string r = dump_json(response_json(meta(ApiKind::Chat), a, false, kPiece));
  EXPECT_NE(r.find("x\xEF\xBF\xBD"), std::string::npos) << r;
  EXPECT_TRUE(json::parse(r).is_object());
}

}  // namespace
}  // namespace nt::server

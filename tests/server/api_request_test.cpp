// Tests for parse_api_request (server/api_request.h): every accepted shape and every refusal, with
// the status, param and message a client gets.
#include "server/api_request.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace nt::server {
namespace {

using Json = nlohmann::ordered_json;

const char* kMsgs = R"("messages":[{"role":"user","content":"Hi"}])";

Result<ApiRequest> chat(const std::string& fields, const ParseLimits& limits = {}) {
  std::string body = std::string("{") + kMsgs + (fields.empty() ? "" : "," + fields) + "}";
  return parse_api_request(ApiKind::Chat, body, limits);
}
Result<ApiRequest> completion(const std::string& fields) {
  std::string body = std::string(R"({"prompt":"Once")") + (fields.empty() ? "" : "," + fields) + "}";
  return parse_api_request(ApiKind::Completion, body);
}

// The request failed with a 400 naming `param` ("" -> none) and a message containing `text`.
void expect_400(const Result<ApiRequest>& r, const std::string& param, const std::string& text) {
  ASSERT_FALSE(r.ok()) << "expected an error mentioning: " << text;
  const ApiError e = to_api_error(r.error());
  EXPECT_EQ(e.status, 400) << e.message;
  EXPECT_EQ(e.type, "invalid_request_error");
  EXPECT_EQ(e.param, param) << e.message;
  EXPECT_NE(e.message.find(text), std::string::npos) << e.message;
  if (!param.empty()) {
    EXPECT_EQ(e.message.rfind(param, 0), 0u) << e.message;
  }
}

TEST(ApiRequest, ChatDefaultsAreLlamaServers) {
  auto r = chat("");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->kind, ApiKind::Chat);
  EXPECT_EQ(r->model, "");
  EXPECT_FALSE(r->stream);
  EXPECT_FALSE(r->include_usage);
  EXPECT_EQ(r->messages.size(), 1u);
  EXPECT_TRUE(r->chat_template_kwargs.is_null());
  const SamplerParams& s = r->params.sampling;
  EXPECT_FLOAT_EQ(s.temp, 0.8f);
  EXPECT_EQ(s.top_k, 40);
  EXPECT_FLOAT_EQ(s.top_p, 0.95f);
  EXPECT_FLOAT_EQ(s.min_p, 0.05f);
  EXPECT_FLOAT_EQ(s.typical_p, 1.0f);
  EXPECT_FLOAT_EQ(s.repeat_penalty, 1.0f);
  EXPECT_EQ(s.repeat_last_n, 64);
  EXPECT_EQ(s.presence_penalty, 0.0f);
  EXPECT_EQ(s.frequency_penalty, 0.0f);
  EXPECT_FALSE(s.seed.has_value());
  EXPECT_TRUE(s.logit_bias.empty());
  EXPECT_EQ(r->params.max_tokens, -1);
  EXPECT_TRUE(r->params.stop.empty());
  EXPECT_FALSE(r->params.ignore_eos);
  EXPECT_EQ(r->params.n_logprobs, -1);
  EXPECT_TRUE(r->params.prompt.empty());
  EXPECT_FALSE(r->logprobs);
  EXPECT_EQ(r->truncate, Truncate::None);
}

TEST(ApiRequest, ChatAllFields) {
  auto r = chat(R"("model":"m1","stream":true,"stream_options":{"include_usage":true},
    "max_tokens":7,"temperature":0,"top_p":0.5,"top_k":3,"min_p":0.1,"typical_p":0.9,
    "repeat_penalty":1.1,"repeat_last_n":-1,"presence_penalty":-2,"frequency_penalty":2,"seed":42,
    "stop":["\n","","END"],"n":1,"ignore_eos":true,"logprobs":true,"top_logprobs":20,
    "truncate":"middle","chat_template_kwargs":{"enable_thinking":false},
    "user":"u","metadata":{"a":"b"},"store":false,"service_tier":"auto","parallel_tool_calls":false,
    "response_format":{"type":"text"},"tools":[],"tool_choice":"none","unknown_field":[1,{"x":2}])");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->model, "m1");
  EXPECT_TRUE(r->stream);
  EXPECT_TRUE(r->include_usage);
  EXPECT_EQ(r->params.max_tokens, 7);
  const SamplerParams& s = r->params.sampling;
  EXPECT_EQ(s.temp, 0.0f);
  EXPECT_FLOAT_EQ(s.top_p, 0.5f);
  EXPECT_EQ(s.top_k, 3);
  EXPECT_FLOAT_EQ(s.min_p, 0.1f);
  EXPECT_FLOAT_EQ(s.typical_p, 0.9f);
  EXPECT_FLOAT_EQ(s.repeat_penalty, 1.1f);
  EXPECT_EQ(s.repeat_last_n, -1);
  EXPECT_EQ(s.presence_penalty, -2.0f);
  EXPECT_EQ(s.frequency_penalty, 2.0f);
  ASSERT_TRUE(s.seed.has_value());
  EXPECT_EQ(*s.seed, 42u);
  EXPECT_EQ(r->params.stop, (std::vector<std::string>{"\n", "END"}));
  EXPECT_TRUE(r->params.ignore_eos);
  EXPECT_TRUE(r->logprobs);
  EXPECT_EQ(r->top_logprobs, 20);
  EXPECT_EQ(r->params.n_logprobs, 20);
  EXPECT_EQ(r->truncate, Truncate::Middle);
  EXPECT_EQ(r->chat_template_kwargs, Json::parse(R"({"enable_thinking":false})"));
}

TEST(ApiRequest, NullMeansNotGiven) {
  auto r = chat(R"("model":null,"stream":null,"max_tokens":null,"temperature":null,"seed":null,
    "stop":null,"n":null,"logprobs":null,"top_logprobs":null,"truncate":null,"logit_bias":null,
    "chat_template_kwargs":null,"response_format":null,"tools":null)");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FLOAT_EQ(r->params.sampling.temp, 0.8f);
  EXPECT_EQ(r->params.max_tokens, -1);
  EXPECT_EQ(r->params.n_logprobs, -1);
  EXPECT_FALSE(r->params.sampling.seed.has_value());
}

TEST(ApiRequest, MessagesKeepExtraKeysAndJoinTextParts) {
  auto r = parse_api_request(ApiKind::Chat, R"({"messages":[
    {"role":"system","content":"S","name":"sys"},
    {"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
    {"role":"assistant","content":null,"tool_calls":[{"id":"1"}]},
    {"role":"assistant"},
    {"role":"user","content":[]}]})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->messages.size(), 5u);
  EXPECT_EQ(r->messages[0]["name"], "sys");
  EXPECT_EQ(r->messages[1]["content"], "ab");
  EXPECT_EQ(r->messages[2]["content"], "");
  EXPECT_EQ(r->messages[2]["tool_calls"][0]["id"], "1");
  EXPECT_EQ(r->messages[3]["content"], "");
  EXPECT_EQ(r->messages[4]["content"], "");
  // Key order is kept (ordered_json).
  EXPECT_EQ(r->messages[0].begin().key(), "role");
}

TEST(ApiRequest, MessagesErrors) {
  auto P = [](const std::string& msgs) {
    return parse_api_request(ApiKind::Chat, "{\"messages\":" + msgs + "}");
  };
  expect_400(parse_api_request(ApiKind::Chat, "{}"), "messages", "required");
  expect_400(P("[]"), "messages", "non-empty array");
  expect_400(P("\"hi\""), "messages", "non-empty array");
  expect_400(P("[1]"), "messages[0]", "must be an object");
  expect_400(P(R"([{"content":"x"}])"), "messages[0].role", "must be a string");
  expect_400(P(R"([{"role":5,"content":"x"}])"), "messages[0].role", "(got 5)");
  expect_400(P(R"([{"role":"user"}])"), "messages[0].content", "required");
  expect_400(P(R"([{"role":"user","content":null}])"), "messages[0].content", "required");
  expect_400(P(R"([{"role":"user","content":7}])"), "messages[0].content", "string or an array");
  expect_400(P(R"([{"role":"user","content":"a"},{"role":"user","content":"b"},{"role":"user","content":"c"},
      {"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}])"),
             "messages[3].content[0].type", "messages[3].content[0].type: only text parts are supported");
  expect_400(P(R"([{"role":"user","content":[{"text":"a"}]}])"), "messages[0].content[0].type",
             "only text parts");
  expect_400(P(R"([{"role":"user","content":[{"type":"text","text":1}]}])"),
             "messages[0].content[0].text", "must be a string");
  expect_400(P(R"([{"role":"user","content":["a"]}])"), "messages[0].content[0]", "must be an object");
  ParseLimits lim;
  lim.max_messages = 2;
  expect_400(parse_api_request(ApiKind::Chat,
                               R"({"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"},
                               {"role":"user","content":"c"}]})",
                               lim),
             "messages", "at most 2 messages");
}

TEST(ApiRequest, ChatTemplateKwargsMustBeAnObject) {
  expect_400(chat(R"("chat_template_kwargs":[1])"), "chat_template_kwargs", "must be an object");
  expect_400(chat(R"("chat_template_kwargs":"x")"), "chat_template_kwargs", "must be an object");
}

TEST(ApiRequest, BodyErrors) {
  expect_400(parse_api_request(ApiKind::Chat, ""), "", "invalid JSON at line 1, column 1");
  expect_400(parse_api_request(ApiKind::Chat, "{\"messages\":\n [x]}"), "", "line 2, column 3");
  expect_400(parse_api_request(ApiKind::Chat, "[1]"), "", "must be a JSON object (got array)");
  expect_400(parse_api_request(ApiKind::Completion, "\"text\""), "", "must be a JSON object (got string)");
  expect_400(parse_api_request(ApiKind::Chat, "{} trailing"), "", "invalid JSON");
}

TEST(ApiRequest, InvalidUtf8IsA400) {
  std::string body = R"({"messages":[{"role":"user","content":"a)";
  body += "\xff\xfe";
  body += R"("}]})";
  expect_400(parse_api_request(ApiKind::Chat, body), "", "not valid UTF-8");
  // A truncated 3-byte sequence and an overlong encoding.
  expect_400(parse_api_request(ApiKind::Completion, "{\"prompt\":\"\xe2\x82\"}"), "", "not valid UTF-8");
  expect_400(parse_api_request(ApiKind::Completion, "{\"prompt\":\"\xc0\xaf\"}"), "", "not valid UTF-8");
}

TEST(ApiRequest, DeepNestingIsA400WithoutRecursion) {
  const std::string deep(100000, '[');
  expect_400(parse_api_request(ApiKind::Chat, deep), "", "nests deeper than 64 levels");
  const std::string deep_obj = "{\"messages\":" + std::string(1 << 20, '[');
  expect_400(parse_api_request(ApiKind::Chat, deep_obj), "", "nests deeper than 64 levels");
  // Brackets inside strings do not count; escaped quotes do not end a string.
  std::string ok = R"({"messages":[{"role":"user","content":"\"[[[[)" + std::string(200, '[') + R"("}]})";
  EXPECT_TRUE(parse_api_request(ApiKind::Chat, ok).ok());
  ParseLimits lim;
  lim.max_depth = 3;
  EXPECT_TRUE(parse_api_request(ApiKind::Chat, R"({"messages":[{"role":"user","content":"x"}]})", lim).ok());
  expect_400(parse_api_request(ApiKind::Chat, R"({"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]})", lim),
             "", "nests deeper than 3 levels");
}

TEST(ApiRequest, HugeNumbersAre400s) {
  expect_400(chat(R"("max_tokens":1e400)"), "", "number overflow");
  expect_400(chat(R"("max_tokens":18446744073709551616)"), "max_tokens", "must be an integer >= 0");
  expect_400(chat(R"("max_tokens":18446744073709551615)"), "max_tokens", "must be an integer >= 0");
  expect_400(chat(R"("max_tokens":9223372036854775808)"), "max_tokens", "must be an integer >= 0");
  auto r = chat(R"("max_tokens":9223372036854775807)");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->params.max_tokens, std::numeric_limits<int64_t>::max());
  expect_400(chat(R"("temperature":1e300)"), "temperature", "must be a number >= 0");
  expect_400(chat(R"("top_k":4294967296)"), "top_k", "must be an integer between");
}

TEST(ApiRequest, MaxTokens) {
  expect_400(chat(R"("max_tokens":-1)"), "max_tokens", "max_tokens: must be an integer >= 0 (got -1)");
  expect_400(chat(R"("max_tokens":1.5)"), "max_tokens", "(got 1.5)");
  expect_400(chat(R"("max_tokens":"10")"), "max_tokens", "(got \"10\")");
  expect_400(chat(R"("max_completion_tokens":true)"), "max_completion_tokens", "must be an integer");
  auto r = chat(R"("max_tokens":0)");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->params.max_tokens, 0);
  r = chat(R"("max_tokens":5,"max_completion_tokens":9)");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->params.max_tokens, 9);
  r = chat(R"("max_tokens":5,"max_completion_tokens":null)");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->params.max_tokens, 5);
  r = chat(R"("max_tokens":12.0)");  // an integral float is an integer
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->params.max_tokens, 12);
}

TEST(ApiRequest, SamplingErrors) {
  expect_400(chat(R"("temperature":"hot")"), "temperature", "temperature: must be a number >= 0 (0: greedy) (got \"hot\")");
  expect_400(chat(R"("temperature":-0.1)"), "temperature", "(got -0.1)");
  expect_400(chat(R"("temperature":true)"), "temperature", "must be a number");
  expect_400(chat(R"("temperature":NaN)"), "", "invalid JSON");  // not JSON at all
  expect_400(chat(R"("top_p":Infinity)"), "", "invalid JSON");
  expect_400(chat(R"("min_p":-1e999)"), "", "number overflow");
  auto r = chat(R"("temperature":5)");  // llama.cpp's range: any finite value >= 0
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->params.sampling.temp, 5.0f);
  expect_400(chat(R"("top_p":1.5)"), "top_p", "between 0 and 1");
  expect_400(chat(R"("top_p":"0.5")"), "top_p", "must be a number");
  expect_400(chat(R"("min_p":-0.5)"), "min_p", "between 0 and 1");
  expect_400(chat(R"("typical_p":2)"), "typical_p", "between 0 and 1");
  expect_400(chat(R"("top_k":1.5)"), "top_k", "must be an integer");
  expect_400(chat(R"("repeat_penalty":0)"), "repeat_penalty", "> 0");
  expect_400(chat(R"("repeat_penalty":-1)"), "repeat_penalty", "> 0");
  expect_400(chat(R"("repeat_last_n":-2)"), "repeat_last_n", "between -1 and");
  expect_400(chat(R"("presence_penalty":2.5)"), "presence_penalty", "between -2 and 2");
  expect_400(chat(R"("frequency_penalty":-3)"), "frequency_penalty", "between -2 and 2");
  expect_400(chat(R"("seed":"7")"), "seed", "must be an integer");
  expect_400(chat(R"("seed":1.5)"), "seed", "must be an integer");
  expect_400(chat(R"("seed":18446744073709551616)"), "seed", "must be an integer");
  r = chat(R"("top_k":0,"top_p":1,"min_p":0,"typical_p":0)");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->params.sampling.top_k, 0);
}

TEST(ApiRequest, SeedKeepsEvery64BitValue) {
  auto r = chat(R"("seed":18446744073709551615)");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->params.sampling.seed.has_value());
  EXPECT_EQ(*r->params.sampling.seed, 18446744073709551615ull);
  r = chat(R"("seed":-1)");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->params.sampling.seed.has_value());
  r = chat(R"("seed":-2)");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r->params.sampling.seed, static_cast<uint64_t>(int64_t{-2}));
  r = chat(R"("seed":0)");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r->params.sampling.seed, 0u);
}

TEST(ApiRequest, LogitBiasBothForms) {
  auto r = chat(R"("logit_bias":{"15043":1.5,"2":false,"7":-100})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& b = r->params.sampling.logit_bias;
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].token, 15043);
  EXPECT_FLOAT_EQ(b[0].bias, 1.5f);
  EXPECT_EQ(b[1].token, 2);
  EXPECT_TRUE(std::isinf(b[1].bias) && b[1].bias < 0);
  EXPECT_EQ(b[2].token, 7);
  EXPECT_FLOAT_EQ(b[2].bias, -100.0f);
  r = chat(R"("logit_bias":[[15043,-1],[3,false]])");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& a = r->params.sampling.logit_bias;
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].token, 15043);
  EXPECT_FLOAT_EQ(a[0].bias, -1.0f);
  EXPECT_EQ(a[1].token, 3);
  EXPECT_TRUE(std::isinf(a[1].bias) && a[1].bias < 0);
  r = chat(R"("logit_bias":{})");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->params.sampling.logit_bias.empty());

  expect_400(chat(R"("logit_bias":{"abc":1})"), "logit_bias", "keys must be token ids (0..2147483647) (got \"abc\")");
  expect_400(chat(R"("logit_bias":{"-1":1})"), "logit_bias", "keys must be token ids");
  expect_400(chat(R"("logit_bias":{"2147483648":1})"), "logit_bias", "keys must be token ids");
  expect_400(chat(R"("logit_bias":{"5":101})"), "logit_bias[\"5\"]", "between -100 and 100");
  expect_400(chat(R"("logit_bias":{"5":true})"), "logit_bias[\"5\"]", "or false");
  expect_400(chat(R"("logit_bias":{"5":"1"})"), "logit_bias[\"5\"]", "between -100 and 100");
  expect_400(chat(R"("logit_bias":[[1]])"), "logit_bias[0]", "[token_id, bias] pair");
  expect_400(chat(R"("logit_bias":[[1,2],["hello",1]])"), "logit_bias[1]", "token id must be an integer");
  expect_400(chat(R"("logit_bias":[[-3,1]])"), "logit_bias[0]", "token id must be an integer");
  expect_400(chat(R"("logit_bias":[[3,-101]])"), "logit_bias[0]", "between -100 and 100");
  expect_400(chat(R"("logit_bias":5)"), "logit_bias", "must be an object");
}

TEST(ApiRequest, Stop) {
  auto r = chat(R"("stop":"###")");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->params.stop, (std::vector<std::string>{"###"}));
  r = chat(R"("stop":"")");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->params.stop.empty());
  expect_400(chat(R"("stop":5)"), "stop", "must be a string or an array of strings");
  expect_400(chat(R"("stop":["a",5])"), "stop", "(got 5)");
  std::string many = "\"stop\":[";
  for (int i = 0; i < 17; ++i) many += std::string(i ? "," : "") + "\"s" + std::to_string(i) + "\"";
  expect_400(chat(many + "]"), "stop", "at most 16 stop strings");
  expect_400(chat("\"stop\":\"" + std::string(1025, 'x') + "\""), "stop", "at most 1024 bytes");
  r = chat("\"stop\":[\"" + std::string(1024, 'x') + "\"]");
  EXPECT_TRUE(r.ok());
}

TEST(ApiRequest, UnsupportedFeatures) {
  expect_400(chat(R"("n":2)"), "n", "n: only 1 choice per request is supported");
  expect_400(chat(R"("n":0)"), "n", "only 1 choice");
  expect_400(chat(R"("n":"1")"), "n", "only 1 choice");
  EXPECT_TRUE(chat(R"("n":1)").ok());
  expect_400(chat(R"("tools":[{"type":"function","function":{"name":"f"}}])"), "tools",
             "tools: tool calls are not supported");
  expect_400(chat(R"("response_format":{"type":"json_object"})"), "response_format", "only {\"type\": \"text\"}");
  expect_400(chat(R"("response_format":"text")"), "response_format", "only");
  expect_400(completion(R"("echo":true)"), "echo", "not supported");
  EXPECT_TRUE(completion(R"("echo":false)").ok());
}

TEST(ApiRequest, StreamAndOptions) {
  auto r = chat(R"("stream_options":{"include_usage":true})");  // meaningless without stream
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->include_usage);
  r = chat(R"("stream":true,"stream_options":{})");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->stream);
  EXPECT_FALSE(r->include_usage);
  expect_400(chat(R"("stream":"yes")"), "stream", "must be true or false");
  expect_400(chat(R"("stream":1)"), "stream", "must be true or false");
  expect_400(chat(R"("stream":true,"stream_options":true)"), "stream_options", "must be an object");
  expect_400(chat(R"("stream":true,"stream_options":{"include_usage":1})"), "stream_options.include_usage",
             "must be true or false");
  expect_400(chat(R"("model":5)"), "model", "must be a string");
  expect_400(chat(R"("ignore_eos":"true")"), "ignore_eos", "must be true or false");
}

TEST(ApiRequest, Truncate) {
  auto r = chat(R"("truncate":"start")");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->truncate, Truncate::Start);
  r = chat(R"("truncate":"none")");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->truncate, Truncate::None);
  expect_400(chat(R"("truncate":"end")"), "truncate", "\"start\", \"middle\" or \"none\"");
  expect_400(chat(R"("truncate":true)"), "truncate", "(got true)");
}

TEST(ApiRequest, ChatLogprobs) {
  auto r = chat(R"("logprobs":true)");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->logprobs);
  EXPECT_EQ(r->top_logprobs, 0);
  EXPECT_EQ(r->params.n_logprobs, 0);
  r = chat(R"("logprobs":false)");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->params.n_logprobs, -1);
  expect_400(chat(R"("top_logprobs":3)"), "top_logprobs", "requires logprobs to be true");
  expect_400(chat(R"("logprobs":false,"top_logprobs":0)"), "top_logprobs", "requires logprobs");
  expect_400(chat(R"("logprobs":true,"top_logprobs":21)"), "top_logprobs", "between 0 and 20");
  expect_400(chat(R"("logprobs":true,"top_logprobs":-1)"), "top_logprobs", "between 0 and 20");
  expect_400(chat(R"("logprobs":3)"), "logprobs", "must be true or false");
}

TEST(ApiRequest, CompletionPromptShapes) {
  auto r = completion("");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->kind, ApiKind::Completion);
  ASSERT_TRUE(r->prompt_text.has_value());
  EXPECT_EQ(*r->prompt_text, "Once");
  EXPECT_TRUE(r->prompt_ids.empty());
  auto P = [](const std::string& prompt) {
    return parse_api_request(ApiKind::Completion, "{\"prompt\":" + prompt + "}");
  };
  r = P("[1, 15043, 2147483647]");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->prompt_text.has_value());
  EXPECT_EQ(r->prompt_ids, (std::vector<int32_t>{1, 15043, 2147483647}));
  r = P(R"(["only"])");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r->prompt_text, "only");
  r = P("[[5,6]]");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->prompt_ids, (std::vector<int32_t>{5, 6}));
  expect_400(parse_api_request(ApiKind::Completion, "{}"), "prompt", "required");
  expect_400(P("\"\""), "prompt", "non-empty");
  expect_400(P("[]"), "prompt", "non-empty");
  expect_400(P("[\"\"]"), "prompt", "non-empty");
  expect_400(P("[[]]"), "prompt", "non-empty");
  expect_400(P(R"(["a","b"])"), "prompt", "prompt: only one prompt per request is supported");
  expect_400(P("[[1],[2]]"), "prompt", "only one prompt");
  expect_400(P("[1,-2]"), "prompt", "got -2 at index 1");
  expect_400(P("[1,2147483648]"), "prompt", "between 0 and 2147483647");
  expect_400(P("[1,\"a\"]"), "prompt", "token ids must be integers");
  expect_400(P("[1.5]"), "prompt", "token ids must be integers");
  expect_400(P("5"), "prompt", "non-empty string");
  expect_400(P("{}"), "prompt", "non-empty string");
}

TEST(ApiRequest, CompletionLogprobs) {
  auto r = completion(R"("logprobs":5)");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->logprobs);
  EXPECT_EQ(r->top_logprobs, 5);
  EXPECT_EQ(r->params.n_logprobs, 5);
  r = completion(R"("logprobs":0)");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->params.n_logprobs, 0);
  r = completion(R"("logprobs":20)");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->params.n_logprobs, 20);
  r = completion(R"("logprobs":null)");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->logprobs);
  EXPECT_EQ(r->params.n_logprobs, -1);
  expect_400(completion(R"("logprobs":21)"), "logprobs", "between 0 and 20");
  expect_400(completion(R"("logprobs":-1)"), "logprobs", "between 0 and 20");
  expect_400(completion(R"("logprobs":"5")"), "logprobs", "between 0 and 20");
}

TEST(ApiRequest, CompletionIgnoresChatFields) {
  auto r = completion(R"("messages":5,"chat_template_kwargs":3)");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->messages.is_null());
}

}  // namespace
}  // namespace nt::server

// Real HTTP round trips against a server over stories15M: the OpenAI shapes of chat and text
// completions (whole and streamed), usage, stop, log-probs, seeds, the llama.cpp routes, and the
// prefix cache seen from a client (cached_tokens on a chat's second turn).
#include <gtest/gtest.h>

#include "server_harness.h"

namespace nt::test {
namespace {

class HttpRoundTrip : public ::testing::Test {
 protected:
  void SetUp() override {
    NT_REQUIRE_SHARED();
    server::ServerOptions o;
    ModelSpec spec;
    spec.engine.n_ctx = 4096;
    spec.engine.n_parallel = 4;
    srv_ = std::make_unique<TestServer>(o, spec);
    ASSERT_TRUE(srv_->ok());
    cli_ = srv_->client();
  }
  std::unique_ptr<TestServer> srv_;
  std::unique_ptr<httplib::Client> cli_;
};

TEST_F(HttpRoundTrip, CompletionHasOpenAiShapeUsageAndTimings) {
  auto a = post_json(*cli_, "/v1/completions", R"({"prompt":"Once upon a time","max_tokens":12,"temperature":0})");
  ASSERT_EQ(a.status, 200) << a.raw;
  const auto& b = a.body;
  EXPECT_EQ(b["object"], "text_completion");
  EXPECT_EQ(b["model"], "stories15M");
  EXPECT_TRUE(b["id"].get<std::string>().rfind("cmpl-", 0) == 0);
  EXPECT_TRUE(b["created"].is_number_integer());
  ASSERT_EQ(b["choices"].size(), 1u);
  EXPECT_EQ(b["choices"][0]["finish_reason"], "length");
  EXPECT_FALSE(b["choices"][0]["text"].get<std::string>().empty());
  EXPECT_EQ(b["usage"]["completion_tokens"], 12);
  EXPECT_EQ(b["usage"]["prompt_tokens"], 5);  // BOS + 4 words
  EXPECT_EQ(b["usage"]["total_tokens"], 17);
  EXPECT_TRUE(b["usage"]["prompt_tokens_details"]["cached_tokens"].is_number_integer());
  EXPECT_EQ(b["timings"]["predicted_n"], 12);
  EXPECT_GT(b["timings"]["prompt_ms"].get<double>(), 0);
  EXPECT_EQ(b["truncated"], false);
}

TEST_F(HttpRoundTrip, GreedyTextEqualsTheCliRun) {
  auto a = post_json(*cli_, "/v1/completions", R"({"prompt":"Once upon a time","max_tokens":16,"temperature":0})");
  ASSERT_EQ(a.status, 200);
  auto r = run_nexttok({"run", "-m", stories_path(), "-p", "Once upon a time", "-n", "16", "--temp", "0"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(a.body["choices"][0]["text"].get<std::string>() + "\n", r.out);  // run ends the text with a newline
}

TEST_F(HttpRoundTrip, StreamedCompletionConcatenatesToTheWholeText) {
  const std::string req = R"({"prompt":"The cat","max_tokens":10,"temperature":0)";
  auto whole = post_json(*cli_, "/v1/completions", req + "}");
  auto s = post_stream(*cli_, "/v1/completions", req + R"(,"stream":true,"stream_options":{"include_usage":true}})");
  ASSERT_EQ(s.status, 200);
  ASSERT_GE(s.data.size(), 3u);
  EXPECT_EQ(s.data.back(), "[DONE]");
  std::string text;
  std::string finish;
  for (size_t i = 0; i + 2 < s.data.size(); ++i) {
    auto j = nlohmann::json::parse(s.data[i]);
    EXPECT_EQ(j["object"], "text_completion");
    text += j["choices"][0]["text"].get<std::string>();
    if (!j["choices"][0]["finish_reason"].is_null()) finish = j["choices"][0]["finish_reason"];
  }
  EXPECT_EQ(text, whole.body["choices"][0]["text"].get<std::string>());
  EXPECT_EQ(finish, "length");
  auto usage = nlohmann::json::parse(s.data[s.data.size() - 2]);
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["completion_tokens"], 10);
}

TEST_F(HttpRoundTrip, ChatWholeAndStreamed) {
  const std::string msgs = R"("messages":[{"role":"system","content":"Tell a story."},{"role":"user","content":"Lily and the dog"}])";
  auto a = post_json(*cli_, "/v1/chat/completions", "{" + msgs + R"(,"max_tokens":8,"temperature":0})");
  ASSERT_EQ(a.status, 200) << a.raw;
  EXPECT_EQ(a.body["object"], "chat.completion");
  EXPECT_EQ(a.body["choices"][0]["message"]["role"], "assistant");
  const std::string text = a.body["choices"][0]["message"]["content"];
  EXPECT_FALSE(text.empty());
  auto s = post_stream(*cli_, "/v1/chat/completions", "{" + msgs + R"(,"max_tokens":8,"temperature":0,"stream":true})");
  ASSERT_EQ(s.status, 200);
  std::string streamed;
  for (size_t i = 0; i + 1 < s.data.size(); ++i) {
    auto j = nlohmann::json::parse(s.data[i]);
    EXPECT_EQ(j["object"], "chat.completion.chunk");
    if (i == 0) {
      EXPECT_EQ(j["choices"][0]["delta"]["role"], "assistant");
    }
    if (j["choices"][0]["delta"].contains("content")) streamed += j["choices"][0]["delta"]["content"].get<std::string>();
  }
  EXPECT_EQ(streamed, text);
}

TEST_F(HttpRoundTrip, StopStringEndsTheTextBeforeIt) {
  auto full = post_json(*cli_, "/v1/completions", R"({"prompt":"Once upon a time","max_tokens":30,"temperature":0})");
  const std::string text = full.body["choices"][0]["text"];
  // Stop at the second word of the greedy continuation.
  const size_t sp = text.find(' ', 1);
  ASSERT_NE(sp, std::string::npos);
  const std::string stop = text.substr(sp, 4);
  nlohmann::json req = {{"prompt", "Once upon a time"}, {"max_tokens", 30}, {"temperature", 0}, {"stop", {stop}}};
  auto a = post_json(*cli_, "/v1/completions", req.dump());
  ASSERT_EQ(a.status, 200);
  EXPECT_EQ(a.body["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(a.body["choices"][0]["text"].get<std::string>(), text.substr(0, sp));
}

TEST_F(HttpRoundTrip, SameSeedSameTextOtherSeedOtherText) {
  auto ask = [&](int seed) {
    nlohmann::json req = {{"prompt", "Once upon a time"}, {"max_tokens", 24}, {"temperature", 1.0}, {"seed", seed}};
    return post_json(*cli_, "/v1/completions", req.dump()).body["choices"][0]["text"].get<std::string>();
  };
  const std::string a = ask(42), b = ask(42), c = ask(43);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST_F(HttpRoundTrip, ChatLogprobsShape) {
  auto a = post_json(*cli_, "/v1/chat/completions",
                     R"({"messages":[{"role":"user","content":"Hi"}],"max_tokens":4,"temperature":0,"logprobs":true,"top_logprobs":3})");
  ASSERT_EQ(a.status, 200) << a.raw;
  const auto& content = a.body["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), 4u);
  for (const auto& t : content) {
    EXPECT_TRUE(t["token"].is_string());
    EXPECT_LE(t["logprob"].get<double>(), 0.0);
    EXPECT_TRUE(t["bytes"].is_array());
    ASSERT_EQ(t["top_logprobs"].size(), 3u);
    // Greedy: the chosen token is the most likely one.
    EXPECT_DOUBLE_EQ(t["top_logprobs"][0]["logprob"].get<double>(), t["logprob"].get<double>());
  }
}

TEST_F(HttpRoundTrip, CompletionLogprobsShape) {
  auto a = post_json(*cli_, "/v1/completions", R"({"prompt":"Once upon a time","max_tokens":5,"temperature":0,"logprobs":2})");
  ASSERT_EQ(a.status, 200) << a.raw;
  const auto& lp = a.body["choices"][0]["logprobs"];
  ASSERT_EQ(lp["tokens"].size(), 5u);
  ASSERT_EQ(lp["token_logprobs"].size(), 5u);
  ASSERT_EQ(lp["top_logprobs"].size(), 5u);
  ASSERT_EQ(lp["text_offset"].size(), 5u);
  std::string joined;
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(lp["text_offset"][i].get<int64_t>(), int64_t(joined.size()));
    joined += lp["tokens"][i].get<std::string>();
    EXPECT_LE(lp["top_logprobs"][i].size(), 2u);
  }
  EXPECT_EQ(joined, a.body["choices"][0]["text"].get<std::string>());
}

TEST_F(HttpRoundTrip, TokenIdPromptEqualsItsText) {
  auto t = post_json(*cli_, "/tokenize", R"({"content":"Once upon a time","add_special":true})");
  ASSERT_EQ(t.status, 200);
  nlohmann::json req = {{"prompt", t.body["tokens"]}, {"max_tokens", 8}, {"temperature", 0}};
  auto a = post_json(*cli_, "/v1/completions", req.dump());
  auto b = post_json(*cli_, "/v1/completions", R"({"prompt":"Once upon a time","max_tokens":8,"temperature":0})");
  ASSERT_EQ(a.status, 200);
  EXPECT_EQ(a.body["choices"][0]["text"], b.body["choices"][0]["text"]);
  auto d = post_json(*cli_, "/detokenize", nlohmann::json({{"tokens", t.body["tokens"]}}).dump());
  ASSERT_EQ(d.status, 200);
  EXPECT_NE(d.body["content"].get<std::string>().find("Once upon a time"), std::string::npos);
}

TEST_F(HttpRoundTrip, TokenizeWithPiecesAndApplyTemplateAndModels) {
  auto t = post_json(*cli_, "/tokenize", R"({"content":"Hello world","with_pieces":true})");
  ASSERT_EQ(t.status, 200);
  ASSERT_EQ(t.body["tokens"].size(), 2u);
  EXPECT_EQ(t.body["tokens"][0]["piece"], " Hello");
  EXPECT_TRUE(t.body["tokens"][0]["id"].is_number_integer());
  auto p = post_json(*cli_, "/apply-template", R"({"messages":[{"role":"user","content":"Hi there"}]})");
  ASSERT_EQ(p.status, 200);
  EXPECT_NE(p.body["prompt"].get<std::string>().find("Hi there"), std::string::npos);
  auto m = get(*cli_, "/v1/models");
  ASSERT_EQ(m.status, 200);
  EXPECT_EQ(m.body["object"], "list");
  EXPECT_EQ(m.body["data"][0]["id"], "stories15M");
  auto h = get(*cli_, "/health");
  EXPECT_EQ(h.status, 200);
}

TEST_F(HttpRoundTrip, TruncateStartDropsPromptTokensAndSaysSo) {
  std::string words;
  for (int i = 0; i < 300; ++i) words += " tree";
  nlohmann::json req = {{"prompt", words}, {"max_tokens", 4}, {"temperature", 0}};
  auto refused = post_json(*cli_, "/v1/completions", req.dump());
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(refused.body["error"]["code"], "context_length_exceeded");
  EXPECT_NE(refused.body["error"]["message"].get<std::string>().find("256"), std::string::npos);  // the limit
  req["truncate"] = "start";
  auto a = post_json(*cli_, "/v1/completions", req.dump());
  ASSERT_EQ(a.status, 200) << a.raw;
  EXPECT_EQ(a.body["truncated"], true);
  auto ids = post_json(*cli_, "/tokenize", nlohmann::json({{"content", words}, {"add_special", true}}).dump());
  EXPECT_GT(a.body["truncated_tokens"].get<int64_t>(), 0);
  EXPECT_EQ(a.body["truncated_tokens"].get<int64_t>() + a.body["usage"]["prompt_tokens"].get<int64_t>(),
            int64_t(ids.body["tokens"].size()));
}

// Second turn of a chat whose first prompt is >= 130 tokens: its cached tokens cover the common
// prefix of the two prompts, rounded down to the block size.
TEST_F(HttpRoundTrip, SecondChatTurnReusesTheFirstFromThePrefixCache) {
  std::string sys = "You tell short stories about animals.";
  for (int i = 0; i < 12; ++i) sys += " The stories are kind, simple and end happily for everyone.";
  nlohmann::json msgs = {{{"role", "system"}, {"content", sys}}, {{"role", "user"}, {"content", "A fox"}}};
  auto t1 = post_json(*cli_, "/v1/chat/completions", nlohmann::json({{"messages", msgs}, {"max_tokens", 8}, {"temperature", 0}}).dump());
  ASSERT_EQ(t1.status, 200) << t1.raw;
  const int64_t p1 = t1.body["usage"]["prompt_tokens"];
  ASSERT_GE(p1, 130);
  msgs.push_back({{"role", "assistant"}, {"content", t1.body["choices"][0]["message"]["content"]}});
  msgs.push_back({{"role", "user"}, {"content", "And then?"}});
  auto prompt1 = post_json(*cli_, "/apply-template", nlohmann::json({{"messages", {msgs[0], msgs[1]}}}).dump());
  auto prompt2 = post_json(*cli_, "/apply-template", nlohmann::json({{"messages", msgs}}).dump());
  auto ids1 = post_json(*cli_, "/tokenize", nlohmann::json({{"content", prompt1.body["prompt"]}}).dump()).body["tokens"];
  auto ids2 = post_json(*cli_, "/tokenize", nlohmann::json({{"content", prompt2.body["prompt"]}}).dump()).body["tokens"];
  size_t common = 0;
  while (common < ids1.size() && common < ids2.size() && ids1[common] == ids2[common]) ++common;
  auto t2 = post_json(*cli_, "/v1/chat/completions", nlohmann::json({{"messages", msgs}, {"max_tokens", 8}, {"temperature", 0}}).dump());
  ASSERT_EQ(t2.status, 200);
  const int64_t cached = t2.body["usage"]["prompt_tokens_details"]["cached_tokens"];
  const int64_t block = 32;  // the engine's default block size
  EXPECT_GT(cached, 0);
  EXPECT_GE(cached, int64_t(common) / block * block) << "common prefix " << common;
}

}  // namespace
}  // namespace nt::test

// The server over a qwen35 model (a small `nexttok synth` file, Gated DeltaNet and attention
// layers): completions answered alone and answered while others run at once are the same; a chat's
// second turn resumes from the recurrent-state snapshot of the first turn's prompt and answers what a
// fresh server answers.
#include <gtest/gtest.h>

#include <future>
#include <string>
#include <vector>

#include "server_harness.h"

namespace nt::test {
namespace {

const std::string& qwen35_path() { return test::qwen35_f32_model(); }

server::ModelLoader qwen35_loader(EngineOptions eo) {
  return [eo]() -> Result<server::ServedModel> {
    auto model = Model::load(qwen35_path());
    if (!model) return model.error();
    auto tok = Tokenizer::from_gguf((*model)->gguf());
    if (!tok) return tok.error();
    auto r = server::ChatRenderer::create({}, **tok, (*model)->gguf(), nullptr);
    if (!r) return r.error();
    server::ServedModel sm;
    sm.name = "qwen35-synth";
    sm.renderer = std::make_unique<server::ChatRenderer>(std::move(*r));
    auto eng = Engine::create(std::move(*model), eo, tok->get());
    if (!eng) return eng.error();
    sm.tokenizer = std::move(*tok);
    sm.engine = std::move(*eng);
    return sm;
  };
}

struct Served {
  explicit Served(EngineOptions eo) {
    server::ServerOptions opt;
    opt.host = "127.0.0.1";
    opt.port = 0;
    opt.log_quiet = true;
    srv = std::make_unique<server::Server>(opt);
    st = srv->start(qwen35_loader(eo));
    for (int i = 0; st.ok() && i < 3000 && !srv->ready(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~Served() {
    srv->request_stop();
    (void)srv->wait();
  }
  std::string complete(const std::string& prompt) {
    httplib::Client c("127.0.0.1", srv->port());
    c.set_read_timeout(std::chrono::seconds(60));
    const nlohmann::json req = {{"prompt", prompt}, {"max_tokens", 24}, {"temperature", 0}};
    HttpAnswer a = post_json(c, "/v1/completions", req.dump());
    EXPECT_EQ(a.status, 200) << a.raw;
    if (a.status != 200) return "";
    return a.body["choices"][0]["text"].get<std::string>();
  }
  std::unique_ptr<server::Server> srv;
  Status st;
};

TEST(ServeQwen35, CompletionsBatchedWithOthersAreWhatEachIsAlone) {
  NT_REQUIRE_SHARED();
  const std::vector<std::string> prompts = {
      "Once upon a time", "The quick brown fox jumps over the lazy dog while the cat sleeps by the warm fire.",
      "In a small village at the edge of a great forest there lived an old woman who kept bees.",
      "Every morning she walked to the hives"};
  EngineOptions eo;
  eo.n_threads = 2;
  eo.n_ctx = 1024;
  eo.n_batch = 16;  // prompts in chunks, mixed with the others' decode steps
  std::vector<std::string> alone;
  {
    Served s(eo);
    ASSERT_TRUE(s.st.ok() && s.srv->ready()) << (s.st.ok() ? "not ready" : s.st.error().message);
    for (const auto& p : prompts) alone.push_back(s.complete(p));
  }
  Served s(eo);
  ASSERT_TRUE(s.st.ok() && s.srv->ready());
  std::vector<std::future<std::string>> futs;
  for (const auto& p : prompts) futs.push_back(std::async(std::launch::async, [&s, p] { return s.complete(p); }));
  for (size_t i = 0; i < prompts.size(); ++i) {
    const std::string got = futs[i].get();
    EXPECT_FALSE(got.empty()) << i;
    EXPECT_EQ(got, alone[i]) << "prompt " << i;
  }
  EXPECT_EQ(s.srv->ready(), true);
}

struct ChatAnswer {
  std::string reply;
  int64_t prompt_tokens = -1, cached_tokens = -1;
};

// A chat completion of `messages` (greedy, 16 tokens): the reply's text, the prompt's length and
// its cached tokens.
ChatAnswer chat(Served& s, const nlohmann::json& messages) {
  httplib::Client c("127.0.0.1", s.srv->port());
  c.set_read_timeout(std::chrono::seconds(60));
  const nlohmann::json req = {{"messages", messages}, {"max_tokens", 16}, {"temperature", 0}};
  HttpAnswer a = post_json(c, "/v1/chat/completions", req.dump());
  EXPECT_EQ(a.status, 200) << a.raw;
  if (a.status != 200) return {};
  return {a.body["choices"][0]["message"]["content"].get<std::string>(),
          a.body["usage"]["prompt_tokens"].get<int64_t>(),
          a.body["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>()};
}

TEST(ServeQwen35, AChatsSecondTurnResumesFromTheFirstTurnsStateSnapshot) {
  NT_REQUIRE_SHARED();
  EngineOptions eo;
  eo.n_threads = 2;
  eo.n_ctx = 1024;
  std::string first_user;
  for (int i = 0; i < 6; ++i) first_user += "In a small village at the edge of a great forest there lived an old woman. ";
  first_user.pop_back();
  nlohmann::json messages = nlohmann::json::array({{{"role", "user"}, {"content", first_user}}});
  Served s(eo);
  ASSERT_TRUE(s.st.ok() && s.srv->ready()) << (s.st.ok() ? "not ready" : s.st.error().message);
  const ChatAnswer t1 = chat(s, messages);
  EXPECT_EQ(t1.cached_tokens, 0);
  messages.push_back({{"role", "assistant"}, {"content", t1.reply}});
  // Long enough to fill the window of 64 past the first prompt's end: the snapshot at that end
  // (rounded down to a block) would cut it, so the one at the window boundary below serves.
  messages.push_back({{"role", "user"}, {"content", "And then what happened? Tell me about her bees, the forest, "
                                                    "the village and the people who came to buy her honey."}});
  const ChatAnswer t2 = chat(s, messages);
  // Resumed at the multiple of 64 (the chunked prefill's window) below the first prompt's last
  // token, whose snapshot the first turn kept; the second prompt fills the window past it.
  ASSERT_GT(t1.prompt_tokens, 64);
  const int64_t aligned = (t1.prompt_tokens - 1) / 64 * 64;
  ASSERT_GE(t2.prompt_tokens, aligned + 64) << "the second turn should fill the window past " << aligned << ": "
                                             << t1.prompt_tokens << " then " << t2.prompt_tokens << " tokens";
  EXPECT_EQ(t2.cached_tokens, aligned) << "first prompt " << t1.prompt_tokens << " tokens, second "
                                       << t2.prompt_tokens;
  httplib::Client c("127.0.0.1", s.srv->port());
  const HttpAnswer m = get(c, "/metrics");
  EXPECT_GE(metric_value(m.raw, "nexttok_state_snapshot_hits_total"), 1.0) << m.raw;
  EXPECT_GE(metric_value(m.raw, "nexttok_state_snapshots"), 1.0) << m.raw;

  Served fresh(eo);  // computed from its start
  ASSERT_TRUE(fresh.st.ok() && fresh.srv->ready());
  const ChatAnswer cold = chat(fresh, messages);
  EXPECT_EQ(cold.cached_tokens, 0);
  EXPECT_EQ(t2.reply, cold.reply);
}

}  // namespace
}  // namespace nt::test

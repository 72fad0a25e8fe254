// The chat templates of the families issue 28 adds (Qwen3 / Qwen3.5, Gemma, Phi-3.5), from
// ../shared/templates, rendered through a real server loaded the way `serve --chat-template-file`
// loads them (stories15M's weights and tokenizer): POST /apply-template of a system + user +
// assistant + user conversation gives the reference rendering of ../shared/golden/templates (case
// C3, with the model's BOS text in place of the reference's), with each role's marker; a chat
// completion through the template answers. Gemma 2's template refuses a system message itself.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "server_harness.h"

namespace nt {
namespace {

using nlohmann::json;

// Loads stories15M with its renderer made from a template file, as cmd_serve does.
server::ModelLoader loader_with_template(const std::string& template_file) {
  return [template_file]() -> Result<server::ServedModel> {
    auto model = Model::load(test::stories_path());
    if (!model) return model.error();
    auto tok = Tokenizer::from_gguf((*model)->gguf());
    if (!tok) return tok.error();
    auto r = server::ChatRenderer::create({"", template_file}, **tok, (*model)->gguf(), nullptr);
    if (!r) return r.error();
    server::ServedModel sm;
    sm.name = "stories15M";
    sm.renderer = std::make_unique<server::ChatRenderer>(std::move(*r));
    EngineOptions eo;
    eo.n_threads = 2;
    eo.n_parallel = 2;
    eo.n_ctx = 1024;
    auto eng = Engine::create(std::move(*model), eo, tok->get());
    if (!eng) return eng.error();
    sm.tokenizer = std::move(*tok);
    sm.engine = std::move(*eng);
    return sm;
  };
}

struct TemplateServer {
  explicit TemplateServer(const std::string& template_file) {
    server::ServerOptions opt;
    opt.host = "127.0.0.1";
    opt.port = 0;
    opt.log_quiet = true;
    srv = std::make_unique<server::Server>(opt);
    status = srv->start(loader_with_template(template_file));
    for (int i = 0; status && i < 3000 && !srv->ready(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~TemplateServer() {
    srv->request_stop();
    (void)srv->wait();
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", srv->port());
    c.set_read_timeout(std::chrono::seconds(30));
    return c;
  }
  std::unique_ptr<server::Server> srv;
  Status status;
};

// The reference record of `template_name`, case `c`.
json golden(const std::string& template_name, const std::string& c) {
  std::ifstream in(test::shared_path("golden/templates/templates_golden.jsonl"));
  for (std::string line; std::getline(in, line);) {
    json r = json::parse(line);
    if (r["template"] == template_name && r["case"] == c) return r;
  }
  ADD_FAILURE() << "no golden record " << template_name << " " << c;
  return json();
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  if (from.empty() || from == to) return s;
  for (size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size()) s.replace(at, from.size(), to);
  return s;
}

struct Family {
  const char* template_name;
  std::vector<std::string> markers;  // system, user, assistant (in the order they appear)
};

void check_family(const Family& f) {
  NT_REQUIRE_SHARED();
  SCOPED_TRACE(f.template_name);
  TemplateServer s(test::shared_path(std::string("templates/") + f.template_name));
  ASSERT_TRUE(s.status.ok()) << s.status.error().message;
  ASSERT_TRUE(s.srv->ready()) << "the server did not load the model with the template";
  const json g = golden(f.template_name, "C3");
  ASSERT_TRUE(g.contains("rendered")) << g.dump();
  ASSERT_TRUE(g["add_generation_prompt"].get<bool>());
  auto c = s.client();
  const auto a = test::post_json(c, "/apply-template", json{{"messages", g["messages"]}}.dump());
  ASSERT_EQ(a.status, 200) << a.raw;
  const std::string got = a.body["prompt"].get<std::string>();
  // stories15M's BOS text stands where the reference has its model's (the template reads bos_token).
  const std::string want = replace_all(g["rendered"].get<std::string>(), g["bos_token"].get<std::string>(), "<s>");
  EXPECT_EQ(got, want);
  size_t at = 0;
  for (const std::string& m : f.markers) {
    const size_t next = got.find(m, at);
    ASSERT_NE(next, std::string::npos) << "no " << m << " after offset " << at << " in\n" << got;
    at = next + m.size();
  }
  for (const char* text : {"You are a helpful assistant.", "Hi", "Hello! How can I help?",
                           "Explain temperature in one sentence."})
    EXPECT_NE(got.find(text), std::string::npos) << text;

  // A chat completion through the template answers.
  json req = {{"messages", g["messages"]}, {"max_tokens", 3}, {"temperature", 0}};
  const auto chat = test::post_json(c, "/v1/chat/completions", req.dump());
  ASSERT_EQ(chat.status, 200) << chat.raw;
  EXPECT_GT(chat.body["usage"]["prompt_tokens"].get<int>(), 10);
}

TEST(ChatTemplates, Qwen35RendersEveryRole) {
  check_family({"Qwen3.5-4B.jinja",
                {"<|im_start|>system\n", "<|im_start|>user\n", "<|im_start|>assistant\n", "<|im_start|>user\n",
                 "<|im_start|>assistant\n<think>\n"}});
}

TEST(ChatTemplates, Qwen3RendersEveryRole) {
  check_family({"Qwen-Qwen3-0.6B.jinja",
                {"<|im_start|>system\n", "<|im_start|>user\n", "<|im_start|>assistant\n", "<|im_start|>user\n",
                 "<|im_start|>assistant\n"}});
}

TEST(ChatTemplates, Phi35RendersEveryRole) {
  check_family({"microsoft-Phi-3.5-mini-instruct.jinja",
                {"<|system|>\n", "<|end|>", "<|user|>\n", "<|assistant|>\n", "<|user|>\n", "<|assistant|>\n"}});
}

TEST(ChatTemplates, Gemma4RendersEveryRole) {
  check_family({"google-gemma-4-31B-it.jinja",
                {"<s><|turn>system\n", "<|turn>user\n", "<|turn>model\n", "<|turn>user\n", "<|turn>model\n"}});
}

// Gemma 2's template has no system role: it raises, and the server answers 400 with its message.
// Without the system message it renders user and model turns as the reference does (case C1).
TEST(ChatTemplates, Gemma2RefusesASystemMessageAndRendersTheRest) {
  NT_REQUIRE_SHARED();
  TemplateServer s(test::shared_path("templates/google-gemma-2-2b-it.jinja"));
  ASSERT_TRUE(s.status.ok()) << s.status.error().message;
  ASSERT_TRUE(s.srv->ready());
  auto c = s.client();
  const json g3 = golden("google-gemma-2-2b-it.jinja", "C3");
  ASSERT_EQ(g3["error"], "System role not supported");
  const auto refused = test::post_json(c, "/apply-template", json{{"messages", g3["messages"]}}.dump());
  EXPECT_EQ(refused.status, 400) << refused.raw;
  EXPECT_NE(refused.raw.find("System role not supported"), std::string::npos) << refused.raw;

  json msgs = g3["messages"];
  msgs.erase(msgs.begin());  // user, assistant, user
  const auto a = test::post_json(c, "/apply-template", json{{"messages", msgs}}.dump());
  ASSERT_EQ(a.status, 200) << a.raw;
  EXPECT_EQ(a.body["prompt"].get<std::string>(),
            "<s><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\nHello! How can I help?<end_of_turn>\n"
            "<start_of_turn>user\nExplain temperature in one sentence.<end_of_turn>\n<start_of_turn>model\n");
  const json g1 = golden("google-gemma-2-2b-it.jinja", "C1");
  const auto one = test::post_json(c, "/apply-template", json{{"messages", g1["messages"]}}.dump());
  ASSERT_EQ(one.status, 200) << one.raw;
  EXPECT_EQ(one.body["prompt"].get<std::string>(), replace_all(g1["rendered"].get<std::string>(), "<bos>", "<s>"));
}

}  // namespace
}  // namespace nt

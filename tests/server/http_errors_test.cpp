// Every error the server answers, through real HTTP: OpenAI error objects with the right status
// for bad bodies, keys, routes, sizes, a full queue, loading and shutdown; and the checks that need
// a slow engine step (a fake model that sleeps in each forward call): /metrics answers during a
// step, a client that leaves mid-stream is cancelled at the next step.
#include <gtest/gtest.h>

#include <atomic>
#include <future>

#include "server_harness.h"

namespace nt::test {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

void expect_error(const HttpAnswer& a, int status, const std::string& param = "", const std::string& msg_part = "") {
  EXPECT_EQ(a.status, status) << a.raw;
  ASSERT_TRUE(a.body.is_object() && a.body.contains("error")) << a.raw;
  const auto& e = a.body["error"];
  EXPECT_TRUE(e["message"].is_string() && !e["message"].get<std::string>().empty());
  EXPECT_TRUE(e["type"].is_string());
  EXPECT_TRUE(e.contains("param") && e.contains("code"));
  if (!param.empty()) {
    EXPECT_EQ(e["param"], param) << a.raw;
  }
  if (!msg_part.empty()) {
    EXPECT_NE(e["message"].get<std::string>().find(msg_part), std::string::npos) << a.raw;
  }
}

class HttpErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    NT_REQUIRE_SHARED();
    server::ServerOptions o;
    o.max_body = 4096;
    ModelSpec spec;
    spec.engine.n_ctx = 1024;
    spec.engine.n_parallel = 2;
    srv_ = std::make_unique<TestServer>(o, spec);
    ASSERT_TRUE(srv_->ok());
    cli_ = srv_->client();
  }
  std::unique_ptr<TestServer> srv_;
  std::unique_ptr<httplib::Client> cli_;
};

TEST_F(HttpErrors, BadBodiesAre400WithTheParameter) {
  expect_error(post_json(*cli_, "/v1/completions", R"({"prompt": "x", )"), 400);
  expect_error(post_json(*cli_, "/v1/completions", R"([1, 2])"), 400);
  expect_error(post_json(*cli_, "/v1/completions", R"({"prompt": 5})"), 400, "prompt");
  expect_error(post_json(*cli_, "/v1/completions", R"({"prompt": "x", "temperature": "hot"})"), 400, "temperature");
  expect_error(post_json(*cli_, "/v1/completions", R"({"prompt": "x", "top_p": 7})"), 400, "top_p");
  expect_error(post_json(*cli_, "/v1/completions", R"({"prompt": "x", "max_tokens": -3})"), 400, "max_tokens");
  expect_error(post_json(*cli_, "/v1/completions", R"({"prompt": "x", "max_tokens": 1e400})"), 400);
  expect_error(post_json(*cli_, "/v1/completions", R"({"prompt": "x", "n": 2})"), 400, "n");
  expect_error(post_json(*cli_, "/v1/completions", "{\"prompt\": \"\xff\xfe\"}"), 400);
  expect_error(post_json(*cli_, "/v1/chat/completions", R"({"messages": []})"), 400, "messages");
  expect_error(post_json(*cli_, "/v1/chat/completions", R"({"messages": [{"role": 1, "content": "x"}]})"), 400);
  expect_error(post_json(*cli_, "/v1/completions", std::string(2000, '[') + std::string(2000, ']')), 400);
  expect_error(post_json(*cli_, "/v1/completions", R"({"prompt": [1, 99999999]})"), 400);  // outside the vocabulary
  expect_error(post_json(*cli_, "/v1/completions", R"({"prompt": "x", "logit_bias": {"99999999": 1}})"), 400);
  expect_error(post_json(*cli_, "/tokenize", R"({"content": 3})"), 400, "content");
  expect_error(post_json(*cli_, "/detokenize", R"({"tokens": [-1]})"), 400, "tokens");
  // Still serving after all of that.
  EXPECT_EQ(post_json(*cli_, "/v1/completions", R"({"prompt": "x", "max_tokens": 2})").status, 200);
}

TEST_F(HttpErrors, PromptThatCannotFitIs400WithTheCounts) {
  auto a = post_json(*cli_, "/v1/completions", R"({"prompt": "Once upon a time", "max_tokens": 1000000000})");
  expect_error(a, 400, "prompt", "1000000000");
  EXPECT_EQ(a.body["error"]["code"], "context_length_exceeded");
  // max_tokens 0 is allowed: an empty completion.
  auto z = post_json(*cli_, "/v1/completions", R"({"prompt": "Once", "max_tokens": 0})");
  ASSERT_EQ(z.status, 200) << z.raw;
  EXPECT_EQ(z.body["usage"]["completion_tokens"], 0);
}

TEST_F(HttpErrors, UnknownRouteIs404AndBigBodyIs413) {
  expect_error(get(*cli_, "/v1/nothing"), 404);
  expect_error(post_json(*cli_, "/v1/completions", std::string(8192, ' ')), 413, "", "4096");
}

TEST(HttpAuth, EveryRouteButHealthNeedsTheKey) {
  NT_REQUIRE_SHARED();
  server::ServerOptions o;
  o.api_key = "sekrit-key";
  ModelSpec spec;
  spec.engine.n_ctx = 512;
  TestServer srv(o, spec);
  ASSERT_TRUE(srv.ok());
  auto cli = srv.client();
  int walked = 0;
  for (const server::RouteInfo& r : server::Server::routes()) {
    auto call = [&](const httplib::Headers& h) {
      return r.method == "GET" ? get(*cli, r.path, h) : post_json(*cli, r.path, "{}", h);
    };
    auto none = call({});
    auto wrong = call({{"Authorization", "Bearer sekrit-kez"}});
    auto right = call({{"Authorization", "Bearer sekrit-key"}});
    if (!r.needs_key) {
      EXPECT_EQ(r.path.find("health") != std::string::npos, true) << r.path;
      EXPECT_EQ(none.status, 200) << r.path;
      continue;
    }
    ++walked;
    expect_error(none, 401);
    expect_error(wrong, 401);
    EXPECT_NE(right.status, 401) << r.method << " " << r.path;
    EXPECT_NE(right.status, 0) << r.path;
  }
  EXPECT_GE(walked, 8);
  expect_error(get(*cli, "/v1/unknown"), 401);  // unknown routes are not a way around the key
  EXPECT_EQ(get(*cli, "/v1/unknown", {{"Authorization", "Bearer sekrit-key"}}).status, 404);
}

// A refused request's body must be consumed: on a keep-alive connection it would otherwise be
// parsed as the next request (seen as "414 request URI too long" after a 401 with a body).
TEST(HttpAuth, RefusedBodiesDoNotLeakIntoTheNextRequest) {
  NT_REQUIRE_SHARED();
  server::ServerOptions o;
  o.api_key = "k";
  ModelSpec spec;
  spec.engine.n_ctx = 512;
  TestServer srv(o, spec);
  ASSERT_TRUE(srv.ok());
  auto cli = srv.client();
  cli->set_keep_alive(true);
  const std::string body = R"({"prompt": ")" + std::string(3000, 'a') + R"(", "max_tokens": 1})";
  const httplib::Headers key = {{"Authorization", "Bearer k"}};
  for (int i = 0; i < 3; ++i) {
    expect_error(post_json(*cli, "/v1/completions", body), 401);                // no key
    expect_error(post_json(*cli, "/v1/no-such-route", body, key), 404);         // unknown route
    EXPECT_EQ(post_json(*cli, "/tokenize", R"({"content":"hi"})", key).status, 200);
    EXPECT_EQ(get(*cli, "/health").status, 200);
  }
}

TEST(HttpCors, OffByDefaultOnForTheGivenOrigin) {
  NT_REQUIRE_SHARED();
  ModelSpec spec;
  spec.engine.n_ctx = 512;
  {
    TestServer srv({}, spec);
    ASSERT_TRUE(srv.ok());
    auto r = srv.client()->Get("/health");
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->has_header("Access-Control-Allow-Origin"));
  }
  server::ServerOptions o;
  o.cors_origin = "http://localhost:3000";
  TestServer srv(o, spec);
  ASSERT_TRUE(srv.ok());
  auto r = srv.client()->Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), "http://localhost:3000");
  auto pre = srv.client()->Options("/v1/chat/completions");
  ASSERT_TRUE(pre);
  EXPECT_EQ(pre->status, 204);
}

TEST(HttpLoading, HealthIs503WhileTheModelLoads) {
  NT_REQUIRE_SHARED();
  ModelSpec spec;
  spec.engine.n_ctx = 512;
  spec.load_delay_ms = 800;
  TestServer srv({}, spec, /*wait_ready=*/false);
  auto cli = srv.client();
  auto h = get(*cli, "/health");
  expect_error(h, 503, "", "loading");
  expect_error(post_json(*cli, "/v1/completions", R"({"prompt":"x"})"), 503);
  for (int i = 0; i < 400 && !srv.server().ready(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(get(*cli, "/health").status, 200);
}

// With a fake model whose steps take 400 ms.
class HttpSlowSteps : public ::testing::Test {
 protected:
  void start(int n_parallel, int max_queue, int step_ms = 400) {
    server::ServerOptions o;
    o.max_queue = max_queue;
    o.shutdown_timeout_s = 1;
    ModelSpec spec;
    spec.slow_step_ms = step_ms;
    spec.engine.n_ctx = 2048;
    spec.engine.n_parallel = n_parallel;
    srv_ = std::make_unique<TestServer>(o, spec);
    ASSERT_TRUE(srv_->ok());
  }
  std::string metrics() { return get(*srv_->client(), "/metrics").raw; }
  std::unique_ptr<TestServer> srv_;
};

TEST_F(HttpSlowSteps, MetricsAnswerDuringAStep) {
  NT_REQUIRE_SHARED();
  start(2, 4, 1000);
  auto gen = std::async(std::launch::async, [&] {
    auto c = srv_->client();
    return post_json(*c, "/v1/completions", R"({"prompt":"Once","max_tokens":3,"ignore_eos":true})");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // inside the first step
  auto c = srv_->client();
  double worst = 0;
  for (int i = 0; i < 10; ++i) {
    const auto t = Clock::now();
    auto m = get(*c, "/metrics");
    worst = std::max(worst, ms_since(t));
    ASSERT_EQ(m.status, 200);
  }
  EXPECT_LT(worst, 50.0);
  EXPECT_EQ(metric_value(metrics(), "vllm:num_requests_running{model_name=\"stories15M\"}"), 1);
  EXPECT_EQ(gen.get().status, 200);
}

TEST_F(HttpSlowSteps, FullQueueIs429) {
  NT_REQUIRE_SHARED();
  start(1, 1);
  auto long_req = [&] {
    auto c = srv_->client();
    return post_json(*c, "/v1/completions", R"({"prompt":"Once","max_tokens":3,"ignore_eos":true})");
  };
  auto a = std::async(std::launch::async, long_req);
  auto b = std::async(std::launch::async, long_req);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto c = srv_->client();
  expect_error(post_json(*c, "/v1/completions", R"({"prompt":"Once","max_tokens":3})"), 429, "", "--max-queue");
  EXPECT_EQ(a.get().status, 200);
  EXPECT_EQ(b.get().status, 200);
}

TEST_F(HttpSlowSteps, ClientLeavingMidStreamIsCancelledAtTheNextStep) {
  NT_REQUIRE_SHARED();
  start(2, 4);
  auto c = srv_->client();
  const auto t = Clock::now();
  auto s = post_stream(*c, "/v1/completions", R"({"prompt":"Once","max_tokens":50,"ignore_eos":true,"stream":true})", 1);
  EXPECT_TRUE(s.aborted);
  const double left_at = ms_since(t);
  double gone_at = -1;
  for (int i = 0; i < 300; ++i) {
    if (metric_value(metrics(), "vllm:num_requests_running{model_name=\"stories15M\"}") == 0) {
      gone_at = ms_since(t);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(gone_at, 0) << "the request was never released";
  // Noticed within a 100 ms wait slice, effective at the end of the step in flight.
  EXPECT_LT(gone_at - left_at, 2 * 400 + 150);
  const std::string m = metrics();
  EXPECT_EQ(metric_value(m, "vllm:request_success_total{model_name=\"stories15M\",finished_reason=\"abort\"}"), 1) << m;
  EXPECT_EQ(metric_value(m, "nexttok_kv_blocks{state=\"used\"}"), 0) << m;
}

TEST_F(HttpSlowSteps, ShutdownRefusesNewRequestsAndFinishesOrCancelsRunningOnes) {
  NT_REQUIRE_SHARED();
  start(2, 4);
  auto running = std::async(std::launch::async, [&] {
    auto c = srv_->client();
    return post_json(*c, "/v1/completions", R"({"prompt":"Once","max_tokens":40,"ignore_eos":true})");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto stopper = std::async(std::launch::async, [&] { srv_->stop(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto c = srv_->client();
  auto refused = post_json(*c, "/v1/completions", R"({"prompt":"Once","max_tokens":2})");
  if (refused.status != 0) expect_error(refused, 503, "", "shutting down");  // 0: already closed
  // 40 steps of 400 ms do not fit the 1 s shutdown timeout: the request is cancelled (503).
  auto r = running.get();
  expect_error(r, 503, "", "shutting down");
  stopper.get();
}

}  // namespace
}  // namespace nt::test

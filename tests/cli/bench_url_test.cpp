// Tests of `nexttok bench --url` against a fake OpenAI-compatible server in the test process: the
// closed-loop levels (warm-up excluded), exact and distinct token-id prompts from /tokenize, the
// streamed measurements (output tokens from usage, inter-token gaps near the fake's delay), errors
// counted and a level stopped when most requests fail, estimated text prompts for chat, exit codes
// for an unreachable server and bad flags; and the pure parts: percentiles, the SSE parser.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/latency_stats.h"
#include "cli/sse_client.h"
#include "support/test_support.h"

namespace nt {
namespace {

using nlohmann::json;

// A fake OpenAI-compatible server on 127.0.0.1 (port chosen by the system): /v1/models, /tokenize
// (one id per word), and /v1/completions and /v1/chat/completions streaming max_tokens one-token
// chunks delay_ms apart, a finish chunk, a usage chunk and [DONE].
class FakeServer {
 public:
  int delay_ms = 20;
  bool has_tokenize = true;
  std::function<bool(int)> fail = [](int) { return false; };  // 500 for the i-th generation request

  FakeServer() {
    srv_.set_tcp_nodelay(true);
    srv_.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"object":"list","data":[{"id":"fake-model","object":"model"}]})", "application/json");
    });
    srv_.Post("/tokenize", [this](const httplib::Request& req, httplib::Response& res) {
      if (!has_tokenize) {
        res.status = 404;
        return;
      }
      const json body = json::parse(req.body);
      json tokens = json::array();
      std::string word;
      for (char ch : body.at("content").get<std::string>() + " ") {
        if (ch != ' ' && ch != '\n') { word += ch; continue; }
        if (!word.empty()) tokens.push_back(std::hash<std::string>{}(word) % 30000);
        word.clear();
      }
      res.set_content(json{{"tokens", tokens}}.dump(), "application/json");
    });
    auto generate = [this](const httplib::Request& req, httplib::Response& res) { handle(req, res); };
    srv_.Post("/v1/completions", generate);
    srv_.Post("/v1/chat/completions", generate);
    port_ = srv_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { srv_.listen_after_bind(); });
    for (int i = 0; i < 500 && !srv_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ~FakeServer() {
    srv_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<json> bodies() {
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_;
  }
  std::vector<std::string> auth() {
    std::lock_guard<std::mutex> lock(mu_);
    return auth_;
  }

 private:
  void handle(const httplib::Request& req, httplib::Response& res) {
    const json body = json::parse(req.body);
    int index;
    {
      std::lock_guard<std::mutex> lock(mu_);
      index = static_cast<int>(bodies_.size());
      bodies_.push_back(body);
      auth_.push_back(req.get_header_value("Authorization"));
    }
    if (fail(index)) {
      res.status = 500;
      res.set_content(R"({"error":{"message":"fake failure","type":"server_error"}})", "application/json");
      return;
    }
    const bool chat = body.contains("messages");
    const int n = body.at("max_tokens").get<int>();
    const int n_prompt = body.contains("prompt") && body["prompt"].is_array() ? int(body["prompt"].size()) : 3;
    const int delay = delay_ms;
    res.set_chunked_content_provider("text/event-stream", [=](size_t, httplib::DataSink& sink) {
      auto send = [&](const std::string& s) { sink.write(s.data(), s.size()); };
      send(": a comment the client must skip\n\n");
      for (int i = 0; i < n; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(delay));
        json choice = chat ? json{{"index", 0}, {"delta", {{"content", "t"}}}, {"finish_reason", nullptr}}
                           : json{{"index", 0}, {"text", "t"}, {"finish_reason", nullptr}};
        const std::string ev = "data: " + json{{"choices", {choice}}}.dump() + "\n\n";
        send(ev.substr(0, ev.size() / 2));  // an event split across two writes
        send(ev.substr(ev.size() / 2));
      }
      json last = chat ? json{{"index", 0}, {"delta", json::object()}, {"finish_reason", "length"}}
                       : json{{"index", 0}, {"text", ""}, {"finish_reason", "length"}};
      send("data: " + json{{"choices", {last}}}.dump() + "\n\n");
      json usage = {{"prompt_tokens", n_prompt},
                    {"completion_tokens", n},
                    {"prompt_tokens_details", {{"cached_tokens", 0}}}};
      send("data: " + json{{"choices", json::array()}, {"usage", usage}}.dump() + "\r\n\r\n");
      send("data: [DONE]\n\n");
      sink.done();
      return true;
    });
  }

  httplib::Server srv_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::vector<json> bodies_;
  std::vector<std::string> auth_;
};

TEST(BenchUrlPercentile, LinearInterpolationBetweenClosestRanks) {
  EXPECT_DOUBLE_EQ(cli::percentile({4, 1, 3, 2}, 50), 2.5);
  EXPECT_DOUBLE_EQ(cli::percentile({4, 1, 3, 2}, 0), 1.0);
  EXPECT_DOUBLE_EQ(cli::percentile({4, 1, 3, 2}, 100), 4.0);
  EXPECT_DOUBLE_EQ(cli::percentile({7}, 99), 7.0);
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  EXPECT_NEAR(cli::percentile(hundred, 99), 99.01, 1e-9);
  EXPECT_NEAR(cli::percentile(hundred, 50), 50.5, 1e-9);
  EXPECT_TRUE(std::isnan(cli::percentile({}, 50)));
  const cli::LatencySummary s = cli::summarize({10, 20, 30});
  EXPECT_EQ(s.count, 3);
  EXPECT_DOUBLE_EQ(s.p50, 20.0);
  EXPECT_DOUBLE_EQ(s.mean, 20.0);
  EXPECT_DOUBLE_EQ(s.max, 30.0);
}

TEST(BenchUrlSse, EventsSplitAcrossReceivesCommentsAndCrlf) {
  const std::string stream =
      ": keep-alive\n\ndata: {\"a\":1}\n\nevent: x\r\ndata: line1\r\ndata:line2\r\n\r\nid: 3\n\ndata: [DONE]\n\n";
  const std::vector<std::string> want = {"{\"a\":1}", "line1\nline2", "[DONE]"};
  for (size_t step : {size_t(1), size_t(3), stream.size()}) {  // byte by byte, in threes, all at once
    cli::SseParser parser;
    std::vector<std::string> got;
    for (size_t i = 0; i < stream.size(); i += step)
      for (auto& ev : parser.feed(std::string_view(stream).substr(i, step))) got.push_back(ev);
    for (auto& ev : parser.finish()) got.push_back(ev);
    EXPECT_EQ(got, want) << "step " << step;
  }
  cli::SseParser parser;  // the last event's blank line missing at the end of the stream
  EXPECT_TRUE(parser.feed("data: tail").empty());
  EXPECT_EQ(parser.finish(), std::vector<std::string>{"tail"});
}

TEST(BenchUrl, ClosedLoopLevelsWithExactDistinctPromptsAndStreamTimings) {
  FakeServer fake;
  auto r = test::run_nexttok({"bench", "--url", fake.url() + "/v1/", "--api-key", "secret", "--concurrency", "1,2",
                              "-p", "8", "-n", "5", "--requests", "4", "-o", "json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc.at("model"), "fake-model");
  EXPECT_EQ(doc.at("endpoint"), "completions");
  ASSERT_EQ(doc.at("levels").size(), 2u) << r.out;
  for (size_t li = 0; li < 2; ++li) {
    const json& level = doc["levels"][li];
    EXPECT_EQ(level.at("concurrency"), int(li) + 1);
    EXPECT_EQ(level.at("ok"), 4);
    EXPECT_EQ(level.at("errors"), 0);
    EXPECT_FALSE(level.at("prompt_length_estimated").get<bool>());
    EXPECT_FALSE(level.at("stopped_early").get<bool>());
    EXPECT_EQ(level.at("output_tokens"), 20);
    EXPECT_GT(level.at("output_tokens_per_s").get<double>(), 0.0);
    EXPECT_TRUE(level.at("warmup").at("error").is_null()) << level["warmup"].dump();
    ASSERT_EQ(level.at("samples").size(), 4u) << "the warm-up is not a sample";
    for (const json& s : level["samples"]) {
      EXPECT_TRUE(s.at("error").is_null()) << s.dump();
      EXPECT_EQ(s.at("output_tokens"), 5);
      EXPECT_EQ(s.at("prompt_tokens"), 8);
      EXPECT_EQ(s.at("cached_tokens"), 0);
      EXPECT_GE(s.at("ttft_ms").get<double>(), 15.0);
      ASSERT_EQ(s.at("itl_ms").size(), 4u) << s.dump();  // 5 content chunks: 4 gaps
      // Each gap is a receive time minus the one before: a late read makes one long and the next
      // short, so the bounds are on their mean (the fake waits 20 ms between chunks) and the median.
      double sum = 0;
      for (const json& gap : s["itl_ms"]) sum += gap.get<double>();
      EXPECT_GE(sum / 4, 12.0) << s.dump();
      EXPECT_GE(s.at("e2e_ms").get<double>(), 95.0) << s.dump();
    }
    EXPECT_GE(level.at("itl_ms").at("p50").get<double>(), 15.0);
  }
  // What the server saw: 2 x (warm-up + 4) requests, every prompt 8 token ids, all different.
  const std::vector<json> bodies = fake.bodies();
  ASSERT_EQ(bodies.size(), 10u);
  std::set<std::vector<int64_t>> prompts;
  for (const json& b : bodies) {
    ASSERT_TRUE(b.at("prompt").is_array()) << b.dump();
    EXPECT_EQ(b["prompt"].size(), 8u);
    prompts.insert(b["prompt"].get<std::vector<int64_t>>());
    EXPECT_EQ(b.at("model"), "fake-model");
    EXPECT_EQ(b.at("max_tokens"), 5);
    EXPECT_TRUE(b.at("stream").get<bool>());
    EXPECT_TRUE(b.at("stream_options").at("include_usage").get<bool>());
    EXPECT_TRUE(b.at("ignore_eos").get<bool>());
  }
  EXPECT_EQ(prompts.size(), 10u) << "prompts must be pairwise distinct";
  for (const std::string& a : fake.auth()) EXPECT_EQ(a, "Bearer secret");
}

TEST(BenchUrl, CountsServerErrorsWithTheFirstMessage) {
  FakeServer fake;
  fake.delay_ms = 1;
  fake.fail = [](int i) { return i == 2 || i == 4; };  // request 0 is the warm-up
  auto r = test::run_nexttok({"bench", "--url", fake.url(), "-p", "4", "-n", "2", "--requests", "4", "-o", "json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const json level = json::parse(r.out).at("levels").at(0);
  EXPECT_EQ(level.at("ok"), 2);
  EXPECT_EQ(level.at("errors"), 2);
  EXPECT_FALSE(level.at("stopped_early").get<bool>());
  EXPECT_EQ(level.at("first_error"), "HTTP 500: fake failure");
  EXPECT_EQ(level.at("output_tokens"), 4) << "only the requests that succeeded count";
  EXPECT_EQ(level.at("samples").at(1).at("error"), "HTTP 500: fake failure");
}

TEST(BenchUrl, StopsALevelWhenMoreThanHalfOfItsRequestsFail) {
  FakeServer fake;
  fake.fail = [](int) { return true; };
  auto r = test::run_nexttok({"bench", "--url", fake.url(), "-p", "4", "-n", "2", "--requests", "4", "-o", "json"});
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.err.find("more than half of the requests of a level failed; first error: HTTP 500: fake failure"),
            std::string::npos) << r.err;
  const json level = json::parse(r.out).at("levels").at(0);
  EXPECT_TRUE(level.at("stopped_early").get<bool>());
  EXPECT_EQ(level.at("errors"), 3) << "3 of 4 is more than half: the 4th is not sent";
  EXPECT_EQ(level.at("samples").size(), 3u);
  EXPECT_EQ(fake.bodies().size(), 4u);  // the warm-up and 3
}

TEST(BenchUrl, ChatWithoutTokenizeSendsTextAndMarksTheLengthEstimated) {
  FakeServer fake;
  fake.delay_ms = 1;
  fake.has_tokenize = false;
  auto r = test::run_nexttok({"bench", "--url", fake.url(), "--endpoint", "chat", "-m", "my-model", "-p", "40", "-n",
                              "3", "--requests", "2"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("url " + fake.url() + "  model my-model  endpoint chat  p 40  n 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    1    ~40      3     2     0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("~: prompt length estimated"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("c=1 p=~40 n=3: 2 ok, 0 errors"), std::string::npos) << r.err;
  std::set<std::string> texts;
  for (const json& b : fake.bodies()) {
    EXPECT_EQ(b.at("model"), "my-model");
    const std::string text = b.at("messages").at(0).at("content").get<std::string>();
    EXPECT_EQ(b["messages"][0].at("role"), "user");
    texts.insert(text);
    std::istringstream in(text);
    int words = 0;
    for (std::string w; in >> w;) ++words;
    EXPECT_NEAR(words, 30, 3) << text;  // about 40 x 0.75 words
  }
  EXPECT_EQ(texts.size(), 3u);
}

TEST(BenchUrl, UnreachableServerExitsOneBeforeAnyLevel) {
  int port;
  {
    FakeServer gone;  // a port that was just free, now closed
    port = gone.port();
  }
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  auto r = test::run_nexttok({"bench", "--url", url, "-p", "4", "-n", "2"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("cannot connect to " + url + ": connection refused"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(BenchUrl, BadFlagsExitTwo) {
  struct Case {
    std::vector<std::string> args;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {{"--url", "http://127.0.0.1:1", "--concurrency", "0"}, "--concurrency must be between 1 and 1024 (got 0)"},
      {{"--url", "http://127.0.0.1:1", "-n", "0"}, "-n (with --url) must be between 1"},
      {{"--url", "ftp://127.0.0.1:1"}, "--url must start with http:// or https:// (got 'ftp://127.0.0.1:1')"},
      {{"--url", "http://127.0.0.1:99999"}, "--url: bad port '99999'"},
      {{"--url", "http://127.0.0.1:1", "--endpoint", "embeddings"}, "--endpoint must be completions or chat"},
      {{"--url", "http://127.0.0.1:1", "-t", "2"}, "--threads does not apply to --url"},
      {{"--url", "http://127.0.0.1:1", "-o", "csv"}, "-o must be table or json (got 'csv')"},
      {{"--url", "http://127.0.0.1:1", "--timeout", "0"}, "--timeout must be between 0 and 86400"},
      {{"--concurrency", "4"}, "--concurrency needs --url"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"bench"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = test::run_nexttok(args);
    EXPECT_EQ(r.rc, 2) << c.expect << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace nt

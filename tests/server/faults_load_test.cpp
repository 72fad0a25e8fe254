// Fault tests with requests in flight (issue 27): bursts of disconnects mid-prompt and mid-stream,
// a storm of cancellations, a client that stops reading its stream, a client leaving a whole
// (non-streamed) request, and 100 connections beyond -np. A normal client runs alongside and must
// get exactly its quiet-run text (greedy); after each case expect_recovered checks /health, the KV
// blocks, the queue, connections and threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <random>

#include "fault_support.h"

namespace nt::test {
namespace {

constexpr int kTimeoutS = 2;

std::string completion_text(const HttpAnswer& a) {
  if (a.status != 200 || !a.body.is_object()) return "<status " + std::to_string(a.status) + ">";
  return a.body["choices"][0]["text"].get<std::string>();
}

// A token-id prompt of n tokens (BOS first), distinct per `variant` so the prefix cache cannot skip it.
nlohmann::json id_prompt(int n, int variant) {
  nlohmann::json a = nlohmann::json::array({1, 300 + variant});
  for (int i = 2; i < n; ++i) a.push_back(400 + (i * 7 + variant) % 900);
  return a;
}

std::string stream_request(int n_prompt, int max_tokens, int variant) {
  return http_post("/v1/completions", nlohmann::json{{"prompt", id_prompt(n_prompt, variant)},
                                                     {"max_tokens", max_tokens},
                                                     {"ignore_eos", true},
                                                     {"stream", true}}.dump());
}

size_t count_of(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t p = 0; (p = s.find(needle, p)) != std::string::npos; p += needle.size()) ++n;
  return n;
}

// Reads every connection at once and closes each (FIN, or a reset for odd ones) as soon as it has
// `chunks` SSE chunks; returns how many were closed before their stream's end.
int close_after_chunks(std::vector<std::unique_ptr<RawConn>>& conns, size_t chunks, double seconds) {
  std::vector<bool> done(conns.size(), false);
  size_t n_done = 0;
  int mid = 0;
  const auto t = FaultClock::now();
  while (n_done < conns.size() && ms_since(t) < seconds * 1000) {
    std::vector<pollfd> fds;
    std::vector<size_t> idx;
    for (size_t i = 0; i < conns.size(); ++i)
      if (!done[i]) {
        fds.push_back({conns[i]->fd(), POLLIN, 0});
        idx.push_back(i);
      }
    if (::poll(fds.data(), fds.size(), 50) < 0) break;
    for (size_t k = 0; k < fds.size(); ++k) {
      if (!fds[k].revents) continue;
      RawConn& c = *conns[idx[k]];
      c.read_available();
      if (!c.closed() && count_of(c.received(), "data: ") < chunks) continue;
      EXPECT_EQ(http_status(c.received()), 200) << c.received().substr(0, 300);
      if (c.received().find("[DONE]") == std::string::npos) ++mid;
      idx[k] % 2 ? c.reset() : c.close();
      done[idx[k]] = true;
      ++n_done;
    }
  }
  EXPECT_EQ(n_done, conns.size()) << "streams that never sent " << chunks << " chunks";
  return mid;
}

// Sets the flag when the scope ends (an early ASSERT return included), so a normal client stops.
struct SetOnExit {
  std::atomic<bool>& flag;
  ~SetOnExit() { flag = true; }
};

class FaultLoad : public ::testing::Test {
 protected:
  // slow_step_ms 0: stories15M; else the fake model whose steps take that long.
  void start(int slow_step_ms, int n_parallel, int max_queue, int n_batch = 512) {
    server::ServerOptions o;
    o.timeout_s = kTimeoutS;
    o.shutdown_timeout_s = 1;
    o.max_queue = max_queue;
    o.n_parallel = n_parallel;
    ModelSpec spec;
    spec.slow_step_ms = slow_step_ms;
    spec.engine.n_ctx = 2048;
    spec.engine.n_parallel = n_parallel;
    spec.engine.n_batch = n_batch;
    srv_ = std::make_unique<TestServer>(o, spec);
    ASSERT_TRUE(srv_->ok());
    threads_ = thread_count();
  }
  void recovered(const std::string& what) { expect_recovered(*srv_, what, threads_); }
  int port() const { return srv_->port(); }
  std::string metrics() { return get(*srv_->client(), "/metrics").raw; }
  // The normal client's request: greedy, fixed seed.
  std::string normal_text(int max_tokens = 32) {
    auto c = srv_->client();
    return completion_text(post_json(
        *c, "/v1/completions",
        nlohmann::json{{"prompt", "Once upon a time"}, {"max_tokens", max_tokens}, {"temperature", 0}, {"seed", 7}}
            .dump()));
  }
  // The normal client on another thread: its request again and again until `stop` (at least
  // `min_runs` times, at most 200).
  std::future<std::vector<std::string>> normal_client(const std::atomic<bool>& stop, int min_runs = 1,
                                                      int max_tokens = 32) {
    return std::async(std::launch::async, [this, &stop, min_runs, max_tokens] {
      std::vector<std::string> out;
      while ((int(out.size()) < min_runs || !stop) && out.size() < 200) out.push_back(normal_text(max_tokens));
      return out;
    });
  }

  std::unique_ptr<TestServer> srv_;
  int threads_ = 0;
};

TEST_F(FaultLoad, BurstsOfDisconnectsMidPromptAndMidStream) {
  NT_REQUIRE_SHARED();
  start(0, 4, 64, 32);  // prefill in chunks of 32 tokens: a long prompt spans several steps
  const std::string quiet = normal_text();
  ASSERT_EQ(quiet.rfind("<status", 0), std::string::npos) << quiet;
  const double aborted0 = aborted_requests(metrics());
  const auto t0 = FaultClock::now();

  std::atomic<bool> stop{false};
  auto normal = normal_client(stop);
  SetOnExit stop_normal{stop};
  // Mid-prompt: 20 requests with 200-token prompts, each connection closed (FIN or reset) right
  // after its request is sent; half streamed, half whole.
  {
    std::vector<std::unique_ptr<RawConn>> conns;
    for (int i = 0; i < 20; ++i) {
      auto c = std::make_unique<RawConn>(port());
      ASSERT_TRUE(c->ok());
      const std::string body = nlohmann::json{{"prompt", id_prompt(200, i)}, {"max_tokens", 50},
                                              {"ignore_eos", true}, {"stream", i % 2 == 0}}.dump();
      ASSERT_TRUE(c->send_all(http_post("/v1/completions", body)));
      conns.push_back(std::move(c));
    }
    for (size_t i = 0; i < conns.size(); ++i) i % 2 ? conns[i]->reset() : conns[i]->close();
  }
  // Mid-stream: 20 streams, each closed after its third chunk.
  int mid_stream = 0;
  {
    std::vector<std::unique_ptr<RawConn>> conns;
    for (int i = 0; i < 20; ++i) {
      auto c = std::make_unique<RawConn>(port());
      ASSERT_TRUE(c->ok());
      ASSERT_TRUE(c->send_all(stream_request(100, 150, 100 + i)));
      conns.push_back(std::move(c));
    }
    mid_stream = close_after_chunks(conns, 3, 10 * kSlowFactor);
  }
  stop = true;
  const std::vector<std::string> texts = normal.get();
  for (const std::string& t : texts) EXPECT_EQ(t, quiet);
  EXPECT_EQ(mid_stream, 20) << "streams closed before their end";
  record_fault("disconnect bursts: 20 mid-prompt, 20 mid-stream", "cancelled; normal client identical",
               std::to_string(mid_stream) + " left mid-stream; normal " + std::to_string(texts.size()) + " x " +
                   (std::count(texts.begin(), texts.end(), quiet) == std::ptrdiff_t(texts.size()) ? "identical" : "DIFFERENT"),
               ms_since(t0));
  recovered("disconnect bursts mid-prompt / mid-stream");
  const double aborted = aborted_requests(metrics()) - aborted0;
  std::printf("[fault] disconnect bursts: %d streams left mid-stream, %g of 40 requests aborted, normal client %zu x "
              "identical\n", mid_stream, aborted, texts.size());
  EXPECT_GE(aborted, 20);  // at least every stream left mid-way
}

TEST_F(FaultLoad, StormOfCancellations) {
  NT_REQUIRE_SHARED();
  start(0, 4, 64);
  const std::string quiet = normal_text();
  const double aborted0 = aborted_requests(metrics());
  const auto t0 = FaultClock::now();
  std::atomic<bool> stop{false};
  auto normal = normal_client(stop);
  SetOnExit stop_normal{stop};
  std::atomic<int> opened{0};
  std::vector<std::thread> storm;
  for (int t = 0; t < 5; ++t)
    storm.emplace_back([&, t] {
      std::mt19937 rng(27 + unsigned(t));
      for (int i = 0; i < 10; ++i) {
        RawConn c(port());
        if (!c.ok() || !c.send_all(stream_request(20 + int(rng() % 60), 120, 1000 + t * 10 + i))) continue;
        ++opened;
        std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 40));
        if (rng() % 2) c.reset();
      }
    });
  for (auto& t : storm) t.join();
  stop = true;
  EXPECT_EQ(opened.load(), 50);
  const std::vector<std::string> texts = normal.get();
  for (const std::string& t : texts) EXPECT_EQ(t, quiet);
  record_fault("storm of 50 cancellations", "cancelled; normal client identical",
               std::to_string(opened.load()) + " opened; normal " + std::to_string(texts.size()) + " x " +
                   (std::count(texts.begin(), texts.end(), quiet) == std::ptrdiff_t(texts.size()) ? "identical" : "DIFFERENT"),
               ms_since(t0));
  recovered("storm of 50 cancellations");
  std::printf("[fault] storm: 50 streams opened and closed, %g aborted, normal client %zu x identical\n",
              aborted_requests(metrics()) - aborted0, texts.size());
}

// The client stops reading its stream (4 KiB receive buffer, 536-byte segments, 20 top log-probs
// a token, so the ~0.4 MB stream outgrows the socket buffers): the server's write blocks, times
// out after --timeout and the request is cancelled, long before it would have finished; a normal
// client meanwhile gets its quiet-run text.
TEST_F(FaultLoad, ClientThatStopsReadingIsCancelledAfterTimeout) {
  NT_REQUIRE_SHARED();
  constexpr int kStepMs = 40, kMaxTokens = 240;  // 9.6 s if it ran to the end
  start(kStepMs, 4, 8);
  const std::string quiet = normal_text(10);
  const double aborted0 = aborted_requests(metrics());
  RawConn stuck(port(), 4096, 536);
  ASSERT_TRUE(stuck.ok());
  const auto t0 = FaultClock::now();
  ASSERT_TRUE(stuck.send_all(http_post(
      "/v1/chat/completions",
      nlohmann::json{{"messages", {{{"role", "user"}, {"content", "Tell me a long story."}}}},
                     {"max_tokens", kMaxTokens}, {"ignore_eos", true}, {"stream", true},
                     {"logprobs", true}, {"top_logprobs", 20}}.dump())));
  ASSERT_TRUE(stuck.read_until("data: ", 5)) << stuck.received();  // then never read again
  std::atomic<bool> stop{true};
  auto normal = normal_client(stop, 2, 10);
  double gone_ms = -1;
  while (ms_since(t0) < 9000) {
    if (metric_value(metrics(), metric_series("vllm:num_requests_running")) == 0 &&
        normal.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
      gone_ms = ms_since(t0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const std::vector<std::string> texts = normal.get();
  for (const std::string& t : texts) EXPECT_EQ(t, quiet);
  const double aborted = aborted_requests(metrics()) - aborted0;
  std::printf("[fault] stopped reading: request gone after %.0f ms (would run %d ms), aborted %g\n", gone_ms,
              kStepMs * kMaxTokens, aborted);
  record_fault("client stops reading its stream (4 KiB buffer, top_logprobs 20)", "cancelled after --timeout (2 s)",
               "aborted " + std::to_string(int(aborted)) + "; normal " + std::to_string(texts.size()) + " x " +
                   (std::count(texts.begin(), texts.end(), quiet) == std::ptrdiff_t(texts.size()) ? "identical" : "DIFFERENT"),
               gone_ms);
  ASSERT_GE(gone_ms, 0) << "the stuck stream's request was still running after 9 s";
  EXPECT_GE(gone_ms, kTimeoutS * 1000);
  EXPECT_EQ(aborted, 1);
  // What it received stops before the end.
  stuck.wait_closed(2);
  EXPECT_EQ(stuck.received().find("[DONE]"), std::string::npos);
  stuck.close();
  recovered("client that stops reading");
}

// A client that leaves a whole (non-streamed) request while tokens keep coming: cancelled within
// about 100 ms plus a step, not run to its end.
TEST_F(FaultLoad, ClientLeavingAWholeRequestIsCancelled) {
  NT_REQUIRE_SHARED();
  constexpr int kStepMs = 20, kMaxTokens = 200;  // 4 s if it ran to the end
  start(kStepMs, 4, 8);
  const double aborted0 = aborted_requests(metrics());
  RawConn c(port());
  ASSERT_TRUE(c.send_all(http_post("/v1/completions", nlohmann::json{{"prompt", "Once"}, {"max_tokens", kMaxTokens},
                                                                     {"ignore_eos", true}}.dump())));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // generating by now
  ASSERT_EQ(metric_value(metrics(), metric_series("vllm:num_requests_running")), 1);
  const auto t = FaultClock::now();
  c.close();
  double gone_ms = -1;
  while (ms_since(t) < 5000) {
    if (metric_value(metrics(), metric_series("vllm:num_requests_running")) == 0) {
      gone_ms = ms_since(t);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const double aborted = aborted_requests(metrics()) - aborted0;
  std::printf("[fault] whole request left: gone after %.0f ms, aborted %g\n", gone_ms, aborted);
  record_fault("client leaves a whole (non-streamed) request", "cancelled within ~100 ms + a step",
               "aborted " + std::to_string(int(aborted)), gone_ms);
  EXPECT_GE(gone_ms, 0);
  EXPECT_LT(gone_ms, (100 + 3 * kStepMs + 100) * kSlowFactor);
  EXPECT_EQ(aborted, 1);
  recovered("client leaving a whole request");
}

// 100 connections at once with -np 2 and --max-queue 8: 10 are admitted and complete, 90 get 429
// at once; the queue never holds more than --max-queue. `keep_alive`: the clients keep their
// connections open after the answer (HTTP/1.1's default, what SDK connection pools do).
void hundred_connections(TestServer& srv, bool keep_alive) {
  constexpr int kConns = 100, kParallel = 2, kQueue = 8;
  const std::string body = R"({"prompt":"Once","max_tokens":2,"ignore_eos":true})";
  std::string req = http_post("/v1/completions", body);
  if (!keep_alive) req.insert(req.find("\r\n") + 2, "Connection: close\r\n");
  std::vector<std::unique_ptr<RawConn>> conns;
  std::vector<FaultClock::time_point> sent;
  for (int i = 0; i < kConns; ++i) {
    conns.push_back(std::make_unique<RawConn>(srv.port()));
    ASSERT_TRUE(conns.back()->ok()) << i;
    ASSERT_TRUE(conns.back()->send_all(req));
    sent.push_back(FaultClock::now());
  }
  // /health from another client while the burst is being answered.
  auto health = std::async(std::launch::async, [&srv] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto c = srv.client(3);
    const auto t = FaultClock::now();
    const int st = get(*c, "/health").status;
    return st == 200 ? ms_since(t) : -1.0;
  });
  double health_ms = -1;
  // Answers as they come (the status line is enough).
  std::vector<int> status(kConns, 0);
  const auto t0 = FaultClock::now();
  int answered = 0, n429 = 0;
  bool checked_queue = false;
  double worst_429 = 0;
  while (answered < kConns && ms_since(t0) < 6000 * kSlowFactor) {
    std::vector<pollfd> fds;
    std::vector<int> idx;
    for (int i = 0; i < kConns; ++i)
      if (status[size_t(i)] == 0) {
        fds.push_back({conns[size_t(i)]->fd(), POLLIN, 0});
        idx.push_back(i);
      }
    if (::poll(fds.data(), fds.size(), 50) < 0) break;
    for (size_t k = 0; k < fds.size(); ++k) {
      if (!fds[k].revents) continue;
      const int i = idx[k];
      RawConn& c = *conns[size_t(i)];
      c.read_available();
      const int st = http_status(c.received());
      if (st == 0 && !c.closed()) continue;
      status[size_t(i)] = st == 0 ? -1 : st;
      ++answered;
      if (st == 429) {
        ++n429;
        const double ms = std::chrono::duration<double, std::milli>(FaultClock::now() - sent[size_t(i)]).count();
        worst_429 = std::max(worst_429, ms);
      }
    }
    if (!checked_queue && n429 == kConns - kParallel - kQueue) {
      // Admitted (running + waiting) never exceeds -np + --max-queue, and at most -np run. (Not
      // "equals": under a slow build some admitted requests have already finished by now, and a
      // request admitted during an engine step counts as waiting until the next step starts.)
      const std::string m = get(*srv.client(), "/metrics").raw;
      const double running = metric_value(m, metric_series("vllm:num_requests_running"));
      const double waiting = metric_value(m, metric_series("vllm:num_requests_waiting"));
      EXPECT_GE(running, 0) << m;
      EXPECT_GE(waiting, 0) << m;
      EXPECT_LE(running + waiting, kParallel + kQueue) << m;
      EXPECT_LE(running, kParallel) << m;
      checked_queue = true;
    }
  }
  health_ms = health.get();
  int n200 = 0, other = 0;
  for (int s : status) {
    if (s == 200) ++n200;
    else if (s != 429) ++other;
  }
  std::printf("[fault] 100 %s connections, -np 2, --max-queue 8: %d x 200, %d x 429 (slowest 429 %.0f ms), "
              "%d other or unanswered, %.0f ms; /health meanwhile %.1f ms\n",
              keep_alive ? "keep-alive" : "Connection: close", n200, n429, worst_429, other, ms_since(t0), health_ms);
  record_fault(std::string("100 ") + (keep_alive ? "keep-alive " : "") + "connections, -np 2, --max-queue 8",
               "10 x 200, 90 x 429 at once",
               std::to_string(n200) + " x 200, " + std::to_string(n429) + " x 429 (slowest 429 " +
                   std::to_string(int(worst_429)) + " ms), " + std::to_string(other) + " other",
               ms_since(t0));
  EXPECT_GE(health_ms, 0);
  EXPECT_LT(health_ms, 100 * kSlowFactor);
  EXPECT_EQ(n200, kParallel + kQueue);
  EXPECT_EQ(n429, kConns - kParallel - kQueue);
  EXPECT_EQ(other, 0);
  EXPECT_TRUE(checked_queue);
  EXPECT_LT(worst_429, 500 * kSlowFactor);
}

TEST_F(FaultLoad, HundredConnectionsBeyondParallelAre429Fast) {
  NT_REQUIRE_SHARED();
  start(100, 2, 8);
  hundred_connections(*srv_, false);
  recovered("100 connections beyond -np");
}

// Every connection holds an HTTP worker (-np + --max-queue + 4 of them) while it is open: with
// kept-alive connections 4 idle clients stalled every other answer, /health included, until the
// server took one request per connection.
TEST_F(FaultLoad, HundredKeepAliveConnectionsBeyondParallelAre429Fast) {
  NT_REQUIRE_SHARED();
  start(100, 2, 8);
  hundred_connections(*srv_, true);
  recovered("100 keep-alive connections beyond -np");
}

}  // namespace
}  // namespace nt::test

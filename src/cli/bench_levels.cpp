// cli/bench_levels.cpp — see bench_levels.h.
#include "cli/bench_levels.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <random>
#include <thread>

#include "cli/sse_client.h"

namespace nt::cli {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kMaxOpenLoopWorkers = 4096;  // requests in flight at once in the rate sweep

double elapsed_s(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::unique_ptr<httplib::Client> client_for(const UrlTarget& t, const UrlBenchArgs& a) {
  return make_client(t.url.scheme_host_port(), a.timeout_s, t.api_key);
}

json body_base(const std::string& model, int n_gen) {
  return {{"model", model},
          {"max_tokens", n_gen},
          {"stream", true},
          {"stream_options", {{"include_usage", true}}},
          {"ignore_eos", true},
          {"temperature", 0}};
}

// What every level's requests report as they end: the last finish, errors, and whether more than
// half of the planned requests failed (the level then stops sending).
class Tally {
 public:
  Tally(int planned, LevelMonitor& monitor) : planned_(planned), monitor_(monitor) {}
  void record(const RequestSample& s) {
    monitor_.request_done();
    if (!s.ok() && 2 * ++errors_ > planned_) stop_ = true;
    std::lock_guard<std::mutex> lock(mu_);
    last_end_ = std::max(last_end_, Clock::now());
  }
  bool stopped() const { return stop_; }
  double seconds_since(Clock::time_point start) {
    std::lock_guard<std::mutex> lock(mu_);
    return last_end_ > start ? std::chrono::duration<double>(last_end_ - start).count() : 0;
  }

 private:
  int planned_;
  LevelMonitor& monitor_;
  std::atomic<int> errors_{0};
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  Clock::time_point last_end_{};
};

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

Clock::time_point deadline_of(const UrlBenchArgs& a, Clock::time_point start) { return start + seconds(a.duration_s); }

}  // namespace

std::string request_body(const UrlBenchArgs& a, const std::string& model, const json& prompt, int n_gen) {
  json body = body_base(model, n_gen);
  if (a.endpoint == "chat") body["messages"] = json::array({{{"role", "user"}, {"content", prompt}}});
  else body["prompt"] = prompt;
  return body.dump();
}

std::vector<double> poisson_arrivals(uint64_t seed, double rate, int n) {
  std::mt19937_64 rng(seed);
  std::vector<double> out;
  double t = 0;
  for (int i = 0; i < n; ++i) {
    const double u = (double(rng() >> 11) + 0.5) * 0x1p-53;  // uniform in (0, 1)
    t += -std::log(u) / rate;
    out.push_back(t);
  }
  return out;
}

// A level's fixed settings (the scenarios fill in the rest).
static UrlBenchLevel new_level(int concurrency, int n_prompt, int n_gen) {
  UrlBenchLevel level;
  level.concurrency = concurrency;
  level.n_prompt = n_prompt;
  level.n_gen = n_gen;
  return level;
}

UrlBenchLevel run_closed_level(const UrlBenchArgs& a, const UrlTarget& t, PromptMaker& prompts, int concurrency,
                               int n_prompt, int n_gen) {
  UrlBenchLevel level = new_level(concurrency, n_prompt, n_gen);
  level.requests = a.requests > 0 ? a.requests : 4 * concurrency;
  level.prompt_estimated = !prompts.exact() || a.endpoint == "chat";
  std::vector<std::string> bodies;  // made before timing starts; [0] is the warm-up's
  for (int i = 0; i <= level.requests; ++i) bodies.push_back(request_body(a, t.model, prompts.next(n_prompt), n_gen));
  level.warmup = stream_request(*client_for(t, a), t.path, bodies[0], a.timeout_s);

  std::vector<RequestSample> samples(static_cast<size_t>(level.requests));
  std::atomic<int> next{0};
  std::atomic<bool> out_of_time{false};
  LevelMonitor monitor(t.progress_prefix + level_label(level), level.requests, t.progress, t.metrics);
  Tally tally(level.requests, monitor);
  const auto start = Clock::now();
  const auto deadline = deadline_of(a, start);
  auto client_loop = [&] {
    auto cli = client_for(t, a);
    while (!tally.stopped()) {
      if (Clock::now() >= deadline) {
        out_of_time = true;
        break;
      }
      const int i = next++;
      if (i >= level.requests) break;
      const double sent_s = elapsed_s(start);
      samples[size_t(i)] = stream_request(*cli, t.path, bodies[size_t(i) + 1], a.timeout_s, monitor.live_chunks());
      samples[size_t(i)].start_s = sent_s;
      tally.record(samples[size_t(i)]);
    }
  };
  std::vector<std::thread> threads;
  for (int c = 0; c < std::min(concurrency, level.requests); ++c) threads.emplace_back(client_loop);
  for (auto& th : threads) th.join();
  level.kv = monitor.finish();
  level.wall_s = tally.seconds_since(start);
  level.stopped_early = tally.stopped();
  samples.resize(static_cast<size_t>(std::min(next.load(), level.requests)));
  level.duration_reached = out_of_time && int(samples.size()) < level.requests;
  level.samples = std::move(samples);
  return level;
}

UrlBenchLevel run_rate_level(const UrlBenchArgs& a, const UrlTarget& t, PromptMaker& prompts, double rate,
                             uint64_t seed, int n_prompt, int n_gen) {
  UrlBenchLevel level;
  level.rate = rate;
  level.n_prompt = n_prompt;
  level.n_gen = n_gen;
  level.requests = a.requests > 0 ? a.requests : std::max(10, static_cast<int>(std::ceil(10 * rate)));
  level.prompt_estimated = !prompts.exact() || a.endpoint == "chat";
  std::vector<std::string> bodies;
  for (int i = 0; i <= level.requests; ++i) bodies.push_back(request_body(a, t.model, prompts.next(n_prompt), n_gen));
  const std::vector<double> arrivals = poisson_arrivals(seed, rate, level.requests);
  level.warmup = stream_request(*client_for(t, a), t.path, bodies[0], a.timeout_s);

  // Workers take due requests from a queue; one is added whenever every worker is busy, so a slow
  // server never delays a send (the loop stays open).
  std::vector<RequestSample> samples(static_cast<size_t>(level.requests));
  std::mutex mu;
  std::condition_variable cv;
  std::deque<int> due;
  int idle = 0;
  bool closing = false;
  std::vector<std::thread> workers;
  LevelMonitor monitor(t.progress_prefix + level_label(level), level.requests, t.progress, t.metrics);
  Tally tally(level.requests, monitor);
  const auto start = Clock::now();
  const auto deadline = deadline_of(a, start);
  auto worker = [&] {
    auto cli = client_for(t, a);
    for (;;) {
      int i;
      {
        std::unique_lock<std::mutex> lock(mu);
        ++idle;
        cv.wait(lock, [&] { return closing || !due.empty(); });
        --idle;
        if (due.empty()) return;
        i = due.front();
        due.pop_front();
      }
      const double sent_s = elapsed_s(start);
      samples[size_t(i)] = stream_request(*cli, t.path, bodies[size_t(i) + 1], a.timeout_s, monitor.live_chunks());
      samples[size_t(i)].start_s = sent_s;
      tally.record(samples[size_t(i)]);
    }
  };
  int sent = 0;
  for (; sent < level.requests && !tally.stopped(); ++sent) {
    const auto at = start + seconds(arrivals[size_t(sent)]);
    if (at >= deadline) {
      level.duration_reached = true;
      break;
    }
    std::this_thread::sleep_until(at);
    {
      std::lock_guard<std::mutex> lock(mu);
      due.push_back(sent);
      if (int(due.size()) > idle && int(workers.size()) < kMaxOpenLoopWorkers) workers.emplace_back(worker);
    }
    cv.notify_one();
    level.arrival_span_s = std::chrono::duration<double>(Clock::now() - start).count();
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    closing = true;
  }
  cv.notify_all();
  for (auto& w : workers) w.join();
  level.kv = monitor.finish();
  level.wall_s = tally.seconds_since(start);
  level.stopped_early = tally.stopped();
  samples.resize(static_cast<size_t>(sent));
  level.samples = std::move(samples);
  return level;
}

UrlBenchLevel run_multi_turn_level(const UrlBenchArgs& a, const UrlTarget& t, PromptMaker& prompts, int concurrency,
                                   int n_prompt, int n_gen) {
  UrlBenchLevel level = new_level(concurrency, n_prompt, n_gen);
  level.turns = a.turns;
  level.conversations = a.requests > 0 ? a.requests : concurrency;
  level.requests = level.conversations * level.turns;
  level.prompt_estimated = true;  // text in a chat template
  const size_t n_conv = static_cast<size_t>(level.conversations), n_turns = static_cast<size_t>(level.turns);
  std::vector<json> user(n_conv * n_turns);  // made before timing starts
  for (json& u : user) u = prompts.next(n_prompt);
  json warmup = body_base(t.model, n_gen);
  warmup["messages"] = json::array({{{"role", "user"}, {"content", prompts.next(n_prompt)}}});
  level.warmup = stream_request(*client_for(t, a), t.path, warmup.dump(), a.timeout_s);

  std::vector<std::vector<RequestSample>> per_conv(n_conv);
  std::atomic<int> next{0};
  std::atomic<bool> out_of_time{false};
  LevelMonitor monitor(t.progress_prefix + level_label(level), level.requests, t.progress, t.metrics);
  Tally tally(level.requests, monitor);
  const auto start = Clock::now();
  const auto deadline = deadline_of(a, start);
  auto client_loop = [&] {
    auto cli = client_for(t, a);
    for (int c; !tally.stopped() && Clock::now() < deadline && (c = next++) < level.conversations;) {
      json body = body_base(t.model, n_gen);
      body["messages"] = json::array();
      for (size_t turn = 0; turn < n_turns; ++turn) {
        if (tally.stopped()) break;
        if (Clock::now() >= deadline) {
          out_of_time = true;
          break;
        }
        body["messages"].push_back({{"role", "user"}, {"content", user[size_t(c) * n_turns + turn]}});
        const double sent_s = elapsed_s(start);
        RequestSample s = stream_request(*cli, t.path, body.dump(), a.timeout_s, monitor.live_chunks());
        s.start_s = sent_s;
        tally.record(s);
        const bool ok = s.ok();
        body["messages"].push_back({{"role", "assistant"}, {"content", s.text}});
        per_conv[size_t(c)].push_back(std::move(s));
        if (!ok) break;  // the conversation cannot go on without the reply
      }
    }
    if (Clock::now() >= deadline) out_of_time = true;
  };
  std::vector<std::thread> threads;
  for (int c = 0; c < std::min(concurrency, level.conversations); ++c) threads.emplace_back(client_loop);
  for (auto& th : threads) th.join();
  level.kv = monitor.finish();
  level.wall_s = tally.seconds_since(start);
  level.stopped_early = tally.stopped();
  for (auto& conv : per_conv)
    for (size_t turn = 0; turn < conv.size(); ++turn) {
      level.samples.push_back(std::move(conv[turn]));
      level.turn_of.push_back(static_cast<int>(turn) + 1);
    }
  level.duration_reached = out_of_time && int(level.samples.size()) < level.requests;
  return level;
}

}  // namespace nt::cli

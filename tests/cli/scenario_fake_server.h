// tests/cli/scenario_fake_server.h — a fake OpenAI-compatible server that streams at known rates, for
// the `bench --url` scenario tests: at most `capacity` streams at once (the others wait for a slot),
// the first token `first_token_ms` plus `prefill_ms_per_token` per uncached prompt token after a
// stream gets its slot, then one " t" token every `gap_ms` (sent on a fixed schedule, so late
// wake-ups do not add up). Prompt tokens: token ids as given, text by words; a chat request's
// cached tokens are the words of the longest earlier message list that starts its own. GET /metrics
// reports vllm:kv_cache_usage_perc = 0.25 x the streams running, in two labelled series. Every
// request's time span (received to answered; a stream: to just before its closing events) is recorded.
#pragma once

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace nt::test {

class ScenarioFake {
 public:
  struct Options {
    int first_token_ms = 50;
    int gap_ms = 20;
    int capacity = 1000;
    double prefill_ms_per_token = 0;
    bool metrics = true;
    int64_t context_limit = 0;  // > 0: /v1/models meta.context_limit
  };

  explicit ScenarioFake(Options o) : o_(o) {
    using nlohmann::json;
    srv_.new_task_queue = [] { return new httplib::ThreadPool(48); };
    srv_.set_pre_routing_handler([this](const httplib::Request&, httplib::Response&) {
      const auto now = std::chrono::steady_clock::now();
      std::lock_guard<std::mutex> lock(mu_);
      spans_.emplace_back(now, now);
      return httplib::Server::HandlerResponse::Unhandled;
    });
    srv_.set_tcp_nodelay(true);
    srv_.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
      json m = {{"id", "fake-model"}, {"object", "model"}};
      if (o_.context_limit > 0) m["meta"] = {{"context_limit", o_.context_limit}, {"n_ctx_train", 999999}};
      res.set_content(json{{"object", "list"}, {"data", {m}}}.dump(), "application/json");
    });
    srv_.Post("/tokenize", [](const httplib::Request& req, httplib::Response& res) {
      json tokens = json::array();
      for (const std::string& w : words(json::parse(req.body).at("content").get<std::string>()))
        tokens.push_back(std::hash<std::string>{}(w) % 30000);
      res.set_content(json{{"tokens", tokens}}.dump(), "application/json");
    });
    srv_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      if (!o_.metrics) {
        res.status = 404;
        return;
      }
      const double use = 0.25 * running();
      std::ostringstream m;
      m << "# HELP vllm:kv_cache_usage_perc KV-cache usage.\n# TYPE vllm:kv_cache_usage_perc gauge\n"
        << "vllm:kv_cache_usage_perc_other 7\n"
        << "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"a } b\"} " << use << "\n"
        << "vllm:kv_cache_usage_perc{engine=\"1\",model_name=\"fake\"} " << use << "\n";
      res.set_content(m.str(), "text/plain");
    });
    auto generate = [this](const httplib::Request& req, httplib::Response& res) { handle(req, res); };
    srv_.Post("/v1/completions", generate);
    srv_.Post("/v1/chat/completions", generate);
    port_ = srv_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { srv_.listen_after_bind(); });
    for (int i = 0; i < 500 && !srv_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ~ScenarioFake() {
    srv_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int max_running() {
    std::lock_guard<std::mutex> lock(mu_);
    return max_running_;
  }
  std::vector<nlohmann::json> bodies() {
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_;
  }
  using TimePoint = std::chrono::steady_clock::time_point;
  // (received, answered) of every request; a stream's span ends just before its closing events are sent.
  std::vector<std::pair<TimePoint, TimePoint>> spans() {
    std::lock_guard<std::mutex> lock(mu_);
    return spans_;
  }

  static std::vector<std::string> words(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
  }

 private:
  int running() {
    std::lock_guard<std::mutex> lock(mu_);
    return running_;
  }

  void handle(const httplib::Request& req, httplib::Response& res) {
    using nlohmann::json;
    const json body = json::parse(req.body);
    const bool chat = body.contains("messages");
    int64_t prompt = 0, cached = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      bodies_.push_back(body);
      if (chat) {
        std::vector<std::string> msgs;
        for (const json& m : body["messages"]) msgs.push_back(m.at("content").get<std::string>());
        for (const std::string& m : msgs) prompt += int64_t(words(m).size());
        for (const auto& earlier : seen_) {  // the longest earlier message list that starts this one
          if (earlier.size() > msgs.size() || !std::equal(earlier.begin(), earlier.end(), msgs.begin())) continue;
          int64_t n = 0;
          for (const std::string& m : earlier) n += int64_t(words(m).size());
          cached = std::max(cached, n);
        }
        seen_.push_back(msgs);
      } else {
        const json& p = body.at("prompt");
        prompt = p.is_array() ? int64_t(p.size()) : int64_t(words(p.get<std::string>()).size());
      }
    }
    const int n = body.at("max_tokens").get<int>();
    const double first_ms = o_.first_token_ms + o_.prefill_ms_per_token * double(prompt - cached);
    const TimePoint received = std::chrono::steady_clock::now();
    res.set_chunked_content_provider("text/event-stream", [=, this](size_t, httplib::DataSink& sink) {
      acquire();
      // The span ends before the closing events go out: once they are sent the client may move on to
      // another server before this thread runs again.
      struct Release {
        ScenarioFake* f;
        TimePoint received;
        TimePoint answered{};
        ~Release() { f->release(received, answered == TimePoint{} ? std::chrono::steady_clock::now() : answered); }
      } release{this, received};
      auto send = [&](const std::string& s) { return sink.write(s.data(), s.size()); };
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < n; ++i) {
        std::this_thread::sleep_until(t0 + std::chrono::microseconds(int64_t(1000 * (first_ms + i * o_.gap_ms))));
        json choice = chat ? json{{"index", 0}, {"delta", {{"content", " t"}}}, {"finish_reason", nullptr}}
                           : json{{"index", 0}, {"text", " t"}, {"finish_reason", nullptr}};
        if (!send("data: " + json{{"choices", {choice}}}.dump() + "\n\n")) return false;
      }
      release.answered = std::chrono::steady_clock::now();
      json last = chat ? json{{"index", 0}, {"delta", json::object()}, {"finish_reason", "length"}}
                       : json{{"index", 0}, {"text", ""}, {"finish_reason", "length"}};
      send("data: " + json{{"choices", {last}}}.dump() + "\n\n");
      json usage = {{"prompt_tokens", prompt},
                    {"completion_tokens", n},
                    {"prompt_tokens_details", {{"cached_tokens", cached}}}};
      send("data: " + json{{"choices", json::array()}, {"usage", usage}}.dump() + "\n\n");
      send("data: [DONE]\n\n");
      sink.done();
      return true;
    });
  }

  // One of `capacity` slots.
  void acquire() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return running_ < o_.capacity; });
    max_running_ = std::max(max_running_, ++running_);
  }
  void release(TimePoint received, TimePoint answered) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      --running_;
      spans_.emplace_back(received, answered);
    }
    cv_.notify_all();
  }

  Options o_;
  httplib::Server srv_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  int running_ = 0, max_running_ = 0;
  std::vector<nlohmann::json> bodies_;
  std::vector<std::vector<std::string>> seen_;
  std::vector<std::pair<TimePoint, TimePoint>> spans_;
};

}  // namespace nt::test

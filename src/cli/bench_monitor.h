// cli/bench_monitor.h — what watches a level of `bench --url` while it runs: the live progress line
// on stderr (requests done of planned, current output tokens/s, ETA; redrawn in place, only on a
// terminal) and the sampler of the server's KV-cache use (vllm:kv_cache_usage_perc at GET /metrics,
// every 0.5 s).
// Must not know: scenarios, output formats.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "cli/bench_url_report.h"

namespace nt::cli {

// The KV-cache use (0..1) in Prometheus text: vllm:kv_cache_usage_perc (any labels; the mean of its
// series when there are several), else the older vllm:gpu_cache_usage_perc; nullopt when neither.
std::optional<double> parse_kv_usage(std::string_view metrics_text);

// "bench: c=4 p=256 n=128: 12/16 requests, 812.3 tok/s, ETA 3 s" (ETA "-" while nothing is done).
std::string progress_text(const std::string& label, int done, int total, double tok_s, double eta_s);

// Where GET /metrics is read from (empty path: KV use is not sampled).
struct MetricsSource {
  std::string scheme_host_port, path, api_key;
  double timeout_s = 10;
};

class LevelMonitor {
 public:
  // Starts watching now: total is the requests planned; live draws the progress line.
  LevelMonitor(std::string label, int total, bool live, const MetricsSource& metrics);
  ~LevelMonitor();
  LevelMonitor(const LevelMonitor&) = delete;
  LevelMonitor& operator=(const LevelMonitor&) = delete;

  std::atomic<int64_t>* live_chunks() { return &chunks_; }  // for stream_request
  void request_done() { done_.fetch_add(1, std::memory_order_relaxed); }
  // Stops both threads (a last KV sample, the progress line cleared) and returns the KV samples.
  KvUsage finish();

 private:
  void draw_loop();
  void sample_loop();
  bool wait_stop(std::chrono::milliseconds d);  // true once finish() was called

  using Clock = std::chrono::steady_clock;
  std::string label_;
  int total_;
  bool live_;
  MetricsSource metrics_;
  Clock::time_point start_;
  std::atomic<int64_t> chunks_{0};
  std::atomic<int> done_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false, finished_ = false;
  KvUsage kv_;
  std::thread draw_, sample_;
};

}  // namespace nt::cli

// server/metrics.h — the server's Prometheus metrics: latency histograms and counters fed by the
// request handlers, rendered with the engine's counter snapshot (EngineStats) as Prometheus text
// exposition 0.0.4. Carries nexttok's own names and the vLLM names that Kubernetes' Gateway API
// Inference Extension and llm-d read (vllm:num_requests_waiting, vllm:kv_cache_usage_perc, ...).
// Thread-safe: observed from any thread, rendered from any thread without the engine thread.
// Must not know: HTTP, the engine's internals beyond EngineStats.
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>
#include "engine/engine.h"
#include "engine/request.h"

namespace nt::server {

// A cumulative histogram with fixed upper bounds (seconds), Prometheus-style (+Inf implied).
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double v);
  struct Snapshot {
    std::vector<double> bounds;
    std::vector<uint64_t> cumulative;  // per bound, then +Inf (= count)
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot snapshot() const;

 private:
  mutable std::mutex mu_;
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket (not cumulative), last = above every bound
  double sum_ = 0;
};

struct MetricsInfo {
  std::string model_name;  // the `model_name` label of the vllm: series
  int n_parallel = 0;
};

class ServerMetrics {
 public:
  ServerMetrics();
  void observe_ttft(double seconds);
  void observe_itl(double seconds);  // one per token after a request's first
  void observe_e2e(double seconds);
  void observe_queue(double seconds);
  // vllm:request_success_total{finished_reason="stop"|"length"|"abort"}; errors counted apart.
  void request_finished(FinishReason r);
  void http_response(int status);  // nexttok_http_responses_total{code}
  // The whole exposition: engine gauges/counters from `s`, the histograms and counters above.
  std::string render(const EngineStats& s, const MetricsInfo& info) const;

 private:
  Histogram ttft_, itl_, e2e_, queue_;
  mutable std::mutex mu_;
  uint64_t finished_stop_ = 0, finished_length_ = 0, finished_abort_ = 0, finished_error_ = 0;
  std::vector<std::pair<int, uint64_t>> responses_;  // status -> count
};

}  // namespace nt::server

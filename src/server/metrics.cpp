// server/metrics.cpp — Prometheus text exposition 0.0.4 of the server's metrics (see metrics.h).
#include "server/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

#include "core/check.h"

namespace nt::server {

namespace {

// Bucket upper bounds (seconds): those vLLM uses for the same histograms.
const std::vector<double> kTtftBounds = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
                                         1,     2.5,   5,    7.5,  10,   20,   40,   80,  160, 640, 2560};
const std::vector<double> kItlBounds = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5,
                                        0.75, 1,     2.5,  5,     7.5, 10,   20,  40,  80};
const std::vector<double> kRequestBounds = {0.3, 0.5, 0.8, 1,  1.5, 2,   2.5, 5,   10,   15,  20,
                                            30,  40,  50,  60, 120, 240, 480, 960, 1920, 7680};

// A sample value: shortest round-trip decimal, Prometheus spellings for the special values.
std::string fmt_double(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  NT_CHECK(res.ec == std::errc());
  return std::string(buf, res.ptr);
}

// Label values escape backslash, double quote and newline; HELP text backslash and newline.
std::string escape(const std::string& s, bool quote) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '"' && quote) out += "\\\"";
    else out += c;
  }
  return out;
}

using Labels = std::vector<std::pair<std::string, std::string>>;

// Builds the exposition family by family: HELP and TYPE once, then that family's samples.
class Writer {
 public:
  void family(const std::string& name, const char* type, const std::string& help) {
    out_ += "# HELP " + name + " " + escape(help, false) + "\n";
    out_ += "# TYPE " + name + " " + type + "\n";
  }
  void sample(const std::string& name, const Labels& labels, const std::string& value) {
    out_ += name;
    if (!labels.empty()) {
      out_ += '{';
      for (size_t i = 0; i < labels.size(); ++i) {
        if (i) out_ += ',';
        out_ += labels[i].first + "=\"" + escape(labels[i].second, true) + "\"";
      }
      out_ += '}';
    }
    out_ += ' ';
    out_ += value;
    out_ += '\n';
  }
  void sample(const std::string& name, const Labels& labels, int64_t v) { sample(name, labels, std::to_string(v)); }
  void sample(const std::string& name, const Labels& labels, uint64_t v) { sample(name, labels, std::to_string(v)); }
  void sample(const std::string& name, const Labels& labels, double v) { sample(name, labels, fmt_double(v)); }

  // A single-sample gauge or counter family.
  template <typename T>
  void single(const std::string& name, const char* type, const std::string& help, const Labels& labels, T v) {
    family(name, type, help);
    sample(name, labels, v);
  }

  void histogram(const std::string& name, const std::string& help, const Labels& labels,
                 const Histogram::Snapshot& h) {
    family(name, "histogram", help);
    for (size_t i = 0; i <= h.bounds.size(); ++i) {
      Labels l = labels;
      l.emplace_back("le", i < h.bounds.size() ? fmt_double(h.bounds[i]) : "+Inf");
      sample(name + "_bucket", l, h.cumulative[i]);
    }
    sample(name + "_sum", labels, h.sum);
    sample(name + "_count", labels, h.count);
  }

  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

}  // namespace

// --- Histogram

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {
  for (size_t i = 0; i < bounds_.size(); ++i) {
    NT_CHECK(std::isfinite(bounds_[i]));
    NT_CHECK(i == 0 || bounds_[i - 1] < bounds_[i]);
  }
}

void Histogram::observe(double v) {
  if (std::isnan(v)) return;  // would poison the sum; no bucket holds it
  // Bucket i counts bounds_[i-1] < v <= bounds_[i] (Prometheus `le` is inclusive).
  size_t i = size_t(std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
  std::lock_guard<std::mutex> lock(mu_);
  ++counts_[i];
  sum_ += v;
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s;
  s.bounds = bounds_;
  s.cumulative.resize(counts_.size());
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t acc = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    acc += counts_[i];
    s.cumulative[i] = acc;
  }
  s.sum = sum_;
  s.count = acc;
  return s;
}

// --- ServerMetrics

ServerMetrics::ServerMetrics() : ttft_(kTtftBounds), itl_(kItlBounds), e2e_(kRequestBounds), queue_(kRequestBounds) {}

void ServerMetrics::observe_ttft(double seconds) { ttft_.observe(seconds); }
void ServerMetrics::observe_itl(double seconds) { itl_.observe(seconds); }
void ServerMetrics::observe_e2e(double seconds) { e2e_.observe(seconds); }
void ServerMetrics::observe_queue(double seconds) { queue_.observe(seconds); }

void ServerMetrics::request_finished(FinishReason r) {
  std::lock_guard<std::mutex> lock(mu_);
  switch (r) {
    case FinishReason::Stop:
    case FinishReason::Eog: ++finished_stop_; break;
    case FinishReason::Length:
    case FinishReason::Context: ++finished_length_; break;
    case FinishReason::Cancelled: ++finished_abort_; break;
    case FinishReason::Error: ++finished_error_; break;
  }
}

void ServerMetrics::http_response(int status) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [code, n] : responses_) {
    if (code == status) {
      ++n;
      return;
    }
  }
  responses_.emplace_back(status, 1);
}

std::string ServerMetrics::render(const EngineStats& s, const MetricsInfo& info) const {
  uint64_t stop, length, abort, error;
  std::vector<std::pair<int, uint64_t>> responses;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop = finished_stop_;
    length = finished_length_;
    abort = finished_abort_;
    error = finished_error_;
    responses = responses_;
  }
  std::sort(responses.begin(), responses.end());

  // vLLM counts cached blocks no request references as free (they are evicted on demand).
  double kv_usage = 0;
  if (s.blocks_total > 0) {
    int64_t in_use = int64_t(s.blocks_total) - s.blocks_free - s.blocks_cached;
    kv_usage = std::clamp(double(in_use) / double(s.blocks_total), 0.0, 1.0);
  }

  const Labels m = {{"model_name", info.model_name}};
  Writer w;

  // --- vLLM's names, as the Gateway API Inference Extension and llm-d scrape them.
  w.single("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", m, s.running);
  w.single("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", m, s.waiting);
  w.single("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", m, kv_usage);
  w.single("vllm:gpu_cache_usage_perc", "gauge",
           "KV-cache usage. 1 means 100 percent usage (older name of vllm:kv_cache_usage_perc).", m, kv_usage);
  w.single("vllm:prefix_cache_queries_total", "counter", "Prefix cache queries, in terms of number of queried tokens.",
           m, s.prefix_queried_tokens);
  w.single("vllm:prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens.", m,
           s.prefix_hit_tokens);
  w.single("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", m, s.prompt_tokens);
  w.single("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", m,
           s.generated_tokens);
  w.single("vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.", m,
           s.preemptions);

  w.family("vllm:request_success_total", "counter", "Count of successfully processed requests.");
  const std::pair<const char*, uint64_t> reasons[] = {{"stop", stop}, {"length", length}, {"abort", abort}};
  for (const auto& [reason, n] : reasons) {
    w.sample("vllm:request_success_total", {{"model_name", info.model_name}, {"finished_reason", reason}}, n);
  }

  w.histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", m,
              ttft_.snapshot());
  w.histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", m,
              itl_.snapshot());
  w.histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", m,
              e2e_.snapshot());
  w.histogram("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", m,
              queue_.snapshot());

  w.single("vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig.",
           {{"model_name", info.model_name},
            {"block_size", std::to_string(s.block_size)},
            {"num_gpu_blocks", std::to_string(s.blocks_total)}},
           int64_t(1));

  // --- nexttok's own.
  w.family("nexttok_kv_blocks", "gauge",
           "KV-cache blocks by state: used (held by requests), cached (prefix cache, unreferenced), free.");
  w.sample("nexttok_kv_blocks", {{"state", "used"}}, int64_t(s.blocks_used));
  w.sample("nexttok_kv_blocks", {{"state", "cached"}}, int64_t(s.blocks_cached));
  w.sample("nexttok_kv_blocks", {{"state", "free"}}, int64_t(s.blocks_free));
  w.single("nexttok_kv_blocks_capacity", "gauge", "KV-cache blocks in the pool.", {}, int64_t(s.blocks_total));
  w.single("nexttok_kv_block_size_tokens", "gauge", "Tokens per KV-cache block.", {}, int64_t(s.block_size));
  w.single("nexttok_requests_running", "gauge", "Requests admitted (holding KV-cache blocks).", {}, s.running);
  w.single("nexttok_requests_waiting", "gauge", "Requests queued, not yet admitted.", {}, s.waiting);
  w.single("nexttok_parallel_slots", "gauge", "Most requests the engine runs at once.", {},
           int64_t(info.n_parallel));
  w.single("nexttok_requests_finished_total", "counter", "Requests finished, cancelled and failed ones included.",
           {}, s.requests_finished);
  w.single("nexttok_request_errors_total", "counter", "Requests that finished with an error.", {}, error);
  w.single("nexttok_prompt_tokens_total", "counter", "Prompt tokens of admitted requests.", {}, s.prompt_tokens);
  w.single("nexttok_prompt_tokens_cached_total", "counter",
           "Prompt tokens found in the prefix cache at their request's first admission.", {}, s.cached_tokens);
  w.single("nexttok_computed_tokens_total", "counter",
           "Tokens run through the model (prefill, recomputation, decode).", {}, s.computed_tokens);
  w.single("nexttok_generated_tokens_total", "counter", "Tokens generated.", {}, s.generated_tokens);
  w.single("nexttok_steps_total", "counter", "Forward passes of the request path.", {}, s.steps);
  w.single("nexttok_preemptions_total", "counter", "Requests preempted to free KV-cache blocks.", {},
           s.preemptions);
  w.single("nexttok_state_snapshots", "gauge",
           "Recurrent-state snapshots kept for prefix reuse (hybrid models such as qwen35; 0 otherwise).", {},
           s.state_snapshots);
  w.single("nexttok_state_snapshot_bytes", "gauge", "Memory of the recurrent-state snapshots.", {},
           s.state_snapshot_bytes);
  w.single("nexttok_state_snapshot_hits_total", "counter",
           "Admissions that resumed a prompt from a recurrent-state snapshot.", {}, s.state_snapshot_hits);
  w.family("nexttok_http_responses_total", "counter", "HTTP responses by status code.");
  for (const auto& [code, n] : responses) w.sample("nexttok_http_responses_total", {{"code", std::to_string(code)}}, n);

  return w.take();
}

}  // namespace nt::server

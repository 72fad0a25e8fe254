// cli/bench_monitor.cpp — see bench_monitor.h.
#include "cli/bench_monitor.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <utility>

#include "cli/sse_client.h"
#include "core/strings.h"

namespace nt::cli {

namespace {

constexpr auto kDrawEvery = std::chrono::milliseconds(250);
constexpr auto kSampleEvery = std::chrono::milliseconds(500);
constexpr auto kFirstSample = std::chrono::milliseconds(250);  // once the level's first requests run
constexpr double kRateWindowS = 2.0;  // the progress line's tokens/s: chunks of the last 2 s

// The mean of the samples of one gauge (any labels) in Prometheus text; nullopt when absent.
std::optional<double> gauge_mean(std::string_view text, std::string_view name) {
  double sum = 0;
  int n = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view rest = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (rest.substr(0, name.size()) != name) continue;
    rest.remove_prefix(name.size());
    if (!rest.empty() && rest.front() == '{') {  // labels: up to the '}' outside quoted values
      size_t i = 1;
      for (bool quoted = false; i < rest.size(); ++i) {
        const char c = rest[i];
        if (quoted && c == '\\') ++i;
        else if (c == '"') quoted = !quoted;
        else if (!quoted && c == '}') break;
      }
      if (i >= rest.size()) continue;
      rest.remove_prefix(i + 1);
    }
    if (rest.empty() || (rest.front() != ' ' && rest.front() != '\t')) continue;  // a longer name
    const std::string value(rest);
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (end == value.c_str() || !std::isfinite(v)) continue;
    sum += v;
    ++n;
  }
  if (n == 0) return std::nullopt;
  return sum / n;
}

}  // namespace

std::optional<double> parse_kv_usage(std::string_view metrics_text) {
  if (auto v = gauge_mean(metrics_text, "vllm:kv_cache_usage_perc")) return v;
  return gauge_mean(metrics_text, "vllm:gpu_cache_usage_perc");
}

std::string progress_text(const std::string& label, int done, int total, double tok_s, double eta_s) {
  std::string eta = "-";
  if (std::isfinite(eta_s) && eta_s >= 0)
    eta = eta_s < 120 ? str_printf("%.0f s", std::ceil(eta_s)) : str_printf("%.1f min", eta_s / 60);
  return str_printf("bench: %s: %d/%d requests, %.1f tok/s, ETA %s", label.c_str(), done, total, tok_s, eta.c_str());
}

LevelMonitor::LevelMonitor(std::string label, int total, bool live, const MetricsSource& metrics)
    : label_(std::move(label)), total_(total), live_(live), metrics_(metrics), start_(Clock::now()) {
  kv_.reported = !metrics_.path.empty();
  if (live_) draw_ = std::thread([this] { draw_loop(); });
  if (kv_.reported) sample_ = std::thread([this] { sample_loop(); });
}

LevelMonitor::~LevelMonitor() { finish(); }

bool LevelMonitor::wait_stop(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, d, [this] { return stop_; });
}

void LevelMonitor::draw_loop() {
  std::deque<std::pair<Clock::time_point, int64_t>> window;  // (when, chunks so far)
  while (!wait_stop(kDrawEvery)) {
    const auto now = Clock::now();
    const int64_t chunks = chunks_.load(std::memory_order_relaxed);
    window.emplace_back(now, chunks);
    while (window.size() > 2 && std::chrono::duration<double>(now - window.front().first).count() > kRateWindowS)
      window.pop_front();
    const double span = std::chrono::duration<double>(now - window.front().first).count();
    const double tok_s = span > 0 ? double(chunks - window.front().second) / span : 0;
    const int done = done_.load(std::memory_order_relaxed);
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double eta = done > 0 ? elapsed / done * (total_ - done) : std::nan("");
    std::fprintf(stderr, "\r%s\x1b[K", progress_text(label_, done, total_, tok_s, eta).c_str());
    std::fflush(stderr);
  }
}

void LevelMonitor::sample_loop() {
  auto cli = make_client(metrics_.scheme_host_port, metrics_.timeout_s, metrics_.api_key);
  for (auto wait = kFirstSample; !wait_stop(wait); wait = kSampleEvery) {
    httplib::Result r = cli->Get(metrics_.path);
    if (!r || r->status != 200) continue;
    if (auto v = parse_kv_usage(r->body)) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!stop_) kv_.samples.emplace_back(std::chrono::duration<double>(Clock::now() - start_).count(), *v);
    }
  }
}

KvUsage LevelMonitor::finish() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return kv_;
    stop_ = finished_ = true;
  }
  cv_.notify_all();
  if (draw_.joinable()) draw_.join();
  if (sample_.joinable()) sample_.join();
  if (live_) {
    std::fputs("\r\x1b[K", stderr);
    std::fflush(stderr);
  }
  return kv_;
}

}  // namespace nt::cli

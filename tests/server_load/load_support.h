// tests/server_load/load_support.h — what the load tests (overload, soak; issue 27) share: the real
// `nexttok serve` as a child process over stories15M (free port, ready wait, its RSS from /proc,
// SIGTERM and the exit code), the queue and KV gauges from its /metrics, and test durations read
// from the environment. The real binary rather than an in-process server: the issue is about the
// served process, and its RSS is then the server's alone (not the load generator's threads too).
#pragma once

#include <signal.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "server/fault_support.h"
#include "support/child_process.h"

namespace nt::test {

// Seconds from environment variable `name` (a positive number), else `fallback`.
inline double env_seconds(const char* name, double fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  return end && *end == '\0' && s > 0 ? s : fallback;
}

// A field of /proc/PID/status in KiB ("VmRSS", "VmHWM"); -1 when the process is gone.
inline long proc_status_kib(pid_t pid, const char* field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  const std::string tag = std::string(field) + ":";
  while (std::getline(in, line))
    if (line.rfind(tag, 0) == 0) return std::atol(line.c_str() + tag.size());
  return -1;
}

inline std::vector<std::string> serve_argv(const std::vector<std::string>& args) {
  std::vector<std::string> argv{nexttok_bin(), "serve", "-m", stories_path(), "--alias", "stories15M", "--port", "0"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

// `nexttok serve -m stories15M --alias stories15M --port 0 ARGS` with stderr to a file (the
// per-request log lines go there too); killed when the test ends without stop().
class ServeChild {
 public:
  explicit ServeChild(const std::vector<std::string>& args) : child_(serve_argv(args), temp_dir() + "/serve") {}

  pid_t pid() const { return child_.pid(); }
  int port() const { return port_; }
  std::string log() const { return child_.err(); }
  // The last `n` bytes of the log (for failure messages).
  std::string log_tail(size_t n = 2000) const {
    const std::string s = log();
    return s.size() > n ? s.substr(s.size() - n) : s;
  }
  long rss_kib() const { return proc_status_kib(pid(), "VmRSS"); }
  long peak_rss_kib() const { return proc_status_kib(pid(), "VmHWM"); }

  // Waits for "listening on http://127.0.0.1:PORT" in the log, then for /health 200.
  bool wait_ready(double seconds) {
    const std::string tag = "listening on http://127.0.0.1:";
    const auto t = FaultClock::now();
    while (port_ == 0 && ms_since(t) < seconds * 1000 && alive()) {
      const std::string s = log();
      const size_t p = s.find(tag);
      if (p != std::string::npos && s.find(' ', p + tag.size()) != std::string::npos)
        port_ = std::atoi(s.c_str() + p + tag.size());
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (port_ == 0) return false;
    auto c = client(5);
    while (ms_since(t) < seconds * 1000 && alive()) {
      if (get(*c, "/health").status == 200) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  std::unique_ptr<httplib::Client> client(double timeout_s) const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
    c->set_connection_timeout(std::chrono::milliseconds(int(timeout_s * 1000)));
    c->set_read_timeout(std::chrono::milliseconds(int(timeout_s * 1000)));
    c->set_write_timeout(std::chrono::milliseconds(int(timeout_s * 1000)));
    return c;
  }
  // True while the process runs (a crash or an exit makes it false).
  bool alive() { return child_.running(); }
  // Sends `sig` and waits for the exit: the exit code (128 + signal when killed by one), or -1 when
  // it outlives `seconds` (then it is killed).
  int stop(int sig, double seconds) {
    if (child_.running()) {
      ::kill(child_.pid(), sig);
      if (!child_.wait_for(seconds)) {
        child_.kill_now();
        return -1;
      }
    }
    return child_.rc();
  }

 private:
  Child child_;
  int port_ = 0;
};

// The server's queue and KV gauges, read from /metrics (-1 where a series is absent).
struct ServerGauges {
  double running = -1, waiting = -1, kv_used = -1;
  bool ok() const { return running >= 0 && waiting >= 0 && kv_used >= 0; }
};
inline ServerGauges read_gauges(httplib::Client& c) {
  ServerGauges g;
  const HttpAnswer m = get(c, "/metrics");
  if (m.status != 200) return g;
  g.running = metric_value(m.raw, metric_series("vllm:num_requests_running"));
  g.waiting = metric_value(m.raw, metric_series("vllm:num_requests_waiting"));
  g.kv_used = metric_value(m.raw, "nexttok_kv_blocks{state=\"used\"}");
  return g;
}

// Waits until nothing runs or waits and no KV block is held by a request; the last reading.
inline ServerGauges wait_idle(httplib::Client& c, double seconds) {
  ServerGauges g;
  const auto t = FaultClock::now();
  while (ms_since(t) < seconds * 1000) {
    g = read_gauges(c);
    if (g.running == 0 && g.waiting == 0 && g.kv_used == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return g;
}

}  // namespace nt::test

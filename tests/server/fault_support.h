// tests/server/fault_support.h — what the fault tests need beyond server_harness.h: a bare TCP
// client that sends exactly the bytes given (malformed requests, a byte a second, a request and an
// at-once close, a stream it stops reading) with a deadline on every wait, and the check run after
// each fault: /health answers fast, the engine holds no KV block and runs nothing, the server
// holds no connection and no extra thread.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "server_harness.h"

namespace nt::test {

// Time bounds are for a release build; sanitizer and debug builds get this factor.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr double kSlowFactor = 4;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr double kSlowFactor = 4;
#elif !defined(NDEBUG)
constexpr double kSlowFactor = 3;
#else
constexpr double kSlowFactor = 1;
#endif
#elif !defined(NDEBUG)
constexpr double kSlowFactor = 3;
#else
constexpr double kSlowFactor = 1;
#endif

// ThreadSanitizer's runtime adds threads of its own during a run (73 -> 77 seen after a burst of
// disconnects, with nothing of the server's left), so the thread-count check runs in the other
// builds only; its figures are still printed.
#if defined(__SANITIZE_THREAD__)
constexpr bool kCheckThreadCount = false;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kCheckThreadCount = false;
#else
constexpr bool kCheckThreadCount = true;
#endif
#else
constexpr bool kCheckThreadCount = true;
#endif

using FaultClock = std::chrono::steady_clock;
inline double ms_since(FaultClock::time_point t) {
  return std::chrono::duration<double, std::milli>(FaultClock::now() - t).count();
}

// One TCP connection to 127.0.0.1:port. Every read has a deadline; a close or reset by the server
// sets closed().
class RawConn {
 public:
  // rcvbuf > 0: SO_RCVBUF before connecting (so the advertised window stays that small). mss > 0:
  // TCP_MAXSEG, as on a path with small segments; on loopback the server then sizes its send
  // buffer to ~150 KiB instead of ~4 MiB, so a stream can outgrow it.
  explicit RawConn(int port, int rcvbuf = 0, int mss = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) return;
    if (rcvbuf > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    if (mss > 0) ::setsockopt(fd_, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof(mss));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(uint16_t(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) close();
  }
  ~RawConn() { close(); }
  RawConn(const RawConn&) = delete;
  RawConn& operator=(const RawConn&) = delete;

  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  bool closed() const { return closed_; }
  const std::string& received() const { return in_; }

  bool send_all(std::string_view d) {
    while (!d.empty()) {
      const ssize_t n = ::send(fd_, d.data(), d.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      d.remove_prefix(size_t(n));
    }
    return true;
  }
  // Reads until `done(received())` holds, the server closes, or `seconds` pass; true if `done`.
  template <class Pred>
  bool read_until_fn(Pred done, double seconds) {
    const auto end = FaultClock::now() + std::chrono::microseconds(int64_t(seconds * 1e6));
    char buf[65536];
    while (!done(in_)) {
      if (closed_ || fd_ < 0) return false;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - FaultClock::now()).count();
      if (left <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, int(left)) <= 0) continue;
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n > 0) in_.append(buf, size_t(n));
      else if (n == 0 || (errno != EINTR && errno != EAGAIN)) closed_ = true;
    }
    return true;
  }
  bool read_until(std::string_view needle, double seconds) {
    return read_until_fn([&](const std::string& s) { return s.find(needle) != std::string::npos; }, seconds);
  }
  // Reads what has arrived, without waiting (a close sets closed()).
  void read_available() {
    char buf[65536];
    while (fd_ >= 0 && !closed_) {
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
      if (n > 0) in_.append(buf, size_t(n));
      else if (n == 0 || (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)) closed_ = true;
      else if (errno != EINTR) break;
    }
  }
  // Reads (and keeps) everything until the server closes; true when it closed within `seconds`.
  bool wait_closed(double seconds) {
    read_until_fn([](const std::string&) { return false; }, seconds);
    return closed_;
  }
  // Closes with a reset (SO_LINGER 0), as a crashed or killed client does.
  void reset() {
    if (fd_ < 0) return;
    linger l{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    close();
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  bool closed_ = false;
  std::string in_;
};

// The status of the first HTTP response in raw bytes (0: none).
inline int http_status(std::string_view raw) {
  if (raw.rfind("HTTP/1.", 0) != 0 || raw.size() < 12) return 0;
  return std::atoi(std::string(raw.substr(9, 3)).c_str());
}
// How many HTTP responses the raw bytes hold (status lines at a line start).
inline int response_count(std::string_view raw) {
  int n = 0;
  for (size_t p = 0; (p = raw.find("HTTP/1.1 ", p)) != std::string_view::npos; p += 9)
    if (p == 0 || raw[p - 1] == '\n') ++n;
  return n;
}
// True when `raw` holds a whole response with a Content-Length body (or none).
inline bool response_complete(std::string_view raw) {
  const size_t end = raw.find("\r\n\r\n");
  if (end == std::string_view::npos) return false;
  const std::string head(raw.substr(0, end));
  size_t p = head.find("Content-Length: ");
  if (p == std::string::npos) p = head.find("content-length: ");
  const size_t len = p == std::string::npos ? 0 : size_t(std::atoll(head.c_str() + p + 16));
  return raw.size() >= end + 4 + len;
}
// A whole request with a JSON body.
inline std::string http_post(const std::string& path, const std::string& body) {
  return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

// Connections the server still holds: TCP sockets in this network namespace with local port
// `port` that are established or in CLOSE_WAIT (the client left and the server has not closed).
// Read from /proc/net/tcp, not by scanning descriptors (which races the server's own closes).
inline int server_connections(int port) {
  int n = 0;
  for (const char* file : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream ss(line);
      std::string sl, local, remote, state;
      ss >> sl >> local >> remote >> state;
      const size_t colon = local.rfind(':');
      if (colon == std::string::npos) continue;
      if (std::stoi(local.substr(colon + 1), nullptr, 16) == port && (state == "01" || state == "08")) ++n;
    }
  }
  return n;
}

inline int thread_count() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
  return -1;
}

inline std::string metric_series(const char* name, const char* labels = nullptr) {
  std::string s = std::string(name) + "{model_name=\"stories15M\"";
  if (labels) s += std::string(",") + labels;
  return s + "}";
}
inline double aborted_requests(const std::string& m) {
  const double v = metric_value(m, metric_series("vllm:request_success_total", "finished_reason=\"abort\""));
  return v < 0 ? 0 : v;
}

// One row of the closing note's fault table: a case, what it must do, what it did and how long it
// took. The next expect_recovered prints the pending rows with the leaks it found.
struct FaultRow {
  std::string name, expected, observed;
  double ms = -1;
};
inline std::vector<FaultRow>& pending_faults() {
  static std::vector<FaultRow> rows;
  return rows;
}
inline void record_fault(std::string name, std::string expected, std::string observed, double ms) {
  pending_faults().push_back({std::move(name), std::move(expected), std::move(observed), ms});
}
// "FAULT <case> | expected <..> | status=<..> | ms=<..> | leaks=<..>": one line per case, the
// table's row (leaks: "-" where the case runs in another process and expect_recovered cannot look).
inline void print_fault(const FaultRow& r, const std::string& leaks) {
  std::printf("FAULT %s | expected %s | status=%s | ms=%.0f | leaks=%s\n", r.name.c_str(), r.expected.c_str(),
              r.observed.c_str(), r.ms, leaks.c_str());
}

// After a fault: /health answers 200 within 100 ms, then (within a short wait for cancels to take
// effect at the next engine step) no KV block is used and nothing runs or waits, the server holds
// no connection, and the process has `threads` threads (the count before the fault). Prints the
// figures on one line for the closing note.
inline void expect_recovered(TestServer& srv, const std::string& what, int threads) {
  auto c = srv.client(5);
  const auto t = FaultClock::now();
  const HttpAnswer h = get(*c, "/health");
  const double health_ms = ms_since(t);
  EXPECT_EQ(h.status, 200) << what << ": " << h.raw;
  EXPECT_LT(health_ms, 100 * kSlowFactor) << what << ": /health took " << health_ms << " ms";
  std::string m;
  double used = -1, running = -1, waiting = -1;
  const auto t_idle = FaultClock::now();
  while (ms_since(t_idle) < 3000 * kSlowFactor) {
    m = get(*c, "/metrics").raw;
    used = metric_value(m, "nexttok_kv_blocks{state=\"used\"}");
    running = metric_value(m, metric_series("vllm:num_requests_running"));
    waiting = metric_value(m, metric_series("vllm:num_requests_waiting"));
    if (used == 0 && running == 0 && waiting == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const double idle_ms = ms_since(t_idle);
  EXPECT_EQ(used, 0) << what << ": KV blocks still used\n" << m;
  EXPECT_EQ(running, 0) << what << "\n" << m;
  EXPECT_EQ(waiting, 0) << what << "\n" << m;
  c.reset();
  int conns = -1, now_threads = -1;
  const auto t_conn = FaultClock::now();
  while (ms_since(t_conn) < 2000 * kSlowFactor) {
    conns = server_connections(srv.port());
    now_threads = thread_count();
    if (conns == 0 && (now_threads == threads || !kCheckThreadCount)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(conns, 0) << what << ": connections the server still holds open";
  if (kCheckThreadCount) {
    EXPECT_EQ(now_threads, threads) << what << ": threads before the fault vs now";
  }
  std::printf("[fault] %-44s | /health %.1f ms | idle after %.0f ms | kv used %g | running %g | waiting %g | "
              "open connections %d | threads %d -> %d\n",
              what.c_str(), health_ms, idle_ms, used, running, waiting, conns, threads, now_threads);
  // Leaks: KV blocks, requests running or waiting, connections and threads left behind.
  const int leaks = int(used > 0 ? used : 0) + int(running > 0 ? running : 0) + int(waiting > 0 ? waiting : 0) +
                    (conns > 0 ? conns : 0) + (kCheckThreadCount ? std::abs(now_threads - threads) : 0);
  char health[64];
  std::snprintf(health, sizeof(health), "%d (/health %.0f ms)", leaks, health_ms);
  if (pending_faults().empty()) print_fault({what, "recovered", "-", -1}, health);
  for (const FaultRow& r : pending_faults()) print_fault(r, health);
  pending_faults().clear();
}

}  // namespace nt::test

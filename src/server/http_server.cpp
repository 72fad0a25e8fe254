// server/http_server.cpp — see http_server.h.
#include "server/http_server.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <vector>

#include "core/strings.h"
#include "server/api_request.h"
#include "server/api_response.h"

namespace nt::server {

namespace {

using Clock = std::chrono::steady_clock;

thread_local ConnectionState* t_current = nullptr;

// RFC 9110 5.6.2: tchar.
bool is_token_char(unsigned char c) {
  if (c >= '0' && c <= '9') return true;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(char(c)) != std::string_view::npos;
}

// poll() for `events` up to `ms` (negative: 0), retried on EINTR: >0 ready, 0 timeout, <0 error.
int poll_for(int fd, short events, int64_t ms) {
  pollfd p{fd, events, 0};
  int r;
  do {
    r = ::poll(&p, 1, int(std::clamp<int64_t>(ms, 0, 1 << 30)));
  } while (r < 0 && errno == EINTR);
  return r;
}

void ip_and_port(const sockaddr_storage& ss, socklen_t len, std::string& ip, int& port) {
  char h[NI_MAXHOST], s[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&ss), len, h, sizeof(h), s, sizeof(s),
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return;
  ip = h;
  port = std::atoi(s);
}

// A connection's socket for the library: reads come from a buffer refilled with recv() and all
// share the request's deadline; the bytes of the request head are kept in the connection state.
class DeadlineStream final : public httplib::Stream {
 public:
  DeadlineStream(int sock, ConnectionState& st, Clock::time_point deadline, std::chrono::milliseconds write_timeout)
      : sock_(sock), st_(st), deadline_(deadline), write_timeout_(write_timeout) {}

  bool is_readable() const override { return pos_ < len_ || wait_readable(); }
  bool is_writable() const override {
    if (poll_for(sock_, POLLOUT, write_timeout_.count()) <= 0) return false;
    if (poll_for(sock_, POLLIN, 0) == 0) return true;  // alive: nothing to read, no close
    char c;
    return ::recv(sock_, &c, 1, MSG_PEEK) > 0;
  }

  ssize_t read(char* ptr, size_t size) override {
    if (pos_ == len_) {
      if (st_.head_too_large || !wait_readable()) return -1;
      ssize_t n;
      do {
        n = ::recv(sock_, buf_.data(), buf_.size(), 0);
      } while (n < 0 && errno == EINTR);
      if (n <= 0) return n;
      len_ = size_t(n);
      pos_ = 0;
    }
    const size_t n = std::min(size, len_ - pos_);
    std::copy_n(buf_.data() + pos_, n, ptr);
    pos_ += n;
    keep_head(std::string_view(ptr, n));
    return ssize_t(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    ssize_t n;
    do {
      n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n > 0) wrote_ = true;
    return n;
  }
  bool wrote() const { return wrote_; }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    if (getpeername(sock_, reinterpret_cast<sockaddr*>(&ss), &len) == 0) ip_and_port(ss, len, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    if (getsockname(sock_, reinterpret_cast<sockaddr*>(&ss), &len) == 0) ip_and_port(ss, len, ip, port);
  }
  socket_t socket() const override { return sock_; }

 private:
  // Waits for a byte until the deadline; past it, marks the state and reports a timeout.
  bool wait_readable() const {
    for (;;) {
      const auto now = Clock::now();
      if (now >= deadline_) {
        st_.deadline_passed = true;
        return false;
      }
      // Rounded up: poll's millisecond timeout must not end before the deadline.
      const int r = poll_for(sock_, POLLIN, std::chrono::ceil<std::chrono::milliseconds>(deadline_ - now).count());
      if (r != 0) return r > 0;
    }
  }
  // Appends what the library consumed to the head until its blank line; reading stops at the cap.
  void keep_head(std::string_view got) {
    if (st_.head_complete) return;
    for (char c : got) {
      st_.head.push_back(c);
      if (st_.head.size() >= 4 && st_.head.compare(st_.head.size() - 4, 4, "\r\n\r\n") == 0) {
        st_.head_complete = true;
        return;
      }
      if (st_.head.size() >= kMaxRequestHead) {
        st_.head_too_large = true;
        return;
      }
    }
  }

  int sock_;
  ConnectionState& st_;
  Clock::time_point deadline_;
  std::chrono::milliseconds write_timeout_;
  std::vector<char> buf_ = std::vector<char>(16 * 1024);
  size_t len_ = 0, pos_ = 0;  // bytes in buf_, bytes of them consumed
  bool wrote_ = false;
};

}  // namespace

Status check_request_head(std::string_view head) {
  if (head.find('\0') != std::string_view::npos) return make_error("a NUL byte in the request head");
  size_t p = head.find("\r\n");
  if (p == std::string_view::npos) return make_error("the request line does not end with CRLF");
  if (head.substr(0, p).find_first_of("\r\n") != std::string_view::npos)
    return make_error("a bare CR or LF in the request line");
  p += 2;
  for (size_t n = 1; p < head.size(); ++n) {
    const size_t e = head.find("\r\n", p);
    if (e == std::string_view::npos) return make_error("a header line does not end with CRLF");
    const std::string_view line = head.substr(p, e - p);
    p = e + 2;
    if (line.empty()) return {};  // the blank line ends the head
    if (line.find_first_of("\r\n") != std::string_view::npos) return make_error("a bare CR or LF in a header line");
    if (line[0] == ' ' || line[0] == '\t') return make_error("obsolete line folding in the headers");
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos)
      return make_error("header line %zu has no colon", n);
    if (colon == 0) return make_error("a header line with an empty field name");
    for (size_t i = 0; i < colon; ++i)
      if (!is_token_char(static_cast<unsigned char>(line[i])))
        return make_error("invalid character 0x%02x in a header field name",
                          unsigned(static_cast<unsigned char>(line[i])));
  }
  return make_error("the request head has no blank line");
}

const ConnectionState* HttpServer::current() { return t_current; }

bool HttpServer::process_and_close_socket(socket_t sock) {
  using std::chrono::milliseconds;
  using std::chrono::seconds;
  using std::chrono::microseconds;
  const auto read_timeout = seconds(read_timeout_sec_) + microseconds(read_timeout_usec_);
  const auto write_timeout =
      std::chrono::duration_cast<milliseconds>(seconds(write_timeout_sec_) + microseconds(write_timeout_usec_));
  const auto start = Clock::now();
  const auto deadline = start + read_timeout;
  // Like the library: wait up to the keep-alive time for the request's first byte, in slices so
  // that a stop is seen.
  const auto idle_end = std::min(deadline, start + seconds(keep_alive_timeout_sec_));
  bool ret = false;
  bool cut_off = false;  // the deadline passed mid-request
  int ready = 0;
  while (svr_sock_ != INVALID_SOCKET && ready == 0 && Clock::now() < idle_end)
    ready = poll_for(sock, POLLIN, std::min<int64_t>(
        100, std::chrono::duration_cast<milliseconds>(idle_end - Clock::now()).count() + 1));
  if (ready > 0 && svr_sock_ != INVALID_SOCKET) {
    ConnectionState st;
    DeadlineStream strm(sock, st, deadline, write_timeout);
    t_current = &st;
    bool connection_closed = false;
    ret = process_request(strm, true, connection_closed, nullptr);
    t_current = nullptr;
    cut_off = st.deadline_passed;
    // A deadline that passed in the request line leaves the library nothing to answer: say 408.
    if (st.deadline_passed && !strm.wrote()) {
      const std::string body = dump_json(error_body(api_error(
          408, str_printf("the request was not received whole within %lld s (--timeout)",
                          static_cast<long long>(read_timeout_sec_)),
          "invalid_request_error", "", "request_timeout")));
      const std::string answer = str_printf("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n"
                                            "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                                            body.size()) + body;
      (void)strm.write(answer.data(), answer.size());
    }
  }
  // A lingering close: closing with unread request bytes (a body refused before it was read, a
  // request cut off by the deadline) resets the connection, which can destroy the answer on its
  // way. So send the FIN first and, when request bytes are still arriving (or the client was cut
  // off mid-request), discard them for a moment while the client stops.
  ::shutdown(sock, SHUT_WR);
  const auto linger_end = Clock::now() + milliseconds(500);
  char sink[4096];
  for (size_t drained = 0; drained < (256u << 10);) {
    const auto left = std::chrono::duration_cast<milliseconds>(linger_end - Clock::now()).count();
    if (left <= 0 || poll_for(sock, POLLIN, drained == 0 && !cut_off ? 0 : left) <= 0) break;  // nothing unread
    const ssize_t n = ::recv(sock, sink, sizeof(sink), MSG_DONTWAIT);
    if (n <= 0) break;
    drained += size_t(n);
  }
  ::close(sock);
  return ret;
}

}  // namespace nt::server

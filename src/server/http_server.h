// server/http_server.h — the HTTP library's server (cpp-httplib 0.11.4, which cannot be patched)
// with what it lacks for hostile clients: a deadline for receiving a whole request (its timeout is
// per read, so a client sending a byte a second held a worker forever), a cap on the request head,
// and the head's bytes kept for a strict syntax check (the library skips header lines it cannot
// parse, such as one without a colon, and answers the rest of the request).
// Must not know: routes, the engine.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <httplib.h>
#include "core/result.h"

namespace nt::server {

// Bytes a request head (request line, headers, blank line) may take; a longer one is refused (431).
constexpr size_t kMaxRequestHead = 64 * 1024;

// Checks a request head (through its blank line) for what RFC 9112 forbids and the library lets
// through: a header line without a colon, a field name that is not a token (empty, a space in it),
// obsolete line folding, a bare CR or LF, a NUL. The error says what is wrong (answer 400).
Status check_request_head(std::string_view head);

// What the worker thread serving a connection knows about the request it reads.
struct ConnectionState {
  std::string head;            // the request head as read (at most kMaxRequestHead bytes)
  bool head_complete = false;  // its blank line was read
  bool head_too_large = false; // reading stopped at kMaxRequestHead (answer 431)
  bool deadline_passed = false;// the request was not read whole within the timeout (answer 408)
};

class HttpServer : public httplib::Server {
 public:
  // The state of the connection the calling thread serves (handlers, pre-routing and error
  // handlers run on it), or nullptr on any other thread.
  static const ConnectionState* current();

 private:
  // Serves one request per connection like the library, through a stream whose reads share one
  // deadline: the read timeout (set_read_timeout) bounds the whole request, head and body, from
  // the connection's accept; writes keep the per-write timeout.
  bool process_and_close_socket(socket_t sock) override;
};

}  // namespace nt::server

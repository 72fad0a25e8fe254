// cli/sse_client.h — one streamed OpenAI-compatible request, timed: a Server-Sent-Events parser and
// the client call that measures time to first token, the gaps between content chunks, the output
// token count and the errors (HTTP status, error objects in the stream, broken streams, timeouts).
// Must not know: prompts, concurrency, output formats (bench_url.cpp).
#pragma once

#include <httplib.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nt::cli {

// Incremental parser of a text/event-stream body: bytes go in as they arrive (a line or an event
// may be split across receives) and each complete event's data comes out. Lines end with "\n" or
// "\r\n"; "data:" lines of one event are joined with "\n"; ":" comments and other fields are skipped.
class SseParser {
 public:
  // The data of every event that the bytes complete (events end with a blank line).
  std::vector<std::string> feed(std::string_view bytes);
  // At the end of the stream: the data of an event left without its closing blank line, if any.
  std::vector<std::string> finish();

 private:
  void take_line(std::string_view line, std::vector<std::string>& out);
  std::string pending_;  // bytes of an unfinished line
  std::string data_;     // data lines of the current event
  bool has_data_ = false;
};

// What one request measured. Latencies in milliseconds; NaN where there is nothing to measure.
struct RequestSample {
  double ttft_ms = std::numeric_limits<double>::quiet_NaN();  // send -> first chunk with text
  std::vector<double> itl_ms;  // gaps between successive chunks with text (one per chunk)
  int64_t output_tokens = 0;   // usage.completion_tokens, else the number of chunks with text
  int64_t content_chunks = 0;
  int64_t prompt_tokens = -1;  // usage.prompt_tokens (-1: not reported)
  int64_t cached_tokens = -1;  // usage.prompt_tokens_details.cached_tokens (-1: not reported)
  double e2e_ms = 0;
  double start_s = 0;  // when it was sent, in seconds since its level started (set by the level)
  std::string finish_reason;
  std::string text;   // the generated text (a multi-turn conversation sends it back)
  std::string error;  // empty: the request succeeded
  bool ok() const { return error.empty(); }
};

// A client for scheme://host:port with the bench's timeouts and, when api_key is not empty, the
// "Authorization: Bearer" header. Not thread-safe: one per thread.
std::unique_ptr<httplib::Client> make_client(const std::string& scheme_host_port, double timeout_s,
                                             const std::string& api_key);

// httplib's transport error in words ("the server's TLS certificate could not be verified").
std::string describe_http_error(httplib::Error err);

// POSTs body (JSON with "stream": true) to path and reads the event stream to its end, or until
// timeout_s has passed since sending. live_chunks, when given, counts the chunks with text as they
// arrive (the progress line's current tokens/s).
RequestSample stream_request(httplib::Client& cli, const std::string& path, const std::string& body,
                             double timeout_s, std::atomic<int64_t>* live_chunks = nullptr);

}  // namespace nt::cli

// hub/http.h — a small HTTP(S) client over libcurl for talking to the Hugging Face Hub.
// Owns: requests (GET into memory, HEAD, streamed GET with a Range start), redirects, the bearer
// token, timeouts, response headers. Must not know: the Hub's API, the cache, GGUF.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace nt::hub {

struct HttpOptions {
  std::string token;             // sent as "Authorization: Bearer <token>" when non-empty
  long connect_timeout_s = 30;   // TCP/TLS connect
  long request_timeout_s = 120;  // whole request, for API calls and HEAD (not for downloads)
  long stall_timeout_s = 60;     // downloads: abort after this long below 1 byte/s
};

struct HttpResponse {
  std::string transport_error;  // non-empty when no HTTP answer came (DNS, connect, TLS, cut)
  bool partial = false;         // the body ended early (connection cut mid-transfer)
  long status = 0;              // of the final response (after redirects, if followed)
  std::map<std::string, std::string> headers;  // of the final response, names lowercased
  std::string body;             // get()/head(): the body; stream(): the body of a non-2xx answer
  std::string url;              // the URL asked for
  std::string effective_url;    // the URL that answered last

  bool ok_transport() const { return transport_error.empty(); }
  bool ok() const { return ok_transport() && status >= 200 && status < 300; }
  // Header value or "" (name in any case).
  std::string header(const std::string& name) const;
};

// Callbacks for stream(): on_start sees the final response's status and headers before its body
// (return false to abort); on_data receives the body of a 2xx answer (return false to abort);
// on_progress(done, total) counts bytes of this transfer (total 0 when unknown).
struct StreamSink {
  std::function<bool(const HttpResponse&)> on_start;
  std::function<bool(const char* data, size_t n)> on_data;
  std::function<void(uint64_t done, uint64_t total)> on_progress;
};

class HttpClient {
 public:
  explicit HttpClient(HttpOptions opts);
  // GET into memory, following redirects (bodies over max_body bytes are an error).
  HttpResponse get(const std::string& url, size_t max_body = 64u << 20) const;
  // HEAD; follow=false returns the first answer's headers (e.g. the Hub's 302 carrying X-Linked-*).
  HttpResponse head(const std::string& url, bool follow) const;
  // Streamed GET following redirects; range_start > 0 asks for "Range: bytes=<start>-".
  HttpResponse stream(const std::string& url, uint64_t range_start, const StreamSink& sink) const;

 private:
  HttpOptions opts_;
};

// "a b/c.gguf" -> "a%20b/c.gguf" (slashes kept unless keep_slash is false).
std::string url_encode_path(const std::string& s, bool keep_slash = true);

}  // namespace nt::hub

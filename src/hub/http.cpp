// hub/http.cpp — libcurl easy-handle plumbing for HttpClient.
#include "hub/http.h"

#include "hub/curl_api.h"

#include <cctype>
#include <cstring>

#include "core/strings.h"

namespace nt::hub {
namespace {

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

// Per-request state shared by the callbacks.
struct Ctx {
  HttpResponse* resp = nullptr;
  const StreamSink* sink = nullptr;  // null: collect the body into resp->body
  size_t max_body = 0;
  bool started = false;
  bool to_sink = false;      // the final answer is 2xx: body goes to the sink
  bool aborted = false;      // a callback asked to stop
  bool too_big = false;
  CURL* curl = nullptr;
  const CurlApi* api = nullptr;
};

size_t on_header(char* buf, size_t size, size_t n, void* user) {
  auto* c = static_cast<Ctx*>(user);
  size_t len = size * n;
  std::string line(buf, len);
  if (starts_with(line, "HTTP/")) {  // a new response (after a redirect or a 100): reset
    c->resp->headers.clear();
    size_t sp = line.find(' ');
    if (sp != std::string::npos) c->resp->status = std::strtol(line.c_str() + sp + 1, nullptr, 10);
    return len;
  }
  size_t colon = line.find(':');
  if (colon != std::string::npos)
    c->resp->headers[to_lower(trim(line.substr(0, colon)))] = trim(line.substr(colon + 1));
  return len;
}

bool start_body(Ctx* c) {
  c->started = true;
  long code = 0;
  c->api->easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &code);
  c->resp->status = code;
  c->to_sink = c->sink && code >= 200 && code < 300;
  if (c->sink && c->sink->on_start && !c->sink->on_start(*c->resp)) {
    c->aborted = true;
    return false;
  }
  return true;
}

size_t on_write(char* buf, size_t size, size_t n, void* user) {
  auto* c = static_cast<Ctx*>(user);
  size_t len = size * n;
  if (!c->started && !start_body(c)) return 0;
  if (c->to_sink) {
    if (c->sink->on_data && !c->sink->on_data(buf, len)) {
      c->aborted = true;
      return 0;
    }
    return len;
  }
  if (c->resp->body.size() + len > c->max_body) {
    c->too_big = true;
    return 0;
  }
  c->resp->body.append(buf, len);
  return len;
}

int on_progress(void* user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t, curl_off_t) {
  auto* c = static_cast<Ctx*>(user);
  if (c->to_sink && c->sink->on_progress)
    c->sink->on_progress(static_cast<uint64_t>(dlnow), static_cast<uint64_t>(dltotal));
  return 0;
}

enum class Kind { Get, Head, Stream };

HttpResponse perform(const HttpOptions& o, const std::string& url, Kind kind, bool follow, uint64_t range_start,
                     const StreamSink* sink, size_t max_body) {
  HttpResponse resp;
  resp.url = url;
  const CurlApi* api = curl_api(&resp.transport_error);
  if (!api) return resp;
  CURL* curl = api->easy_init();
  if (!curl) {
    resp.transport_error = "could not initialise libcurl";
    return resp;
  }
  Ctx ctx;
  ctx.resp = &resp;
  ctx.sink = sink;
  ctx.max_body = max_body;
  ctx.curl = curl;
  ctx.api = api;
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_slist* hdrs = nullptr;
  if (!o.token.empty()) hdrs = api->slist_append(hdrs, ("Authorization: Bearer " + o.token).c_str());
  std::string ua = std::string("nexttok/0.1.0; ") + api->version();
  api->easy_setopt(curl, CURLOPT_URL, url.c_str());
  api->easy_setopt(curl, CURLOPT_USERAGENT, ua.c_str());
  if (hdrs) api->easy_setopt(curl, CURLOPT_HTTPHEADER, hdrs);
  api->easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  api->easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  api->easy_setopt(curl, CURLOPT_FOLLOWLOCATION, follow ? 1L : 0L);
  api->easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
  api->easy_setopt(curl, CURLOPT_UNRESTRICTED_AUTH, 0L);  // no token to other hosts on redirect
  api->easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, o.connect_timeout_s);
  api->easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  api->easy_setopt(curl, CURLOPT_HEADERDATA, &ctx);
  api->easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_write);
  api->easy_setopt(curl, CURLOPT_WRITEDATA, &ctx);
  if (kind == Kind::Head) api->easy_setopt(curl, CURLOPT_NOBODY, 1L);
  if (kind == Kind::Stream) {
    api->easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    api->easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, o.stall_timeout_s);
    api->easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    api->easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    api->easy_setopt(curl, CURLOPT_XFERINFODATA, &ctx);
  } else {
    api->easy_setopt(curl, CURLOPT_TIMEOUT, o.request_timeout_s);
    // API JSON may come compressed; HEAD must not ask for it (Content-Length is the file's size).
    if (kind == Kind::Get) api->easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
  }
  std::string range;
  if (range_start > 0) {
    range = std::to_string(range_start) + "-";
    api->easy_setopt(curl, CURLOPT_RANGE, range.c_str());
  }
  CURLcode rc = api->easy_perform(curl);
  long code = 0;
  api->easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
  if (code) resp.status = code;
  char* eff = nullptr;
  if (api->easy_getinfo(curl, CURLINFO_EFFECTIVE_URL, &eff) == CURLE_OK && eff) resp.effective_url = eff;
  // A 2xx stream with an empty body never reached on_write: tell the sink now.
  if (rc == CURLE_OK && !ctx.started && kind == Kind::Stream) start_body(&ctx);
  if (rc != CURLE_OK && !ctx.aborted) {
    std::string detail = errbuf[0] ? errbuf : api->easy_strerror(rc);
    if (ctx.too_big) {
      resp.transport_error = "response from " + url + " is larger than expected";
    } else if (rc == CURLE_PARTIAL_FILE || rc == CURLE_RECV_ERROR || rc == CURLE_OPERATION_TIMEDOUT ||
               (rc == CURLE_GOT_NOTHING && ctx.started)) {
      resp.partial = true;
      resp.transport_error = "the transfer was cut: " + detail;
    } else if (rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_RESOLVE_PROXY) {
      resp.transport_error = "cannot resolve the host of " + url + " (" + detail + "); no network?";
    } else if (rc == CURLE_COULDNT_CONNECT) {
      resp.transport_error = "cannot connect to " + url + " (" + detail + ")";
    } else {
      resp.transport_error = "network error on " + url + ": " + detail;
    }
  } else if (ctx.aborted) {
    resp.transport_error = "aborted";
  }
  api->slist_free_all(hdrs);
  api->easy_cleanup(curl);
  return resp;
}

}  // namespace

std::string HttpResponse::header(const std::string& name) const {
  auto it = headers.find(to_lower(name));
  return it == headers.end() ? std::string() : it->second;
}

HttpClient::HttpClient(HttpOptions opts) : opts_(std::move(opts)) {}

HttpResponse HttpClient::get(const std::string& url, size_t max_body) const {
  return perform(opts_, url, Kind::Get, true, 0, nullptr, max_body);
}

HttpResponse HttpClient::head(const std::string& url, bool follow) const {
  return perform(opts_, url, Kind::Head, follow, 0, nullptr, 0);
}

HttpResponse HttpClient::stream(const std::string& url, uint64_t range_start, const StreamSink& sink) const {
  return perform(opts_, url, Kind::Stream, true, range_start, &sink, 64u << 10);
}

std::string url_encode_path(const std::string& s, bool keep_slash) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace nt::hub

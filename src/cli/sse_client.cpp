// cli/sse_client.cpp — see sse_client.h.
#include "cli/sse_client.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "core/strings.h"

namespace nt::cli {

std::vector<std::string> SseParser::feed(std::string_view bytes) {
  std::vector<std::string> out;
  pending_.append(bytes);
  size_t start = 0;
  for (size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string_view line(pending_.data() + start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    take_line(line, out);
  }
  pending_.erase(0, start);
  return out;
}

std::vector<std::string> SseParser::finish() {
  std::vector<std::string> out;
  if (!pending_.empty()) {
    std::string line = std::move(pending_);
    pending_.clear();
    if (!line.empty() && line.back() == '\r') line.pop_back();
    take_line(line, out);
  }
  take_line("", out);  // the missing blank line
  return out;
}

void SseParser::take_line(std::string_view line, std::vector<std::string>& out) {
  if (line.empty()) {  // the end of an event
    if (has_data_) out.push_back(std::move(data_));
    data_.clear();
    has_data_ = false;
    return;
  }
  if (line.front() == ':') return;  // a comment (keep-alive)
  const size_t colon = line.find(':');
  const std::string_view field = line.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view{} : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field != "data") return;  // event:, id:, retry: do not matter here
  if (has_data_) data_ += '\n';
  data_.append(value);
  has_data_ = true;
}

std::unique_ptr<httplib::Client> make_client(const std::string& scheme_host_port, double timeout_s,
                                             const std::string& api_key) {
  auto cli = std::make_unique<httplib::Client>(scheme_host_port);
  const auto timeout = std::chrono::duration<double>(timeout_s);
  cli->set_connection_timeout(std::chrono::duration<double>(std::min(timeout_s, 30.0)));
  cli->set_read_timeout(timeout);
  cli->set_write_timeout(timeout);
  // A connection per request: a server may close a kept-alive connection after a stream (llama-server
  // did, failing every second request), and connecting costs the same on every server.
  cli->set_keep_alive(false);
  cli->set_tcp_nodelay(true);
  if (!api_key.empty()) cli->set_default_headers({{"Authorization", "Bearer " + api_key}});
  return cli;
}

std::string describe_http_error(httplib::Error err) {
  switch (err) {
    case httplib::Error::Connection: return "could not connect";
    case httplib::Error::ConnectionTimeout: return "timed out connecting";
    case httplib::Error::Read: return "the connection broke while reading";
    case httplib::Error::Write: return "the connection broke while sending";
    case httplib::Error::SSLConnection: return "the TLS handshake failed";
    case httplib::Error::SSLLoadingCerts: return "the system's CA certificates could not be loaded";
    case httplib::Error::SSLServerVerification: return "the server's TLS certificate could not be verified";
    default: return httplib::to_string(err);
  }
}

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// The message of an OpenAI-style error object ({"error": {"message": ...}} or {"error": "..."}).
std::string error_message(const json& j) {
  const json& e = j.at("error");
  if (e.is_string()) return e.get<std::string>();
  if (e.is_object() && e.contains("message") && e["message"].is_string()) return e["message"].get<std::string>();
  return e.dump();
}

std::string string_field(const json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

int64_t int_field(const json& obj, const char* key, int64_t fallback) {
  if (!obj.is_object()) return fallback;
  auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

// Folds one event's data into the sample. Returns false when the stream should stop ([DONE] or an error).
bool take_event(const std::string& data, Clock::time_point t0, Clock::time_point now, Clock::time_point& last,
                bool& done, RequestSample& s, std::atomic<int64_t>* live_chunks) {
  if (data == "[DONE]") {
    done = true;
    return false;
  }
  const json j = json::parse(data, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    s.error = "the stream sent data that is not a JSON object: " + data.substr(0, 200);
    return false;
  }
  if (j.contains("error")) {
    s.error = "error in the stream: " + error_message(j);
    return false;
  }
  if (auto c = j.find("choices"); c != j.end() && c->is_array() && !c->empty()) {
    const json& choice = c->front();
    std::string text = string_field(choice, "text");
    if (auto d = choice.find("delta"); d != choice.end()) {
      text += string_field(*d, "content");
      text += string_field(*d, "reasoning_content");
    }
    if (!text.empty()) {
      if (s.content_chunks == 0) s.ttft_ms = ms_between(t0, now);
      else s.itl_ms.push_back(ms_between(last, now));
      last = now;
      ++s.content_chunks;
      s.text += text;
      if (live_chunks) live_chunks->fetch_add(1, std::memory_order_relaxed);
    }
    if (std::string fr = string_field(choice, "finish_reason"); !fr.empty()) s.finish_reason = fr;
  }
  if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
    s.output_tokens = int_field(*u, "completion_tokens", s.output_tokens);
    s.prompt_tokens = int_field(*u, "prompt_tokens", s.prompt_tokens);
    if (auto d = u->find("prompt_tokens_details"); d != u->end())
      s.cached_tokens = int_field(*d, "cached_tokens", s.cached_tokens);
  }
  return true;
}

}  // namespace

RequestSample stream_request(httplib::Client& cli, const std::string& path, const std::string& body,
                             double timeout_s, std::atomic<int64_t>* live_chunks) {
  RequestSample s;
  s.output_tokens = -1;
  SseParser parser;
  int status = 0;
  std::string error_body;  // the body of a non-200 answer
  bool done = false, timed_out = false, stop = false;
  const auto t0 = Clock::now();
  auto last = t0;

  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = body;
  req.set_header("Content-Type", "application/json");
  req.set_header("Accept", "text/event-stream");
  req.response_handler = [&](const httplib::Response& r) {
    status = r.status;
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    const auto now = Clock::now();
    if (ms_between(t0, now) > timeout_s * 1e3) {
      timed_out = true;
      return false;
    }
    if (status != 200) {
      if (error_body.size() < 4096) error_body.append(data, std::min<size_t>(n, 4096 - error_body.size()));
      return true;
    }
    if (stop) return true;  // drain what follows [DONE]
    for (const std::string& ev : parser.feed(std::string_view(data, n)))
      if (!stop && !take_event(ev, t0, now, last, done, s, live_chunks)) stop = true;
    return s.error.empty();
  };
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  const bool sent = cli.send(req, res, err);
  const auto end = Clock::now();
  s.e2e_ms = ms_between(t0, end);
  if (status == 200 && !stop && s.error.empty())
    for (const std::string& ev : parser.finish())
      if (!stop && !take_event(ev, t0, end, last, done, s, live_chunks)) stop = true;

  if (s.error.empty()) {
    if (timed_out || (!sent && s.e2e_ms >= timeout_s * 1e3 * 0.99)) {
      s.error = str_printf("timed out after %g s", timeout_s);
    } else if (status != 0 && status != 200) {
      const json j = json::parse(error_body, nullptr, false);
      std::string msg = j.is_object() && j.contains("error") ? error_message(j) : error_body.substr(0, 300);
      s.error = str_printf("HTTP %d", status) + (msg.empty() ? "" : ": " + msg);
    } else if (!sent) {
      s.error = (status == 0 ? "request failed: " : "the stream broke: ") + describe_http_error(err);
    } else if (!done && s.finish_reason.empty()) {
      s.error = "the stream ended without a finish_reason or data: [DONE]";
    }
  }
  if (s.output_tokens < 0) s.output_tokens = s.content_chunks;
  return s;
}

}  // namespace nt::cli

// server/server.cpp — the server's lifecycle (bind, load, engine thread, graceful stop), its route
// table, authentication, CORS and the error bodies of failures the HTTP library detects itself.
#include "server/server.h"

#include <chrono>
#include <csignal>
#include <cstring>

#include "core/strings.h"
#include "core/thread_latency.h"
#include "server/api_response.h"
#include "server/server_impl.h"
#include "server/socket_util.h"

namespace nt::server {

namespace {

using Clock = std::chrono::steady_clock;
using Handler = void (Server::Impl::*)(const httplib::Request&, httplib::Response&);

struct Route {
  RouteInfo info;
  Handler fn;
};

void chat(Server::Impl& s, const httplib::Request& q, httplib::Response& r) { s.handle_generate(ApiKind::Chat, q, r); }
void completion(Server::Impl& s, const httplib::Request& q, httplib::Response& r) {
  s.handle_generate(ApiKind::Completion, q, r);
}

// The one table of routes: registration and the auth test both walk it (llama-server's paths,
// with and without /v1 where it has both).
const std::vector<Route>& route_table() {
  static const std::vector<Route> t = {
      {{"GET", "/health", false}, &Server::Impl::handle_health},
      {{"GET", "/v1/health", false}, &Server::Impl::handle_health},
      {{"GET", "/v1/models", true}, &Server::Impl::handle_models},
      {{"GET", "/models", true}, &Server::Impl::handle_models},
      {{"GET", "/metrics", true}, &Server::Impl::handle_metrics},
      {{"POST", "/v1/chat/completions", true}, nullptr},
      {{"POST", "/chat/completions", true}, nullptr},
      {{"POST", "/v1/completions", true}, nullptr},
      {{"POST", "/completions", true}, nullptr},
      {{"POST", "/tokenize", true}, &Server::Impl::handle_tokenize},
      {{"POST", "/detokenize", true}, &Server::Impl::handle_detokenize},
      {{"POST", "/apply-template", true}, &Server::Impl::handle_apply_template},
  };
  return t;
}

// Compares without an early exit, so the time taken does not reveal how much of a key matched.
bool equal_constant_time(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

constexpr size_t kMaxHeaders = 100;

bool is_public(const std::string& method, const std::string& path) {
  if (method == "OPTIONS") return true;  // CORS preflights carry no credentials
  for (const Route& r : route_table())
    if (r.info.path == path && r.info.method == method) return !r.info.needs_key;
  return false;
}

ApiError library_error(int status, const Server::Impl& s, const httplib::Request& req) {
  switch (status) {
    case 404: return api_error(404, "no route " + req.method + " " + req.path, "not_found_error");
    case 405: return api_error(405, "method " + req.method + " not allowed on " + req.path, "invalid_request_error");
    case 408:
      return api_error(408, str_printf("the request was not received whole within %d s (--timeout)", s.opt.timeout_s),
                       "invalid_request_error", "", "request_timeout");
    case 413:
      return api_error(413, str_printf("request body over the limit of %zu bytes (--max-body)", s.opt.max_body),
              "invalid_request_error", "", "request_too_large");
    case 414: return api_error(414, "request URI too long", "invalid_request_error");
    case 431:
      return api_error(431, str_printf("request headers too large (at most %zu bytes)", kMaxRequestHead),
                       "invalid_request_error");
    default:
      if (status >= 500) return api_error(status, "internal server error", "server_error");
      return api_error(status, "malformed HTTP request", "invalid_request_error");
  }
}

}  // namespace

void send_json(httplib::Response& res, const nlohmann::json& j, int status) {
  res.status = status;
  res.set_content(dump_json(j), "application/json");
}

void send_error(httplib::Response& res, const ApiError& e) { send_json(res, error_body(e), e.status); }

bool refuse_if_unavailable(Server::Impl& s, httplib::Response& res) {
  if (s.draining) {
    send_error(res, api_error(503, "the server is shutting down", "unavailable_error"));
    return true;
  }
  if (!s.ready) {
    send_error(res, api_error(503, "the model is loading", "unavailable_error"));
    return true;
  }
  return false;
}

bool parse_body_object(const httplib::Request& req, httplib::Response& res, nlohmann::ordered_json& out) {
  out = nlohmann::ordered_json::parse(req.body, nullptr, false);
  if (out.is_discarded() || !out.is_object()) {
    send_error(res, api_error(400, "the body must be a JSON object (malformed JSON or invalid UTF-8)"));
    return false;
  }
  return true;
}

std::string Server::Impl::new_response_id(ApiKind kind) {
  const uint64_t n = next_id.fetch_add(1);
  const uint64_t t = uint64_t(std::chrono::system_clock::now().time_since_epoch().count());
  return str_printf("%s-%016llx%08llx", kind == ApiKind::Chat ? "chatcmpl" : "cmpl",
                static_cast<unsigned long long>(t ^ (n * 0x9E3779B97F4A7C15ull)), static_cast<unsigned long long>(n));
}

// The key check runs inside the handlers, after the library has read the request body: a request
// refused before its body is read would leave the body on a keep-alive connection, to be parsed
// as the next request.
bool Server::Impl::authorized(const httplib::Request& req, httplib::Response& res) {
  if (opt.api_key.empty() || is_public(req.method, req.path)) return true;
  if (equal_constant_time(req.get_header_value("Authorization"), "Bearer " + opt.api_key)) return true;
  res.set_header("WWW-Authenticate", "Bearer");
  send_error(res, api_error(401, req.has_header("Authorization") ? "invalid API key" : "missing API key (Authorization: Bearer KEY)",
                   "authentication_error", "", "invalid_api_key"));
  return false;
}

void Server::Impl::register_routes() {
  for (const Route& r : route_table()) {
    httplib::Server::Handler h;
    if (r.fn) {
      Handler fn = r.fn;
      h = [this, fn](const httplib::Request& q, httplib::Response& s) {
        if (authorized(q, s)) (this->*fn)(q, s);
      };
    } else if (r.info.path.find("chat") != std::string::npos) {
      h = [this](const httplib::Request& q, httplib::Response& s) {
        if (authorized(q, s)) chat(*this, q, s);
      };
    } else {
      h = [this](const httplib::Request& q, httplib::Response& s) {
        if (authorized(q, s)) completion(*this, q, s);
      };
    }
    if (r.info.method == "GET") http.Get(r.info.path, h);
    else http.Post(r.info.path, h);
  }
  // Any other route: 404 (401 first when a key is required), with its body read like any other.
  auto unknown = [this](const httplib::Request& q, httplib::Response& s) {
    if (authorized(q, s)) send_error(s, library_error(404, *this, q));
  };
  http.Get(R"(.*)", unknown);
  http.Post(R"(.*)", unknown);
  http.Put(R"(.*)", unknown);
  http.Patch(R"(.*)", unknown);
  http.Delete(R"(.*)", unknown);
  http.Options(R"(.*)", [this](const httplib::Request&, httplib::Response& res) {
    if (opt.cors_origin.empty()) {
      res.status = 404;
      return;
    }
    res.status = 204;
    res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
    res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
    res.set_header("Access-Control-Max-Age", "600");
  });
  // Framing the library would wait on or not bound: a body must come with a Content-Length (a
  // chunked body escapes --max-body, an unframed one is read until the client closes), and a
  // request carries at most kMaxHeaders headers. Refused before the body is read; the connection
  // closes with the answer (one request per connection).
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    // The library skips header lines it cannot parse; the raw head must be well formed.
    if (const ConnectionState* c = HttpServer::current()) {
      if (auto st = check_request_head(c->head); !st) {
        send_error(res, api_error(400, "malformed HTTP request: " + st.error().message));
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    if (req.headers.size() > kMaxHeaders) {
      send_error(res, api_error(431, str_printf("too many request headers (%zu; at most %zu)", req.headers.size(),
                                                kMaxHeaders)));
      return httplib::Server::HandlerResponse::Handled;
    }
    const bool body_method = req.method == "POST" || req.method == "PUT" || req.method == "PATCH";
    if (body_method && (req.has_header("Transfer-Encoding") || !req.has_header("Content-Length"))) {
      send_error(res, api_error(411, "send the request body with a Content-Length header (chunked or unframed "
                                     "bodies are not accepted)", "invalid_request_error", "", "length_required"));
      return httplib::Server::HandlerResponse::Handled;
    }
    // A declared length over the limit is refused before the body is read (the library would read
    // and discard all of it first: a worker held until --timeout for a length of 10^12).
    if (req.has_header("Content-Length")) {
      const std::string len = req.get_header_value("Content-Length");
      const bool digits = !len.empty() && len.find_first_not_of("0123456789") == std::string::npos;
      if (!digits) {
        send_error(res, api_error(400, "malformed HTTP request: Content-Length is not a number"));
        return httplib::Server::HandlerResponse::Handled;
      }
      if (len.size() > 18 || std::stoull(len) > opt.max_body) {
        send_error(res, library_error(413, *this, req));
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  http.set_post_routing_handler([this](const httplib::Request&, httplib::Response& res) {
    if (!opt.cors_origin.empty()) {
      res.set_header("Access-Control-Allow-Origin", opt.cors_origin);
      res.set_header("Vary", "Origin");
    }
  });
  // Failures the library answers itself (404, 413, malformed requests) get an OpenAI error body.
  http.set_error_handler(httplib::Server::HandlerWithResponse(
      [this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    // The library answers 400 to a read that failed: say why when it was the deadline or the cap.
    if (const ConnectionState* c = HttpServer::current(); c && res.status == 400) {
      if (c->deadline_passed) res.status = 408;
      else if (c->head_too_large) res.status = 431;
    }
    send_error(res, library_error(res.status, *this, req));
    return httplib::Server::HandlerResponse::Handled;
  }));
  http.set_logger([this](const httplib::Request&, const httplib::Response& res) { metrics.http_response(res.status); });
}

void Server::Impl::engine_loop() {
  Engine& eng = *model.engine;
  while (!engine_stop) {
    if (!eng.step()) eng.wait_for_work(std::chrono::milliseconds(50));
  }
}

void Server::Impl::cancel_all() {
  std::lock_guard<std::mutex> lk(active_mu);
  if (!ready) return;
  for (const auto& [id, unused] : active) model.engine->cancel(id);
}

namespace {

// The library's worker pool, with each worker asking for a short scheduling slice before its first
// task: a scrape or a token write then preempts the compute threads at once instead of waiting
// for their slice to end (core/thread_latency.h).
class LatencyTaskQueue : public httplib::TaskQueue {
 public:
  LatencyTaskQueue(size_t n, int slice_us) : pool_(n), slice_us_(slice_us) {}
  void enqueue(std::function<void()> fn) override {
    pool_.enqueue([fn = std::move(fn), slice_us = slice_us_] {
      thread_local const bool once = slice_us > 0 && request_short_slice(uint32_t(slice_us));
      (void)once;
      fn();
    });
  }
  void shutdown() override { pool_.shutdown(); }

 private:
  httplib::ThreadPool pool_;
  int slice_us_;
};

}  // namespace

Server::Server(ServerOptions opt) : impl_(std::make_unique<Impl>(std::move(opt))) {}

Server::~Server() {
  if (impl_->listen_thread.joinable() || impl_->load_thread.joinable()) {
    request_stop();
    (void)wait();
  }
}

Status Server::start(ModelLoader loader) {
  Impl& s = *impl_;
  std::signal(SIGPIPE, SIG_IGN);  // a client gone mid-write is an error return, not a signal
  const ServerOptions& o = s.opt;
  const int n_threads = o.http_threads > 0 ? o.http_threads : o.n_parallel + o.max_queue + 4;
  s.http.new_task_queue = [n_threads, slice = o.http_slice_us] { return new LatencyTaskQueue(size_t(n_threads), slice); };
  s.http.set_payload_max_length(o.max_body);
  s.http.set_read_timeout(o.timeout_s, 0);
  s.http.set_write_timeout(o.timeout_s, 0);
  // One request per connection: the library gives each connection a worker thread for as long as
  // it is open, so idle kept-alive connections would hold the -np + --max-queue workers (four idle
  // clients stalled every other one); a malformed request's connection is closed with its 400.
  s.http.set_keep_alive_max_count(1);
  s.http.set_tcp_nodelay(true);  // one small write per token: no Nagle delay between them
  // SO_REUSEADDR, not the library's default SO_REUSEPORT: a second server on a port in use must
  // fail to bind, not share the port (the kernel would split new connections between the two).
  s.http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  s.register_routes();
  if (o.port == 0) {
    s.bound_port = s.http.bind_to_any_port(o.host);
    if (s.bound_port <= 0) return make_error("cannot listen on %s (any port): %s", o.host.c_str(), std::strerror(errno));
  } else {
    if (!s.http.bind_to_port(o.host, o.port))
      return make_error("cannot listen on %s:%d: %s", o.host.c_str(), o.port, std::strerror(errno));
    s.bound_port = o.port;
  }
  raise_listen_backlog(s.bound_port, 1024);
  s.listen_thread = std::thread([&s] {
    if (s.opt.http_slice_us > 0) request_short_slice(uint32_t(s.opt.http_slice_us));  // accepting is short work
    s.http.listen_after_bind();
  });
  s.load_thread = std::thread([&s, loader = std::move(loader)] {
    auto m = loader();
    if (!m) {
      s.load_error = m.error();
      s.load_failed = true;
      return;
    }
    s.model = std::move(*m);
    s.ready = true;
    s.engine_loop();
  });
  return {};
}

int Server::port() const { return impl_->bound_port; }
bool Server::ready() const { return impl_->ready; }
void Server::request_stop() { impl_->stop_requested = true; }
const std::vector<RouteInfo>& Server::routes() {
  static const std::vector<RouteInfo> infos = [] {
    std::vector<RouteInfo> v;
    for (const Route& r : route_table()) v.push_back(r.info);
    return v;
  }();
  return infos;
}

Status Server::wait(const std::atomic<bool>* external_stop) {
  Impl& s = *impl_;
  auto sleep_ms = [](int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); };
  while (!s.stop_requested && !s.load_failed && !(external_stop && *external_stop)) sleep_ms(20);
  s.draining = true;
  const auto deadline = Clock::now() + std::chrono::seconds(s.opt.shutdown_timeout_s);
  while (s.inflight > 0 && Clock::now() < deadline) sleep_ms(20);
  s.cancel_all();
  const auto hard = Clock::now() + std::chrono::seconds(5);
  while (s.inflight > 0 && Clock::now() < hard) sleep_ms(20);
  // The library's stop() does nothing until its listen loop has started: a stop requested right
  // after start() would leave that loop, and the join below, running forever.
  const auto listening = Clock::now() + std::chrono::seconds(5);
  while (!s.http.is_running() && Clock::now() < listening) sleep_ms(1);
  s.http.stop();
  shutdown_connections(s.bound_port);
  if (s.listen_thread.joinable()) s.listen_thread.join();
  s.engine_stop = true;
  if (s.load_thread.joinable()) s.load_thread.join();
  if (s.load_failed) return s.load_error;
  return {};
}

}  // namespace nt::server

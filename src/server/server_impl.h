// server/server_impl.h — the server's state shared by its files (server.cpp: lifecycle, routes,
// auth; handlers_generate.cpp: completions; handlers_info.cpp: the other routes). Internal.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <httplib.h>
#include "server/api_request.h"
#include "server/http_server.h"
#include "server/metrics.h"
#include "server/request_channel.h"
#include "server/server.h"

namespace nt::server {

struct Server::Impl {
  explicit Impl(ServerOptions o) : opt(std::move(o)) {}

  ServerOptions opt;
  HttpServer http;                         // one request per connection, read within --timeout
  std::thread listen_thread, load_thread, engine_thread;
  int bound_port = 0;

  std::atomic<bool> ready{false};          // the model is loaded and the engine thread runs
  std::atomic<bool> draining{false};       // stopping: new requests get 503
  std::atomic<bool> engine_stop{false};    // the engine thread exits
  std::atomic<bool> stop_requested{false};
  std::atomic<bool> load_failed{false};
  Error load_error;                        // set before load_failed
  ServedModel model;                       // valid once ready

  ServerMetrics metrics;
  std::atomic<int64_t> inflight{0};        // requests submitted and not yet answered
  std::atomic<uint64_t> next_id{1};
  std::mutex active_mu;
  std::unordered_map<RequestId, int> active;  // engine ids of requests in flight (cancelled at shutdown)

  void register_routes();
  // False (401 answered) when a key is required and the request lacks it.
  bool authorized(const httplib::Request& req, httplib::Response& res);
  void engine_loop();
  void cancel_all();
  std::string new_response_id(ApiKind kind);

  // handlers_generate.cpp
  void handle_generate(ApiKind kind, const httplib::Request& req, httplib::Response& res);
  // handlers_info.cpp
  void handle_health(const httplib::Request& req, httplib::Response& res);
  void handle_models(const httplib::Request& req, httplib::Response& res);
  void handle_metrics(const httplib::Request& req, httplib::Response& res);
  void handle_tokenize(const httplib::Request& req, httplib::Response& res);
  void handle_detokenize(const httplib::Request& req, httplib::Response& res);
  void handle_apply_template(const httplib::Request& req, httplib::Response& res);
};

// Writes an OpenAI error object with its status.
void send_error(httplib::Response& res, const ApiError& e);
void send_json(httplib::Response& res, const nlohmann::json& j, int status = 200);
// 503 while loading or draining (true: answered).
bool refuse_if_unavailable(Server::Impl& s, httplib::Response& res);
// A request body as a JSON object, or a 400 (false: answered).
bool parse_body_object(const httplib::Request& req, httplib::Response& res, nlohmann::ordered_json& out);

}  // namespace nt::server

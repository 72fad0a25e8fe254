// server/server.h — `nexttok serve`: the OpenAI-compatible HTTP API over one Engine. HTTP worker
// threads parse requests, submit them to the engine and stream its events back; one engine thread
// runs the steps. /health answers 503 while the model loads; /metrics reads the engine's counter
// snapshot and never waits for a step.
// Must not know: CLI flags (cmd_serve.cpp maps them to ServerOptions), how the model is loaded.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>
#include "core/result.h"
#include "engine/engine.h"
#include "server/chat_renderer.h"
#include "tokenizer/tokenizer.h"

namespace nt::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                 // 0: any free port (see Server::port)
  std::string api_key;             // non-empty: every route but /health needs "Authorization: Bearer KEY"
  std::string cors_origin;         // non-empty: Access-Control-Allow-Origin for it (and preflights)
  size_t max_body = 8u << 20;      // bytes; larger bodies get 413
  int max_queue = 64;              // requests waiting beyond the running ones; more get 429
  int timeout_s = 600;             // a request must arrive whole within this (else 408), and a write
                                   // making no progress this long closes the connection
  int shutdown_timeout_s = 10;     // on stop: running requests get this long to finish
  bool log_json = false;           // one JSON object per request log line
  bool log_quiet = false;          // no per-request lines (tests)
  int n_parallel = 16;             // the engine's -np (sizes the HTTP thread pool)
  int http_threads = 0;            // 0: n_parallel + max_queue + 4
  int http_slice_us = 100;         // scheduling slice the HTTP threads ask for (Linux 6.12+); 0: the kernel's
};

// What the server serves, made by the loader on a background thread.
struct ServedModel {
  std::string name;                         // the id in /v1/models and responses
  std::unique_ptr<Tokenizer> tokenizer;     // declared first: the engine uses it until destroyed
  std::unique_ptr<Engine> engine;
  std::unique_ptr<ChatRenderer> renderer;
  int64_t created = 0;                      // unix seconds (the model file's mtime)
};
using ModelLoader = std::function<Result<ServedModel>()>;

// One route of the API; the auth test walks this table.
struct RouteInfo {
  std::string method;
  std::string path;
  bool needs_key;
};

class Server {
 public:
  explicit Server(ServerOptions opt);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and starts serving (/health 503 at once), then loads the model on a background thread.
  // Errors: the address cannot be bound. A failed load makes wait() return it.
  Status start(ModelLoader loader);
  int port() const;
  bool ready() const;
  // Blocks until request_stop() (or *external_stop turns true), then shuts down gracefully: stops
  // taking requests (503), lets running ones finish for shutdown_timeout_s, cancels the rest.
  // Returns the load error if the model failed to load.
  Status wait(const std::atomic<bool>* external_stop = nullptr);
  void request_stop();

  static const std::vector<RouteInfo>& routes();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace nt::server

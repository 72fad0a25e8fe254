// cli/cmd_serve.cpp — `nexttok serve`: maps the flags (llama-server's names where it has them) to
// ServerOptions, resolves the model, then runs the server until SIGINT/SIGTERM. The server itself
// (routes, engine thread, shutdown) is src/server.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <sys/stat.h>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/model_setup.h"
#include "core/strings.h"
#include "server/server.h"

namespace nt::cli {

namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

struct ServeArgs {
  ModelArgs model;
  EngineArgs engine;
  server::ServerOptions server;
  std::string alias;
  std::string chat_template_file;
  std::string chat_format;
  std::string log_format = "text";
  int64_t max_body = 8 << 20;
  bool metrics = false;
};

bool is_loopback(const std::string& host) { return host == "127.0.0.1" || host == "localhost" || host == "::1"; }

}  // namespace

int cmd_serve(int argc, char** argv) {
  ServeArgs a;
  a.engine.n_parallel = 16;
  if (const char* k = std::getenv("NEXTTOK_API_KEY")) a.server.api_key = k;
  CLI::App app{"Serve the model over an OpenAI-compatible HTTP API (chat and text completions, streamed or\n"
               "not), with llama.cpp's /tokenize, /detokenize, /apply-template, a /health probe and\n"
               "Prometheus /metrics (vLLM's names, for inference gateways). Requests from all clients are\n"
               "batched together by one engine; -c is the KV pool they share and -np how many run at once.",
               "nexttok serve"};
  add_model_options(app, a.model);
  add_engine_options(app, a.engine);
  app.add_option("--host", a.server.host, "address to listen on (default 127.0.0.1: this machine only)");
  app.add_option("--port", a.server.port, "TCP port; 0 = any free port (default 8080)");
  app.add_option("--api-key", a.server.api_key,
                 "require 'Authorization: Bearer KEY' on every route but /health (default: $NEXTTOK_API_KEY, "
                 "else none)");
  app.add_option("-a,--alias", a.alias, "model name in /v1/models and responses (default: the file's name)");
  app.add_option("--chat-template-file", a.chat_template_file, "Jinja chat template to use instead of the model's");
  app.add_option("--chat-format", a.chat_format, "built-in chat format instead: chatml, llama2, llama3, mistral, plain");
  app.add_option("--timeout", a.server.timeout_s,
                 "seconds a request may take to arrive whole (else 408), and a write may make no progress before "
                 "the connection is closed and its request cancelled (default 600)");
  app.add_option("--max-body", a.max_body, "largest request body in bytes; larger get 413 (default 8388608)");
  app.add_option("--max-queue", a.server.max_queue,
                 "requests that may wait beyond the -np running ones; more get 429 (default 64)");
  app.add_option("--cors", a.server.cors_origin, "allow browser requests from this origin (default: CORS off)");
  app.add_option("--shutdown-timeout", a.server.shutdown_timeout_s,
                 "on SIGINT/SIGTERM, seconds running requests get to finish before they are cancelled (default 10)");
  app.add_option("--http-slice", a.server.http_slice_us,
                 "microseconds of scheduling slice the HTTP threads ask for on Linux 6.12+, so that /metrics, "
                 "/health and token writes preempt busy compute threads at once (100-100000; 0: the kernel's "
                 "default; default 100)");
  app.add_option("--log-format", a.log_format, "per-request log lines on stderr: text or json (default text)");
  app.add_flag("--metrics", a.metrics, "accepted for llama-server compatibility: /metrics is always on");
  auto check = [&]() -> Status {
    NT_TRY(check_engine_args(a.engine));
    NT_TRY(check_range("--port", a.server.port, 0, 65535));
    NT_TRY(check_range("--timeout", a.server.timeout_s, 1, 86400));
    NT_TRY(check_range("--max-body", a.max_body, 1024, int64_t(1) << 30));
    NT_TRY(check_range("--max-queue", a.server.max_queue, 0, 100000));
    NT_TRY(check_range("--shutdown-timeout", a.server.shutdown_timeout_s, 0, 86400));
    if (a.server.http_slice_us != 0) NT_TRY(check_range("--http-slice", a.server.http_slice_us, 100, 100000));
    if (a.log_format != "text" && a.log_format != "json")
      return make_error("--log-format: expected text or json, got '%s'", a.log_format.c_str());
    if (a.server.host.empty()) return make_error("--host: must not be empty");
    if (!a.chat_format.empty() && !a.chat_template_file.empty())
      return make_error("--chat-format and --chat-template-file: give one or the other");
    return {};
  };
  if (int rc = parse_args(app, argc, argv, check); rc >= 0) return rc;
  a.server.max_body = size_t(a.max_body);
  a.server.log_json = a.log_format == "json";
  a.server.n_parallel = a.engine.n_parallel;
  a.engine.default_ctx_seqs = a.engine.n_parallel;  // -c 0: a full training context for each of -np

  auto path = resolve_model(a.model);
  if (!path) return fail("serve", path.error().message);
  if (!is_loopback(a.server.host) && a.server.api_key.empty())
    std::fprintf(stderr, "serve: warning: listening on %s without --api-key: anyone who can reach it can use it\n",
                 a.server.host.c_str());

  const std::string model_path = *path;
  std::string name = a.alias;
  if (name.empty()) name = model_path.substr(model_path.find_last_of('/') + 1);
  server::ModelLoader loader = [a, model_path, name]() -> Result<server::ServedModel> {
    ModelArgs m;
    m.model = model_path;
    auto lm = load_model(m, a.engine, false);
    if (!lm) return lm.error();
    std::string warning;
    auto r = server::ChatRenderer::create({a.chat_format, a.chat_template_file}, *lm->tokenizer,
                                          lm->engine->model().gguf(), &warning);
    if (!r) return r.error();
    lm->engine->model().gguf().release_metadata_pages();  // the template read again: drop it too
    if (!warning.empty()) std::fprintf(stderr, "serve: warning: %s\n", warning.c_str());
    server::ServedModel sm;
    sm.name = name;
    sm.tokenizer = std::move(lm->tokenizer);
    sm.engine = std::move(lm->engine);
    sm.renderer = std::make_unique<server::ChatRenderer>(std::move(*r));
    struct stat st{};
    if (stat(model_path.c_str(), &st) == 0) sm.created = int64_t(st.st_mtime);
    std::fprintf(stderr, "serve: ready: chat %s, %d requests at once, %lld tokens of KV shared, %lld per request\n",
                 sm.renderer->name().c_str(), sm.engine->n_parallel(), static_cast<long long>(sm.engine->n_ctx()),
                 static_cast<long long>(sm.engine->context_limit()));
    return sm;
  };

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  server::Server srv(a.server);
  if (Status st = srv.start(loader); !st) return fail("serve", st.error().message);
  std::fprintf(stderr, "serve: listening on http://%s:%d (model %s loading)\n", a.server.host.c_str(), srv.port(),
               name.c_str());
  Status st = srv.wait(&g_stop);
  if (!st) return fail("serve", st.error().message);
  std::fprintf(stderr, "serve: stopped\n");
  return kExitOk;
}

}  // namespace nt::cli

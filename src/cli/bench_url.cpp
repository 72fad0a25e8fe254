// cli/bench_url.cpp — see bench_url.h. The server is reached first with a plain TCP connect (so an
// unreachable URL fails with the system's reason before any level runs); the model name comes from
// GET /v1/models, exact-length prompts from POST /tokenize when the server has it.
#include "cli/bench_url.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <utility>

#include "cli/bench_levels.h"
#include "cli/bench_monitor.h"
#include "cli/bench_prompts.h"
#include "cli/bench_url_report.h"
#include "cli/report_html.h"
#include "cli/common.h"
#include "core/strings.h"

namespace nt::cli {

namespace {

using nlohmann::json;
constexpr int kSeedWords = 3000;  // the seed text: a few thousand tokens to draw prompt windows from

// Connects to host:port and closes: Ok, or the reason the connection failed ("connection refused").
Status tcp_probe(const std::string& host, int port, double timeout_s) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res); rc != 0)
    return make_error("cannot resolve host '%s': %s", host.c_str(), ::gai_strerror(rc));
  int err = ETIMEDOUT;
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) { err = errno; continue; }
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) err = 0;
    else if (errno != EINPROGRESS) err = errno;
    else {
      pollfd p{fd, POLLOUT, 0};
      const int n = ::poll(&p, 1, static_cast<int>(std::min(timeout_s, 30.0) * 1000));
      socklen_t len = sizeof(err);
      if (n <= 0) err = ETIMEDOUT;
      else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    }
    ::close(fd);
    if (err == 0) break;
  }
  ::freeaddrinfo(res);
  if (err == 0) return {};
  std::string reason = std::strerror(err);
  if (!reason.empty()) reason[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(reason[0])));
  return Error{reason};
}

// A short JSON request; the parsed body of a 200 answer, else the reason.
Result<json> json_call(httplib::Client& cli, const std::string& method, const std::string& path,
                       const json& body = nullptr) {
  httplib::Result r = method == "GET" ? cli.Get(path) : cli.Post(path, body.dump(), "application/json");
  if (!r) return make_error("%s %s: %s", method.c_str(), path.c_str(), describe_http_error(r.error()).c_str());
  if (r->status != 200) return make_error("%s %s: HTTP %d", method.c_str(), path.c_str(), r->status);
  json j = json::parse(r->body, nullptr, false);
  if (j.is_discarded()) return make_error("%s %s: the answer is not JSON", method.c_str(), path.c_str());
  return j;
}

// The first model id of a GET /v1/models answer.
Result<std::string> first_model(const Result<json>& j, const std::string& base) {
  if (!j) return j.error();
  const json& answer = j.value();
  const json data = answer.is_object() && answer.contains("data") ? answer["data"] : json();
  if (!data.is_array() || data.empty() || !data[0].is_object() || !data[0].contains("id") || !data[0]["id"].is_string())
    return Error{"GET " + base + "/v1/models: no model id in the answer"};
  return data[0]["id"].get<std::string>();
}

// The token ids of text by the server's tokenizer: llama.cpp / nexttok's POST /tokenize
// {"content"} -> {"tokens"}, else vLLM's {"model", "prompt"} form; the first form's failure otherwise.
Result<std::vector<int64_t>> server_tokenize(httplib::Client& cli, const std::string& base, const std::string& model,
                                     const std::string& text) {
  const json forms[] = {{{"content", text}},
                        {{"model", model}, {"prompt", text}, {"add_special_tokens", false}}};
  Error first = Error{"POST " + base + "/tokenize: no token ids in the answer"};
  for (const json& body : forms) {
    auto j = json_call(cli, "POST", base + "/tokenize", body);
    if (!j && &body == &forms[0]) first = j.error();
    if (!j || !j->is_object() || !j->contains("tokens") || !(*j)["tokens"].is_array()) continue;
    std::vector<int64_t> ids;
    for (const json& t : (*j)["tokens"]) {
      if (t.is_number_integer()) ids.push_back(t.get<int64_t>());
      else if (t.is_object() && t.contains("id") && t["id"].is_number_integer()) ids.push_back(t["id"].get<int64_t>());
      else { ids.clear(); break; }
    }
    if (!ids.empty()) return ids;
  }
  return first;
}

// The context limit of one request from a GET /v1/models answer (the entry of `model`, else the
// first): nexttok's meta.context_limit, vLLM's max_model_len, llama-server's meta.n_ctx_train; 0 if none.
std::pair<int64_t, std::string> context_limit_of(const Result<json>& answer, const std::string& model) {
  if (!answer) return {0, ""};
  const json& j = answer.value();
  if (!j.is_object() || !j.contains("data") || !j["data"].is_array() || j["data"].empty()) return {0, ""};
  const json* entry = &j["data"][0];
  for (const json& d : j["data"])
    if (d.is_object() && d.contains("id") && d["id"] == model) entry = &d;
  if (!entry->is_object()) return {0, ""};
  const json meta = entry->contains("meta") && (*entry)["meta"].is_object() ? (*entry)["meta"] : json::object();
  if (meta.contains("context_limit") && meta["context_limit"].is_number_integer())
    return {meta["context_limit"].get<int64_t>(), "/v1/models meta.context_limit"};
  if (entry->contains("max_model_len") && (*entry)["max_model_len"].is_number_integer())
    return {(*entry)["max_model_len"].get<int64_t>(), "/v1/models max_model_len"};
  if (meta.contains("n_ctx_train") && meta["n_ctx_train"].is_number_integer())
    return {meta["n_ctx_train"].get<int64_t>(), "/v1/models meta.n_ctx_train"};
  return {0, ""};
}

// Where each level's seed of arrival times comes from: --prompt-seed and the level's place.
uint64_t arrival_seed(uint64_t prompt_seed, size_t level) {
  return (prompt_seed ^ 0xA5A5A5A5DEADBEEFull) * 0x9E3779B97F4A7C15ull + level;
}

}  // namespace

const char* scenario_name(UrlScenario s) {
  switch (s) {
    case UrlScenario::Concurrency: return "concurrency";
    case UrlScenario::PromptLength: return "prompt-length";
    case UrlScenario::Rate: return "rate";
    case UrlScenario::MultiTurn: return "multi-turn";
  }
  return "?";
}

std::string ServerUrl::scheme_host_port() const {
  const bool v6 = host.find(':') != std::string::npos;
  return scheme + "://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string ServerUrl::display() const { return scheme_host_port() + base_path; }

Result<ServerUrl> parse_server_url(const std::string& url) {
  ServerUrl u;
  const size_t sep = url.find("://");
  u.scheme = sep == std::string::npos ? "" : to_lower(url.substr(0, sep));
  if (u.scheme != "http" && u.scheme != "https")
    return make_error("--url must start with http:// or https:// (got '%s')", url.c_str());
  std::string rest = url.substr(sep + 3);
  if (rest.find_first_of("?#") != std::string::npos)
    return make_error("--url is the server's base address, without a query (got '%s')", url.c_str());
  const size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  u.base_path = slash == std::string::npos ? "" : rest.substr(slash);
  std::string port;
  if (!authority.empty() && authority[0] == '[') {  // [IPv6]:port
    const size_t close = authority.find(']');
    if (close == std::string::npos) return make_error("--url: unbalanced '[' in '%s'", url.c_str());
    u.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return make_error("--url: bad address '%s'", url.c_str());
      port = authority.substr(close + 2);
    }
  } else {
    const size_t colon = authority.find(':');
    u.host = authority.substr(0, colon);
    if (colon != std::string::npos) port = authority.substr(colon + 1);
  }
  if (u.host.empty()) return make_error("--url has no host (got '%s')", url.c_str());
  u.port = u.scheme == "https" ? 443 : 80;
  if (!port.empty()) {
    char* end = nullptr;
    const long p = std::strtol(port.c_str(), &end, 10);
    if (*end != '\0' || p < 1 || p > 65535) return make_error("--url: bad port '%s' in '%s'", port.c_str(), url.c_str());
    u.port = static_cast<int>(p);
  }
  while (!u.base_path.empty() && u.base_path.back() == '/') u.base_path.pop_back();
  if (u.base_path.size() >= 3 && u.base_path.compare(u.base_path.size() - 3, 3, "/v1") == 0)
    u.base_path.resize(u.base_path.size() - 3);
  while (!u.base_path.empty() && u.base_path.back() == '/') u.base_path.pop_back();
  return u;
}

Status check_url_bench_args(const UrlBenchArgs& a) {
  auto u = parse_server_url(a.url);
  if (!u) return u.error();
#ifndef CPPHTTPLIB_OPENSSL_SUPPORT
  if (u->scheme == "https") return Error{"--url: https is not supported by this build (its HTTP client has no TLS)"};
#endif
  if (a.endpoint != "completions" && a.endpoint != "chat")
    return make_error("--endpoint must be completions or chat (got '%s')", a.endpoint.c_str());
  if (a.scenario == UrlScenario::MultiTurn && a.endpoint != "chat")
    return Error{"--scenario multi-turn sends conversations: it needs --endpoint chat"};
  if (a.scenario == UrlScenario::PromptLength && (a.concurrency.size() != 1 || a.gens.size() != 1))
    return Error{"--scenario prompt-length sweeps -p at one -n and one --concurrency"};
  for (double r : a.rates)
    if (!(r > 0 && r <= 100000)) return make_error("--rate must be between 0 and 100000 requests/s (got %g)", r);
  NT_TRY(check_range("--turns", a.turns, 1, 1000));
  if (!(a.slo_ttft_ms >= 0 && a.slo_ttft_ms <= 1e9) || !(a.slo_itl_ms >= 0 && a.slo_itl_ms <= 1e9))
    return Error{"--slo-ttft and --slo-itl must be a number of milliseconds above 0 (0: no such SLO)"};
  if (!(a.duration_s > 0 && a.duration_s <= 86400))
    return make_error("--duration must be between 0 and 86400 seconds (got %g)", a.duration_s);
  for (int c : a.concurrency) NT_TRY(check_range("--concurrency", c, 1, 1024));
  for (int p : a.prompts) NT_TRY(check_range("-p (with --url)", p, 1, 1 << 20));
  for (int n : a.gens) NT_TRY(check_range("-n (with --url)", n, 1, 1 << 20));
  if (a.requests != 0) NT_TRY(check_range("--requests", a.requests, 1, 1000000));
  if (!(a.timeout_s > 0 && a.timeout_s <= 86400))
    return make_error("--timeout must be between 0 and 86400 seconds (got %g)", a.timeout_s);
  return {};
}

Result<UrlBenchRun> measure_url_bench(const UrlBenchArgs& a, const std::string& progress_prefix,
                                      std::string* stopped_error) {
  std::string api_key = a.api_key;
  if (api_key.empty())
    if (const char* k = std::getenv("OPENAI_API_KEY"); k && *k) api_key = k;
  auto url = parse_server_url(a.url);
  if (!url) return url.error();
  if (Status st = tcp_probe(url->host, url->port, a.timeout_s); !st)
    return Error{"cannot connect to " + url->display() + ": " + st.error().message};

  UrlTarget t;
  t.url = *url;
  t.api_key = api_key;
  t.progress_prefix = progress_prefix;
  t.path = url->base_path + (a.endpoint == "chat" ? "/v1/chat/completions" : "/v1/completions");
  t.progress = stderr_is_tty();
  // The set-up calls have their own connection: a server that answers an error without reading the
  // request body (a rejected key) could leave it behind for the next request on the same connection.
  auto cli = make_client(url->scheme_host_port(), a.timeout_s, api_key);
  // GET /v1/models: a server that cannot be spoken to (TLS) stops here; an HTTP error does not.
  if (httplib::Result r = cli->Get(url->base_path + "/v1/models"); !r)
    return Error{"cannot connect to " + url->display() + ": " + describe_http_error(r.error())};
  const Result<json> models = json_call(*cli, "GET", url->base_path + "/v1/models");
  t.model = a.model;
  if (t.model.empty()) {
    auto m = first_model(models, url->base_path);
    if (m) t.model = *m;
    else std::fprintf(stderr, "bench: %s; using the model name \"default\"\n", m.error().message.c_str());
    if (!m) t.model = "default";
  }
  std::vector<int64_t> pool;
  if (a.endpoint == "completions") {
    auto ids = server_tokenize(*cli, url->base_path, t.model, seed_text(a.prompt_seed, kSeedWords));
    if (ids) pool = std::move(*ids);
    else std::fprintf(stderr, "bench: no token ids from the server (%s); prompt lengths are estimated (text of about "
                      "p tokens)\n", ids.error().message.c_str());
  }
  PromptMaker prompts(a.prompt_seed, std::move(pool));

  UrlBenchRun run;
  run.url = url->display();
  run.model = t.model;
  run.endpoint = a.endpoint;
  run.args = &a;
  std::tie(run.context_limit, run.context_limit_source) = context_limit_of(models, t.model);
  // KV-cache use is sampled during the levels when the server's /metrics has it now.
  if (httplib::Result r = cli->Get(url->base_path + "/metrics"); r && r->status == 200 && parse_kv_usage(r->body)) {
    run.kv_reported = true;
    t.metrics = MetricsSource{url->scheme_host_port(), url->base_path + "/metrics", api_key,
                              std::min(a.timeout_s, 10.0)};
  }
  std::string& stopped = *stopped_error;  // the first error of the first level stopped early
  stopped.clear();
  auto finished = [&] {
    const UrlBenchLevel& l = run.levels.back();
    if (!l.warmup.ok()) std::fprintf(stderr, "bench: the warm-up request failed: %s\n", l.warmup.error.c_str());
    std::fprintf(stderr, "bench: %s%s\n", progress_prefix.c_str(), level_progress_line(l).c_str());
    if (l.stopped_early && stopped.empty()) stopped = summarize_level(l).first_error;
  };
  for (int p : a.prompts)
    for (int n : a.gens) {
      if (a.scenario == UrlScenario::PromptLength && run.context_limit > 0 && int64_t(p) + n > run.context_limit) {
        SkippedLevel s{p, n, str_printf("p + n = %lld tokens is beyond the server's context limit of %lld (%s)",
                                        (long long)p + n, (long long)run.context_limit,
                                        run.context_limit_source.c_str())};
        std::fprintf(stderr, "bench: p=%d skipped: %s\n", p, s.reason.c_str());
        run.skipped.push_back(std::move(s));
        continue;
      }
      if (a.scenario == UrlScenario::Rate) {
        for (double r : a.rates) {
          run.levels.push_back(run_rate_level(a, t, prompts, r, arrival_seed(a.prompt_seed, run.levels.size()), p, n));
          finished();
        }
        continue;
      }
      for (int c : a.concurrency) {
        run.levels.push_back(a.scenario == UrlScenario::MultiTurn ? run_multi_turn_level(a, t, prompts, c, p, n)
                                                                  : run_closed_level(a, t, prompts, c, p, n));
        finished();
      }
    }
  return run;
}

int run_url_bench(const UrlBenchArgs& a) {
  std::string stopped;
  Result<UrlBenchRun> measured = measure_url_bench(a, "", &stopped);
  if (!measured) return fail("bench", measured.error().message);
  const UrlBenchRun& run = *measured;
  if (a.json) std::puts(url_bench_json(run).dump().c_str());
  else print_url_bench_table(run);
  std::fflush(stdout);
  if (!a.report.empty()) {
    if (Status st = write_bench_report(url_bench_json(run), a.report); !st) return fail("bench", st.error().message);
    std::fprintf(stderr, "bench: report written to %s\n", a.report.c_str());
  }
  if (!stopped.empty())
    return fail("bench", "more than half of the requests of a level failed; first error: " + stopped);
  return kExitOk;
}

}  // namespace nt::cli

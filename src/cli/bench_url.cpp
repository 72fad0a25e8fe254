// cli/bench_url.cpp — see bench_url.h. The server is reached first with a plain TCP connect (so an
// unreachable URL fails with the system's reason before any level runs); the model name comes from
// GET /v1/models, exact-length prompts from POST /tokenize when the server has it.
#include "cli/bench_url.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "cli/bench_prompts.h"
#include "cli/bench_url_report.h"
#include "cli/common.h"
#include "core/strings.h"

namespace nt::cli {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

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

std::string request_body(const UrlBenchArgs& a, const std::string& model, const json& prompt, int n_gen) {
  json body = {{"model", model},
               {"max_tokens", n_gen},
               {"stream", true},
               {"stream_options", {{"include_usage", true}}},
               {"ignore_eos", true},
               {"temperature", 0}};
  if (a.endpoint == "chat") body["messages"] = json::array({{{"role", "user"}, {"content", prompt}}});
  else body["prompt"] = prompt;
  return body.dump();
}

struct Target {
  ServerUrl url;
  std::string api_key, model, path;
};

// One level: a warm-up request, then `requests` requests from `concurrency` closed-loop clients.
UrlBenchLevel run_level(const UrlBenchArgs& a, const Target& t, PromptMaker& prompts, int concurrency, int n_prompt,
                        int n_gen) {
  UrlBenchLevel level;
  level.concurrency = concurrency;
  level.n_prompt = n_prompt;
  level.n_gen = n_gen;
  level.requests = a.requests > 0 ? a.requests : 4 * concurrency;
  level.prompt_estimated = !prompts.exact() || a.endpoint == "chat";
  std::vector<std::string> bodies;  // made before timing starts; [0] is the warm-up's
  for (int i = 0; i <= level.requests; ++i) bodies.push_back(request_body(a, t.model, prompts.next(n_prompt), n_gen));
  level.warmup = stream_request(*make_client(t.url.scheme_host_port(), a.timeout_s, t.api_key), t.path, bodies[0],
                                a.timeout_s);

  std::vector<RequestSample> samples(static_cast<size_t>(level.requests));
  std::atomic<int> next{0}, errors{0};
  std::atomic<bool> stop{false};
  std::mutex end_mutex;
  Clock::time_point last_end{};
  const auto start = Clock::now();
  auto client_loop = [&] {
    auto cli = make_client(t.url.scheme_host_port(), a.timeout_s, t.api_key);
    for (int i; !stop && (i = next++) < level.requests;) {
      samples[size_t(i)] = stream_request(*cli, t.path, bodies[size_t(i) + 1], a.timeout_s);
      if (!samples[size_t(i)].ok() && 2 * ++errors > level.requests) stop = true;
      std::lock_guard<std::mutex> lock(end_mutex);
      last_end = std::max(last_end, Clock::now());
    }
  };
  std::vector<std::thread> threads;
  for (int c = 0; c < std::min(concurrency, level.requests); ++c) threads.emplace_back(client_loop);
  for (auto& th : threads) th.join();
  level.wall_s = std::chrono::duration<double>(last_end - start).count();
  level.stopped_early = stop;
  samples.resize(static_cast<size_t>(std::min(next.load(), level.requests)));
  level.samples = std::move(samples);
  return level;
}

}  // namespace

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
  for (int c : a.concurrency) NT_TRY(check_range("--concurrency", c, 1, 1024));
  for (int p : a.prompts) NT_TRY(check_range("-p (with --url)", p, 1, 1 << 20));
  for (int n : a.gens) NT_TRY(check_range("-n (with --url)", n, 1, 1 << 20));
  if (a.requests != 0) NT_TRY(check_range("--requests", a.requests, 1, 1000000));
  if (!(a.timeout_s > 0 && a.timeout_s <= 86400))
    return make_error("--timeout must be between 0 and 86400 seconds (got %g)", a.timeout_s);
  return {};
}

int run_url_bench(const UrlBenchArgs& args) {
  UrlBenchArgs a = args;
  if (a.api_key.empty())
    if (const char* k = std::getenv("OPENAI_API_KEY"); k && *k) a.api_key = k;
  auto url = parse_server_url(a.url);
  if (!url) return fail("bench", url.error().message);
  if (Status st = tcp_probe(url->host, url->port, a.timeout_s); !st)
    return fail("bench", "cannot connect to " + url->display() + ": " + st.error().message);

  Target t;
  t.url = *url;
  t.api_key = a.api_key;
  t.path = url->base_path + (a.endpoint == "chat" ? "/v1/chat/completions" : "/v1/completions");
  // The set-up calls have their own connection: a server that answers an error without reading the
  // request body (a rejected key) could leave it behind for the next request on the same connection.
  auto cli = make_client(url->scheme_host_port(), a.timeout_s, a.api_key);
  // GET /v1/models: a server that cannot be spoken to (TLS) stops here; an HTTP error does not.
  if (httplib::Result r = cli->Get(url->base_path + "/v1/models"); !r)
    return fail("bench", "cannot connect to " + url->display() + ": " + describe_http_error(r.error()));
  t.model = a.model;
  if (t.model.empty()) {
    auto m = first_model(json_call(*cli, "GET", url->base_path + "/v1/models"), url->base_path);
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
  std::string stopped;  // the first error of the first level stopped early
  for (int p : a.prompts)
    for (int n : a.gens)
      for (int c : a.concurrency) {
        run.levels.push_back(run_level(a, t, prompts, c, p, n));
        const UrlBenchLevel& l = run.levels.back();
        if (!l.warmup.ok()) std::fprintf(stderr, "bench: the warm-up request failed: %s\n", l.warmup.error.c_str());
        std::fprintf(stderr, "bench: %s\n", level_progress_line(l).c_str());
        if (l.stopped_early && stopped.empty()) stopped = summarize_level(l).first_error;
      }
  if (a.json) std::puts(url_bench_json(run).dump().c_str());
  else print_url_bench_table(run);
  std::fflush(stdout);
  if (!stopped.empty())
    return fail("bench", "more than half of the requests of a level failed; first error: " + stopped);
  return kExitOk;
}

}  // namespace nt::cli

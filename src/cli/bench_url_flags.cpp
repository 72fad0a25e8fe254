// cli/bench_url_flags.cpp — see bench_url_flags.h.
#include "cli/bench_url_flags.h"

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <type_traits>

#include "core/strings.h"

namespace nt::cli {

namespace {

constexpr const char* kUrlOnly[] = {"--api-key", "--concurrency", "--requests", "--endpoint", "--prompt-seed",
                                    "--timeout", "--scenario",    "--rate",     "--turns",    "--slo-ttft",
                                    "--slo-itl", "--duration"};

template <typename T>
Result<std::vector<T>> parse_number_list(const std::string& s, const char* what) {
  std::vector<T> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    const bool integral = std::is_integral_v<T>;
    if (item.empty() || *end != '\0' || !(v >= 0 && v <= (1 << 24)) || (integral && v != double(int64_t(v))))
      return Error{str_printf("%s: '%s' is not a valid value in list '%s'", what, item.c_str(), s.c_str())};
    out.push_back(static_cast<T>(v));
  }
  if (out.empty()) return Error{str_printf("%s: the list is empty", what)};
  return out;
}

}  // namespace

void add_url_bench_flags(CLI::App& app, UrlBenchFlags& f) {
  UrlBenchArgs& u = f.args;
  app.add_option("--url", u.url, "benchmark an OpenAI-compatible server at this base URL (http://host:port) "
                 "instead: streamed requests per level of a --scenario; -p (default 256 here), -n, -m, -o apply");
  app.add_option("--scenario", f.scenario,
                 "with --url: concurrency (default: closed loop at each --concurrency), prompt-length (TTFT at each "
                 "-p, default 128,512,2048; values beyond the server's context are skipped), rate (open loop: "
                 "Poisson arrivals at each --rate; goodput) or multi-turn (--turns per conversation, chat)");
  app.add_option("--api-key", u.api_key, "with --url: sent as 'Authorization: Bearer' (default: $OPENAI_API_KEY)");
  app.add_option("--concurrency", f.concurrency, "with --url: concurrent clients (multi-turn: conversations) per "
                 "level, e.g. 1,4,16 (default 1)");
  app.add_option("--requests", u.requests, "with --url: requests per level after a warm-up (default 4 x concurrency; "
                 "rate: 10 x rate, at least 10; multi-turn: conversations, default concurrency)");
  app.add_option("--rate", f.rates, "with --scenario rate: requests per second offered per level, e.g. 1,2,4 "
                 "(default 1,2,4); arrival times drawn from --prompt-seed");
  app.add_option("--turns", u.turns, "with --scenario multi-turn: turns per conversation (default 4); each turn adds a "
                 "user message of about -p tokens after the reply");
  app.add_option("--slo-ttft", u.slo_ttft_ms, "with --url: a request is good when its time to first token is at most "
                 "this many ms (goodput)");
  app.add_option("--slo-itl", u.slo_itl_ms, "with --url: a good request also has the mean of its inter-token gaps (not "
                 "each gap) at most this many ms");
  app.add_option("--duration", u.duration_s, "with --url: seconds per level after which no request starts (default "
                 "600)");
  app.add_option("--endpoint", u.endpoint, "with --url: completions (default; exact prompt lengths when the server "
                 "has /tokenize) or chat (multi-turn's default)");
  app.add_option("--prompt-seed", u.prompt_seed, "with --url: seed of the generated prompts (default 1)");
  app.add_option("--timeout", u.timeout_s, "with --url: seconds per request (default 600)");
  add_compare_flags(app, f.compare);
}

Status finish_url_bench_flags(const CLI::App& app, UrlBenchFlags& f, const std::vector<std::string>& models,
                              const std::string& output, const std::string& prompts, const std::string& gens) {
  UrlBenchArgs& u = f.args;
  if (f.scenario == "concurrency") u.scenario = UrlScenario::Concurrency;
  else if (f.scenario == "prompt-length") u.scenario = UrlScenario::PromptLength;
  else if (f.scenario == "rate") u.scenario = UrlScenario::Rate;
  else if (f.scenario == "multi-turn") u.scenario = UrlScenario::MultiTurn;
  else
    return make_error("--scenario must be concurrency, prompt-length, rate or multi-turn (got '%s')",
                      f.scenario.c_str());
  const bool rate = u.scenario == UrlScenario::Rate, multi = u.scenario == UrlScenario::MultiTurn;
  if (app.count("--rate") > 0 && !rate) return Error{"--rate needs --scenario rate"};
  if (app.count("--concurrency") > 0 && rate)
    return Error{"--scenario rate is an open loop: it takes --rate, not --concurrency"};
  if (app.count("--turns") > 0 && !multi) return Error{"--turns needs --scenario multi-turn"};
  if (multi && app.count("--endpoint") == 0) u.endpoint = "chat";
  if (models.size() > 1) return Error{"with --url, -m is one model name"};
  if (output != "md" && output != "table" && output != "json")
    return make_error("-o must be table or json (got '%s')", output.c_str());
  auto c = parse_number_list<int>(f.concurrency, "--concurrency");
  if (!c) return c.error();
  const char* default_p = u.scenario == UrlScenario::PromptLength ? "128,512,2048" : "256";
  auto p = parse_number_list<int>(app.count("--n-prompt") > 0 ? prompts : default_p, "-p");
  if (!p) return p.error();
  auto n = parse_number_list<int>(gens, "-n");
  if (!n) return n.error();
  auto r = parse_number_list<double>(f.rates, "--rate");
  if (!r) return r.error();
  u.concurrency = *c, u.prompts = *p, u.gens = *n, u.rates = *r;
  u.model = models.empty() ? "" : models[0];
  u.json = output == "json";
  NT_TRY(finish_compare_flags(app, f.compare));
  return check_url_bench_args(u);
}

Status refuse_url_only_flags(const CLI::App& app) {
  for (const char* flag : kUrlOnly)
    if (app.count(flag) > 0) return make_error("%s needs --url", flag);
  return refuse_compare_flags(app);
}

}  // namespace nt::cli

// cli/bench_compare.cpp — see bench_compare.h. A started server is stopped (and waited for) before
// the next one starts, whether its round succeeded or not; a server that exits by itself during a
// round ends the comparison with an error, since what was measured is no longer that server.
#include "cli/bench_compare.h"

#include <chrono>
#include <cstdio>
#include <memory>

#include "cli/bench_compare_report.h"
#include "cli/bench_server_process.h"
#include "cli/common.h"
#include "cli/report_html.h"
#include "core/strings.h"

namespace nt::cli {

namespace {

constexpr const char* kCompareFlags[] = {"--compare",   "--compare-api-key", "--compare-model", "--server-cmd",
                                         "--compare-cmd", "--rounds",         "--server-wait"};

// Starts side's server when it has a command and waits for its /health; nullptr when it has none.
Result<std::unique_ptr<ServerProcess>> start_server(const CompareSide& side, const CompareArgs& c) {
  if (side.command.empty()) return std::unique_ptr<ServerProcess>();
  auto url = parse_server_url(side.url);
  if (!url) return url.error();
  std::fprintf(stderr, "bench: starting server %s: %s\n", side.name.c_str(), side.command.c_str());
  const auto t0 = std::chrono::steady_clock::now();
  auto srv = ServerProcess::start(side.name, side.command);
  if (!srv) return srv.error();
  if (Status st = (*srv)->wait_healthy(*url, side.args.api_key, c.server_wait_s); !st) {
    (*srv)->stop();
    return st.error();
  }
  std::fprintf(stderr, "bench: server %s answers GET %s/health after %.1f s\n", side.name.c_str(),
               url->display().c_str(), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return std::move(*srv);
}

// After a measurement: an error when the server exited by itself; otherwise it is stopped.
Status stop_server(ServerProcess* srv, const std::string& name, const std::string& during) {
  if (!srv) return {};
  if (auto how = srv->exited())
    return make_error("server %s exited by itself (%s) during %s; its output ends with:\n%s", name.c_str(),
                      how->c_str(), during.c_str(), srv->output_tail().c_str());
  const std::string how = srv->stop();
  std::fprintf(stderr, "bench: server %s stopped (%s)\n", name.c_str(), how.c_str());
  return {};
}

// --server-cmd without a second server: the ordinary run between its start and stop.
int run_one_started(const UrlBenchArgs& a, const CompareArgs& c) {
  CompareSide side{"A", a.url, c.server_cmd, a, {}};
  auto srv = start_server(side, c);
  if (!srv) return fail("bench", srv.error().message);
  const int rc = run_url_bench(a);
  if (Status st = stop_server(srv->get(), "A", "the run"); !st) return fail("bench", st.error().message);
  return rc;
}

}  // namespace

void add_compare_flags(CLI::App& app, CompareArgs& c) {
  app.add_option("--compare", c.url, "with --url: a second server B, measured with the same scenario and settings in "
                 "rounds A, B, A, B (never both at once); prints the ratios A/B per round and their median");
  app.add_option("--compare-api-key", c.api_key, "with --compare: B's API key (default: $OPENAI_API_KEY; --api-key "
                 "is A's only)");
  app.add_option("--compare-model", c.model, "with --compare: the model name to request from B (default: the first "
                 "of B's GET /v1/models)");
  app.add_option("--server-cmd", c.server_cmd, "with --url: a shell command that starts server A (in its own process "
                 "group); the bench waits for --url's GET /health to answer 200, measures, then stops it (SIGTERM, "
                 "SIGKILL after 10 s). With a second server it needs --compare-cmd");
  app.add_option("--compare-cmd", c.compare_cmd, "with --server-cmd: a shell command that starts server B, listening "
                 "at --compare (default: at --url, as A is stopped first); started and stopped each round like A");
  app.add_option("--rounds", c.rounds, "with --compare: rounds per server, 1 to 100 (default 2: A, B, A, B)");
  app.add_option("--server-wait", c.server_wait_s, "with --server-cmd: seconds a started server has to answer 200 at "
                 "GET /health (default 300)");
}

Status finish_compare_flags(const CLI::App& app, const CompareArgs& c) {
  const bool comparing = c.comparing();
  for (const char* f : {"--compare-api-key", "--compare-model", "--rounds"})
    if (app.count(f) > 0 && !comparing) return make_error("%s needs --compare (or --compare-cmd)", f);
  if (app.count("--server-wait") > 0 && c.server_cmd.empty()) return Error{"--server-wait needs --server-cmd"};
  if (app.count("--server-cmd") > 0 && c.server_cmd.empty()) return Error{"--server-cmd: the command is empty"};
  if (app.count("--compare-cmd") > 0 && c.compare_cmd.empty()) return Error{"--compare-cmd: the command is empty"};
  if (!c.compare_cmd.empty() && c.server_cmd.empty())
    return Error{"--compare-cmd needs --server-cmd: A must be started and stopped too, or both would run at once"};
  if (comparing && !c.server_cmd.empty() && c.compare_cmd.empty())
    return Error{"--compare with --server-cmd needs --compare-cmd: B must be started and stopped too, or it would "
                 "run while A is measured"};
  if (app.count("--compare") > 0) {
    if (c.url.rfind("http://", 0) != 0 && c.url.rfind("https://", 0) != 0)
      return make_error("--compare must start with http:// or https:// (got '%s')", c.url.c_str());
    if (auto u = parse_server_url(c.url); !u) return make_error("--compare: %s", u.error().message.c_str());
  }
  NT_TRY(check_range("--rounds", c.rounds, 1, 100));
  if (!(c.server_wait_s > 0 && c.server_wait_s <= 86400))
    return make_error("--server-wait must be between 0 and 86400 seconds (got %g)", c.server_wait_s);
  return {};
}

Status refuse_compare_flags(const CLI::App& app) {
  for (const char* flag : kCompareFlags)
    if (app.count(flag) > 0) return make_error("%s needs --url", flag);
  return {};
}

int run_bench_url(const UrlBenchArgs& a, const CompareArgs& c) {
  if (!c.comparing()) return c.server_cmd.empty() ? run_url_bench(a) : run_one_started(a, c);
  CompareSide sides[2] = {{"A", a.url, c.server_cmd, a, {}},
                          {"B", c.url.empty() ? a.url : c.url, c.compare_cmd, a, {}}};
  sides[1].args.url = sides[1].url;
  sides[1].args.api_key = c.api_key;
  sides[1].args.model = c.model;
  std::string stopped;  // the first level stopped early: "server B, round 1: <its first error>"
  for (int round = 1; round <= c.rounds; ++round)
    for (CompareSide& side : sides) {
      const std::string during = str_printf("round %d/%d", round, c.rounds);
      std::fprintf(stderr, "bench: %s, server %s\n", during.c_str(), side.label().c_str());
      auto srv = start_server(side, c);
      if (!srv) return fail("bench", srv.error().message);
      std::string level_stopped;
      Result<UrlBenchRun> run = measure_url_bench(side.args, during + " " + side.name + ": ", &level_stopped);
      const Status ended = stop_server(srv->get(), side.name, during);
      if (!run) return fail("bench", "server " + side.name + ", " + during + ": " + run.error().message);
      if (!ended) return fail("bench", ended.error().message);
      if (!level_stopped.empty() && stopped.empty())
        stopped = "server " + side.name + ", " + during + ": " + level_stopped;
      side.runs.push_back(std::move(*run));
    }
  if (a.json) std::puts(compare_json(sides[0], sides[1]).dump().c_str());
  else print_compare_table(sides[0], sides[1]);
  std::fflush(stdout);
  if (!a.report.empty()) {
    if (Status st = write_bench_report(compare_json(sides[0], sides[1]), a.report); !st)
      return fail("bench", st.error().message);
    std::fprintf(stderr, "bench: report written to %s\n", a.report.c_str());
  }
  if (!stopped.empty())
    return fail("bench", "more than half of the requests of a level failed; first error: " + stopped);
  return kExitOk;
}

}  // namespace nt::cli

// cli/bench_compare.h — two servers side by side in `bench --url`: --compare URL2 (and/or
// --server-cmd / --compare-cmd, which start each server, wait for its /health, measure, and stop it)
// runs the same scenario in rounds A, B, A, B — never both at once — and reports per round the
// ratios A/B of output tokens/s, TTFT p50/p99, ITL p50 and goodput per level, and their median: the
// only fair comparison on a shared machine. --server-cmd alone starts and stops one server around an
// ordinary run. The flags are added to the bench command's parser here.
// Must not know: how levels run (bench_levels.h), the offline bench.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/bench_url.h"
#include "core/result.h"

namespace nt::cli {

struct CompareArgs {
  std::string url;              // --compare: B's base URL; "" with --compare-cmd: --url's (one runs at a time)
  std::string api_key, model;   // B's: default $OPENAI_API_KEY (never A's key) and the first of B's /v1/models
  std::string server_cmd, compare_cmd;  // shell commands that start A and B
  int rounds = 2;               // per server
  double server_wait_s = 300;   // for a started server's GET /health to answer 200
  bool comparing() const { return !url.empty() || !compare_cmd.empty(); }
};

void add_compare_flags(CLI::App& app, CompareArgs& c);
// With --url: the compare flags' combinations and values (usage errors); B's URL is checked.
Status finish_compare_flags(const CLI::App& app, const CompareArgs& c);
// Without --url: the first compare flag given, as a usage error.
Status refuse_compare_flags(const CLI::App& app);

// `bench --url`: a comparison, one started server, or the plain run (run_url_bench). Returns the exit code.
int run_bench_url(const UrlBenchArgs& a, const CompareArgs& c);

}  // namespace nt::cli

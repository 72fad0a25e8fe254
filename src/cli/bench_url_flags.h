// cli/bench_url_flags.h — the flags of `nexttok bench --url` (the load generator) inside the bench
// command's parser: added to it, checked and turned into UrlBenchArgs, or refused without --url.
// Must not know: how the benchmark runs.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/bench_compare.h"
#include "cli/bench_url.h"
#include "core/result.h"

namespace nt::cli {

struct UrlBenchFlags {
  UrlBenchArgs args;
  CompareArgs compare;  // --compare, --server-cmd, ...
  std::string scenario = "concurrency", concurrency = "1", rates = "1,2,4";
};

void add_url_bench_flags(CLI::App& app, UrlBenchFlags& f);

// With --url: fills f.args from its flags and the bench flags it shares (-m, -o, -p, -n), which the
// caller passes as given; a usage error otherwise.
Status finish_url_bench_flags(const CLI::App& app, UrlBenchFlags& f, const std::vector<std::string>& models,
                              const std::string& output, const std::string& prompts, const std::string& gens);

// Without --url: the first flag given that only --url takes, as a usage error.
Status refuse_url_only_flags(const CLI::App& app);

}  // namespace nt::cli

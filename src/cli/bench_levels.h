// cli/bench_levels.h — how one level of `bench --url` runs: a closed loop (the concurrency and
// prompt-length sweeps: C clients, each keeping one request in flight), an open loop (the rate
// sweep: requests sent at Poisson arrival times, however many are in flight), or growing
// conversations (multi-turn: each turn's request carries the earlier turns and replies). Every level
// sends one warm-up request first, is bounded by its request count and --duration, stops when more
// than half of its requests fail, and is watched by a LevelMonitor.
// Must not know: output formats, flags.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/bench_monitor.h"
#include "cli/bench_prompts.h"
#include "cli/bench_url.h"
#include "cli/bench_url_report.h"

namespace nt::cli {

// The server as the levels reach it.
struct UrlTarget {
  ServerUrl url;
  std::string api_key, model;
  std::string path;       // the generation route (/v1/completions or /v1/chat/completions)
  MetricsSource metrics;  // empty path: the server does not report KV-cache use
  bool progress = false;  // draw the live progress line (stderr is a terminal)
  std::string progress_prefix;  // before the level's name in the progress line ("round 1/2 A: ")
};

// The streamed request's JSON body: prompt (token ids or text) or, for chat, one user message.
std::string request_body(const UrlBenchArgs& a, const std::string& model, const nlohmann::json& prompt, int n_gen);

// n arrival times in seconds from the level's start for Poisson arrivals at `rate` per second: sums
// of exponential gaps drawn from seed (the first arrival is one gap after the start).
std::vector<double> poisson_arrivals(uint64_t seed, double rate, int n);

UrlBenchLevel run_closed_level(const UrlBenchArgs& a, const UrlTarget& t, PromptMaker& prompts, int concurrency,
                               int n_prompt, int n_gen);
// seed: the arrival times' (a level's own, so that each rate draws different ones).
UrlBenchLevel run_rate_level(const UrlBenchArgs& a, const UrlTarget& t, PromptMaker& prompts, double rate,
                             uint64_t seed, int n_prompt, int n_gen);
// --requests conversations (default: concurrency) of a.turns turns, `concurrency` at once; each
// turn's user message is text of about n_prompt tokens.
UrlBenchLevel run_multi_turn_level(const UrlBenchArgs& a, const UrlTarget& t, PromptMaker& prompts, int concurrency,
                                   int n_prompt, int n_gen);

}  // namespace nt::cli

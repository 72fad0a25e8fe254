// cli/bench_scenarios_report.h — how the prompt-length, rate and multi-turn scenarios of
// `bench --url` are shown: their terminal tables (TTFT against prompt length; offered rate,
// throughput and goodput, the highest rate within the SLOs; per turn cached and prefilled tokens)
// and their additions to the JSON document.
// Must not know: HTTP, how the requests were run.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "cli/bench_url_report.h"

namespace nt::cli {

// The part of a goodput that counts: at least this share of the requests sent met the SLOs.
constexpr double kGoodputShare = 0.9;

// One turn of a multi-turn level: means over the turn's requests that succeeded (NaN where the
// server did not report the count).
struct TurnSummary {
  int turn = 0, ok = 0, errors = 0;
  double prompt_tokens = 0, cached_tokens = 0, prefilled_tokens = 0;  // prefilled = prompt - cached
  LatencySummary ttft_ms;
};
std::vector<TurnSummary> summarize_turns(const UrlBenchLevel& level);

// The highest rate whose level had at least kGoodputShare of its requests within the SLOs; 0: none.
double highest_rate_meeting_slo(const UrlBenchRun& run);

// The table of a scenario other than the concurrency sweep, with its notes.
void print_scenario_table(const UrlBenchRun& run);
// "good: succeeded with TTFT <= 500 ms and mean ITL <= 50 ms" under a table.
void print_slo_note(const Slo& slo);
// A level's scenario fields (rate, offered_req_s; per turn sums) and the run's (highest rate within
// the SLOs, the context limit and the skipped prompt lengths).
void add_scenario_level_json(const UrlBenchLevel& level, const UrlBenchSummary& s, nlohmann::json& out);
void add_scenario_run_json(const UrlBenchRun& run, nlohmann::json& out);

}  // namespace nt::cli

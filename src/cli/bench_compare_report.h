// cli/bench_compare_report.h — what a comparison of two servers (bench_compare.h) shows: per level
// and round the ratios A/B (A's value over B's) of output tokens/s, TTFT p50/p99, ITL p50 and
// goodput, their median over the rounds; the terminal table and the JSON document, whose
// servers[i].result has exactly the shape of a single run's document.
// Must not know: HTTP, server processes, flags.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/bench_url_report.h"

namespace nt::cli {

// One server of a comparison and its runs, one per round in the order they ran.
struct CompareSide {
  std::string name;     // "A" or "B"
  std::string url;      // its base URL
  std::string command;  // --server-cmd / --compare-cmd; "" when the bench did not start it
  UrlBenchArgs args;    // the run's settings (its runs point here: do not move a side after a run)
  std::vector<UrlBenchRun> runs;
  std::string label() const { return name + ": " + (command.empty() ? url : command); }
};

// A measured quantity whose ratio A/B is reported.
struct CompareMetric {
  const char* key;     // in the JSON document: "output_tokens_per_s"
  const char* header;  // in the table: "tok/s"
  double (*value)(const UrlBenchSummary& s);
};
// output tokens/s, TTFT p50, TTFT p99, ITL p50, and goodput when `goodput` (an SLO or the rate scenario).
std::vector<CompareMetric> compare_metrics(bool goodput);

// One level (matched between the servers by concurrency or rate, p, n and turns) over the rounds.
struct LevelComparison {
  std::string label;  // level_label()
  const UrlBenchLevel* level = nullptr;  // A's first round's (its settings)
  // [metric][round]: A's and B's summaries' values, and A's over B's (NaN where one is missing or 0)
  std::vector<std::vector<double>> a, b, ratio;
  std::vector<double> median_ratio;  // [metric], over the rounds with a ratio
};
std::vector<LevelComparison> compare_levels(const CompareSide& a, const CompareSide& b,
                                            const std::vector<CompareMetric>& metrics);

// One run of the side's shape: per level, the round whose output tokens/s is the median of the
// side's rounds (the lower middle one for an even count: the slower of two); rounds_used gets each
// level's round, from 1.
UrlBenchRun median_run(const CompareSide& side, std::vector<int>* rounds_used);

// The median of the finite values; NaN when there is none.
double median_of(std::vector<double> v);

void print_compare_table(const CompareSide& a, const CompareSide& b);
// {"compare": {...}, "servers": [{"label", "url", "command", "median_rounds", "result"}, ...],
//  "rounds": [{"round", "server", "result"}, ...] in the order run, "ratios": [...]}.
nlohmann::json compare_json(const CompareSide& a, const CompareSide& b);

}  // namespace nt::cli

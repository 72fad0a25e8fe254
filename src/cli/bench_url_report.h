// cli/bench_url_report.h — what `bench --url` measured per level and how it is shown: the summary
// (counts, output tokens/s, latency percentiles), the terminal table, the JSON document with every
// raw sample, and the progress line.
// Must not know: HTTP, how the requests were run (bench_url.cpp).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/bench_url.h"
#include "cli/latency_stats.h"
#include "cli/sse_client.h"

namespace nt::cli {

struct UrlBenchLevel {
  int concurrency = 0, n_prompt = 0, n_gen = 0, requests = 0;
  bool prompt_estimated = false;  // text of about n_prompt tokens, not exact token ids
  bool stopped_early = false;     // more than half of the requests failed
  double wall_s = 0;              // first send to last finish (the warm-up excluded)
  RequestSample warmup;
  std::vector<RequestSample> samples;  // the requests started, in start order
};

struct UrlBenchSummary {
  int ok = 0, errors = 0;
  int64_t output_tokens = 0;  // of the requests that succeeded
  double output_tokens_per_s = 0;
  LatencySummary ttft_ms, itl_ms, e2e_ms;  // of the requests that succeeded
  std::string first_error;
};
UrlBenchSummary summarize_level(const UrlBenchLevel& level);

// What the run was: shown in the header line and the JSON document.
struct UrlBenchRun {
  std::string url, model, endpoint;
  const UrlBenchArgs* args = nullptr;
  std::vector<UrlBenchLevel> levels;
};

// "c=4 p=256 n=128: 16 ok, 0 errors, 812.3 output tok/s, 10.21 s" (for stderr as each level ends).
std::string level_progress_line(const UrlBenchLevel& level);
// The header line, one aligned row per level, then the levels' errors and notes.
void print_url_bench_table(const UrlBenchRun& run);
// One document: the config, and per level the summary and every raw sample.
nlohmann::json url_bench_json(const UrlBenchRun& run);

}  // namespace nt::cli

// cli/bench_url_report.h — what `bench --url` measured per level and how it is shown: the summary
// (counts, output tokens/s, latency percentiles), the terminal table, the JSON document with every
// raw sample, and the progress line.
// Must not know: HTTP, how the requests were run (bench_url.cpp).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli/bench_url.h"
#include "cli/latency_stats.h"
#include "cli/sse_client.h"

namespace nt::cli {

// The server's KV-cache use (vllm:kv_cache_usage_perc at GET /metrics, 0..1) sampled during a level.
struct KvUsage {
  bool reported = false;  // the server's /metrics has the gauge
  std::vector<std::pair<double, double>> samples;  // (seconds since the level started, use 0..1)
};

struct UrlBenchLevel {
  int concurrency = 0, n_prompt = 0, n_gen = 0;
  int requests = 0;               // planned (multi-turn: conversations x turns)
  double rate = 0;                // rate scenario: requests/s offered (Poisson arrivals); 0 otherwise
  double arrival_span_s = 0;      // rate scenario: the level's start to its last arrival
  int conversations = 0, turns = 0;  // multi-turn
  bool prompt_estimated = false;  // text of about n_prompt tokens, not exact token ids
  bool stopped_early = false;     // more than half of the requests failed
  bool duration_reached = false;  // --duration ended the level before every request was sent
  double wall_s = 0;              // first send to last finish (the warm-up excluded); rate: from the start
  RequestSample warmup;
  std::vector<RequestSample> samples;  // the requests started, in start order (multi-turn: by conversation)
  std::vector<int> turn_of;       // multi-turn: each sample's turn, from 1
  KvUsage kv;
};

// Service-level objectives: a request is good when it succeeded, its TTFT <= ttft_ms and the mean of
// its inter-token gaps <= itl_ms (an SLO of 0 is not set).
struct Slo {
  double ttft_ms = 0, itl_ms = 0;
  bool any() const { return ttft_ms > 0 || itl_ms > 0; }
};
double mean_itl_ms(const RequestSample& r);  // NaN without gaps
bool meets_slo(const RequestSample& r, const Slo& slo);

struct UrlBenchSummary {
  int ok = 0, errors = 0;
  int good = 0;               // succeeded within the SLOs (all that succeeded when none is set)
  int64_t output_tokens = 0;  // of the requests that succeeded
  double output_tokens_per_s = 0;
  double throughput_req_s = 0;  // ok / wall time
  double goodput_req_s = 0;     // good / wall time
  double slo_attainment = 0;    // good / requests sent (0 when none was sent)
  double offered_req_s = 0;     // rate scenario: requests sent / arrival span
  LatencySummary ttft_ms, itl_ms, e2e_ms;  // of the requests that succeeded
  std::string first_error;
};
UrlBenchSummary summarize_level(const UrlBenchLevel& level, const Slo& slo = {});

// A -p value the prompt-length sweep did not run.
struct SkippedLevel {
  int n_prompt = 0, n_gen = 0;
  std::string reason;
};

// What the run was: shown in the header line and the JSON document.
struct UrlBenchRun {
  std::string url, model, endpoint;
  const UrlBenchArgs* args = nullptr;
  int64_t context_limit = 0;         // tokens of one request, from /v1/models (0: not reported)
  std::string context_limit_source;  // the field it came from
  bool kv_reported = false;          // the first GET /metrics had the KV-use gauge
  std::vector<SkippedLevel> skipped;
  std::vector<UrlBenchLevel> levels;
  Slo slo() const;
};

// The level's name in progress lines: "c=4 p=256 n=128", "rate=2 p=256 n=128", "c=2 turns=4 p=~256 n=128".
std::string level_label(const UrlBenchLevel& level);
// "c=4 p=256 n=128: 16 ok, 0 errors, 812.3 output tok/s, 10.21 s" (for stderr as each level ends).
std::string level_progress_line(const UrlBenchLevel& level);
// Under each table: the KV-cache use per level (min/mean/max), or that the server does not report it.
void print_kv_notes(const UrlBenchRun& run);
nlohmann::json kv_json(const KvUsage& kv);
nlohmann::json latency_json(const LatencySummary& s);
std::string ms_cell(double ms);
// The header line, one aligned row per level, then the levels' errors and notes.
void print_url_bench_table(const UrlBenchRun& run);
// One document: the config, and per level the summary and every raw sample.
nlohmann::json url_bench_json(const UrlBenchRun& run);

}  // namespace nt::cli

// cli/bench_url.h — `nexttok bench --url`: a load generator for any OpenAI-compatible server
// (llama-server, vLLM, nexttok serve). Scenarios: a concurrency sweep (closed loop: C clients, each
// keeping one request in flight), a prompt-length sweep (TTFT against context), a request-rate sweep
// (open loop, Poisson arrivals; goodput within SLOs) and multi-turn conversations (the prefix cache
// made visible). Each level: one warm-up request, then streamed requests bounded in number and time;
// reports output tokens/s, time to first token, inter-token and end-to-end latency, the server's
// KV-cache use when its /metrics has it, with every sample in the JSON output.
// Must not know: the offline bench (cmd_bench.cpp parses the flags and calls in here).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace nt::cli {

enum class UrlScenario { Concurrency, PromptLength, Rate, MultiTurn };
const char* scenario_name(UrlScenario s);  // "concurrency", "prompt-length", "rate", "multi-turn"

struct UrlBenchArgs {
  UrlScenario scenario = UrlScenario::Concurrency;
  std::string url;          // server base: http://host:port[/prefix][/v1]
  std::string api_key;      // empty: $OPENAI_API_KEY, if set
  std::string model;        // empty: the first id of GET /v1/models
  std::string endpoint = "completions";  // or "chat"
  std::vector<int> concurrency = {1};
  std::vector<int> prompts = {256}, gens = {128};  // every combination is a level per concurrency
  int requests = 0;         // per level (multi-turn: conversations); 0: a default per scenario
  std::vector<double> rates = {1, 2, 4};  // rate: requests/s offered per level (Poisson arrivals)
  int turns = 4;            // multi-turn: turns per conversation
  double slo_ttft_ms = 0;   // a request meets the SLOs when TTFT <= this (0: no TTFT SLO)
  double slo_itl_ms = 0;    // ... and the mean of its inter-token gaps <= this (0: no ITL SLO)
  double duration_s = 600;  // per level: no request (or conversation turn) starts after this
  uint64_t prompt_seed = 1;
  double timeout_s = 600;   // per request
  bool json = false;
  std::string report;  // --report: also write the results as an HTML page here (report_html.h)
};

// Where the server is: parsed from --url.
struct ServerUrl {
  std::string scheme, host;
  int port = 0;
  std::string base_path;  // before /v1 ("" for most servers)
  std::string scheme_host_port() const;
  std::string display() const;  // scheme://host:port + base_path
};
Result<ServerUrl> parse_server_url(const std::string& url);

// Flag checks that need no server (usage errors): the URL, the lists, the endpoint, the numbers.
Status check_url_bench_args(const UrlBenchArgs& a);

struct UrlBenchRun;  // bench_url_report.h

// Runs every level on the server at a.url (a must outlive the result: the run points to it);
// progress_prefix goes before each progress line ("round 1/2 A: "). *stopped_error: the first error
// of the first level that stopped early, "" when none. An error: the server cannot be reached.
Result<UrlBenchRun> measure_url_bench(const UrlBenchArgs& a, const std::string& progress_prefix,
                                      std::string* stopped_error);

// Runs the benchmark, prints the results; returns the exit code (1: the server cannot be reached,
// or a level stopped early because more than half of its requests failed).
int run_url_bench(const UrlBenchArgs& a);

}  // namespace nt::cli

// cli/bench_url.h — `nexttok bench --url`: a load generator for any OpenAI-compatible server
// (llama-server, vLLM, nexttok serve). Per concurrency level: one warm-up request, then R streamed
// requests in a closed loop (C clients, each keeping one request in flight); reports output
// tokens/s, time to first token, inter-token latency and end-to-end latency, with every sample in
// the JSON output.
// Must not know: the offline bench (cmd_bench.cpp parses the flags and calls in here).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace nt::cli {

struct UrlBenchArgs {
  std::string url;          // server base: http://host:port[/prefix][/v1]
  std::string api_key;      // empty: $OPENAI_API_KEY, if set
  std::string model;        // empty: the first id of GET /v1/models
  std::string endpoint = "completions";  // or "chat"
  std::vector<int> concurrency = {1};
  std::vector<int> prompts = {256}, gens = {128};  // every combination is a level per concurrency
  int requests = 0;         // per level; 0: 4 x concurrency
  uint64_t prompt_seed = 1;
  double timeout_s = 600;   // per request
  bool json = false;
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

// Runs the benchmark, prints the results; returns the exit code (1: the server cannot be reached,
// or a level stopped early because more than half of its requests failed).
int run_url_bench(const UrlBenchArgs& a);

}  // namespace nt::cli

// cli/bench_url_report.cpp — see bench_url_report.h.
#include "cli/bench_url_report.h"

#include <cmath>
#include <cstdio>

#include "core/strings.h"

namespace nt::cli {

namespace {

using nlohmann::json;

std::string join(const std::vector<int>& v) {
  std::string s;
  for (int x : v) {
    if (!s.empty()) s += ',';
    s += std::to_string(x);
  }
  return s;
}

std::string ms_cell(double ms) { return std::isfinite(ms) ? str_printf("%.1f", ms) : "-"; }

json latency_json(const LatencySummary& s) {
  return {{"count", s.count}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"mean", s.mean}, {"max", s.max}};
}

json sample_json(const RequestSample& s) {
  return {{"ttft_ms", s.ttft_ms},
          {"itl_ms", s.itl_ms},
          {"output_tokens", s.output_tokens},
          {"e2e_ms", s.e2e_ms},
          {"prompt_tokens", s.prompt_tokens >= 0 ? json(s.prompt_tokens) : json(nullptr)},
          {"cached_tokens", s.cached_tokens >= 0 ? json(s.cached_tokens) : json(nullptr)},
          {"finish_reason", s.finish_reason.empty() ? json(nullptr) : json(s.finish_reason)},
          {"error", s.ok() ? json(nullptr) : json(s.error)}};
}

}  // namespace

UrlBenchSummary summarize_level(const UrlBenchLevel& level) {
  UrlBenchSummary s;
  std::vector<double> ttft, itl, e2e;
  for (const RequestSample& r : level.samples) {
    if (!r.ok()) {
      if (s.errors++ == 0) s.first_error = r.error;
      continue;
    }
    ++s.ok;
    s.output_tokens += r.output_tokens;
    if (std::isfinite(r.ttft_ms)) ttft.push_back(r.ttft_ms);
    itl.insert(itl.end(), r.itl_ms.begin(), r.itl_ms.end());
    e2e.push_back(r.e2e_ms);
  }
  s.output_tokens_per_s = level.wall_s > 0 ? double(s.output_tokens) / level.wall_s : 0;
  s.ttft_ms = summarize(ttft);
  s.itl_ms = summarize(itl);
  s.e2e_ms = summarize(e2e);
  return s;
}

std::string level_progress_line(const UrlBenchLevel& level) {
  const UrlBenchSummary s = summarize_level(level);
  std::string line = str_printf("c=%d p=%s%d n=%d: %d ok, %d errors, %.1f output tok/s, %.2f s", level.concurrency,
                                level.prompt_estimated ? "~" : "", level.n_prompt, level.n_gen, s.ok, s.errors,
                                s.output_tokens_per_s, level.wall_s);
  if (level.stopped_early) line += " (stopped early: more than half of the requests failed)";
  return line;
}

void print_url_bench_table(const UrlBenchRun& run) {
  const UrlBenchArgs& a = *run.args;
  std::printf("url %s  model %s  endpoint %s  p %s  n %s\n", run.url.c_str(), run.model.c_str(), run.endpoint.c_str(),
              join(a.prompts).c_str(), join(a.gens).c_str());
  std::printf("%5s %6s %6s %5s %5s %11s %9s %9s %8s %8s %9s\n", "c", "p", "n", "ok", "err", "out tok/s",
              "TTFT p50", "TTFT p99", "ITL p50", "ITL p99", "e2e p50");
  bool any_estimated = false;
  std::vector<std::string> notes;
  for (const UrlBenchLevel& l : run.levels) {
    const UrlBenchSummary s = summarize_level(l);
    any_estimated = any_estimated || l.prompt_estimated;
    std::string p = l.prompt_estimated ? "~" : "";
    p += std::to_string(l.n_prompt);
    std::printf("%5d %6s %6d %5d %5d %11.2f %9s %9s %8s %8s %9s\n", l.concurrency, p.c_str(), l.n_gen, s.ok,
                s.errors, s.output_tokens_per_s, ms_cell(s.ttft_ms.p50).c_str(), ms_cell(s.ttft_ms.p99).c_str(),
                ms_cell(s.itl_ms.p50).c_str(), ms_cell(s.itl_ms.p99).c_str(), ms_cell(s.e2e_ms.p50).c_str());
    if (s.errors > 0)
      notes.push_back(str_printf("c=%d p=%d n=%d: %d of %zu requests failed%s; first: %s", l.concurrency, l.n_prompt,
                                 l.n_gen, s.errors, l.samples.size(),
                                 l.stopped_early ? " (level stopped early)" : "", s.first_error.c_str()));
  }
  std::printf("latencies in ms (percentiles interpolated); out tok/s: output tokens of the requests that "
              "succeeded over the level's wall time\n");
  if (any_estimated)
    std::printf("~: prompt length estimated (text of about p tokens: the chat endpoint, or a server without "
                "/tokenize)\n");
  for (const std::string& n : notes) std::printf("errors at %s\n", n.c_str());
}

json url_bench_json(const UrlBenchRun& run) {
  const UrlBenchArgs& a = *run.args;
  json levels = json::array();
  for (const UrlBenchLevel& l : run.levels) {
    const UrlBenchSummary s = summarize_level(l);
    json samples = json::array();
    for (const RequestSample& r : l.samples) samples.push_back(sample_json(r));
    levels.push_back({{"concurrency", l.concurrency},
                      {"n_prompt", l.n_prompt},
                      {"n_gen", l.n_gen},
                      {"requests", l.requests},
                      {"prompt_length_estimated", l.prompt_estimated},
                      {"stopped_early", l.stopped_early},
                      {"wall_s", l.wall_s},
                      {"ok", s.ok},
                      {"errors", s.errors},
                      {"first_error", s.first_error.empty() ? json(nullptr) : json(s.first_error)},
                      {"output_tokens", s.output_tokens},
                      {"output_tokens_per_s", s.output_tokens_per_s},
                      {"ttft_ms", latency_json(s.ttft_ms)},
                      {"itl_ms", latency_json(s.itl_ms)},
                      {"e2e_ms", latency_json(s.e2e_ms)},
                      {"warmup", sample_json(l.warmup)},
                      {"samples", std::move(samples)}});
  }
  return {{"url", run.url},
          {"model", run.model},
          {"endpoint", run.endpoint},
          {"config",
           {{"concurrency", a.concurrency},
            {"n_prompt", a.prompts},
            {"n_gen", a.gens},
            {"requests", a.requests > 0 ? json(a.requests) : json("4 x concurrency")},
            {"prompt_seed", a.prompt_seed},
            {"timeout_s", a.timeout_s},
            {"percentiles", "linear interpolation between closest ranks"}}},
          {"levels", std::move(levels)}};
}

}  // namespace nt::cli

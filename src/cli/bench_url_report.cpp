// cli/bench_url_report.cpp — see bench_url_report.h.
#include "cli/bench_url_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "cli/bench_scenarios_report.h"
#include "cli/common.h"
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

json sample_json(const RequestSample& s) {
  return {{"ttft_ms", s.ttft_ms},
          {"itl_ms", s.itl_ms},
          {"output_tokens", s.output_tokens},
          {"e2e_ms", s.e2e_ms},
          {"start_s", s.start_s},
          {"prompt_tokens", s.prompt_tokens >= 0 ? json(s.prompt_tokens) : json(nullptr)},
          {"cached_tokens", s.cached_tokens >= 0 ? json(s.cached_tokens) : json(nullptr)},
          {"finish_reason", s.finish_reason.empty() ? json(nullptr) : json(s.finish_reason)},
          {"error", s.ok() ? json(nullptr) : json(s.error)}};
}

json number_or_null(double x) { return x > 0 ? json(x) : json(nullptr); }

}  // namespace

std::string ms_cell(double ms) { return std::isfinite(ms) ? str_printf("%.1f", ms) : "-"; }

json latency_json(const LatencySummary& s) {
  return {{"count", s.count}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"mean", s.mean}, {"max", s.max}};
}

double mean_itl_ms(const RequestSample& r) {
  if (r.itl_ms.empty()) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  for (double x : r.itl_ms) sum += x;
  return sum / double(r.itl_ms.size());
}

bool meets_slo(const RequestSample& r, const Slo& slo) {
  if (!r.ok()) return false;
  if (slo.ttft_ms > 0 && !(r.ttft_ms <= slo.ttft_ms)) return false;
  const double itl = mean_itl_ms(r);  // one chunk: no gap, nothing to miss
  return !(slo.itl_ms > 0 && std::isfinite(itl) && itl > slo.itl_ms);
}

Slo UrlBenchRun::slo() const { return args ? Slo{args->slo_ttft_ms, args->slo_itl_ms} : Slo{}; }

UrlBenchSummary summarize_level(const UrlBenchLevel& level, const Slo& slo) {
  UrlBenchSummary s;
  std::vector<double> ttft, itl, e2e;
  for (const RequestSample& r : level.samples) {
    if (!r.ok()) {
      if (s.errors++ == 0) s.first_error = r.error;
      continue;
    }
    ++s.ok;
    if (meets_slo(r, slo)) ++s.good;
    s.output_tokens += r.output_tokens;
    if (std::isfinite(r.ttft_ms)) ttft.push_back(r.ttft_ms);
    itl.insert(itl.end(), r.itl_ms.begin(), r.itl_ms.end());
    e2e.push_back(r.e2e_ms);
  }
  if (level.wall_s > 0) {
    s.output_tokens_per_s = double(s.output_tokens) / level.wall_s;
    s.throughput_req_s = s.ok / level.wall_s;
    s.goodput_req_s = s.good / level.wall_s;
  }
  if (!level.samples.empty()) s.slo_attainment = double(s.good) / double(level.samples.size());
  if (level.arrival_span_s > 0) s.offered_req_s = double(level.samples.size()) / level.arrival_span_s;
  s.ttft_ms = summarize(ttft);
  s.itl_ms = summarize(itl);
  s.e2e_ms = summarize(e2e);
  return s;
}

std::string level_label(const UrlBenchLevel& l) {
  std::string p = (l.prompt_estimated ? "~" : "") + std::to_string(l.n_prompt);
  if (l.rate > 0) return str_printf("rate=%g p=%s n=%d", l.rate, p.c_str(), l.n_gen);
  if (l.turns > 0) return str_printf("c=%d turns=%d p=%s n=%d", l.concurrency, l.turns, p.c_str(), l.n_gen);
  return str_printf("c=%d p=%s n=%d", l.concurrency, p.c_str(), l.n_gen);
}

std::string level_progress_line(const UrlBenchLevel& level) {
  const UrlBenchSummary s = summarize_level(level);
  std::string line = str_printf("%s: %d ok, %d errors, %.1f output tok/s, %.2f s", level_label(level).c_str(), s.ok,
                                s.errors, s.output_tokens_per_s, level.wall_s);
  if (level.stopped_early) line += " (stopped early: more than half of the requests failed)";
  if (level.duration_reached) line += " (--duration reached)";
  return line;
}

void print_kv_notes(const UrlBenchRun& run) {
  if (!run.kv_reported) {
    std::printf("KV cache use: not reported (no vllm:kv_cache_usage_perc at GET /metrics)\n");
    return;
  }
  for (const UrlBenchLevel& l : run.levels) {
    if (l.kv.samples.empty()) {
      std::printf("KV cache use at %s: no sample (the level ended before the first, at 0.25 s)\n",
                  level_label(l).c_str());
      continue;
    }
    double lo = 1e300, hi = -1e300, sum = 0;
    for (const auto& [t, v] : l.kv.samples) lo = std::min(lo, v), hi = std::max(hi, v), sum += v;
    std::printf("KV cache use at %s: min %.1f%%, mean %.1f%%, max %.1f%% (%s, every 0.5 s)\n",
                level_label(l).c_str(), 100 * lo, 100 * sum / double(l.kv.samples.size()), 100 * hi,
                plural(int64_t(l.kv.samples.size()), "sample", "samples").c_str());
  }
}

json kv_json(const KvUsage& kv) {
  if (!kv.reported) return nullptr;
  json samples = json::array();
  double lo = 0, hi = 0, sum = 0;
  for (size_t i = 0; i < kv.samples.size(); ++i) {
    const auto [t, v] = kv.samples[i];
    samples.push_back({{"t_s", t}, {"usage", v}});
    lo = i == 0 ? v : std::min(lo, v);
    hi = i == 0 ? v : std::max(hi, v);
    sum += v;
  }
  if (kv.samples.empty()) return {{"min", nullptr}, {"mean", nullptr}, {"max", nullptr}, {"samples", samples}};
  return {{"min", lo}, {"mean", sum / double(kv.samples.size())}, {"max", hi}, {"samples", std::move(samples)}};
}

void print_url_bench_table(const UrlBenchRun& run) {
  const UrlBenchArgs& a = *run.args;
  if (a.scenario != UrlScenario::Concurrency) return print_scenario_table(run);
  const Slo slo = run.slo();
  std::printf("url %s  model %s  endpoint %s  p %s  n %s\n", run.url.c_str(), run.model.c_str(), run.endpoint.c_str(),
              join(a.prompts).c_str(), join(a.gens).c_str());
  std::printf("%5s %6s %6s %5s %5s %11s %9s %9s %8s %8s %9s%s\n", "c", "p", "n", "ok", "err", "out tok/s",
              "TTFT p50", "TTFT p99", "ITL p50", "ITL p99", "e2e p50", slo.any() ? "   good/s  SLO met" : "");
  bool any_estimated = false;
  std::vector<std::string> notes;
  for (const UrlBenchLevel& l : run.levels) {
    const UrlBenchSummary s = summarize_level(l, slo);
    any_estimated = any_estimated || l.prompt_estimated;
    std::string p = l.prompt_estimated ? "~" : "";
    p += std::to_string(l.n_prompt);
    std::string good = slo.any() ? str_printf(" %8.2f %7.1f%%", s.goodput_req_s, 100 * s.slo_attainment) : "";
    std::printf("%5d %6s %6d %5d %5d %11.2f %9s %9s %8s %8s %9s%s\n", l.concurrency, p.c_str(), l.n_gen, s.ok,
                s.errors, s.output_tokens_per_s, ms_cell(s.ttft_ms.p50).c_str(), ms_cell(s.ttft_ms.p99).c_str(),
                ms_cell(s.itl_ms.p50).c_str(), ms_cell(s.itl_ms.p99).c_str(), ms_cell(s.e2e_ms.p50).c_str(),
                good.c_str());
    if (s.errors > 0)
      notes.push_back(str_printf("c=%d p=%d n=%d: %d of %zu requests failed%s; first: %s", l.concurrency, l.n_prompt,
                                 l.n_gen, s.errors, l.samples.size(),
                                 l.stopped_early ? " (level stopped early)" : "", s.first_error.c_str()));
  }
  std::printf("latencies in ms (percentiles interpolated); out tok/s: output tokens of the requests that "
              "succeeded over the level's wall time\n");
  if (slo.any()) print_slo_note(slo);
  if (any_estimated)
    std::printf("~: prompt length estimated (text of about p tokens: the chat endpoint, or a server without "
                "/tokenize)\n");
  print_kv_notes(run);
  for (const std::string& n : notes) std::printf("errors at %s\n", n.c_str());
}

json url_bench_json(const UrlBenchRun& run) {
  const UrlBenchArgs& a = *run.args;
  const Slo slo = run.slo();
  json levels = json::array();
  for (const UrlBenchLevel& l : run.levels) {
    const UrlBenchSummary s = summarize_level(l, slo);
    json samples = json::array();
    for (size_t i = 0; i < l.samples.size(); ++i) {
      samples.push_back(sample_json(l.samples[i]));
      if (i < l.turn_of.size()) samples.back()["turn"] = l.turn_of[i];
    }
    json level = {{"concurrency", l.concurrency},
                  {"n_prompt", l.n_prompt},
                  {"n_gen", l.n_gen},
                  {"requests", l.requests},
                  {"prompt_length_estimated", l.prompt_estimated},
                  {"stopped_early", l.stopped_early},
                  {"duration_reached", l.duration_reached},
                  {"wall_s", l.wall_s},
                  {"ok", s.ok},
                  {"errors", s.errors},
                  {"first_error", s.first_error.empty() ? json(nullptr) : json(s.first_error)},
                  {"output_tokens", s.output_tokens},
                  {"output_tokens_per_s", s.output_tokens_per_s},
                  {"throughput_req_s", s.throughput_req_s},
                  {"good", s.good},
                  {"goodput_req_s", s.goodput_req_s},
                  {"slo_attainment", s.slo_attainment},
                  {"ttft_ms", latency_json(s.ttft_ms)},
                  {"itl_ms", latency_json(s.itl_ms)},
                  {"e2e_ms", latency_json(s.e2e_ms)},
                  {"kv_cache_usage", kv_json(l.kv)},
                  {"warmup", sample_json(l.warmup)}};
    add_scenario_level_json(l, s, level);
    level["samples"] = std::move(samples);
    levels.push_back(std::move(level));
  }
  json doc = {{"url", run.url},
              {"model", run.model},
              {"endpoint", run.endpoint},
              {"scenario", scenario_name(a.scenario)},
              {"config",
               {{"concurrency", a.concurrency},
                {"n_prompt", a.prompts},
                {"n_gen", a.gens},
                {"requests", a.requests > 0 ? json(a.requests) : json("default")},
                {"rates", a.scenario == UrlScenario::Rate ? json(a.rates) : json(nullptr)},
                {"turns", a.scenario == UrlScenario::MultiTurn ? json(a.turns) : json(nullptr)},
                {"slo_ttft_ms", number_or_null(a.slo_ttft_ms)},
                {"slo_itl_ms", number_or_null(a.slo_itl_ms)},
                {"slo_itl", "a request meets the ITL SLO when the mean of its inter-token gaps is at most slo_itl_ms"},
                {"duration_s", a.duration_s},
                {"prompt_seed", a.prompt_seed},
                {"timeout_s", a.timeout_s},
                {"percentiles", "linear interpolation between closest ranks"}}},
              {"kv_cache_usage_reported", run.kv_reported},
              {"levels", std::move(levels)}};
  add_scenario_run_json(run, doc);
  return doc;
}

}  // namespace nt::cli

// cli/bench_scenarios_report.cpp — see bench_scenarios_report.h.
#include "cli/bench_scenarios_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "core/strings.h"

namespace nt::cli {

namespace {

using nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

json finite_or_null(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

std::string count_cell(double x) { return std::isfinite(x) ? str_printf("%.1f", x) : "-"; }

std::string join(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

std::string p_cell(const UrlBenchLevel& l) { return (l.prompt_estimated ? "~" : "") + std::to_string(l.n_prompt); }

void print_header(const UrlBenchRun& run, const std::string& extra) {
  std::printf("url %s  model %s  endpoint %s  scenario %s%s\n", run.url.c_str(), run.model.c_str(),
              run.endpoint.c_str(), scenario_name(run.args->scenario), extra.c_str());
}

// The notes every scenario's table ends with: units, SLOs, estimated lengths, KV use, errors.
void print_footer(const UrlBenchRun& run) {
  std::printf("latencies in ms (percentiles interpolated); out tok/s: output tokens of the requests that "
              "succeeded over the level's wall time\n");
  bool estimated = false;
  for (const UrlBenchLevel& l : run.levels) estimated = estimated || l.prompt_estimated;
  if (run.slo().any()) print_slo_note(run.slo());
  if (estimated)
    std::printf("~: prompt length estimated (text of about p tokens: the chat endpoint, or a server without "
                "/tokenize)\n");
  for (const SkippedLevel& s : run.skipped) std::printf("p=%d skipped: %s\n", s.n_prompt, s.reason.c_str());
  print_kv_notes(run);
  for (const UrlBenchLevel& l : run.levels) {
    const UrlBenchSummary s = summarize_level(l);
    if (s.errors > 0)
      std::printf("errors at %s: %d of %zu requests failed%s; first: %s\n", level_label(l).c_str(), s.errors,
                  l.samples.size(), l.stopped_early ? " (level stopped early)" : "", s.first_error.c_str());
  }
}

void print_prompt_length(const UrlBenchRun& run) {
  const UrlBenchArgs& a = *run.args;
  std::string limit = run.context_limit > 0 ? str_printf("  context limit %lld (%s)", (long long)run.context_limit,
                                                         run.context_limit_source.c_str())
                                            : "";
  print_header(run, str_printf("  c %d  n %s", a.concurrency.at(0), join(a.gens).c_str()) + limit);
  std::printf("%7s %5s %5s %9s %9s %9s %13s %8s %9s %11s\n", "p", "ok", "err", "TTFT p50", "TTFT p90", "TTFT p99",
              "p/TTFT tok/s", "ITL p50", "e2e p50", "out tok/s");
  for (const UrlBenchLevel& l : run.levels) {
    const UrlBenchSummary s = summarize_level(l, run.slo());
    const double prefill = s.ttft_ms.p50 > 0 ? l.n_prompt / (s.ttft_ms.p50 / 1e3) : kNaN;
    std::printf("%7s %5d %5d %9s %9s %9s %13s %8s %9s %11.2f\n", p_cell(l).c_str(), s.ok, s.errors,
                ms_cell(s.ttft_ms.p50).c_str(), ms_cell(s.ttft_ms.p90).c_str(), ms_cell(s.ttft_ms.p99).c_str(),
                count_cell(prefill).c_str(), ms_cell(s.itl_ms.p50).c_str(), ms_cell(s.e2e_ms.p50).c_str(),
                s.output_tokens_per_s);
  }
  std::printf("p/TTFT tok/s: prompt tokens over the median TTFT (prefill speed, queueing and network included)\n");
}

void print_rate(const UrlBenchRun& run) {
  const UrlBenchArgs& a = *run.args;
  print_header(run, "  p " + join(a.prompts) + "  n " + join(a.gens));
  std::printf("%7s %5s %5s %5s %9s %8s %8s %8s %11s %9s %9s %8s %8s\n", "rate", "sent", "ok", "err", "offered/s",
              "done/s", "good/s", "SLO met", "out tok/s", "TTFT p50", "TTFT p99", "ITL p50", "ITL p99");
  for (const UrlBenchLevel& l : run.levels) {
    const UrlBenchSummary s = summarize_level(l, run.slo());
    std::printf("%7g %5zu %5d %5d %9.2f %8.2f %8.2f %7.1f%% %11.2f %9s %9s %8s %8s\n", l.rate, l.samples.size(), s.ok,
                s.errors, s.offered_req_s, s.throughput_req_s, s.goodput_req_s, 100 * s.slo_attainment,
                s.output_tokens_per_s, ms_cell(s.ttft_ms.p50).c_str(), ms_cell(s.ttft_ms.p99).c_str(),
                ms_cell(s.itl_ms.p50).c_str(), ms_cell(s.itl_ms.p99).c_str());
  }
  const double best = highest_rate_meeting_slo(run);
  if (best > 0)
    std::printf("highest rate with at least %.0f%% of its requests good (goodput >= %.0f%% of the offered rate): "
                "%g requests/s\n", 100 * kGoodputShare, 100 * kGoodputShare, best);
  else
    std::printf("highest rate with at least %.0f%% of its requests good: none of the rates\n", 100 * kGoodputShare);
  std::printf("rate: requests/s asked (Poisson arrivals); offered/s: sent over the time of the last arrival; "
              "done/s, good/s: requests that succeeded, and that were good, over the level's wall time\n");
  if (!run.slo().any()) std::printf("no --slo-ttft or --slo-itl given: every request that succeeded is good\n");
}

void print_multi_turn(const UrlBenchRun& run) {
  const UrlBenchArgs& a = *run.args;
  print_header(run, str_printf("  turns %d  p %s per user message  n %s", a.turns, join(a.prompts).c_str(),
                               join(a.gens).c_str()));
  for (const UrlBenchLevel& l : run.levels) {
    const UrlBenchSummary s = summarize_level(l, run.slo());
    std::printf("%s: %d conversations, %d ok, %d errors, %.2f output tok/s, ITL p50 %s ms\n", level_label(l).c_str(),
                l.conversations, s.ok, s.errors, s.output_tokens_per_s, ms_cell(s.itl_ms.p50).c_str());
    std::printf("%7s %5s %5s %9s %9s %10s %9s %9s\n", "turn", "ok", "err", "prompt", "cached", "prefilled",
                "TTFT p50", "TTFT p99");
    for (const TurnSummary& t : summarize_turns(l))
      std::printf("%7d %5d %5d %9s %9s %10s %9s %9s\n", t.turn, t.ok, t.errors, count_cell(t.prompt_tokens).c_str(),
                  count_cell(t.cached_tokens).c_str(), count_cell(t.prefilled_tokens).c_str(),
                  ms_cell(t.ttft_ms.p50).c_str(), ms_cell(t.ttft_ms.p99).c_str());
  }
  std::printf("prompt, cached, prefilled: mean tokens per request of the turn (usage.prompt_tokens, "
              "usage.prompt_tokens_details.cached_tokens, their difference; - where not reported)\n");
}

}  // namespace

std::vector<TurnSummary> summarize_turns(const UrlBenchLevel& level) {
  std::vector<TurnSummary> out(static_cast<size_t>(std::max(level.turns, 0)));
  std::vector<std::vector<double>> ttft(out.size());
  std::vector<int> n_prompt(out.size()), n_cached(out.size());
  for (size_t i = 0; i < out.size(); ++i) out[i].turn = static_cast<int>(i) + 1;
  for (size_t i = 0; i < level.samples.size() && i < level.turn_of.size(); ++i) {
    const size_t t = static_cast<size_t>(level.turn_of[i] - 1);
    if (t >= out.size()) continue;
    const RequestSample& r = level.samples[i];
    if (!r.ok()) {
      ++out[t].errors;
      continue;
    }
    ++out[t].ok;
    if (std::isfinite(r.ttft_ms)) ttft[t].push_back(r.ttft_ms);
    if (r.prompt_tokens >= 0) out[t].prompt_tokens += double(r.prompt_tokens), ++n_prompt[t];
    if (r.prompt_tokens >= 0 && r.cached_tokens >= 0) {
      out[t].cached_tokens += double(r.cached_tokens);
      out[t].prefilled_tokens += double(r.prompt_tokens - r.cached_tokens);
      ++n_cached[t];
    }
  }
  for (size_t t = 0; t < out.size(); ++t) {
    out[t].prompt_tokens = n_prompt[t] > 0 ? out[t].prompt_tokens / n_prompt[t] : kNaN;
    out[t].cached_tokens = n_cached[t] > 0 ? out[t].cached_tokens / n_cached[t] : kNaN;
    out[t].prefilled_tokens = n_cached[t] > 0 ? out[t].prefilled_tokens / n_cached[t] : kNaN;
    out[t].ttft_ms = summarize(ttft[t]);
  }
  return out;
}

double highest_rate_meeting_slo(const UrlBenchRun& run) {
  double best = 0;
  for (const UrlBenchLevel& l : run.levels) {
    if (l.rate <= 0 || l.samples.empty()) continue;
    if (summarize_level(l, run.slo()).slo_attainment >= kGoodputShare) best = std::max(best, l.rate);
  }
  return best;
}

void print_slo_note(const Slo& slo) {
  std::string what;
  if (slo.ttft_ms > 0) what += str_printf("TTFT <= %g ms", slo.ttft_ms);
  if (slo.itl_ms > 0) what += str_printf("%smean inter-token gap <= %g ms", what.empty() ? "" : " and ", slo.itl_ms);
  std::printf("good: succeeded with %s; SLO met: good requests over those sent\n", what.c_str());
}

void print_scenario_table(const UrlBenchRun& run) {
  switch (run.args->scenario) {
    case UrlScenario::PromptLength: print_prompt_length(run); break;
    case UrlScenario::Rate: print_rate(run); break;
    case UrlScenario::MultiTurn: print_multi_turn(run); break;
    case UrlScenario::Concurrency: break;
  }
  print_footer(run);
}

void add_scenario_level_json(const UrlBenchLevel& l, const UrlBenchSummary& s, json& out) {
  if (l.rate > 0) {
    out["rate"] = l.rate;
    out["arrival_span_s"] = l.arrival_span_s;
    out["offered_req_s"] = s.offered_req_s;
    out["meets_slo_share"] = s.slo_attainment >= kGoodputShare;
  }
  if (l.turns > 0) {
    out["conversations"] = l.conversations;
    json turns = json::array();
    for (const TurnSummary& t : summarize_turns(l))
      turns.push_back({{"turn", t.turn},
                       {"ok", t.ok},
                       {"errors", t.errors},
                       {"prompt_tokens_mean", finite_or_null(t.prompt_tokens)},
                       {"cached_tokens_mean", finite_or_null(t.cached_tokens)},
                       {"prefilled_tokens_mean", finite_or_null(t.prefilled_tokens)},
                       {"ttft_ms", latency_json(t.ttft_ms)}});
    out["turns"] = std::move(turns);
  }
}

void add_scenario_run_json(const UrlBenchRun& run, json& out) {
  switch (run.args->scenario) {
    case UrlScenario::Rate: {
      const double best = highest_rate_meeting_slo(run);
      out["goodput_share"] = kGoodputShare;
      out["highest_rate_meeting_slo"] = best > 0 ? json(best) : json(nullptr);
      break;
    }
    case UrlScenario::PromptLength: {
      out["context_limit"] = run.context_limit > 0 ? json(run.context_limit) : json(nullptr);
      out["context_limit_source"] = run.context_limit > 0 ? json(run.context_limit_source) : json(nullptr);
      json skipped = json::array();
      for (const SkippedLevel& s : run.skipped)
        skipped.push_back({{"n_prompt", s.n_prompt}, {"n_gen", s.n_gen}, {"reason", s.reason}});
      out["skipped"] = std::move(skipped);
      break;
    }
    default: break;
  }
}

}  // namespace nt::cli

// cli/bench_compare_report.cpp — see bench_compare_report.h.
#include "cli/bench_compare_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "cli/bench_scenarios_report.h"
#include "core/strings.h"

namespace nt::cli {

namespace {

using nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

json finite_or_null(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

json finite_list(const std::vector<double>& v) {
  json out = json::array();
  for (double x : v) out.push_back(finite_or_null(x));
  return out;
}

bool same_level(const UrlBenchLevel& x, const UrlBenchLevel& y) {
  return x.concurrency == y.concurrency && x.n_prompt == y.n_prompt && x.n_gen == y.n_gen && x.turns == y.turns &&
         x.rate == y.rate;
}

const UrlBenchLevel* find_level(const UrlBenchRun& run, const UrlBenchLevel& like) {
  for (const UrlBenchLevel& l : run.levels)
    if (same_level(l, like)) return &l;
  return nullptr;
}

// The levels of both sides' first rounds, A's first and then those only B ran.
std::vector<const UrlBenchLevel*> all_levels(const CompareSide& a, const CompareSide& b) {
  std::vector<const UrlBenchLevel*> out;
  for (const CompareSide* s : {&a, &b}) {
    if (s->runs.empty()) continue;
    for (const UrlBenchLevel& l : s->runs[0].levels)
      if (std::none_of(out.begin(), out.end(), [&](const UrlBenchLevel* o) { return same_level(*o, l); }))
        out.push_back(&l);
  }
  return out;
}

bool wants_goodput(const CompareSide& a) {
  return a.args.slo_ttft_ms > 0 || a.args.slo_itl_ms > 0 || a.args.scenario == UrlScenario::Rate;
}

std::string ratio_cell(double r) { return std::isfinite(r) ? str_printf("%.3f", r) : "-"; }
std::string value_cell(double v) { return std::isfinite(v) ? str_printf("%.2f", v) : "-"; }

// The errors and skipped prompt lengths of every round, under the table.
void print_compare_notes(const CompareSide& a, const CompareSide& b) {
  for (size_t r = 0; r < std::max(a.runs.size(), b.runs.size()); ++r)
    for (const CompareSide* s : {&a, &b}) {
      if (r >= s->runs.size()) continue;
      const UrlBenchRun& run = s->runs[r];
      for (const UrlBenchLevel& l : run.levels) {
        const UrlBenchSummary sum = summarize_level(l, run.slo());
        if (sum.errors > 0)
          std::printf("errors in round %zu at %s %s: %d of %zu requests failed%s; first: %s\n", r + 1,
                      s->name.c_str(), level_label(l).c_str(), sum.errors, l.samples.size(),
                      l.stopped_early ? " (level stopped early)" : "", sum.first_error.c_str());
      }
      if (r == 0)
        for (const SkippedLevel& k : run.skipped)
          std::printf("%s: p=%d skipped: %s\n", s->name.c_str(), k.n_prompt, k.reason.c_str());
    }
}

}  // namespace

double median_of(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::vector<CompareMetric> compare_metrics(bool goodput) {
  std::vector<CompareMetric> m = {
      {"output_tokens_per_s", "tok/s", [](const UrlBenchSummary& s) { return s.output_tokens_per_s; }},
      {"ttft_p50_ms", "TTFT p50", [](const UrlBenchSummary& s) { return s.ttft_ms.p50; }},
      {"ttft_p99_ms", "TTFT p99", [](const UrlBenchSummary& s) { return s.ttft_ms.p99; }},
      {"itl_p50_ms", "ITL p50", [](const UrlBenchSummary& s) { return s.itl_ms.p50; }},
  };
  if (goodput) m.push_back({"goodput_req_s", "good/s", [](const UrlBenchSummary& s) { return s.goodput_req_s; }});
  return m;
}

std::vector<LevelComparison> compare_levels(const CompareSide& a, const CompareSide& b,
                                            const std::vector<CompareMetric>& metrics) {
  const size_t rounds = std::min(a.runs.size(), b.runs.size());
  std::vector<LevelComparison> out;
  for (const UrlBenchLevel* like : all_levels(a, b)) {
    LevelComparison c;
    c.label = level_label(*like);
    c.level = like;
    c.a.assign(metrics.size(), std::vector<double>(rounds, kNaN));
    c.b = c.ratio = c.a;
    for (size_t r = 0; r < rounds; ++r) {
      const UrlBenchLevel* la = find_level(a.runs[r], *like);
      const UrlBenchLevel* lb = find_level(b.runs[r], *like);
      const UrlBenchSummary sa = la ? summarize_level(*la, a.runs[r].slo()) : UrlBenchSummary{};
      const UrlBenchSummary sb = lb ? summarize_level(*lb, b.runs[r].slo()) : UrlBenchSummary{};
      for (size_t m = 0; m < metrics.size(); ++m) {
        if (la) c.a[m][r] = metrics[m].value(sa);
        if (lb) c.b[m][r] = metrics[m].value(sb);
        if (std::isfinite(c.a[m][r]) && std::isfinite(c.b[m][r]) && c.b[m][r] != 0)
          c.ratio[m][r] = c.a[m][r] / c.b[m][r];
      }
    }
    for (const auto& per_round : c.ratio) c.median_ratio.push_back(median_of(per_round));
    out.push_back(std::move(c));
  }
  return out;
}

UrlBenchRun median_run(const CompareSide& side, std::vector<int>* rounds_used) {
  UrlBenchRun out;
  rounds_used->clear();
  if (side.runs.empty()) return out;
  out = side.runs[0];
  out.levels.clear();
  for (const UrlBenchLevel& like : side.runs[0].levels) {
    std::vector<std::pair<double, size_t>> by_rate;  // (output tokens/s, round)
    for (size_t r = 0; r < side.runs.size(); ++r)
      if (const UrlBenchLevel* l = find_level(side.runs[r], like))
        by_rate.emplace_back(summarize_level(*l).output_tokens_per_s, r);
    std::stable_sort(by_rate.begin(), by_rate.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    const size_t r = by_rate[(by_rate.size() - 1) / 2].second;
    out.levels.push_back(*find_level(side.runs[r], like));
    rounds_used->push_back(static_cast<int>(r) + 1);
  }
  return out;
}

void print_compare_table(const CompareSide& a, const CompareSide& b) {
  const std::vector<CompareMetric> metrics = compare_metrics(wants_goodput(a));
  const std::vector<LevelComparison> levels = compare_levels(a, b, metrics);
  const size_t rounds = std::min(a.runs.size(), b.runs.size());
  std::string order;
  for (size_t r = 0; r < rounds; ++r) order += r == 0 ? "A, B" : ", A, B";
  std::printf("compare  scenario %s  %zu rounds each, run %s\n", scenario_name(a.args.scenario), rounds,
              order.c_str());
  for (const CompareSide* s : {&a, &b})
    std::printf("%s  (url %s, model %s)\n", s->label().c_str(), s->url.c_str(),
                s->runs.empty() ? "-" : s->runs[0].model.c_str());
  int width = 6;
  for (const LevelComparison& c : levels) width = std::max(width, static_cast<int>(c.label.size()));
  std::printf("%-*s %6s %10s %10s", width, "level", "round", "A tok/s", "B tok/s");
  for (const CompareMetric& m : metrics) std::printf(" %12s", (std::string(m.header) + " A/B").c_str());
  std::printf("\n");
  for (const LevelComparison& c : levels) {
    for (size_t r = 0; r <= rounds; ++r) {
      const bool median = r == rounds;
      const double va = median ? median_of(c.a[0]) : c.a[0][r], vb = median ? median_of(c.b[0]) : c.b[0][r];
      std::printf("%-*s %6s %10s %10s", width, r == 0 ? c.label.c_str() : "",
                  median ? "median" : std::to_string(r + 1).c_str(), value_cell(va).c_str(), value_cell(vb).c_str());
      for (size_t m = 0; m < metrics.size(); ++m)
        std::printf(" %12s", ratio_cell(median ? c.median_ratio[m] : c.ratio[m][r]).c_str());
      std::printf("\n");
    }
  }
  std::printf("A/B: A's value over B's in the same round (A ran just before B), then the median over the rounds; "
              "tok/s and good/s above 1, TTFT and ITL below 1: A is faster\n");
  if (wants_goodput(a) && (a.args.slo_ttft_ms > 0 || a.args.slo_itl_ms > 0))
    print_slo_note(Slo{a.args.slo_ttft_ms, a.args.slo_itl_ms});
  print_compare_notes(a, b);
}

json compare_json(const CompareSide& a, const CompareSide& b) {
  const std::vector<CompareMetric> metrics = compare_metrics(wants_goodput(a));
  const size_t rounds = std::min(a.runs.size(), b.runs.size());
  json order = json::array(), servers = json::array(), runs = json::array(), ratios = json::array();
  for (size_t r = 0; r < rounds; ++r) {
    for (const CompareSide* s : {&a, &b}) {
      order.push_back(s->name);
      runs.push_back({{"round", r + 1}, {"server", s->name}, {"result", url_bench_json(s->runs[r])}});
    }
  }
  for (const CompareSide* s : {&a, &b}) {
    std::vector<int> used;
    const UrlBenchRun median = median_run(*s, &used);
    servers.push_back({{"name", s->name},
                       {"label", s->label()},
                       {"url", s->url},
                       {"command", s->command.empty() ? json(nullptr) : json(s->command)},
                       {"median_rounds", used},
                       {"result", url_bench_json(median)}});
  }
  for (const LevelComparison& c : compare_levels(a, b, metrics)) {
    const UrlBenchLevel& l = *c.level;
    json row = {{"label", c.label},
                {"concurrency", l.rate > 0 ? json(nullptr) : json(l.concurrency)},
                {"rate", l.rate > 0 ? json(l.rate) : json(nullptr)},
                {"n_prompt", l.n_prompt},
                {"n_gen", l.n_gen},
                {"turns", l.turns > 0 ? json(l.turns) : json(nullptr)}};
    for (size_t m = 0; m < metrics.size(); ++m)
      row[metrics[m].key] = {{"a", finite_list(c.a[m])},
                             {"b", finite_list(c.b[m])},
                             {"per_round", finite_list(c.ratio[m])},
                             {"median", finite_or_null(c.median_ratio[m])}};
    ratios.push_back(std::move(row));
  }
  json doc = {{"compare",
               {{"scenario", scenario_name(a.args.scenario)},
                {"rounds_per_server", rounds},
                {"order", std::move(order)},
                {"ratio", "A/B: A's value over B's in the same round (A ran just before B); median: over the "
                          "rounds with both values"},
                {"metrics", [&] {
                   json keys = json::array();
                   for (const CompareMetric& m : metrics) keys.push_back(m.key);
                   return keys;
                 }()},
                {"servers_result", "per level, the round whose output tokens/s is the median of that server's "
                                   "rounds (the lower middle one for an even number of rounds); every round is "
                                   "under rounds"}}},
              {"servers", std::move(servers)},
              {"rounds", std::move(runs)},
              {"ratios", std::move(ratios)}};
  return doc;
}

}  // namespace nt::cli

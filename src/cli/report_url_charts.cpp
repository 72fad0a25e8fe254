// cli/report_url_charts.cpp — the charts of a `bench --url` report (report_chart.h): per scenario
// its main picture (output tokens/s and TTFT p99 against concurrency, TTFT against prompt length,
// goodput against the offered rate, per-turn cached and prefilled tokens), then latency CDFs and the
// KV-cache use over time. A comparison draws every server on the same axes.
#include <algorithm>
#include <cmath>
#include <set>

#include "cli/report_chart.h"
#include "core/strings.h"

namespace nt::cli {

namespace {

using nlohmann::json;

const json& field(const json& j, const char* key) {
  static const json null;
  return j.is_object() && j.contains(key) ? j[key] : null;
}

// One server's run: its label (the model name for a single run) and its document.
struct Run {
  std::string label;
  const json* doc = nullptr;
  const json& levels() const { return field(*doc, "levels"); }
  // More than one (prompt, output) length among the levels: series and labels name them.
  bool several_lengths() const {
    std::set<std::pair<double, double>> pn;
    for (const json& l : levels()) pn.insert({num_field(l, "n_prompt"), num_field(l, "n_gen")});
    return pn.size() > 1;
  }
};

std::string int_str(double v) { return std::isfinite(v) ? str_printf("%.0f", v) : "-"; }

std::string lengths(const json& l) {
  return "p=" + int_str(num_field(l, "n_prompt")) + " n=" + int_str(num_field(l, "n_gen"));
}

// The series a level belongs to in the main charts: the run, and its lengths when they vary.
std::string group_name(const Run& r, const json& l) {
  return r.several_lengths() ? r.label + " " + lengths(l) : r.label;
}

// The level within its run, by what the scenario sweeps: "c=4", "p=512", "rate=2".
std::string level_key(const Run& r, const std::string& scenario, const json& l) {
  std::string k;
  if (scenario == "prompt-length") return "p=" + int_str(num_field(l, "n_prompt"));
  if (scenario == "rate")
    k = str_printf("rate=%g", num_field(l, "rate"));
  else
    k = "c=" + int_str(num_field(l, "concurrency"));
  return r.several_lengths() ? k + " " + lengths(l) : k;
}

double lat(const json& l, const char* which, const char* p) { return num_field(field(l, which), p); }

// Adds (x, y) to the series named name, creating it in first-seen order.
void add_point(ReportChart& c, const std::string& name, double x, double y) {
  for (ReportSeries& s : c.series)
    if (s.name == name) return s.points.push_back({x, y});
  c.series.push_back(ReportSeries{name, {{x, y}}, {}});
}

bool wide_x(const ReportChart& c) {
  std::vector<double> xs;
  for (const ReportSeries& s : c.series)
    for (auto [x, y] : s.points) xs.push_back(x);
  return wide_range(xs);
}

void concurrency_charts(const std::vector<Run>& runs, std::vector<ReportChart>& out) {
  ReportChart tps = new_chart("chart-tps-concurrency", "Output tokens/s against concurrency", "concurrent clients",
                              "output tokens/s");
  tps.table.columns = {"run", "c", "p", "n", "ok", "errors", "out tok/s", "req/s"};
  ReportChart ttft = new_chart("chart-ttft-concurrency", "Time to first token (p99) against concurrency",
                               "concurrent clients", "TTFT p99 (ms)");
  ttft.table.columns = {"run", "c", "p", "n", "TTFT p50", "TTFT p90", "TTFT p99", "ITL p50", "ITL p99", "e2e p50"};
  for (const Run& r : runs)
    for (const json& l : r.levels()) {
      const double c = num_field(l, "concurrency");
      add_point(tps, group_name(r, l), c, num_field(l, "output_tokens_per_s"));
      add_point(ttft, group_name(r, l), c, lat(l, "ttft_ms", "p99"));
      const std::vector<std::string> head = {r.label, int_str(c), int_str(num_field(l, "n_prompt")),
                                             int_str(num_field(l, "n_gen"))};
      auto row = head;
      row.insert(row.end(), {int_str(num_field(l, "ok")), int_str(num_field(l, "errors")),
                             cell(num_field(l, "output_tokens_per_s"), 2), cell(num_field(l, "throughput_req_s"), 2)});
      tps.table.rows.push_back(row);
      row = head;
      row.insert(row.end(), {cell(lat(l, "ttft_ms", "p50"), 1), cell(lat(l, "ttft_ms", "p90"), 1),
                             cell(lat(l, "ttft_ms", "p99"), 1), cell(lat(l, "itl_ms", "p50"), 1),
                             cell(lat(l, "itl_ms", "p99"), 1), cell(lat(l, "e2e_ms", "p50"), 1)});
      ttft.table.rows.push_back(row);
    }
  tps.log_x = ttft.log_x = wide_x(tps);
  tps.note = "output tokens of the requests that succeeded over the level's wall time";
  ttft.note = "latencies in ms, percentiles interpolated between closest ranks";
  out.push_back(std::move(tps));
  out.push_back(std::move(ttft));
}

void prompt_length_charts(const std::vector<Run>& runs, std::vector<ReportChart>& out) {
  ReportChart c = new_chart("chart-ttft-prompt", "Time to first token (p50) against prompt length", "prompt tokens",
                            "TTFT p50 (ms)");
  c.table.columns = {"run", "p", "n", "ok", "errors", "TTFT p50", "TTFT p90", "TTFT p99", "p/TTFT tok/s", "out tok/s"};
  for (const Run& r : runs)
    for (const json& l : r.levels()) {
      const double p = num_field(l, "n_prompt"), t50 = lat(l, "ttft_ms", "p50");
      add_point(c, r.label, p, t50);
      c.table.rows.push_back({r.label, int_str(p), int_str(num_field(l, "n_gen")), int_str(num_field(l, "ok")),
                              int_str(num_field(l, "errors")), cell(t50, 1), cell(lat(l, "ttft_ms", "p90"), 1),
                              cell(lat(l, "ttft_ms", "p99"), 1), cell(t50 > 0 ? p / (t50 / 1e3) : NAN, 1),
                              cell(num_field(l, "output_tokens_per_s"), 2)});
    }
  c.log_x = wide_x(c);
  c.note = "p/TTFT tok/s: prompt tokens over the median TTFT (prefill speed, queueing and network included)";
  for (const Run& r : runs)
    for (const json& s : field(*r.doc, "skipped"))
      c.note += "; " + r.label + ": p=" + int_str(num_field(s, "n_prompt")) + " skipped: " + str_field(s, "reason");
  out.push_back(std::move(c));
}

void rate_charts(const std::vector<Run>& runs, std::vector<ReportChart>& out) {
  ReportChart c = new_chart("chart-goodput-rate", "Goodput against the offered rate",
                            "requests/s asked (Poisson arrivals)", "requests/s");
  c.table.columns = {"run",    "rate",   "sent",      "ok",       "errors",  "offered/s",
                     "done/s", "good/s", "SLO met %", "TTFT p50", "TTFT p99"};
  for (const Run& r : runs)
    for (const json& l : r.levels()) {
      const double rate = num_field(l, "rate");
      add_point(c, group_name(r, l) + " goodput", rate, num_field(l, "goodput_req_s"));
      add_point(c, group_name(r, l) + " offered", rate, num_field(l, "offered_req_s"));
      c.table.rows.push_back({r.label, str_printf("%g", rate), std::to_string(field(l, "samples").size()),
                              int_str(num_field(l, "ok")), int_str(num_field(l, "errors")),
                              cell(num_field(l, "offered_req_s"), 2), cell(num_field(l, "throughput_req_s"), 2),
                              cell(num_field(l, "goodput_req_s"), 2), cell(100 * num_field(l, "slo_attainment"), 1),
                              cell(lat(l, "ttft_ms", "p50"), 1), cell(lat(l, "ttft_ms", "p99"), 1)});
    }
  c.log_x = wide_x(c);
  c.note = "goodput: requests that succeeded within --slo-ttft and --slo-itl per second of the level";
  for (const Run& r : runs) {
    const double best = num_field(*r.doc, "highest_rate_meeting_slo");
    c.note += "; " + r.label + ": highest rate with at least 90% good: " +
              (std::isfinite(best) ? str_printf("%g requests/s", best) : std::string("none"));
  }
  out.push_back(std::move(c));
}

void multi_turn_charts(const std::vector<Run>& runs, std::vector<ReportChart>& out) {
  ReportChart tok =
      new_chart("chart-turn-tokens", "Cached and prefilled prompt tokens per turn", "turn", "tokens (mean)");
  tok.table.columns = {"series", "turn", "ok", "errors", "prompt", "cached", "prefilled"};
  ReportChart ttft = new_chart("chart-turn-ttft", "Time to first token (p50) per turn", "turn", "TTFT p50 (ms)");
  ttft.table.columns = {"series", "turn", "TTFT p50", "TTFT p90", "TTFT p99"};
  for (const Run& r : runs) {
    const bool several = r.levels().size() > 1;
    for (const json& l : r.levels()) {
      const std::string name = several ? r.label + " " + level_key(r, "multi-turn", l) : r.label;
      for (const json& t : field(l, "turns")) {
        const double turn = num_field(t, "turn");
        add_point(tok, name + " cached", turn, num_field(t, "cached_tokens_mean"));
        add_point(tok, name + " prefilled", turn, num_field(t, "prefilled_tokens_mean"));
        add_point(ttft, name, turn, lat(t, "ttft_ms", "p50"));
        tok.table.rows.push_back({name, int_str(turn), int_str(num_field(t, "ok")), int_str(num_field(t, "errors")),
                                  cell(num_field(t, "prompt_tokens_mean"), 1),
                                  cell(num_field(t, "cached_tokens_mean"), 1),
                                  cell(num_field(t, "prefilled_tokens_mean"), 1)});
        ttft.table.rows.push_back({name, int_str(turn), cell(lat(t, "ttft_ms", "p50"), 1),
                                   cell(lat(t, "ttft_ms", "p90"), 1), cell(lat(t, "ttft_ms", "p99"), 1)});
      }
    }
  }
  tok.note =
      "cached: usage.prompt_tokens_details.cached_tokens; prefilled: prompt tokens minus cached (the prefix "
      "cache made visible); - where the server does not report them";
  out.push_back(std::move(tok));
  out.push_back(std::move(ttft));
}

// The CDF of a latency over every request that succeeded, one series per run and level.
void cdf_chart(const std::vector<Run>& runs, const std::string& scenario, bool itl, std::vector<ReportChart>& out) {
  const char* key = itl ? "itl_ms" : "ttft_ms";
  ReportChart c = new_chart(itl ? "chart-cdf-itl" : "chart-cdf-ttft",
                            itl ? "Inter-token latency: distribution" : "Time to first token: distribution",
                            itl ? "gap between tokens (ms)" : "TTFT (ms)", "share of samples at or below");
  c.y_max = 1;
  c.table.columns = {"series", "samples", "p50", "p90", "p99", "max"};
  for (const Run& r : runs)
    for (const json& l : r.levels()) {
      ReportSeries s{r.label + " " + level_key(r, scenario, l), {}, {}};
      for (const json& x : field(l, "samples")) {
        if (!field(x, "error").is_null()) continue;
        const json& v = field(x, key);
        if (v.is_number()) s.cdf_values.push_back(v.get<double>());
        for (const json& g : v.is_array() ? v : json::array())
          if (g.is_number()) s.cdf_values.push_back(g.get<double>());
      }
      const json& sum = field(l, key);
      c.table.rows.push_back({s.name, int_str(num_field(sum, "count")), cell(num_field(sum, "p50"), 1),
                              cell(num_field(sum, "p90"), 1), cell(num_field(sum, "p99"), 1),
                              cell(num_field(sum, "max"), 1)});
      c.series.push_back(std::move(s));
    }
  std::vector<double> all;
  bool positive = true;  // a log axis only when it can show every sample
  for (const ReportSeries& s : c.series)
    for (double v : s.cdf_values) all.push_back(v), positive = positive && v > 0;
  c.log_x = positive && wide_range(all);
  c.note = "requests that succeeded; latencies in ms; at most 200 points per series (evenly spaced ranks)";
  out.push_back(std::move(c));
}

// The output tokens/s of a level over time: every streamed chunk with text (one token) at the time it
// arrived (the request's start_s, then its TTFT, then its gaps), counted in bins of the first of
// kTimeBins that makes at most 40 of them; x is each bin's end.
constexpr double kTimeBins[] = {0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300};

void tps_time_chart(const std::vector<Run>& runs, const std::string& scenario, std::vector<ReportChart>& out) {
  ReportChart c =
      new_chart("chart-tps-time", "Output tokens/s over time", "seconds since the level started", "output tokens/s");
  c.table.columns = {"series", "bin (s)", "tokens", "peak tok/s"};
  for (const Run& r : runs)
    for (const json& l : r.levels()) {
      std::vector<double> times;
      for (const json& x : field(l, "samples")) {
        const double start = num_field(x, "start_s"), ttft = num_field(x, "ttft_ms");
        if (!field(x, "error").is_null() || !std::isfinite(start) || !std::isfinite(ttft)) continue;
        double t = start + ttft / 1000;
        times.push_back(t);
        for (const json& g : field(x, "itl_ms"))
          if (g.is_number()) times.push_back(t += g.get<double>() / 1000);
      }
      if (times.empty()) continue;
      const double last = *std::max_element(times.begin(), times.end());
      double bin = kTimeBins[0];
      for (double b : kTimeBins)
        if ((bin = b) * 40 >= last) break;
      std::vector<double> counts(static_cast<size_t>(std::floor(last / bin)) + 1, 0);
      for (double t : times)
        counts[std::min(counts.size() - 1, static_cast<size_t>(std::max(0.0, std::floor(t / bin))))]++;
      ReportSeries series{r.label + " " + level_key(r, scenario, l), {}, {}};
      double peak = 0;
      for (size_t i = 0; i < counts.size(); ++i) {
        series.points.push_back({double(i + 1) * bin, counts[i] / bin});
        peak = std::max(peak, counts[i] / bin);
      }
      c.table.rows.push_back({series.name, str_printf("%g", bin), std::to_string(times.size()), cell(peak, 1)});
      c.series.push_back(std::move(series));
    }
  if (c.series.empty()) return;
  c.note = "chunks with text of the requests that succeeded (one token each), counted where they arrived";
  out.push_back(std::move(c));
}

void kv_chart(const std::vector<Run>& runs, const std::string& scenario, std::vector<ReportChart>& out) {
  ReportChart c =
      new_chart("chart-kv-time", "KV-cache use over time", "seconds since the level started", "KV-cache use (%)");
  c.table.columns = {"series", "samples", "min %", "mean %", "max %"};
  bool any = false;
  for (const Run& r : runs)
    for (const json& l : r.levels()) {
      const json& kv = field(l, "kv_cache_usage");
      if (!kv.is_object()) continue;
      const std::string name = r.label + " " + level_key(r, scenario, l);
      for (const json& s : field(kv, "samples")) {
        add_point(c, name, num_field(s, "t_s"), 100 * num_field(s, "usage"));
        any = true;
      }
      c.table.rows.push_back({name, std::to_string(field(kv, "samples").size()), cell(100 * num_field(kv, "min"), 1),
                              cell(100 * num_field(kv, "mean"), 1), cell(100 * num_field(kv, "max"), 1)});
    }
  if (!any) return;
  c.note = "vllm:kv_cache_usage_perc at the server's GET /metrics, sampled every 0.5 s";
  out.push_back(std::move(c));
}

std::string scalar_cell(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return v.dump();
  if (v.is_number()) return cell(v.get<double>(), 3);
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  return "-";
}

// The comparison's rounds in the order they ran: per round, server and level its output tokens/s
// and latencies (rounds whose "result" is a run's document), else each round's plain fields.
ReportTable rounds_table(const json& rounds, const std::string& scenario) {
  ReportTable t;
  t.columns = {"round", "server", "level", "out tok/s", "TTFT p50", "TTFT p99", "ITL p50"};
  for (const json& r : rounds) {
    const Run run{"", &field(r, "result")};
    for (const json& l : field(*run.doc, "levels"))
      t.rows.push_back({scalar_cell(field(r, "round")), scalar_cell(field(r, "server")), level_key(run, scenario, l),
                        cell(num_field(l, "output_tokens_per_s"), 2), cell(lat(l, "ttft_ms", "p50"), 1),
                        cell(lat(l, "ttft_ms", "p99"), 1), cell(lat(l, "itl_ms", "p50"), 2)});
  }
  if (!t.rows.empty()) return t;
  t.columns.clear();
  for (const json& r : rounds)
    for (auto it = r.begin(); r.is_object() && it != r.end(); ++it)
      if (!it->is_structured() && std::find(t.columns.begin(), t.columns.end(), it.key()) == t.columns.end())
        t.columns.push_back(it.key());
  for (const json& r : rounds) {
    std::vector<std::string> row;
    for (const std::string& k : t.columns) row.push_back(scalar_cell(field(r, k.c_str())));
    t.rows.push_back(std::move(row));
  }
  return t;
}

// The ratios A/B per level: for each measure that has a "median" over the rounds, the median and
// the ratio of each round.
ReportTable ratios_table(const json& ratios) {
  ReportTable t;
  std::vector<std::string> measures;
  for (const json& r : ratios)
    for (auto it = r.begin(); r.is_object() && it != r.end(); ++it)
      if (it->is_object() && it->contains("median") &&
          std::find(measures.begin(), measures.end(), it.key()) == measures.end())
        measures.push_back(it.key());
  t.columns = {"level"};
  for (const std::string& m : measures) t.columns.insert(t.columns.end(), {m + " A/B median", "per round"});
  for (const json& r : ratios) {
    std::vector<std::string> row = {scalar_cell(field(r, "label"))};
    for (const std::string& m : measures) {
      const json& x = field(r, m.c_str());
      row.push_back(scalar_cell(field(x, "median")));
      std::string rounds;
      for (const json& v : field(x, "per_round")) rounds += (rounds.empty() ? "" : ", ") + scalar_cell(v);
      row.push_back(rounds.empty() ? "-" : rounds);
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

void add_facts(const Run& r, bool comparison, std::vector<std::string>& facts) {
  const json& d = *r.doc;
  const std::string who = comparison ? r.label + ": " : "";
  const std::string url =
      r.label.find(str_field(d, "url")) == std::string::npos ? "url " + str_field(d, "url") + ", " : "";
  facts.push_back(who + url + "model " + str_field(d, "model") + ", endpoint " + str_field(d, "endpoint"));
  const json& cfg = field(d, "config");
  std::string slo;
  const double slo_ttft = num_field(cfg, "slo_ttft_ms"), slo_itl = num_field(cfg, "slo_itl_ms");
  if (std::isfinite(slo_ttft)) slo += str_printf(" TTFT <= %g ms", slo_ttft);
  if (std::isfinite(slo_itl)) slo += str_printf(" mean ITL <= %g ms", slo_itl);
  if (!slo.empty()) facts.push_back(who + "SLO:" + slo);
  if (field(d, "kv_cache_usage_reported").is_boolean() && !field(d, "kv_cache_usage_reported").get<bool>())
    facts.push_back(who + "KV cache use: not reported by the server");
}

}  // namespace

Result<ReportPage> url_report_page(const json& doc) {
  auto kind = report_kind(doc);
  if (!kind) return kind.error();
  const bool comparison = *kind == ReportKind::Comparison;
  std::vector<Run> runs;
  if (comparison) {
    for (const json& s : doc["servers"]) runs.push_back(Run{str_field(s, "label"), &s["result"]});
  } else {
    runs.push_back(Run{str_field(doc, "model").empty() ? "run" : str_field(doc, "model"), &doc});
  }
  const std::string scenario = str_field(*runs[0].doc, "scenario");
  ReportPage page;
  page.title = "nexttok bench: " + scenario + (comparison ? " (comparison)" : "");
  page.facts.push_back("scenario " + scenario);
  for (const Run& r : runs) add_facts(r, comparison, page.facts);
  if (scenario == "prompt-length")
    prompt_length_charts(runs, page.charts);
  else if (scenario == "rate")
    rate_charts(runs, page.charts);
  else if (scenario == "multi-turn")
    multi_turn_charts(runs, page.charts);
  else
    concurrency_charts(runs, page.charts);
  cdf_chart(runs, scenario, false, page.charts);
  cdf_chart(runs, scenario, true, page.charts);
  tps_time_chart(runs, scenario, page.charts);
  kv_chart(runs, scenario, page.charts);
  if (comparison && field(doc, "ratios").is_array() && !doc["ratios"].empty())
    page.tables.push_back({"Ratios A/B per level (A's value over B's in the same round)", ratios_table(doc["ratios"])});
  if (comparison && field(doc, "rounds").is_array() && !doc["rounds"].empty())
    page.tables.push_back({"Rounds, in the order they ran", rounds_table(doc["rounds"], scenario)});
  return page;
}

}  // namespace nt::cli

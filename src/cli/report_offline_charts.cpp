// cli/report_offline_charts.cpp — the charts of an offline `bench -m ... --report` (report_chart.h):
// prompt tokens/s against prompt length (and against depth when -d has several values), generation
// tokens/s against depth (or against the generation length at one depth), decode as a share of the
// memory bandwidth with --bandwidth, and concurrent generation with --parallel; one series per model
// (and thread count, when several), several models on the same axes.
#include <cmath>
#include <set>

#include "cli/report_chart.h"
#include "core/strings.h"

namespace nt::cli {

namespace {

using nlohmann::json;

enum class RowKind { Prompt, Gen, Parallel };

RowKind kind_of(const json& r) {
  if (num_field(r, "n_parallel") > 0) return RowKind::Parallel;
  return num_field(r, "n_prompt") > 0 ? RowKind::Prompt : RowKind::Gen;
}

std::string model_name(const json& r) {
  std::string f = str_field(r, "model_filename");
  if (f.empty()) return str_field(r, "model_type");
  const size_t slash = f.find_last_of('/');
  return slash == std::string::npos ? f : f.substr(slash + 1);
}

std::string int_str(double v) { return std::isfinite(v) ? str_printf("%.0f", v) : "-"; }

struct Rows {
  std::vector<const json*> rows;
  bool several_threads = false, several_depths = false;
  // The model, and the thread count when the run had several.
  std::string who(const json& r) const {
    return several_threads ? model_name(r) + " t=" + int_str(num_field(r, "n_threads")) : model_name(r);
  }
};

void add_point(ReportChart& c, const std::string& name, double x, double y) {
  for (ReportSeries& s : c.series)
    if (s.name == name) return s.points.push_back({x, y});
  c.series.push_back(ReportSeries{name, {{x, y}}, {}});
}

// One chart over the rows of one kind: x and the series name per row, y its mean tokens/s (or y_of).
template <typename X, typename Name, typename Y>
void chart_of(const Rows& rs, RowKind kind, ReportChart c, const char* x_column, X x_of, Name name_of, Y y_of,
              std::vector<ReportChart>& out) {
  c.table.columns = {"series", x_column, "test", c.y_label};
  if (c.y_label == "tokens/s") c.table.columns.push_back("± stddev");
  std::vector<double> xs;
  for (const json* r : rs.rows) {
    if (kind_of(*r) != kind) continue;
    const double x = x_of(*r), y = y_of(*r);
    add_point(c, name_of(*r), x, y);
    xs.push_back(x);
    const double p = num_field(*r, "n_prompt"), n = num_field(*r, "n_gen"), d = num_field(*r, "n_depth");
    std::string test = p > 0 ? "pp" + int_str(p) : "tg" + int_str(n);
    if (d > 0) test += " @ d" + int_str(d);
    if (kind == RowKind::Parallel) test += " x" + int_str(num_field(*r, "n_parallel"));
    std::vector<std::string> row = {name_of(*r), int_str(x), test, cell(y, c.y_label == "tokens/s" ? 2 : 1)};
    if (c.y_label == "tokens/s") row.push_back(cell(num_field(*r, "stddev_ts"), 2));
    c.table.rows.push_back(std::move(row));
  }
  if (c.series.empty()) return;
  c.log_x = wide_range(xs);
  out.push_back(std::move(c));
}

}  // namespace

Result<ReportPage> offline_report_page(const json& doc) {
  auto kind = report_kind(doc);
  if (!kind) return kind.error();
  if (*kind != ReportKind::Offline) return Error{"not the offline bench's rows (bench -m MODEL -o json)"};
  Rows rs;
  std::set<double> threads, depths;
  std::set<std::string> models, simd;
  for (const json& r : doc) {
    rs.rows.push_back(&r);
    threads.insert(num_field(r, "n_threads"));
    if (kind_of(r) != RowKind::Parallel) depths.insert(num_field(r, "n_depth"));
    models.insert(model_name(r) + " (" + str_field(r, "model_type") + ")");
    if (!str_field(r, "simd").empty()) simd.insert(str_field(r, "simd"));
  }
  rs.several_threads = threads.size() > 1;
  rs.several_depths = depths.size() > 1;
  ReportPage page;
  page.title = "nexttok bench: prompt processing and generation speed";
  for (const std::string& m : models) page.facts.push_back("model " + m);
  for (const std::string& s : simd) page.facts.push_back("simd " + s);
  auto ts = [](const json& r) { return num_field(r, "avg_ts"); };
  auto who = [&](const json& r) { return rs.who(r); };
  auto depth = [](const json& r) { return num_field(r, "n_depth"); };

  chart_of(
      rs, RowKind::Prompt,
      new_chart("chart-pp-prompt", "Prompt processing against prompt length", "prompt tokens", "tokens/s"), "p",
      [](const json& r) { return num_field(r, "n_prompt"); },
      [&](const json& r) { return rs.several_depths ? who(r) + " d=" + int_str(depth(r)) : who(r); }, ts, page.charts);
  if (rs.several_depths)
    chart_of(
        rs, RowKind::Prompt,
        new_chart("chart-pp-depth", "Prompt processing against depth", "cached tokens before the test (depth)",
                  "tokens/s"),
        "depth", depth, [&](const json& r) { return who(r) + " pp" + int_str(num_field(r, "n_prompt")); }, ts,
        page.charts);
  // Generation: against depth when there are several, else against the generation length.
  auto gen_x = [&](const json& r) { return rs.several_depths ? depth(r) : num_field(r, "n_gen"); };
  auto gen_name = [&](const json& r) {
    return rs.several_depths ? who(r) + " tg" + int_str(num_field(r, "n_gen")) : who(r);
  };
  const char* gen_x_label = rs.several_depths ? "cached tokens before the test (depth)" : "generated tokens";
  chart_of(rs, RowKind::Gen,
           new_chart("chart-tg", rs.several_depths ? "Generation against depth" : "Generation against its length",
                     gen_x_label, "tokens/s"),
           rs.several_depths ? "depth" : "n", gen_x, gen_name, ts, page.charts);
  bool bandwidth = false;
  for (const json* r : rs.rows) bandwidth = bandwidth || std::isfinite(num_field(*r, "bandwidth_pct"));
  if (bandwidth) {
    ReportChart c = new_chart("chart-tg-bandwidth", "Generation as a share of the memory read bandwidth", gen_x_label,
                              "% of bandwidth");
    c.note =
        "bytes a generated token reads (weights and cached K/V) x tokens/s over the bandwidth probed beside "
        "it; above 100%: part of them came from the CPU caches";
    chart_of(
        rs, RowKind::Gen, c, rs.several_depths ? "depth" : "n", gen_x, gen_name,
        [](const json& r) { return num_field(r, "bandwidth_pct"); }, page.charts);
  }
  chart_of(
      rs, RowKind::Parallel,
      new_chart("chart-tg-parallel", "Concurrent generation against the number of requests",
                "concurrent requests (--parallel)", "tokens/s"),
      "requests", [](const json& r) { return num_field(r, "n_parallel"); },
      [&](const json& r) { return who(r) + " tg" + int_str(num_field(r, "n_gen")); }, ts, page.charts);
  for (ReportChart& c : page.charts)
    if (c.note.empty()) c.note = "mean over the repetitions (after a warm-up); ± the standard deviation";
  return page;
}

}  // namespace nt::cli

// cli/report_html.cpp — see report_html.h. The page: a title and the run's facts, then per chart a
// section with an empty element web/charts.js draws into and the chart's numbers as a table; the
// bench document and the chart specs as JSON, then the charts script.
#include "cli/report_html.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "cli/common.h"
#include "cli/json_input.h"
#include "cli/report_chart.h"
#include "core/atomic_file.h"
#include "core/strings.h"

namespace nt::cli {

namespace {

using nlohmann::json;

constexpr const char* kStyle = R"CSS(
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222; margin: 24px auto;
       max-width: 980px; padding: 0 16px; }
h1 { font-size: 22px; margin-bottom: 4px; }
h2 { font-size: 17px; margin: 28px 0 6px; }
ul.facts { color: #555; margin: 4px 0 16px; padding-left: 18px; }
section.chart-block { border-top: 1px solid #ddd; }
.chart svg { max-width: 100%; height: auto; }
.nt-title { font-weight: 600; font-size: 14px; }
.nt-tick, .nt-legend { font-size: 11px; fill: #333; }
.nt-axis-label { font-size: 12px; fill: #333; }
.nt-grid line { stroke: #e6e6e6; }
.nt-frame { stroke: #999; }
table { border-collapse: collapse; font-size: 12px; margin: 8px 0; }
th, td { border: 1px solid #ddd; padding: 2px 8px; text-align: right; }
th { background: #f4f4f4; }
td:first-child, th:first-child { text-align: left; }
p.note { color: #666; font-size: 12px; margin: 2px 0; }
)CSS";

// No request may leave the page: scripts and styles only inline, nothing fetched.
constexpr const char* kPolicy =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:";

void write_table(std::string& h, const ReportTable& t) {
  h += "<table>\n<thead><tr>";
  for (const std::string& c : t.columns) h += "<th>" + html_escape(c) + "</th>";
  h += "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    h += "<tr>";
    for (const std::string& c : row) h += "<td>" + html_escape(c) + "</td>";
    h += "</tr>\n";
  }
  h += "</tbody>\n</table>\n";
}

std::string page_html(const ReportPage& page, const json& doc) {
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += std::string("<meta http-equiv=\"Content-Security-Policy\" content=\"") + kPolicy + "\">\n";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += "<meta name=\"generator\" content=\"nexttok bench --report\">\n";
  h += "<title>" + html_escape(page.title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  h += "<h1>" + html_escape(page.title) + "</h1>\n<ul class=\"facts\">\n";
  for (const std::string& f : page.facts) h += "<li>" + html_escape(f) + "</li>\n";
  h += "</ul>\n";
  json specs = json::array();
  for (const ReportChart& c : page.charts) {
    h += "<section class=\"chart-block\">\n<h2>" + html_escape(c.title) + "</h2>\n";
    h += "<div class=\"chart\" id=\"" + html_escape(c.id) + "\"></div>\n";
    write_table(h, c.table);
    if (!c.note.empty()) h += "<p class=\"note\">" + html_escape(c.note) + "</p>\n";
    h += "</section>\n";
    specs.push_back(chart_spec_json(c));
  }
  for (const auto& [title, table] : page.tables) {
    h += "<section class=\"chart-block\">\n<h2>" + html_escape(title) + "</h2>\n";
    write_table(h, table);
    h += "</section>\n";
  }
  h += "<script type=\"application/json\" id=\"nt-bench-data\">" + json_for_script(doc) + "</script>\n";
  h += "<script type=\"application/json\" id=\"nt-chart-specs\">" + json_for_script(specs) + "</script>\n";
  h += std::string("<script>\n") + kChartsJs + "</script>\n";
  h += "<script>\nNtCharts.renderAll(JSON.parse(document.getElementById('nt-chart-specs').textContent));\n"
       "</script>\n</body>\n</html>\n";
  return h;
}

}  // namespace

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string json_for_script(const json& j) {
  // Invalid UTF-8 in a label is replaced rather than thrown on.
  const std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '<')
      out += "\\u003c";  // only inside strings: anywhere else '<' is not JSON
    else
      out += c;
  }
  return out;
}

Result<std::string> render_bench_report(const json& doc) {
  auto kind = report_kind(doc);
  if (!kind) return kind.error();
  auto page = *kind == ReportKind::Offline ? offline_report_page(doc) : url_report_page(doc);
  if (!page) return page.error();
  return page_html(*page, doc);
}

Status write_bench_report(const json& doc, const std::string& path) {
  auto html = render_bench_report(doc);
  if (!html) return html.error();
  // whole or not at all: an interrupted run leaves the previous report as it was
  if (Status st = write_file_atomic(path, *html); !st)
    return make_error("cannot write the report to '%s': %s", path.c_str(), st.error().message.c_str());
  return {};
}

Result<json> read_bench_document(const std::string& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  auto doc = parse_json_input(*text, path);
  if (!doc) return doc.error();
  json j = json::parse(doc->dump());
  if (auto kind = report_kind(j); !kind) return make_error("%s: %s", path.c_str(), kind.error().message.c_str());
  return j;
}

Status check_report_flags(const std::string& report, const std::string& report_from, bool url_given) {
  if (!report_from.empty() && report.empty()) return Error{"--report-from needs --report FILE: the page to write"};
  if (!report_from.empty() && url_given)
    return Error{"--report-from draws a saved run and runs no benchmark: it does not take --url"};
  if (report.empty()) return {};
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::path(report).parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir, ec))
    return make_error("--report: the directory '%s' does not exist", dir.string().c_str());
  if (std::filesystem::is_directory(report, ec)) return make_error("--report: '%s' is a directory", report.c_str());
  return {};
}

int report_from_file(const std::string& in, const std::string& out) {
  auto doc = read_bench_document(in);
  if (!doc) return fail("bench", doc.error().message);
  if (Status st = write_bench_report(*doc, out); !st) return fail("bench", st.error().message);
  std::fprintf(stderr, "bench: report written to %s\n", out.c_str());
  return kExitOk;
}

}  // namespace nt::cli

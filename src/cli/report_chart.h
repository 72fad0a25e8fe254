// cli/report_chart.h — what a bench report shows, before it is HTML: charts (series of points, or of
// values drawn as a CDF, for web/charts.js) each with the table of its numbers, built from the
// `bench -o json` documents: one `bench --url` run, a comparison of servers ({"servers": [{"label",
// "result"}], "rounds"}), or the offline bench's rows.
// Must not know: HTML, how the benchmark ran.
#pragma once

#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"

namespace nt::cli {

struct ReportSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y); NaN y: not drawn
  std::vector<double> cdf_values;                 // drawn as their CDF instead, when not empty
};

struct ReportTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // plain text, escaped when written
};

struct ReportChart {
  std::string id;  // the element id the chart is drawn into (unique in the page)
  std::string title, x_label, y_label, note;
  bool log_x = false;
  bool line = true;                                         // join the points of a series
  double y_max = std::numeric_limits<double>::quiet_NaN();  // fixed top of the y axis (a CDF: 1)
  std::vector<ReportSeries> series;
  ReportTable table;  // the numbers, shown under the chart
};

struct ReportPage {
  std::string title;
  std::vector<std::string> facts;  // "url http://...", "model ..." lines under the title
  std::vector<ReportChart> charts;
  std::vector<std::pair<std::string, ReportTable>> tables;  // titled tables after the charts (rounds)
};

ReportChart new_chart(std::string id, std::string title, std::string x_label, std::string y_label);

enum class ReportKind { UrlRun, Comparison, Offline };

// Which document this is; an error a user can act on when it is none of them.
Result<ReportKind> report_kind(const nlohmann::json& doc);

// The page of a `bench --url` run or a comparison of servers.
Result<ReportPage> url_report_page(const nlohmann::json& doc);
// The page of the offline bench's rows (`bench -m ... -o json`).
Result<ReportPage> offline_report_page(const nlohmann::json& doc);

// Helpers shared by the page builders: a number field (NaN when absent, null or not a number), a
// string field ("" likewise), a table cell ("-" for NaN), a log x axis when the values span 8x.
double num_field(const nlohmann::json& j, const char* key);
std::string str_field(const nlohmann::json& j, const char* key);
std::string cell(double v, int decimals);
bool wide_range(const std::vector<double>& xs);
// The chart's spec for web/charts.js's chart(): {id, title, xLabel, yLabel, logX, line, series}.
nlohmann::json chart_spec_json(const ReportChart& c);

}  // namespace nt::cli

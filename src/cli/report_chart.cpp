// cli/report_chart.cpp — see report_chart.h: which document a report is drawn from, the field
// accessors the page builders share, and a chart's spec for web/charts.js.
#include "cli/report_chart.h"

#include <algorithm>
#include <cmath>

#include "core/strings.h"

namespace nt::cli {

using nlohmann::json;

double num_field(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nan("");
  return j[key].get<double>();
}

std::string str_field(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

std::string cell(double v, int decimals) { return std::isfinite(v) ? str_printf("%.*f", decimals, v) : "-"; }

bool wide_range(const std::vector<double>& xs) {
  if (xs.empty()) return false;
  const auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
  return *lo > 0 && *hi / *lo >= 8;
}

ReportChart new_chart(std::string id, std::string title, std::string x_label, std::string y_label) {
  ReportChart c;
  c.id = std::move(id), c.title = std::move(title), c.x_label = std::move(x_label), c.y_label = std::move(y_label);
  return c;
}

Result<ReportKind> report_kind(const json& doc) {
  const char* expected =
      "expected what `nexttok bench -o json` prints: the offline rows (a JSON array), a --url run (an object "
      "with \"levels\") or a comparison (an object with \"servers\": [{\"label\", \"result\"}])";
  if (doc.is_array()) {
    if (doc.empty()) return Error{"the bench document has no rows to draw"};
    for (const json& r : doc)
      if (!r.is_object() || !r.contains("avg_ts") || !r["avg_ts"].is_number())
        return make_error("a row of the bench document has no number \"avg_ts\"; %s", expected);
    return ReportKind::Offline;
  }
  if (doc.is_object() && doc.contains("servers")) {
    const json& s = doc["servers"];
    if (!s.is_array() || s.empty()) return make_error("\"servers\" is not a list of servers; %s", expected);
    for (const json& x : s)
      if (!x.is_object() || !x.contains("label") || !x["label"].is_string() || !x.contains("result") ||
          !x["result"].is_object() || !x["result"].contains("levels") || !x["result"]["levels"].is_array())
        return make_error("each of \"servers\" needs a \"label\" and a \"result\" with \"levels\"; %s", expected);
    return ReportKind::Comparison;
  }
  if (doc.is_object() && doc.contains("levels") && doc["levels"].is_array()) return ReportKind::UrlRun;
  return make_error("not a bench document: %s", expected);
}

json chart_spec_json(const ReportChart& c) {
  json series = json::array();
  for (const ReportSeries& s : c.series) {
    json j = {{"name", s.name}};
    if (!s.cdf_values.empty()) {
      j["cdf"] = s.cdf_values;
    } else {
      json pts = json::array();
      for (auto [x, y] : s.points) pts.push_back({x, y});  // NaN becomes null: not drawn
      j["points"] = std::move(pts);
    }
    series.push_back(std::move(j));
  }
  json spec = {{"id", c.id},      {"title", c.title},   {"xLabel", c.x_label}, {"yLabel", c.y_label},
               {"logX", c.log_x}, {"drawTitle", false}, {"line", c.line},      {"series", std::move(series)}};
  if (std::isfinite(c.y_max)) spec["yMax"] = c.y_max;
  return spec;
}

}  // namespace nt::cli

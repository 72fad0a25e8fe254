// cli/report_html.h — `bench --report FILE`: one self-contained HTML page (no network: the data as
// JSON in the page, web/charts.js inline, a Content-Security-Policy that forbids fetching) with a
// chart and the table of its numbers per measurement, drawn from a `bench -o json` document: a
// `bench --url` run, a comparison of servers, or the offline bench's rows.
// Must not know: how the benchmark ran.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/result.h"

namespace nt::cli {

// The whole page; an error a user can act on when doc is not a bench document.
Result<std::string> render_bench_report(const nlohmann::json& doc);
// Renders and writes it to path.
Status write_bench_report(const nlohmann::json& doc, const std::string& path);
// Reads a saved `bench -o json` document (--report-from): errors name the file, line and column.
Result<nlohmann::json> read_bench_document(const std::string& path);

// --report and --report-from (usage errors): --report-from needs --report and no --url; the
// report's directory must exist (checked before a long benchmark, not after it).
Status check_report_flags(const std::string& report, const std::string& report_from, bool url_given);
// `bench --report-from IN --report OUT`: the exit code (1: IN is not a bench document, OUT unwritable).
int report_from_file(const std::string& in, const std::string& out);

// Text for HTML content and attribute values: & < > " ' escaped.
std::string html_escape(std::string_view s);
// JSON to put inside <script type="application/json">: every '<' written as \u003c, so no label can
// end the element ("</script>") or open a comment.
std::string json_for_script(const nlohmann::json& j);

// web/charts.js, embedded at build time (web_assets.cpp.in).
extern const char* const kChartsJs;

}  // namespace nt::cli

// Tests of `bench --report` (cli/report_html.h, report_chart.h): the page is self-contained (no
// resource outside it, a policy that forbids fetching), carries the bench document and the chart
// specs as JSON that parse back to the same values, shows each chart's numbers in a table, escapes
// labels that try to end the script element; comparisons put every server on the same axes; the
// offline rows chart per model; --report-from and --report through the real binary.
#include "cli/report_html.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/report_chart.h"
#include "cli/scenario_fake_server.h"
#include "support/test_support.h"

namespace nt {
namespace {

using nlohmann::json;

json level(int c, double tok_s, double ttft_p99, std::vector<double> ttfts) {
  json samples = json::array();
  for (double t : ttfts)
    samples.push_back(
        {{"ttft_ms", t}, {"itl_ms", {10.5, 11.25}}, {"output_tokens", 3}, {"e2e_ms", t + 22}, {"error", nullptr}});
  samples.push_back({{"ttft_ms", nullptr}, {"itl_ms", json::array()}, {"error", "HTTP 500"}});
  return {{"concurrency", c},
          {"n_prompt", 64},
          {"n_gen", 3},
          {"ok", ttfts.size()},
          {"errors", 1},
          {"output_tokens_per_s", tok_s},
          {"throughput_req_s", 4.5},
          {"ttft_ms", {{"count", ttfts.size()}, {"p50", 40.25}, {"p90", 50.5}, {"p99", ttft_p99}, {"max", 60}}},
          {"itl_ms", {{"count", 2 * ttfts.size()}, {"p50", 10.5}, {"p90", 11.2}, {"p99", 11.25}, {"max", 11.25}}},
          {"e2e_ms", {{"count", ttfts.size()}, {"p50", 70.0}, {"p90", 80.0}, {"p99", 81.0}}},
          {"kv_cache_usage",
           {{"min", 0.25},
            {"mean", 0.375},
            {"max", 0.5},
            {"samples", {{{"t_s", 0.5}, {"usage", 0.25}}, {{"t_s", 1.0}, {"usage", 0.5}}}}}},
          {"samples", samples}};
}

json url_run(const std::string& model) {
  return {{"url", "http://127.0.0.1:8080"},
          {"model", model},
          {"endpoint", "completions"},
          {"scenario", "concurrency"},
          {"kv_cache_usage_reported", true},
          {"levels", {level(1, 812.25, 55.5, {40, 41}), level(4, 1999.5, 91.75, {70, 90})}}};
}

// The text of the <script type="application/json" id="..."> element, parsed.
json embedded(const std::string& html, const std::string& id) {
  const std::string open = "<script type=\"application/json\" id=\"" + id + "\">";
  const size_t a = html.find(open);
  if (a == std::string::npos) return json();
  const size_t b = html.find("</script>", a);
  return json::parse(html.substr(a + open.size(), b - a - open.size()), nullptr, false);
}

const json* spec_of(const json& specs, const std::string& id) {
  for (const json& s : specs)
    if (s.at("id") == id) return &s;
  return nullptr;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(ReportHtml, UrlRunPageIsSelfContainedWithItsNumbersInTables) {
  const json doc = url_run("tiny");
  auto html = cli::render_bench_report(doc);
  ASSERT_TRUE(html.ok()) << html.error().message;
  const std::string& h = *html;
  EXPECT_EQ(h.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(h.find("Content-Security-Policy\" content=\"default-src 'none'"), std::string::npos);
  // Nothing is loaded from elsewhere: no src or href attribute, no <link>, the charts script inline.
  EXPECT_EQ(h.find(" src="), std::string::npos);
  EXPECT_EQ(h.find(" href="), std::string::npos);
  EXPECT_EQ(h.find("<link"), std::string::npos);
  EXPECT_NE(h.find(cli::kChartsJs), std::string::npos);
  EXPECT_EQ(embedded(h, "nt-bench-data"), doc);
  const json specs = embedded(h, "nt-chart-specs");
  ASSERT_TRUE(specs.is_array()) << h;
  for (const char* id :
       {"chart-tps-concurrency", "chart-ttft-concurrency", "chart-cdf-ttft", "chart-cdf-itl", "chart-kv-time"}) {
    ASSERT_NE(spec_of(specs, id), nullptr) << id;
    EXPECT_NE(h.find(std::string("<div class=\"chart\" id=\"") + id + "\">"), std::string::npos) << id;
  }
  EXPECT_EQ(spec_of(specs, "chart-tps-concurrency")->at("series"),
            json::parse(R"([{"name": "tiny", "points": [[1, 812.25], [4, 1999.5]]}])"));
  EXPECT_EQ(spec_of(specs, "chart-ttft-concurrency")->at("series")[0].at("points"),
            json::parse("[[1, 55.5], [4, 91.75]]"));
  // The CDF's values: the requests that succeeded (the failed one has no TTFT).
  EXPECT_EQ(spec_of(specs, "chart-cdf-ttft")->at("series")[1], json::parse(R"({"name": "tiny c=4", "cdf": [70, 90]})"));
  EXPECT_EQ(spec_of(specs, "chart-cdf-itl")->at("series")[0].at("cdf"), json::parse("[10.5, 11.25, 10.5, 11.25]"));
  EXPECT_EQ(spec_of(specs, "chart-kv-time")->at("series")[0].at("points"), json::parse("[[0.5, 25.0], [1.0, 50.0]]"));
  // The numbers in the tables.
  for (const char* cell :
       {"<td>812.25</td>", "<td>1999.50</td>", "<td>55.5</td>", "<td>91.8</td>", "<td>40.2</td>", "<td>37.5</td>"})
    EXPECT_NE(h.find(cell), std::string::npos) << cell;
}

TEST(ReportHtml, TokensPerSecondOverTimeWhenSamplesHaveStartTimes) {
  json doc = url_run("m");
  auto page = cli::url_report_page(doc);
  ASSERT_TRUE(page.ok());
  for (const auto& c : page->charts) EXPECT_NE(c.id, "chart-tps-time");  // no start_s: not drawn
  // c=1: two requests sent at 0 and 0.1 s: TTFT 40/41 ms, then gaps of 10.5 and 11.25 ms: 6 tokens.
  doc["levels"][0]["samples"][0]["start_s"] = 0.0;
  doc["levels"][0]["samples"][1]["start_s"] = 0.1;
  doc["levels"].erase(1);
  page = cli::url_report_page(doc);
  ASSERT_TRUE(page.ok());
  const cli::ReportChart* c = nullptr;
  for (const auto& x : page->charts)
    if (x.id == "chart-tps-time") c = &x;
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->series.size(), 1u);
  const auto& pts = c->series[0].points;
  ASSERT_EQ(pts.size(), 4u);  // the last token at 0.16275 s: bins of 0.05 s up to 0.2
  double tokens = 0;
  for (auto [x, y] : pts) tokens += y * 0.05;
  EXPECT_NEAR(tokens, 6, 1e-9);
  EXPECT_DOUBLE_EQ(pts.back().first, 0.2);
  // Tokens at 0.04, 0.0505, 0.06175 and 0.141, 0.1515, 0.16275 s: 1, 2, 1, 2 per bin.
  EXPECT_EQ(pts[1].second, 2 / 0.05);
  EXPECT_EQ(pts[2].second, 1 / 0.05);
  EXPECT_EQ(c->table.rows[0], (std::vector<std::string>{"m c=1", "0.05", "6", "40.0"}));
}

TEST(ReportHtml, LabelsCannotEndTheScriptElement) {
  const std::string evil = "</script><script>alert(1)</script><!--";
  json doc = {
      {"servers", {{{"label", "A " + evil}, {"result", url_run(evil)}}, {{"label", "B"}, {"result", url_run("b")}}}},
      {"rounds", {{{"round", 1}, {"server", evil}, {"ratio", 1.25}}}}};
  auto html = cli::render_bench_report(doc);
  ASSERT_TRUE(html.ok()) << html.error().message;
  // The page's own four script elements end, and nothing else does.
  EXPECT_EQ(count(*html, "</script>"), 4u);
  EXPECT_EQ(count(*html, "<!--"), 0u);
  EXPECT_NE(html->find("&lt;/script&gt;&lt;script&gt;alert(1)"), std::string::npos);
  EXPECT_EQ(embedded(*html, "nt-bench-data"), doc);
  EXPECT_EQ(cli::json_for_script(json("a</b>")), "\"a\\u003c/b>\"");
  EXPECT_EQ(cli::html_escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
}

TEST(ReportHtml, ComparisonDrawsEveryServerOnTheSameAxes) {
  json doc = {{"servers", {{{"label", "A"}, {"result", url_run("m")}}, {{"label", "B"}, {"result", url_run("m")}}}},
              {"rounds", {{{"round", 1}, {"server", "A"}, {"result", url_run("m")}}}},
              {"ratios",
               {{{"label", "c=1 p=64 n=3"}, {"output_tokens_per_s", {{"median", 1.125}, {"per_round", {1, 1.25}}}}}}}};
  doc["servers"][1]["result"]["levels"][0]["output_tokens_per_s"] = 400.0;
  ASSERT_EQ(cli::report_kind(doc).value(), cli::ReportKind::Comparison);
  auto html = cli::render_bench_report(doc);
  ASSERT_TRUE(html.ok()) << html.error().message;
  const json specs = embedded(*html, "nt-chart-specs");
  const json& tps = spec_of(specs, "chart-tps-concurrency")->at("series");
  ASSERT_EQ(tps.size(), 2u);
  EXPECT_EQ(tps[0].at("name"), "A");
  EXPECT_EQ(tps[1], json::parse(R"({"name": "B", "points": [[1, 400.0], [4, 1999.5]]})"));
  EXPECT_EQ(spec_of(specs, "chart-cdf-ttft")->at("series").size(), 4u);  // 2 servers x 2 levels
  // The ratios per level (median and per round) and the rounds' levels as tables.
  EXPECT_NE(html->find("<th>output_tokens_per_s A/B median</th><th>per round</th>"), std::string::npos);
  EXPECT_NE(html->find("<tr><td>c=1 p=64 n=3</td><td>1.125</td><td>1, 1.250</td></tr>"), std::string::npos) << *html;
  EXPECT_NE(html->find("<h2>Rounds, in the order they ran</h2>"), std::string::npos);
  EXPECT_NE(html->find("<tr><td>1</td><td>A</td><td>c=4</td><td>1999.50</td><td>40.2</td><td>91.8</td>"),
            std::string::npos);
}

TEST(ReportHtml, ScenarioChartsFollowTheDocument) {
  json prompt = url_run("m");
  prompt["scenario"] = "prompt-length";
  prompt["levels"][1]["n_prompt"] = 512;
  prompt["skipped"] = {{{"n_prompt", 4096}, {"n_gen", 3}, {"reason", "beyond the context"}}};
  auto page = cli::url_report_page(prompt);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->charts[0].id, "chart-ttft-prompt");
  EXPECT_EQ(page->charts[0].series[0].points, (std::vector<std::pair<double, double>>{{64, 40.25}, {512, 40.25}}));
  EXPECT_TRUE(page->charts[0].log_x);  // 64 .. 512
  EXPECT_NE(page->charts[0].note.find("p=4096 skipped: beyond the context"), std::string::npos);

  json rate = url_run("m");
  rate["scenario"] = "rate";
  rate["levels"][0].update({{"rate", 2}, {"goodput_req_s", 1.75}, {"offered_req_s", 2.5}});
  rate["levels"][1].update({{"rate", 8}, {"goodput_req_s", 3.0}, {"offered_req_s", 7.5}});
  page = cli::url_report_page(rate);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->charts[0].id, "chart-goodput-rate");
  EXPECT_EQ(page->charts[0].series[0].name, "m goodput");
  EXPECT_EQ(page->charts[0].series[0].points, (std::vector<std::pair<double, double>>{{2, 1.75}, {8, 3.0}}));
  EXPECT_EQ(page->charts[0].series[1].points, (std::vector<std::pair<double, double>>{{2, 2.5}, {8, 7.5}}));

  json multi = url_run("m");
  multi["scenario"] = "multi-turn";
  multi["levels"].erase(1);
  multi["levels"][0]["turns"] = {{{"turn", 1}, {"cached_tokens_mean", 0}, {"prefilled_tokens_mean", 40.5}},
                                 {{"turn", 2}, {"cached_tokens_mean", 52}, {"prefilled_tokens_mean", nullptr}}};
  page = cli::url_report_page(multi);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->charts[0].id, "chart-turn-tokens");
  EXPECT_EQ(page->charts[0].series[0].name, "m cached");
  EXPECT_EQ(page->charts[0].series[0].points, (std::vector<std::pair<double, double>>{{1, 0}, {2, 52}}));
  EXPECT_TRUE(std::isnan(page->charts[0].series[1].points[1].second));  // not reported: not drawn
  EXPECT_EQ(page->charts[0].table.rows[1].back(), "-");
}

json offline_row(const std::string& file, int p, int n, int d, double ts, double bw_pct = -1) {
  json r = {{"model_filename", file},
            {"model_type", "llama 15M Q8_0"},
            {"n_threads", 2},
            {"n_prompt", p},
            {"n_gen", n},
            {"n_depth", d},
            {"avg_ts", ts},
            {"stddev_ts", 1.5}};
  if (bw_pct >= 0) r["bandwidth_pct"] = bw_pct;
  return r;
}

TEST(ReportHtml, OfflineRowsChartPerModelAgainstPromptLengthAndDepth) {
  json doc = json::array();
  for (const std::string m : {"/m/a.gguf", "/m/b.gguf"})
    for (int d : {0, 4096}) {
      doc.push_back(offline_row(m, 128, 0, d, 1000.25 + d));
      doc.push_back(offline_row(m, 512, 0, d, 900.5 + d));
      doc.push_back(offline_row(m, 0, 128, d, 80.125 + d, 55.5));
    }
  ASSERT_EQ(cli::report_kind(doc).value(), cli::ReportKind::Offline);
  auto page = cli::offline_report_page(doc);
  ASSERT_TRUE(page.ok()) << page.error().message;
  std::vector<std::string> ids;
  for (const auto& c : page->charts) ids.push_back(c.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"chart-pp-prompt", "chart-pp-depth", "chart-tg", "chart-tg-bandwidth"}));
  const auto& pp = page->charts[0].series;
  ASSERT_EQ(pp.size(), 4u);  // 2 models x 2 depths
  EXPECT_EQ(pp[0].name, "a.gguf d=0");
  EXPECT_EQ(pp[0].points, (std::vector<std::pair<double, double>>{{128, 1000.25}, {512, 900.5}}));
  EXPECT_EQ(page->charts[2].series[1].name, "b.gguf tg128");
  EXPECT_EQ(page->charts[2].series[1].points, (std::vector<std::pair<double, double>>{{0, 80.125}, {4096, 4176.125}}));
  EXPECT_EQ(page->charts[3].series[0].points, (std::vector<std::pair<double, double>>{{0, 55.5}, {4096, 55.5}}));
  auto html = cli::render_bench_report(doc);
  ASSERT_TRUE(html.ok());
  for (const char* cell : {"<td>1000.25</td>", "<td>80.12</td>", "<td>55.5</td>", "<td>tg128 @ d4096</td>"})
    EXPECT_NE(html->find(cell), std::string::npos) << cell;
}

TEST(ReportHtml, RefusesDocumentsThatAreNotBenchOutput) {
  for (const char* text : {"{}", "[]", "[{\"x\": 1}]", "{\"servers\": [{\"label\": \"A\"}]}", "{\"levels\": 3}", "7"}) {
    auto r = cli::render_bench_report(json::parse(text));
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.error().message.find("bench"), std::string::npos) << r.error().message;
  }
}

TEST(ReportHtml, EmbeddedChartsScriptIsWebChartsJs) {
  EXPECT_EQ(std::string(cli::kChartsJs), test::read_text(std::string(NT_SOURCE_DIR) + "/web/charts.js"));
}

TEST(BenchReport, ReportFromRendersASavedRunAndRefusesBadInput) {
  const std::string dir = test::temp_dir();
  test::write_text(dir + "/run.json", url_run("m").dump());
  auto r = test::run_nexttok({"bench", "--report-from", dir + "/run.json", "--report", dir + "/out.html"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("report written to " + dir + "/out.html"), std::string::npos);
  EXPECT_EQ(embedded(test::read_text(dir + "/out.html"), "nt-bench-data"), url_run("m"));

  test::write_text(dir + "/bad.json", "{\n  \"levels\": [1,\n");
  r = test::run_nexttok({"bench", "--report-from", dir + "/bad.json", "--report", dir + "/x.html"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find(dir + "/bad.json:3:"), std::string::npos) << r.err;
  test::write_text(dir + "/other.json", "{\"a\": 1}");
  r = test::run_nexttok({"bench", "--report-from", dir + "/other.json", "--report", dir + "/x.html"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("not a bench document"), std::string::npos) << r.err;

  r = test::run_nexttok({"bench", "--report-from", dir + "/run.json"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--report-from needs --report"), std::string::npos) << r.err;
  r = test::run_nexttok({"bench", "--url", "http://127.0.0.1:1", "--report", dir + "/no/such/dir/x.html"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
}

TEST(BenchReport, UrlRunWritesTheDocumentItPrints) {
  test::ScenarioFake fake({.first_token_ms = 20, .gap_ms = 5});
  const std::string dir = test::temp_dir();
  auto r = test::run_nexttok({"bench", "--url", fake.url(), "--concurrency", "1,2", "-p", "8", "-n", "4", "--requests",
                              "2", "-o", "json", "--report", dir + "/r.html"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string html = test::read_text(dir + "/r.html");
  EXPECT_EQ(embedded(html, "nt-bench-data"), json::parse(r.out));
  const json specs = embedded(html, "nt-chart-specs");
  ASSERT_NE(spec_of(specs, "chart-tps-concurrency"), nullptr);
  EXPECT_EQ(spec_of(specs, "chart-tps-concurrency")->at("series")[0].at("points").size(), 2u);
}

TEST(BenchReport, OfflineBenchWritesAReport) {
  NT_REQUIRE_SHARED();
  const std::string dir = test::temp_dir();
  auto r = test::run_nexttok({"bench", "-m", test::shared_path("models/stories15M-q8_0.gguf"), "-p", "16,32", "-n", "4",
                              "-d", "0,16", "-r", "1", "-t", "1", "--report", dir + "/o.html"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("| pp16 |"), std::string::npos) << r.out;  // the table is still printed
  const std::string html = test::read_text(dir + "/o.html");
  const json rows = embedded(html, "nt-bench-data");
  ASSERT_TRUE(rows.is_array());
  EXPECT_EQ(rows.size(), 6u);  // (pp16, pp32, tg4) x 2 depths
  const json specs = embedded(html, "nt-chart-specs");
  for (const char* id : {"chart-pp-prompt", "chart-pp-depth", "chart-tg"}) EXPECT_NE(spec_of(specs, id), nullptr) << id;
}

}  // namespace
}  // namespace nt

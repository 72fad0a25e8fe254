// tests/server/metrics_test.cpp — the Prometheus exposition of ServerMetrics: histogram buckets,
// the vLLM names the inference gateways read, label escaping, well-formedness (our own parser and
// promtool when installed) and counts under concurrent observers.
#include "server/metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>
#include <unistd.h>

#include "support/test_support.h"

namespace nt::server {
namespace {

// --- A strict parser of the subset of text format 0.0.4 that render() writes.

using LabelMap = std::map<std::string, std::string>;
struct Sample {
  std::string name;
  LabelMap labels;
  double value = 0;
};
struct Exposition {
  std::map<std::string, std::string> types;  // family -> type
  std::vector<Sample> samples;
  std::vector<std::string> errors;
};

bool is_metric_name(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':'; });
}

bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

// Parses one sample line; false (with `err`) when malformed.
bool parse_sample(const std::string& line, Sample& out, std::string& err) {
  size_t i = 0;
  while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
  out.name = line.substr(0, i);
  if (!is_metric_name(out.name)) return err = "bad metric name", false;
  if (i < line.size() && line[i] == '{') {
    ++i;
    while (true) {
      size_t start = i;
      while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_')) ++i;
      std::string lname = line.substr(start, i - start);
      if (lname.empty() || std::isdigit(static_cast<unsigned char>(lname[0]))) return err = "bad label name", false;
      if (line.compare(i, 2, "=\"") != 0) return err = "expected =\" after label name", false;
      i += 2;
      std::string v;
      while (i < line.size() && line[i] != '"') {
        if (line[i] == '\\') {
          if (i + 1 >= line.size()) return err = "dangling backslash", false;
          char e = line[i + 1];
          if (e == 'n') v += '\n';
          else if (e == '\\' || e == '"') v += e;
          else return err = "bad escape", false;
          i += 2;
        } else {
          v += line[i++];
        }
      }
      if (i >= line.size()) return err = "unterminated label value", false;
      ++i;
      if (!out.labels.emplace(lname, v).second) return err = "duplicate label " + lname, false;
      if (i < line.size() && line[i] == ',') { ++i; continue; }
      if (i < line.size() && line[i] == '}') { ++i; break; }
      return err = "expected , or } after label value", false;
    }
  }
  if (i >= line.size() || line[i] != ' ') return err = "expected a space before the value", false;
  std::string v = line.substr(i + 1);
  if (v == "+Inf") out.value = INFINITY;
  else if (v == "-Inf") out.value = -INFINITY;
  else if (v == "NaN") out.value = NAN;
  else {
    char* end = nullptr;
    out.value = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0') return err = "bad value '" + v + "'", false;
  }
  return true;
}

// Every family: HELP then TYPE, once; its samples right after, none elsewhere.
Exposition parse(const std::string& text) {
  Exposition ex;
  if (text.empty() || text.back() != '\n') ex.errors.push_back("output does not end with a newline");
  std::istringstream in(text);
  std::string line, current, help_of;
  std::set<std::string> helped;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    auto fail = [&](const std::string& why) { ex.errors.push_back("line " + std::to_string(n) + ": " + why + ": " + line); };
    if (line.rfind("# HELP ", 0) == 0) {
      std::string rest = line.substr(7);
      std::string name = rest.substr(0, rest.find(' '));
      if (!is_metric_name(name)) fail("bad family name");
      if (!helped.insert(name).second) fail("duplicate HELP");
      help_of = name;
    } else if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream ls(line.substr(7));
      std::string name, type, extra;
      ls >> name >> type >> extra;
      if (name != help_of) fail("TYPE without its HELP just before");
      static const std::set<std::string> kTypes = {"counter", "gauge", "histogram", "summary", "untyped"};
      if (!kTypes.count(type) || !extra.empty()) fail("bad type");
      if (!ex.types.emplace(name, type).second) fail("duplicate TYPE");
      if (type == "counter" && !ends_with(name, "_total")) fail("counter without _total");
      if (type != "counter" && ends_with(name, "_total")) fail("non-counter ending in _total");
      current = name;
    } else if (line.empty() || line[0] == '#') {
      fail("unexpected comment or blank line");
    } else {
      Sample s;
      std::string err;
      if (!parse_sample(line, s, err)) { fail(err); continue; }
      std::string family = s.name;
      for (const char* suf : {"_bucket", "_sum", "_count"}) {
        std::string base = s.name.substr(0, s.name.size() - std::min(s.name.size(), std::strlen(suf)));
        if (ends_with(s.name, suf) && ex.types.count(base) && ex.types[base] == "histogram") family = base;
      }
      if (!ex.types.count(family)) fail("sample without HELP/TYPE");
      else if (family != current) fail("sample outside its family's block");
      else if (ex.types[family] == "histogram" && family == s.name) fail("bare sample of a histogram");
      if (ends_with(s.name, "_bucket") && family != s.name && !s.labels.count("le")) fail("bucket without le");
      ex.samples.push_back(std::move(s));
    }
  }
  return ex;
}

// The value of the one sample with this name and exactly these labels.
std::optional<double> value(const Exposition& ex, const std::string& name, const LabelMap& labels) {
  std::optional<double> found;
  for (const auto& s : ex.samples) {
    if (s.name != name || s.labels != labels) continue;
    if (found) ADD_FAILURE() << "two samples " << name;
    found = s.value;
  }
  return found;
}

const std::string kModel = "stories15M";
const LabelMap kM = {{"model_name", kModel}};

MetricsInfo info(const std::string& model = kModel) {
  MetricsInfo i;
  i.model_name = model;
  i.n_parallel = 4;
  return i;
}

// Every field distinct, so a swapped mapping shows.
EngineStats busy_stats() {
  EngineStats s;
  s.running = 3;
  s.waiting = 5;
  s.block_size = 16;
  s.blocks_total = 100;
  s.blocks_used = 30;
  s.blocks_cached = 20;
  s.blocks_free = 50;
  s.prefix_queried_tokens = 1001;
  s.prefix_hit_tokens = 402;
  s.requests_finished = 7;
  s.prompt_tokens = 903;
  s.cached_tokens = 304;
  s.computed_tokens = 2005;
  s.generated_tokens = 606;
  s.steps = 77;
  s.preemptions = 2;
  return s;
}

// --- Histogram

TEST(HistogramTest, BucketsAreCumulativeWithInclusiveUpperBounds) {
  Histogram h({1, 2, 5});
  for (double v : {0.5, 1.0, 1.5, 3.0, 10.0, 10.0, -1.0}) h.observe(v);
  h.observe(NAN);  // ignored: it would make the sum NaN
  Histogram::Snapshot s = h.snapshot();
  EXPECT_EQ(s.bounds, (std::vector<double>{1, 2, 5}));
  EXPECT_EQ(s.cumulative, (std::vector<uint64_t>{3, 4, 5, 7}));  // le=1 holds 1.0 itself, and -1
  EXPECT_EQ(s.count, 7u);
  EXPECT_EQ(s.cumulative.back(), s.count);
  EXPECT_DOUBLE_EQ(s.sum, 25.0);
}

TEST(HistogramTest, EmptyHistogramIsAllZero) {
  Histogram::Snapshot s = Histogram({0.1, 1}).snapshot();
  EXPECT_EQ(s.cumulative, (std::vector<uint64_t>{0, 0, 0}));
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.sum, 0.0);
}

TEST(HistogramTest, RenderedBucketsAreCumulativeAndInfEqualsCount) {
  ServerMetrics m;
  for (double v : {0.0005, 0.001, 0.05, 3.0, 5000.0}) m.observe_ttft(v);
  Exposition ex = parse(m.render(EngineStats{}, info()));
  ASSERT_TRUE(ex.errors.empty()) << ex.errors.front();
  auto bucket = [&](const std::string& le) {
    LabelMap l = kM;
    l["le"] = le;
    return value(ex, "vllm:time_to_first_token_seconds_bucket", l);
  };
  EXPECT_EQ(bucket("0.001"), 2.0);
  EXPECT_EQ(bucket("0.04"), 2.0);
  EXPECT_EQ(bucket("0.06"), 3.0);
  EXPECT_EQ(bucket("2.5"), 3.0);
  EXPECT_EQ(bucket("5"), 4.0);
  EXPECT_EQ(bucket("2560"), 4.0);
  EXPECT_EQ(bucket("+Inf"), 5.0);
  EXPECT_EQ(value(ex, "vllm:time_to_first_token_seconds_count", kM), 5.0);
  ASSERT_TRUE(value(ex, "vllm:time_to_first_token_seconds_sum", kM).has_value());
  EXPECT_NEAR(*value(ex, "vllm:time_to_first_token_seconds_sum", kM), 5003.0515, 1e-9);

  // Every histogram: buckets in ascending le, never decreasing, +Inf last and equal to _count.
  const std::map<std::string, size_t> n_bounds = {{"vllm:time_to_first_token_seconds", 22},
                                                   {"vllm:inter_token_latency_seconds", 19},
                                                   {"vllm:e2e_request_latency_seconds", 21},
                                                   {"vllm:request_queue_time_seconds", 21}};
  for (const auto& [name, n] : n_bounds) {
    EXPECT_EQ(ex.types[name], "histogram") << name;
    std::vector<std::pair<double, double>> buckets;  // (le, count)
    for (const auto& s : ex.samples)
      if (s.name == name + "_bucket") buckets.emplace_back(std::strtod(s.labels.at("le").c_str(), nullptr), s.value);
    ASSERT_EQ(buckets.size(), n + 1) << name;
    EXPECT_TRUE(std::isinf(buckets.back().first)) << name;
    for (size_t i = 1; i < buckets.size(); ++i) {
      EXPECT_LT(buckets[i - 1].first, buckets[i].first) << name;
      EXPECT_LE(buckets[i - 1].second, buckets[i].second) << name;
    }
    EXPECT_EQ(value(ex, name + "_count", kM), buckets.back().second) << name;
  }
}

// --- ServerMetrics

TEST(MetricsTest, KvCacheUsageCountsCachedBlocksAsFree) {
  ServerMetrics m;
  Exposition ex = parse(m.render(busy_stats(), info()));
  ASSERT_TRUE(ex.errors.empty()) << ex.errors.front();
  // 30 used of 100; the 20 cached, unreferenced blocks are reclaimable like the 50 free ones.
  ASSERT_TRUE(value(ex, "vllm:kv_cache_usage_perc", kM).has_value());
  EXPECT_NEAR(*value(ex, "vllm:kv_cache_usage_perc", kM), 0.3, 1e-12);
  EXPECT_EQ(value(ex, "vllm:gpu_cache_usage_perc", kM), value(ex, "vllm:kv_cache_usage_perc", kM));
  EXPECT_EQ(value(ex, "nexttok_kv_blocks", {{"state", "used"}}), 30.0);
  EXPECT_EQ(value(ex, "nexttok_kv_blocks", {{"state", "cached"}}), 20.0);
  EXPECT_EQ(value(ex, "nexttok_kv_blocks", {{"state", "free"}}), 50.0);
  EXPECT_EQ(value(ex, "nexttok_kv_blocks_capacity", {}), 100.0);
  EXPECT_EQ(value(ex, "vllm:cache_config_info", {{"model_name", kModel}, {"block_size", "16"}, {"num_gpu_blocks", "100"}}),
            1.0);

  // No pool yet: 0, not a division by zero.
  Exposition empty = parse(m.render(EngineStats{}, info()));
  EXPECT_EQ(value(empty, "vllm:kv_cache_usage_perc", kM), 0.0);
  EXPECT_EQ(value(empty, "vllm:gpu_cache_usage_perc", kM), 0.0);
}

TEST(MetricsTest, FinishReasonsMapToVllmsFinishedReason) {
  ServerMetrics m;
  const std::pair<FinishReason, int> calls[] = {{FinishReason::Stop, 1},   {FinishReason::Eog, 2},
                                                {FinishReason::Length, 3}, {FinishReason::Context, 4},
                                                {FinishReason::Cancelled, 5}, {FinishReason::Error, 6}};
  for (const auto& [r, n] : calls)
    for (int i = 0; i < n; ++i) m.request_finished(r);
  Exposition ex = parse(m.render(EngineStats{}, info()));
  ASSERT_TRUE(ex.errors.empty()) << ex.errors.front();
  auto success = [&](const char* reason) {
    return value(ex, "vllm:request_success_total", {{"model_name", kModel}, {"finished_reason", reason}});
  };
  EXPECT_EQ(success("stop"), 3.0);    // Stop + Eog
  EXPECT_EQ(success("length"), 7.0);  // Length + Context
  EXPECT_EQ(success("abort"), 5.0);   // Cancelled
  EXPECT_EQ(value(ex, "nexttok_request_errors_total", {}), 6.0);
  size_t n_success = 0;
  for (const auto& s : ex.samples) n_success += s.name == "vllm:request_success_total";
  EXPECT_EQ(n_success, 3u);  // errors are not a finished_reason
}

TEST(MetricsTest, EngineStatsMapToTheirNames) {
  ServerMetrics m;
  Exposition ex = parse(m.render(busy_stats(), info()));
  ASSERT_TRUE(ex.errors.empty()) << ex.errors.front();
  const std::vector<std::tuple<std::string, LabelMap, double>> want = {
      {"vllm:num_requests_running", kM, 3},
      {"vllm:num_requests_waiting", kM, 5},
      {"vllm:prefix_cache_queries_total", kM, 1001},
      {"vllm:prefix_cache_hits_total", kM, 402},
      {"vllm:prompt_tokens_total", kM, 903},
      {"vllm:generation_tokens_total", kM, 606},
      {"vllm:num_preemptions_total", kM, 2},
      {"nexttok_requests_running", {}, 3},
      {"nexttok_requests_waiting", {}, 5},
      {"nexttok_parallel_slots", {}, 4},
      {"nexttok_requests_finished_total", {}, 7},
      {"nexttok_prompt_tokens_total", {}, 903},
      {"nexttok_prompt_tokens_cached_total", {}, 304},
      {"nexttok_computed_tokens_total", {}, 2005},
      {"nexttok_generated_tokens_total", {}, 606},
      {"nexttok_steps_total", {}, 77},
      {"nexttok_preemptions_total", {}, 2},
  };
  for (const auto& [name, labels, v] : want) EXPECT_EQ(value(ex, name, labels), v) << name;
}

TEST(MetricsTest, ModelNameLabelIsEscaped) {
  const std::string odd = "we\"ird\\model\nname";
  ServerMetrics m;
  std::string text = m.render(busy_stats(), info(odd));
  EXPECT_NE(text.find(R"(vllm:num_requests_running{model_name="we\"ird\\model\nname"} 3)" "\n"), std::string::npos)
      << text;
  Exposition ex = parse(text);
  ASSERT_TRUE(ex.errors.empty()) << ex.errors.front();
  EXPECT_EQ(value(ex, "vllm:num_requests_waiting", {{"model_name", odd}}), 5.0);
  // A raw newline inside a label would split the sample: every line is a comment or a whole sample.
  size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  EXPECT_EQ(lines, ex.samples.size() + 2 * ex.types.size());
}

TEST(MetricsTest, OutputParsesAsPrometheusText) {
  ServerMetrics m;
  m.observe_ttft(0.2);
  m.observe_itl(0.03);
  m.observe_e2e(1.7);
  m.observe_queue(0.01);
  m.request_finished(FinishReason::Stop);
  for (int code : {503, 200, 400, 200}) m.http_response(code);
  std::string text = m.render(busy_stats(), info());
  Exposition ex = parse(text);
  for (const auto& e : ex.errors) ADD_FAILURE() << e;
  const std::map<std::string, std::string> want = {
      {"vllm:num_requests_running", "gauge"},       {"vllm:num_requests_waiting", "gauge"},
      {"vllm:kv_cache_usage_perc", "gauge"},        {"vllm:gpu_cache_usage_perc", "gauge"},
      {"vllm:prefix_cache_queries_total", "counter"}, {"vllm:prefix_cache_hits_total", "counter"},
      {"vllm:prompt_tokens_total", "counter"},      {"vllm:generation_tokens_total", "counter"},
      {"vllm:num_preemptions_total", "counter"},    {"vllm:request_success_total", "counter"},
      {"vllm:time_to_first_token_seconds", "histogram"}, {"vllm:inter_token_latency_seconds", "histogram"},
      {"vllm:e2e_request_latency_seconds", "histogram"}, {"vllm:request_queue_time_seconds", "histogram"},
      {"vllm:cache_config_info", "gauge"},          {"nexttok_kv_blocks", "gauge"},
      {"nexttok_kv_blocks_capacity", "gauge"},      {"nexttok_requests_running", "gauge"},
      {"nexttok_requests_waiting", "gauge"},        {"nexttok_parallel_slots", "gauge"},
      {"nexttok_requests_finished_total", "counter"}, {"nexttok_request_errors_total", "counter"},
      {"nexttok_prompt_tokens_total", "counter"},   {"nexttok_prompt_tokens_cached_total", "counter"},
      {"nexttok_computed_tokens_total", "counter"}, {"nexttok_generated_tokens_total", "counter"},
      {"nexttok_steps_total", "counter"},           {"nexttok_preemptions_total", "counter"},
      {"nexttok_state_snapshots", "gauge"},         {"nexttok_state_snapshot_bytes", "gauge"},
      {"nexttok_state_snapshot_hits_total", "counter"}, {"nexttok_http_responses_total", "counter"},
  };
  for (const auto& [name, type] : want) EXPECT_EQ(ex.types[name], type) << name;
  for (const auto& s : ex.samples)
    if (s.name.rfind("vllm:", 0) == 0) {
      EXPECT_EQ(s.labels.at("model_name"), kModel) << s.name;
    }
  EXPECT_EQ(value(ex, "nexttok_http_responses_total", {{"code", "200"}}), 2.0);
  EXPECT_EQ(value(ex, "nexttok_http_responses_total", {{"code", "400"}}), 1.0);
  EXPECT_EQ(value(ex, "nexttok_http_responses_total", {{"code", "503"}}), 1.0);
  // Codes in ascending order, so successive scrapes diff cleanly.
  EXPECT_LT(text.find("code=\"200\""), text.find("code=\"400\""));
  EXPECT_LT(text.find("code=\"400\""), text.find("code=\"503\""));
}

// The PATH entry holding `name`, or "".
std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string p = (dir.empty() ? "." : dir) + "/" + name;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

TEST(MetricsTest, PromtoolReportsOnlyColonNotes) {
  std::string promtool = find_on_path("promtool");
  if (promtool.empty()) GTEST_SKIP() << "promtool not on PATH (Debian package `prometheus`, see scripts/deps.sh)";
  ServerMetrics m;
  for (double v : {0.002, 0.3, 12.0}) m.observe_ttft(v);
  m.observe_itl(0.04);
  m.observe_e2e(2.2);
  m.observe_queue(0.4);
  m.request_finished(FinishReason::Length);
  m.request_finished(FinishReason::Error);
  m.http_response(200);
  m.http_response(429);
  std::string text = m.render(busy_stats(), info("qwen3 \"0.6B\""));
  std::string file = nt::test::temp_dir() + "/metrics.txt";
  nt::test::write_text(file, text);
  nt::test::CmdResult r = nt::test::run_program({promtool, "check", "metrics"}, text);
  std::string report = r.out + r.err;
  // promtool exits 3 on any lint note; the only acceptable one is the colon in vLLM's names.
  std::istringstream lines(report);
  std::string line;
  int colon_notes = 0;
  const std::string note = " metric names should not contain ':'";
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    bool ok = line.rfind("vllm:", 0) == 0 && ends_with(line, note) &&
              is_metric_name(line.substr(0, line.size() - note.size()));
    EXPECT_TRUE(ok) << "promtool: " << line << "\n(input: " << file << ")";
    colon_notes += ok;
  }
  EXPECT_GT(colon_notes, 0) << "promtool said nothing about vllm: names; did it read the input? rc=" << r.rc
                            << " output: " << report;
  EXPECT_TRUE(r.rc == 0 || r.rc == 3) << "promtool rc " << r.rc << ": " << report;
}

TEST(MetricsTest, ConcurrentObservesAddUp) {
  constexpr int kThreads = 4, kPerThread = 10000, kMaxRenders = 2000;
  ServerMetrics m;
  std::atomic<int> running{kThreads};
  std::atomic<bool> go{false};  // observers start once the scraper is looping, so the two overlap
  std::vector<std::thread> observers;
  for (int t = 0; t < kThreads; ++t) {
    observers.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < kPerThread; ++i) {
        m.observe_ttft(0.25);
        m.observe_itl(t % 2 ? 0.01 : 100.0);
        m.request_finished(FinishReason::Stop);
        m.http_response(200 + t % 2);
      }
      running.fetch_sub(1);
    });
  }
  // Renders while the observers run: each scrape well-formed, each histogram self-consistent.
  int renders = 0;
  double last_count = 0;
  std::thread scraper([&] {
    go.store(true);
    while (running.load() > 0 && renders < kMaxRenders) {
      Exposition ex = parse(m.render(busy_stats(), info()));
      if (!ex.errors.empty()) ADD_FAILURE() << ex.errors.front();
      LabelMap inf = kM;
      inf["le"] = "+Inf";
      double count = value(ex, "vllm:time_to_first_token_seconds_count", kM).value_or(-1);
      EXPECT_EQ(value(ex, "vllm:time_to_first_token_seconds_bucket", inf), count);
      EXPECT_GE(count, last_count);  // counters never go back
      last_count = count;
      ++renders;
    }
  });
  for (auto& t : observers) t.join();
  scraper.join();
  EXPECT_GT(renders, 0);

  Exposition ex = parse(m.render(busy_stats(), info()));
  ASSERT_TRUE(ex.errors.empty()) << ex.errors.front();
  const double total = kThreads * kPerThread;
  LabelMap le = kM;
  le["le"] = "0.25";
  EXPECT_EQ(value(ex, "vllm:time_to_first_token_seconds_bucket", le), total);
  EXPECT_EQ(value(ex, "vllm:time_to_first_token_seconds_count", kM), total);
  EXPECT_EQ(value(ex, "vllm:time_to_first_token_seconds_sum", kM), 0.25 * total);  // exact in binary
  le["le"] = "0.01";
  EXPECT_EQ(value(ex, "vllm:inter_token_latency_seconds_bucket", le), total / 2);
  le["le"] = "80";
  EXPECT_EQ(value(ex, "vllm:inter_token_latency_seconds_bucket", le), total / 2);
  EXPECT_EQ(value(ex, "vllm:inter_token_latency_seconds_count", kM), total);
  EXPECT_EQ(value(ex, "vllm:request_success_total", {{"model_name", kModel}, {"finished_reason", "stop"}}), total);
  EXPECT_EQ(value(ex, "nexttok_http_responses_total", {{"code", "200"}}), total / 2);
  EXPECT_EQ(value(ex, "nexttok_http_responses_total", {{"code", "201"}}), total / 2);
}

}  // namespace
}  // namespace nt::server

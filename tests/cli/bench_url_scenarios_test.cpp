// Tests of the scenarios of `nexttok bench --url` against a fake server that streams at known rates
// (scenario_fake_server.h): the measured TTFT, inter-token latency, tokens/s and goodput must equal
// what the fake's first-token delay, token gap and capacity make them (within 5% or 20 ms); the rate
// sweep's highest rate within the SLOs, the per-turn cached and prefilled tokens of multi-turn, the
// KV-cache use sampled from /metrics, the live progress line on a terminal; and the pure parts.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli/bench_levels.h"
#include "cli/bench_monitor.h"
#include "cli/bench_url_report.h"
#include "cli/scenario_fake_server.h"
#include "support/test_support.h"

namespace nt {
namespace {

using nlohmann::json;
using test::ScenarioFake;

// Latencies: within 5% or 20 ms, whichever is wider; rates: within 5%.
void expect_ms(const json& got, double want, const std::string& what) {
  ASSERT_TRUE(got.is_number()) << what << ": " << got.dump();
  EXPECT_NEAR(got.get<double>(), want, std::max(20.0, 0.05 * want)) << what;
}
void expect_rate(const json& got, double want, const std::string& what) {
  ASSERT_TRUE(got.is_number()) << what << ": " << got.dump();
  EXPECT_NEAR(got.get<double>(), want, 0.05 * want) << what;
}

json run_json(std::vector<std::string> args, test::CmdResult* keep = nullptr) {
  args.insert(args.begin(), "bench");
  args.insert(args.end(), {"-o", "json"});
  test::CmdResult r = test::run_nexttok(args);
  if (keep) *keep = r;
  EXPECT_EQ(r.rc, 0) << r.err;
  json doc = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(doc.is_discarded()) << r.out << r.err;
  return doc;
}

TEST(BenchUrlScenarios, ConcurrencyMeasuresTheFakesTimingsAndGoodput) {
  ScenarioFake fake({.first_token_ms = 60, .gap_ms = 20, .capacity = 2});
  // A request: TTFT 60 ms, 5 gaps of 20 ms, 160 ms in all; 6 tokens. Capacity 2: at c=4 two wait 160 ms.
  const json doc = run_json({"--url", fake.url(), "--concurrency", "1,2,4", "-p", "8", "-n", "6", "--requests", "4",
                             "--slo-ttft", "100", "--slo-itl", "30"});
  ASSERT_EQ(doc.at("levels").size(), 3u);
  EXPECT_EQ(doc.at("scenario"), "concurrency");
  struct Want { double ttft_p50, wall_s; int good; };
  const Want want[] = {{60, 0.64, 4}, {60, 0.32, 4}, {140, 0.32, 2}};  // c=4: TTFTs 60, 60, 220, 220
  for (size_t i = 0; i < 3; ++i) {
    const json& l = doc["levels"][i];
    const std::string at = "c=" + l.at("concurrency").dump();
    EXPECT_EQ(l.at("ok"), 4) << at;
    expect_ms(l.at("ttft_ms").at("p50"), want[i].ttft_p50, at + " TTFT p50");
    expect_ms(l.at("itl_ms").at("p50"), 20, at + " ITL p50");
    expect_ms(l.at("itl_ms").at("mean"), 20, at + " ITL mean");
    expect_rate(l.at("output_tokens_per_s"), 24 / want[i].wall_s, at + " output tok/s");
    EXPECT_EQ(l.at("good"), want[i].good) << at;
    EXPECT_DOUBLE_EQ(l.at("slo_attainment").get<double>(), want[i].good / 4.0) << at;
    expect_rate(l.at("goodput_req_s"), want[i].good / want[i].wall_s, at + " goodput");
  }
  expect_ms(doc["levels"][2].at("ttft_ms").at("max"), 220, "c=4 TTFT max (queued behind the capacity)");
  expect_ms(doc["levels"][0].at("e2e_ms").at("p50"), 160, "c=1 e2e p50");
  EXPECT_EQ(fake.max_running(), 2);
}

TEST(BenchUrlScenarios, PromptLengthSweepsTtftAndSkipsBeyondTheContext) {
  ScenarioFake fake({.first_token_ms = 20, .gap_ms = 10, .prefill_ms_per_token = 0.25, .context_limit = 1000});
  test::CmdResult r;
  const json doc = run_json({"--url", fake.url(), "--scenario", "prompt-length", "-p", "40,400,4000", "-n", "3",
                             "--requests", "3"}, &r);
  EXPECT_EQ(doc.at("scenario"), "prompt-length");
  EXPECT_EQ(doc.at("context_limit"), 1000);
  EXPECT_EQ(doc.at("context_limit_source"), "/v1/models meta.context_limit");
  ASSERT_EQ(doc.at("skipped").size(), 1u);
  EXPECT_EQ(doc["skipped"][0].at("n_prompt"), 4000);
  EXPECT_EQ(doc["skipped"][0].at("reason"),
            "p + n = 4003 tokens is beyond the server's context limit of 1000 (/v1/models meta.context_limit)");
  EXPECT_NE(r.err.find("bench: p=4000 skipped: p + n = 4003 tokens"), std::string::npos) << r.err;
  ASSERT_EQ(doc.at("levels").size(), 2u);
  const int p[] = {40, 400};
  for (size_t i = 0; i < 2; ++i) {
    const json& l = doc["levels"][i];
    EXPECT_EQ(l.at("n_prompt"), p[i]);
    EXPECT_FALSE(l.at("prompt_length_estimated").get<bool>());
    EXPECT_EQ(l.at("ok"), 3);
    for (const json& s : l.at("samples")) EXPECT_EQ(s.at("prompt_tokens"), p[i]);  // exact token-id prompts
    expect_ms(l.at("ttft_ms").at("p50"), 20 + 0.25 * p[i], "TTFT at p=" + std::to_string(p[i]));
    expect_ms(l.at("itl_ms").at("p50"), 10, "ITL p50");
  }
  auto table = test::run_nexttok({"bench", "--url", fake.url(), "--scenario", "prompt-length", "-p", "40,4000", "-n",
                                  "3", "--requests", "1"});
  ASSERT_EQ(table.rc, 0) << table.err;
  EXPECT_NE(table.out.find("scenario prompt-length  c 1  n 3  context limit 1000 (/v1/models meta.context_limit)"),
            std::string::npos) << table.out;
  EXPECT_NE(table.out.find("\n     40     1     0 "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("p=4000 skipped: p + n = 4003 tokens"), std::string::npos) << table.out;
}

TEST(BenchUrlScenarios, RateFindsTheHighestRateWithinTheSlos) {
  // 60 ms a request (TTFT 20, 4 gaps of 10), two at once. At 4/s nearly none waits; at 1000/s all
  // 10 arrive within ~10 ms and run in 5 waves: TTFTs 20, 20, 80, 80, ..., 260: 2 of 10 within 70 ms.
  ScenarioFake fake({.first_token_ms = 20, .gap_ms = 10, .capacity = 2});
  test::CmdResult r;
  const json doc = run_json({"--url", fake.url(), "--scenario", "rate", "--rate", "4,1000", "--requests", "10", "-p",
                             "8", "-n", "5", "--slo-ttft", "70", "--slo-itl", "30"}, &r);
  EXPECT_EQ(doc.at("scenario"), "rate");
  ASSERT_EQ(doc.at("levels").size(), 2u);
  const json& slow = doc["levels"][0];
  const json& fast = doc["levels"][1];
  EXPECT_EQ(slow.at("rate"), 4.0);
  EXPECT_EQ(slow.at("ok"), 10);
  EXPECT_GE(slow.at("slo_attainment").get<double>(), 0.9) << slow.dump();
  EXPECT_TRUE(slow.at("meets_slo_share").get<bool>());
  expect_ms(slow.at("ttft_ms").at("p50"), 20, "TTFT p50 at 4/s");
  expect_ms(slow.at("itl_ms").at("p50"), 10, "ITL p50 at 4/s");
  // The offered rate is what the seeded arrivals made it: sent over the last arrival's time.
  expect_rate(slow.at("offered_req_s"), 10 / slow.at("arrival_span_s").get<double>(), "offered at 4/s");
  EXPECT_GT(slow.at("arrival_span_s").get<double>(), 0.5);
  EXPECT_EQ(fast.at("ok"), 10);
  EXPECT_EQ(fast.at("good"), 2);
  EXPECT_DOUBLE_EQ(fast.at("slo_attainment").get<double>(), 0.2);
  EXPECT_FALSE(fast.at("meets_slo_share").get<bool>());
  expect_ms(fast.at("ttft_ms").at("p50"), 140, "TTFT p50 at 1000/s");
  expect_ms(fast.at("ttft_ms").at("max"), 260, "TTFT max at 1000/s");
  expect_ms(fast.at("itl_ms").at("p50"), 10, "ITL p50 at 1000/s");
  expect_ms(json(fast.at("wall_s").get<double>() * 1000), 300, "wall at 1000/s: 5 waves of 60 ms");
  expect_rate(fast.at("throughput_req_s"), 10 / 0.3, "done/s at 1000/s");
  expect_rate(fast.at("goodput_req_s"), 2 / 0.3, "goodput at 1000/s");
  expect_rate(fast.at("output_tokens_per_s"), 50 / 0.3, "output tok/s at 1000/s");
  EXPECT_EQ(doc.at("highest_rate_meeting_slo"), 4.0);
  EXPECT_EQ(fake.max_running(), 2);
  EXPECT_NE(r.err.find("bench: rate=4 p=8 n=5: 10 ok, 0 errors"), std::string::npos) << r.err;
}

TEST(BenchUrlScenarios, MultiTurnShowsCachedAndPrefilledTokensPerTurn) {
  // A user message of -p 40 is 30 words (tokens to the fake), a reply 4; the fake caches earlier
  // conversations' messages and takes 2 ms per token it must prefill.
  ScenarioFake fake({.first_token_ms = 20, .gap_ms = 5, .prefill_ms_per_token = 2, .metrics = false});
  const json doc = run_json({"--url", fake.url(), "--scenario", "multi-turn", "--turns", "3", "--concurrency", "2",
                             "--requests", "2", "-p", "40", "-n", "4"});
  EXPECT_EQ(doc.at("endpoint"), "chat");
  EXPECT_FALSE(doc.at("kv_cache_usage_reported").get<bool>());
  const json& l = doc.at("levels").at(0);
  EXPECT_TRUE(l.at("kv_cache_usage").is_null());
  EXPECT_EQ(l.at("conversations"), 2);
  EXPECT_EQ(l.at("ok"), 6);
  const double prompt[] = {30, 64, 98}, cached[] = {0, 30, 64}, prefilled[] = {30, 34, 34};
  ASSERT_EQ(l.at("turns").size(), 3u);
  for (size_t t = 0; t < 3; ++t) {
    const json& turn = l["turns"][t];
    EXPECT_EQ(turn.at("ok"), 2);
    EXPECT_DOUBLE_EQ(turn.at("prompt_tokens_mean").get<double>(), prompt[t]) << t;
    EXPECT_DOUBLE_EQ(turn.at("cached_tokens_mean").get<double>(), cached[t]) << t;
    EXPECT_DOUBLE_EQ(turn.at("prefilled_tokens_mean").get<double>(), prefilled[t]) << t;
    expect_ms(turn.at("ttft_ms").at("p50"), 20 + 2 * prefilled[t], "TTFT p50 of turn " + std::to_string(t + 1));
  }
  for (const json& s : l.at("samples")) EXPECT_TRUE(s.contains("turn")) << s.dump();
  // The third turn carries both earlier turns and their replies.
  int third_turns = 0;
  for (const json& b : fake.bodies()) {
    const json& m = b.at("messages");
    if (m.size() != 5) continue;
    ++third_turns;
    EXPECT_EQ(m[1].at("role"), "assistant");
    EXPECT_EQ(m[1].at("content"), " t t t t");
    EXPECT_EQ(m[4].at("role"), "user");
  }
  EXPECT_EQ(third_turns, 2);
  // Another seed: the fake remembers the conversations above.
  auto table = test::run_nexttok({"bench", "--url", fake.url(), "--scenario", "multi-turn", "--turns", "2", "-p", "40",
                                  "-n", "4", "--prompt-seed", "2"});
  ASSERT_EQ(table.rc, 0) << table.err;
  EXPECT_NE(table.out.find("      2     1     0      64.0      30.0       34.0 "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("KV cache use: not reported"), std::string::npos) << table.out;
}

TEST(BenchUrlScenarios, SamplesKvCacheUseFromMetricsDuringALevel) {
  // Two waves of two 450 ms streams: the fake reports 0.25 per running stream, so 0.5 while both run.
  ScenarioFake fake({.first_token_ms = 100, .gap_ms = 50, .capacity = 2});
  test::CmdResult r;
  const json doc = run_json({"--url", fake.url(), "--concurrency", "2", "--requests", "4", "-p", "8", "-n", "8"}, &r);
  EXPECT_TRUE(doc.at("kv_cache_usage_reported").get<bool>());
  const json& kv = doc.at("levels").at(0).at("kv_cache_usage");
  ASSERT_TRUE(kv.is_object()) << kv.dump();
  ASSERT_GE(kv.at("samples").size(), 1u) << kv.dump();
  EXPECT_LE(kv.at("samples").size(), 3u) << kv.dump();
  for (const json& s : kv["samples"]) {
    EXPECT_GT(s.at("t_s").get<double>(), 0.2);
    EXPECT_LT(s.at("t_s").get<double>(), 1.0);
  }
  EXPECT_DOUBLE_EQ(kv.at("max").get<double>(), 0.5) << kv.dump();
  EXPECT_GE(kv.at("min").get<double>(), 0.25) << kv.dump();
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << "no progress redraws when stderr is not a terminal";
  auto table = test::run_nexttok({"bench", "--url", fake.url(), "--concurrency", "2", "--requests", "4", "-p", "8",
                                  "-n", "8"});
  ASSERT_EQ(table.rc, 0) << table.err;
  EXPECT_NE(table.out.find("KV cache use at c=2 p=8 n=8: min "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("max 50.0% ("), std::string::npos) << table.out;
}

// Runs nexttok with stderr on a pseudo-terminal (stdout to /dev/null); returns what the terminal got.
std::string run_on_terminal(const std::vector<std::string>& args, int* rc) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) return "no pseudo-terminal";
  const std::string slave = ::ptsname(master);
  const std::string bin = test::nexttok_bin();
  std::vector<std::string> all = {bin};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls until exec
    const int tty = ::open(slave.c_str(), O_RDWR | O_NOCTTY);
    const int null = ::open("/dev/null", O_WRONLY);
    if (tty < 0 || null < 0) ::_exit(126);
    ::dup2(null, 1);
    ::dup2(tty, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(master, buf, sizeof(buf));
    if (n > 0) out.append(buf, size_t(n));
    else if (n < 0 && errno == EINTR) continue;
    else break;  // EIO: the child closed the terminal
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

TEST(BenchUrlScenarios, DrawsALiveProgressLineOnATerminal) {
  ScenarioFake fake({.first_token_ms = 20, .gap_ms = 20});  // 400 ms a request: 1.2 s for the level
  int rc = -1;
  const std::string term =
      run_on_terminal({"bench", "--url", fake.url(), "-p", "8", "-n", "20", "--requests", "3"}, &rc);
  EXPECT_EQ(rc, 0) << term;
  EXPECT_NE(term.find("\rbench: c=1 p=8 n=20: "), std::string::npos) << term;
  const bool some_done = term.find(": 1/3 requests, ") != std::string::npos ||
                         term.find(": 2/3 requests, ") != std::string::npos;
  EXPECT_TRUE(some_done) << term;
  EXPECT_NE(term.find(" tok/s, ETA "), std::string::npos) << term;
  EXPECT_NE(term.find("\x1b[K"), std::string::npos) << term;
  EXPECT_NE(term.find("bench: c=1 p=8 n=20: 3 ok, 0 errors"), std::string::npos) << term;
}

TEST(BenchUrlScenarios, CompareModesProgressLineNamesTheRoundAndServer) {
  ScenarioFake a({.first_token_ms = 20, .gap_ms = 20}), b({.first_token_ms = 20, .gap_ms = 20});
  int rc = -1;
  const std::string term = run_on_terminal({"bench", "--url", a.url(), "--compare", b.url(), "--rounds", "1", "-p",
                                            "8", "-n", "20", "--requests", "3"},
                                           &rc);
  EXPECT_EQ(rc, 0) << term;
  for (const char* server : {"A", "B"}) {
    const std::string label = std::string("bench: round 1/1 ") + server + ": c=1 p=8 n=20: ";
    EXPECT_NE(term.find("\r" + label), std::string::npos) << label << "\n" << term;
    const bool some_done = term.find(label + "1/3 requests, ") != std::string::npos ||
                           term.find(label + "2/3 requests, ") != std::string::npos;
    EXPECT_TRUE(some_done) << label << "\n" << term;
    EXPECT_NE(term.find(label + "3 ok, 0 errors"), std::string::npos) << label << "\n" << term;
  }
}

TEST(BenchUrlScenarios, ProgressTextAndKvGaugeParsing) {
  EXPECT_EQ(cli::progress_text("c=4 p=256 n=128", 12, 16, 812.34, 2.2),
            "bench: c=4 p=256 n=128: 12/16 requests, 812.3 tok/s, ETA 3 s");
  EXPECT_EQ(cli::progress_text("rate=2 p=8 n=4", 0, 10, 0, std::nan("")),
            "bench: rate=2 p=8 n=4: 0/10 requests, 0.0 tok/s, ETA -");
  EXPECT_EQ(cli::progress_text("x", 1, 100, 1, 600), "bench: x: 1/100 requests, 1.0 tok/s, ETA 10.0 min");
  const std::string text =
      "# TYPE vllm:kv_cache_usage_perc gauge\n"
      "vllm:kv_cache_usage_perc_total 9\n"
      "vllm:kv_cache_usage_perc{model_name=\"a} b\",engine=\"0\"} 0.2\n"
      "vllm:kv_cache_usage_perc{engine=\"1\"} 0.4 1700000000\n";
  ASSERT_TRUE(cli::parse_kv_usage(text).has_value());
  EXPECT_NEAR(*cli::parse_kv_usage(text), 0.3, 1e-12);  // the mean of the two series
  EXPECT_DOUBLE_EQ(*cli::parse_kv_usage("vllm:gpu_cache_usage_perc 0.75\n"), 0.75);
  EXPECT_DOUBLE_EQ(*cli::parse_kv_usage("vllm:kv_cache_usage_perc 0\n"), 0.0);
  EXPECT_FALSE(cli::parse_kv_usage("vllm:num_requests_running 3\nvllm:kv_cache_usage_perc_x 1\n").has_value());
  EXPECT_FALSE(cli::parse_kv_usage("").has_value());
}

TEST(BenchUrlScenarios, PoissonArrivalsAndTheMeanGapSlo) {
  const std::vector<double> a = cli::poisson_arrivals(7, 4.0, 20000);
  ASSERT_EQ(a.size(), 20000u);
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  EXPECT_GT(a.front(), 0.0);
  EXPECT_NEAR(a.back() / 20000, 0.25, 0.25 * 0.03);  // mean gap 1/rate
  int short_gaps = 0;  // exponential: P(gap < mean) = 1 - 1/e
  for (size_t i = 1; i < a.size(); ++i) short_gaps += a[i] - a[i - 1] < 0.25;
  EXPECT_NEAR(short_gaps / 20000.0, 1 - std::exp(-1.0), 0.015);
  EXPECT_EQ(cli::poisson_arrivals(7, 4.0, 5), cli::poisson_arrivals(7, 4.0, 5));
  EXPECT_NE(cli::poisson_arrivals(7, 4.0, 5), cli::poisson_arrivals(8, 4.0, 5));

  cli::RequestSample r;
  r.ttft_ms = 50;
  r.itl_ms = {5, 50, 5};  // one long gap, a mean of 20
  EXPECT_TRUE(cli::meets_slo(r, {60, 25}));
  EXPECT_FALSE(cli::meets_slo(r, {60, 19}));
  EXPECT_FALSE(cli::meets_slo(r, {40, 0}));
  EXPECT_TRUE(cli::meets_slo(r, {}));
  r.error = "HTTP 500";
  EXPECT_FALSE(cli::meets_slo(r, {}));
}

TEST(BenchUrlScenarios, BadScenarioFlagsExitTwo) {
  struct Case {
    std::vector<std::string> args;
    const char* expect;
  };
  const std::string url = "http://127.0.0.1:1";
  const std::vector<Case> cases = {
      {{"--url", url, "--scenario", "burst"}, "--scenario must be concurrency, prompt-length, rate or multi-turn"},
      {{"--url", url, "--rate", "2"}, "--rate needs --scenario rate"},
      {{"--url", url, "--scenario", "rate", "--concurrency", "2"}, "it takes --rate, not --concurrency"},
      {{"--url", url, "--scenario", "rate", "--rate", "0"}, "--rate must be between 0 and 100000"},
      {{"--url", url, "--scenario", "rate", "--rate", "1,x"}, "--rate: 'x' is not a valid value"},
      {{"--url", url, "--turns", "3"}, "--turns needs --scenario multi-turn"},
      {{"--url", url, "--scenario", "multi-turn", "--endpoint", "completions"}, "it needs --endpoint chat"},
      {{"--url", url, "--scenario", "multi-turn", "--turns", "0"}, "--turns must be between 1 and 1000"},
      {{"--url", url, "--scenario", "prompt-length", "-n", "8,16"}, "sweeps -p at one -n and one --concurrency"},
      {{"--url", url, "--slo-ttft=-5"}, "--slo-ttft and --slo-itl must be a number of milliseconds above 0"},
      {{"--url", url, "--duration", "0"}, "--duration must be between 0 and 86400"},
      {{"--scenario", "rate"}, "--scenario needs --url"},
      {{"--slo-itl", "20"}, "--slo-itl needs --url"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"bench"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = test::run_nexttok(args);
    EXPECT_EQ(r.rc, 2) << c.expect << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.expect << "\n" << r.err;
  }
}

}  // namespace
}  // namespace nt

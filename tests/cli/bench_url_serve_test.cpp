// Each scenario of `nexttok bench --url` against the real server (nexttok's, in this process, over
// stories15M) with tiny counts: every request succeeds with the asked output length, exact prompt
// lengths where the server tokenizes, the context limit from /v1/models, the KV-cache use from its
// /metrics, and the prefix cache visible in multi-turn's cached tokens.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/server_harness.h"
#include "support/test_support.h"

namespace nt {
namespace {

using nlohmann::json;

json bench_json(const test::TestServer& srv, std::vector<std::string> args) {
  args.insert(args.begin(), {"bench", "--url", "http://127.0.0.1:" + std::to_string(srv.port()), "-o", "json"});
  auto r = test::run_nexttok(args);
  EXPECT_EQ(r.rc, 0) << r.err;
  json doc = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(doc.is_discarded()) << r.out << r.err;
  return doc;
}

test::ModelSpec small_spec() {
  test::ModelSpec spec;
  spec.engine.n_parallel = 4;
  spec.engine.n_ctx = 1024;
  return spec;
}

void expect_all_ok(const json& level, int requests, int n_gen) {
  EXPECT_EQ(level.at("ok"), requests) << level.dump();
  EXPECT_EQ(level.at("errors"), 0) << level.at("first_error");
  EXPECT_EQ(level.at("output_tokens"), requests * n_gen);
  EXPECT_GT(level.at("ttft_ms").at("p50").get<double>(), 0.0);
  EXPECT_GT(level.at("output_tokens_per_s").get<double>(), 0.0);
}

TEST(BenchUrlServe, ConcurrencyWithKvUseFromMetrics) {
  NT_REQUIRE_SHARED();
  test::TestServer srv({}, small_spec());
  ASSERT_TRUE(srv.ok());
  const json doc = bench_json(srv, {"--concurrency", "1,2", "-p", "16", "-n", "4", "--requests", "2"});
  EXPECT_EQ(doc.at("model"), "stories15M");
  EXPECT_TRUE(doc.at("kv_cache_usage_reported").get<bool>());
  ASSERT_EQ(doc.at("levels").size(), 2u);
  for (const json& l : doc["levels"]) {
    expect_all_ok(l, 2, 4);
    EXPECT_TRUE(l.at("kv_cache_usage").is_object());
    for (const json& s : l.at("samples")) EXPECT_EQ(s.at("itl_ms").size(), 3u);
  }
}

TEST(BenchUrlServe, PromptLengthSkipsBeyondTheContextLimit) {
  NT_REQUIRE_SHARED();
  test::TestServer srv({}, small_spec());
  ASSERT_TRUE(srv.ok());
  const test::HttpAnswer models = test::get(*srv.client(), "/v1/models");
  ASSERT_EQ(models.status, 200) << models.raw;
  const int64_t limit = models.body.at("data").at(0).at("meta").at("context_limit").get<int64_t>();
  ASSERT_GT(limit, 64) << models.raw;
  const json doc = bench_json(srv, {"--scenario", "prompt-length", "-p", "8," + std::to_string(limit - 16) + "," +
                                    std::to_string(limit), "-n", "4", "--requests", "1"});
  EXPECT_EQ(doc.at("context_limit"), limit);
  ASSERT_EQ(doc.at("skipped").size(), 1u) << doc.dump();
  EXPECT_EQ(doc["skipped"][0].at("n_prompt"), limit);
  ASSERT_EQ(doc.at("levels").size(), 2u);
  const int64_t p[] = {8, limit - 16};
  for (size_t i = 0; i < 2; ++i) {
    const json& l = doc["levels"][i];
    expect_all_ok(l, 1, 4);
    EXPECT_FALSE(l.at("prompt_length_estimated").get<bool>());
    EXPECT_EQ(l.at("samples").at(0).at("prompt_tokens"), p[i]) << "exact token-id prompts";
  }
}

TEST(BenchUrlServe, RateReportsTheHighestRateWithinGenerousSlos) {
  NT_REQUIRE_SHARED();
  test::TestServer srv({}, small_spec());
  ASSERT_TRUE(srv.ok());
  const json doc = bench_json(srv, {"--scenario", "rate", "--rate", "20,40", "--requests", "3", "-p", "8", "-n", "4",
                                    "--slo-ttft", "5000", "--slo-itl", "5000"});
  ASSERT_EQ(doc.at("levels").size(), 2u);
  for (const json& l : doc["levels"]) {
    expect_all_ok(l, 3, 4);
    EXPECT_EQ(l.at("good"), 3);
    EXPECT_GT(l.at("offered_req_s").get<double>(), 0.0);
  }
  EXPECT_EQ(doc.at("highest_rate_meeting_slo"), 40.0);
}

TEST(BenchUrlServe, MultiTurnReusesThePrefixCache) {
  NT_REQUIRE_SHARED();
  test::TestServer srv({}, small_spec());
  ASSERT_TRUE(srv.ok());
  const json doc = bench_json(srv, {"--scenario", "multi-turn", "--turns", "3", "--requests", "1", "-p", "48", "-n",
                                    "8"});
  const json& l = doc.at("levels").at(0);
  expect_all_ok(l, 3, 8);
  const json& turns = l.at("turns");
  ASSERT_EQ(turns.size(), 3u);
  for (size_t t = 1; t < 3; ++t) {
    EXPECT_GT(turns[t].at("prompt_tokens_mean").get<double>(), turns[t - 1].at("prompt_tokens_mean").get<double>());
    EXPECT_GT(turns[t].at("cached_tokens_mean").get<double>(), 0.0) << "turn " << t + 1 << ": " << turns.dump();
    EXPECT_LT(turns[t].at("prefilled_tokens_mean").get<double>(), turns[t].at("prompt_tokens_mean").get<double>());
  }
}

}  // namespace
}  // namespace nt

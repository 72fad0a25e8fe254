// Tests of `nexttok bench`: llama-bench's JSON rows (a pp test is its own row with n_gen 0, a tg
// test its own row with n_prompt 0; integer n_prompt / n_gen / n_threads / n_depth; avg_ts and
// stddev_ts; -d depths),
// every thread count and size of the lists, the bandwidth fields on tg rows only (one probe per
// repetition), and clear errors for bad lists.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "support/test_support.h"

namespace nt {
namespace {

using nlohmann::json;

// Synthesized once per test process (the tests only read it).
std::string tiny_model() {
  static const std::string path = [] {
    const std::string out = test::temp_dir() + "/bench-tiny.gguf";
    auto r = test::run_nexttok({"synth", "--arch", "llama", "--n-embd", "128", "--n-layer", "2", "--n-head", "4",
                                "--n-head-kv", "2", "--n-ff", "256", "--ctx", "256", "--vocab",
                                test::shared_path("vocab/ggml-vocab-llama-spm.gguf"), "--type", "q8_0", "-o", out});
    EXPECT_EQ(r.rc, 0) << r.err;
    return out;
  }();
  return path;
}

TEST(Bench, JsonRowsLikeLlamaBenchWithBandwidthOnTgRows) {
  NT_REQUIRE_SHARED();
  const std::string model = tiny_model();
  auto r = test::run_nexttok({"bench", "-m", model, "-p", "8,16", "-n", "4", "-t", "1,2", "-r", "2", "-o", "json",
                              "--bandwidth"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const json rows = json::parse(r.out);
  ASSERT_TRUE(rows.is_array());
  ASSERT_EQ(rows.size(), 6u) << r.out;  // (pp8, pp16, tg4) x (1, 2 threads)
  std::set<std::pair<int, std::string>> seen;
  for (const json& row : rows) {
    for (const char* k : {"n_prompt", "n_gen", "n_threads"}) ASSERT_TRUE(row.at(k).is_number_integer()) << k;
    EXPECT_EQ(row.at("model_filename").get<std::string>(), model);
    const int p = row.at("n_prompt").get<int>(), n = row.at("n_gen").get<int>(), t = row.at("n_threads").get<int>();
    EXPECT_TRUE((p > 0) != (n > 0)) << "a test is pp or tg, never both: " << row.dump();
    seen.insert({t, p > 0 ? "pp" + std::to_string(p) : "tg" + std::to_string(n)});
    EXPECT_GT(row.at("avg_ts").get<double>(), 0.0);
    EXPECT_GE(row.at("stddev_ts").get<double>(), 0.0);
    EXPECT_EQ(row.at("samples_ts").size(), 2u);
    if (n > 0) {
      ASSERT_TRUE(row.contains("bandwidth_pct")) << row.dump();
      const double pct = row.at("bandwidth_pct").get<double>();
      EXPECT_TRUE(std::isfinite(pct) && pct > 0.0) << pct;
      EXPECT_EQ(row.at("samples_bandwidth_bytes_per_s").size(), 2u);
      EXPECT_GT(row.at("bandwidth_bytes_per_s").get<double>(), 1e6);
    } else {
      EXPECT_FALSE(row.contains("bandwidth_pct")) << "pp rows have no bandwidth share: " << row.dump();
    }
  }
  const std::set<std::pair<int, std::string>> want = {{1, "pp8"}, {1, "pp16"}, {1, "tg4"},
                                                      {2, "pp8"}, {2, "pp16"}, {2, "tg4"}};
  EXPECT_EQ(seen, want);
}

// -d: each test again on top of that many cached tokens, named and counted as llama-bench does.
TEST(Bench, DepthRowsLikeLlamaBench) {
  NT_REQUIRE_SHARED();
  const std::string model = tiny_model();
  auto r = test::run_nexttok({"bench", "-m", model, "-p", "8", "-n", "4", "-d", "0,16", "-t", "1", "-r", "1", "-o",
                              "json", "--bandwidth"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const json rows = json::parse(r.out);
  ASSERT_EQ(rows.size(), 4u) << r.out;
  std::set<std::pair<int, std::string>> seen;
  for (const json& row : rows) {
    ASSERT_TRUE(row.at("n_depth").is_number_integer());
    const int p = row.at("n_prompt").get<int>(), d = row.at("n_depth").get<int>();
    seen.insert({d, p > 0 ? "pp" : "tg"});
    EXPECT_GT(row.at("avg_ts").get<double>(), 0.0);
  }
  const std::set<std::pair<int, std::string>> want = {{0, "pp"}, {0, "tg"}, {16, "pp"}, {16, "tg"}};
  EXPECT_EQ(seen, want);
  auto md = test::run_nexttok({"bench", "-m", model, "-p", "0", "-n", "4", "-d", "16", "-t", "1", "-r", "1"});
  ASSERT_EQ(md.rc, 0) << md.err;
  EXPECT_NE(md.out.find("| tg4 @ d16 |"), std::string::npos) << md.out;
  auto bad = test::run_nexttok({"bench", "-m", model, "-d", "x"});
  EXPECT_NE(bad.rc, 0);
  EXPECT_NE(bad.err.find("-d: 'x' is not a valid value"), std::string::npos) << bad.err;
}

TEST(Bench, MarkdownNamesTheProbe) {
  NT_REQUIRE_SHARED();
  const std::string model = tiny_model();
  auto r = test::run_nexttok({"bench", "-m", model, "-p", "0", "-n", "4", "-t", "1", "-r", "1", "--bandwidth"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("| tg4 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("% of BW"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("memory read bandwidth (1 thread), probed beside each tg repetition"), std::string::npos)
      << r.out;
}

TEST(Bench, BadListsAreClearErrors) {
  for (const auto& args : {std::vector<std::string>{"bench", "-p", "12,x"}, std::vector<std::string>{"bench", "-t", "1,0x"},
                           std::vector<std::string>{"bench", "-n", ",4"}}) {
    auto r = test::run_nexttok(args);
    EXPECT_NE(r.rc, 0) << args[1];
    EXPECT_NE(r.err.find("is not a valid value"), std::string::npos) << args[1] << ": " << r.err;
  }
}

// The type column is the file type (general.file_type) as `inspect` shows it, not the type with the
// most weights (stories15M-q4_0 keeps its large token embedding in Q8_0).
TEST(Bench, ModelTypeIsTheFileType) {
  NT_REQUIRE_SHARED();
  auto r = test::run_nexttok({"bench", "-m", test::shared_path("models/stories15M-q4_0.gguf"), "-m",
                              test::shared_path("models/stories15M-q8_0.gguf"), "-p", "4", "-n", "0", "-r", "1",
                              "-t", "1", "-o", "json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const json rows = json::parse(r.out);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("model_type").get<std::string>(), "llama 15M Q4_0");
  EXPECT_EQ(rows[1].at("model_type").get<std::string>(), "llama 15M Q8_0");
}

// Above 100% of the probed bandwidth means the weights came from the CPU caches; the table says so.
TEST(Bench, BandwidthLegendExplainsReadingsAbove100) {
  NT_REQUIRE_SHARED();
  auto r = test::run_nexttok({"bench", "-m", tiny_model(), "-p", "0", "-n", "4", "-t", "1", "-r", "1", "--bandwidth"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("above 100%"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(1 thread)"), std::string::npos) << "singular: " << r.out;
}

}  // namespace
}  // namespace nt

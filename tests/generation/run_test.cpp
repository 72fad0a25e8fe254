// `nexttok run` with sampling, on stories15M: byte-identical reproducibility across runs, thread
// counts and prefill chunk sizes; --stop; context errors and --truncate; --show-probs; EOG; bias.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace nt {
namespace {

using test::run_nexttok;

std::string model() { return test::shared_path("models/stories15M-q8_0.gguf"); }
const char* kPrompt = "Once upon a time, there was a little girl named Lily who loved to play outside in the park";

std::vector<std::string> base(std::vector<std::string> extra) {
  std::vector<std::string> args = {"run", "-m", model(), "-p", kPrompt};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(RunSampling, ByteIdenticalAcrossRunsThreadsAndChunkSizes) {
  NT_REQUIRE_SHARED();
  const std::vector<std::vector<std::string>> variants = {
      {"-t", "1", "-b", "512"}, {"-t", "1", "-b", "512"}, {"-t", "2", "-b", "512"},
      {"-t", "2", "-b", "1"},   {"-t", "1", "-b", "5"},   {"-t", "2", "-b", "7"}};
  for (const char* temp : {"0.8", "0"}) {
    std::string first;
    for (const auto& v : variants) {
      auto args = base({"-n", "24", "--temp", temp, "--seed", "42"});
      args.insert(args.end(), v.begin(), v.end());
      auto r = run_nexttok(args);
      ASSERT_EQ(r.rc, 0) << r.err;
      ASSERT_GT(r.out.size(), 10u);
      if (first.empty()) first = r.out;
      EXPECT_EQ(r.out, first) << "temp " << temp << " -t " << v[1] << " -b " << v[3];
    }
  }
}

TEST(RunSampling, SeedChangesSampledOutputAndIsReported) {
  NT_REQUIRE_SHARED();
  auto a = run_nexttok(base({"-n", "24", "--temp", "1.0", "--seed", "1"}));
  auto b = run_nexttok(base({"-n", "24", "--temp", "1.0", "--seed", "2"}));
  ASSERT_EQ(a.rc, 0) << a.err;
  ASSERT_EQ(b.rc, 0) << b.err;
  EXPECT_NE(a.out, b.out);
  EXPECT_NE(a.err.find("seed: 1 "), std::string::npos) << a.err;
  // Without --seed a random one is drawn and reported, so the run can be reproduced.
  auto c = run_nexttok(base({"-n", "16", "--temp", "1.0"}));
  ASSERT_EQ(c.rc, 0);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(c.err, m, std::regex("seed: (\\d+)")));
  auto d = run_nexttok(base({"-n", "16", "--temp", "1.0", "--seed", m[1].str()}));
  ASSERT_EQ(d.rc, 0) << d.err;
  EXPECT_EQ(d.out, c.out);
}

TEST(RunSampling, StopStringAcrossTokensIsNeverPrinted) {
  NT_REQUIRE_SHARED();
  auto full = run_nexttok(base({"-n", "40", "--temp", "0"}));
  ASSERT_EQ(full.rc, 0) << full.err;
  const std::string text = full.out;
  ASSERT_GT(text.size(), 40u);
  // A stop string that starts inside one token and ends in a later one.
  const std::string stop = text.substr(21, 7);
  const size_t at = text.find(stop);
  auto r = run_nexttok(base({"-n", "40", "--temp", "0", "--stop", stop, "--stop", "never-seen-xyz"}));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, text.substr(0, at) + "\n");
  EXPECT_EQ(r.out.find(stop), std::string::npos);
  EXPECT_NE(r.err.find("stop: stop"), std::string::npos) << r.err;
}

TEST(RunSampling, ContextOverflowIsAnErrorSayingHowMany) {
  NT_REQUIRE_SHARED();
  auto j = run_nexttok(base({"-n", "1", "--temp", "0", "--json"}));
  ASSERT_EQ(j.rc, 0) << j.err;
  const int n_prompt = static_cast<int>(nlohmann::json::parse(j.out)["prompt_ids"].size());
  auto r = run_nexttok(base({"-c", "32", "-n", "40", "--temp", "0"}));
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(r.out.empty());
  const int over = n_prompt + 40 - 32;
  EXPECT_NE(r.err.find(std::to_string(over) + " tokens over"), std::string::npos) << r.err;
}

TEST(RunSampling, TruncateStartAndMiddleWarnAndReport) {
  NT_REQUIRE_SHARED();
  auto j = run_nexttok(base({"-n", "1", "--temp", "0", "--json"}));
  const auto prompt_ids = nlohmann::json::parse(j.out)["prompt_ids"].get<std::vector<int>>();
  const int dropped = static_cast<int>(prompt_ids.size()) + 8 - 16;
  ASSERT_GT(dropped, 0);
  for (const char* mode : {"start", "middle"}) {
    auto r = run_nexttok(base({"-c", "16", "-n", "8", "--temp", "0", "--truncate", mode}));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.err.find("truncated"), std::string::npos);
    EXPECT_NE(r.err.find("dropped " + std::to_string(dropped) + " tokens"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("truncated: yes"), std::string::npos);
    auto jr = run_nexttok(base({"-c", "16", "-n", "8", "--temp", "0", "--truncate", mode, "--json"}));
    ASSERT_EQ(jr.rc, 0) << jr.err;
    auto doc = nlohmann::json::parse(jr.out);
    EXPECT_TRUE(doc["stats"]["truncated"].get<bool>());
    EXPECT_EQ(doc["stats"]["truncated_tokens"].get<int>(), dropped);
    const auto kept = doc["prompt_ids"].get<std::vector<int>>();
    ASSERT_EQ(kept.size(), 8u);
    EXPECT_EQ(kept[0], prompt_ids[0]);  // BOS kept
    EXPECT_EQ(kept.back(), prompt_ids.back());
    if (std::string(mode) == "middle") EXPECT_EQ(kept[1], prompt_ids[1]);
  }
  auto ok = run_nexttok(base({"-n", "4", "--temp", "0", "--json"}));
  EXPECT_FALSE(nlohmann::json::parse(ok.out)["stats"]["truncated"].get<bool>());
}

TEST(RunSampling, ShowProbsListsChosenTokenAndAlternatives) {
  NT_REQUIRE_SHARED();
  auto r = run_nexttok(base({"-n", "6", "--temp", "0", "--show-probs", "--n-probs", "3"}));
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::regex line(R"(\[\s*(\d+)\] '(.*)'\s+p=([0-9.]+)\s+H=([0-9.]+) bits\s+\((\d+) kept\) \|(.*))");
  int n = 0;
  size_t pos = 0;
  while (n < 6) {
    const size_t eol = r.out.find('\n', pos);
    ASSERT_NE(eol, std::string::npos) << r.out;
    const std::string l = r.out.substr(pos, eol - pos);
    pos = eol + 1;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(l, m, line)) << l;
    EXPECT_EQ(std::stoi(m[1].str()), n);
    const double p = std::stod(m[3].str());
    EXPECT_GT(p, 0.0);
    EXPECT_LE(p, 1.0);
    // Greedy: the chosen token is the first alternative, with the same probability.
    const std::string alts = m[6].str();
    EXPECT_EQ(alts.find(" '" + m[2].str() + "' "), 0u) << l;
    ++n;
  }
  // JSON: per-step prob, entropy and the alternatives after the transforms (top-k 40 by default).
  auto j = run_nexttok(base({"-n", "3", "--temp", "0.7", "--seed", "3", "--show-probs", "--json"}));
  ASSERT_EQ(j.rc, 0) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  for (const auto& st : doc["steps"]) {
    double sum = 0;
    for (const auto& pr : st["probs"]) sum += pr[1].get<double>();
    EXPECT_LE(sum, 1.0 + 1e-5);
    EXPECT_GT(st["prob"].get<double>(), 0.0);
    EXPECT_GE(st["entropy"].get<double>(), 0.0);
  }
}

TEST(RunSampling, LogitBiasBansAndForcesEndOfGeneration) {
  NT_REQUIRE_SHARED();
  auto g = run_nexttok(base({"-n", "2", "--temp", "0", "--json"}));
  ASSERT_EQ(g.rc, 0) << g.err;
  const int first = nlohmann::json::parse(g.out)["steps"][0]["token"].get<int>();
  auto banned = run_nexttok(base({"-n", "2", "--temp", "0", "--json", "--logit-bias", std::to_string(first) + "-inf"}));
  ASSERT_EQ(banned.rc, 0) << banned.err;
  EXPECT_NE(nlohmann::json::parse(banned.out)["steps"][0]["token"].get<int>(), first);
  // Token 2 is </s> (end of generation): a large bias makes it the first token, which stops.
  auto eog = run_nexttok(base({"--temp", "0", "--json", "--logit-bias", "2+100"}));
  ASSERT_EQ(eog.rc, 0) << eog.err;
  auto doc = nlohmann::json::parse(eog.out);
  EXPECT_EQ(doc["steps"].size(), 1u);
  EXPECT_EQ(doc["stats"]["stop_reason"], "eog");
  EXPECT_EQ(doc["text"], "");
  auto bad = run_nexttok(base({"-n", "2", "--logit-bias", "2*5"}));
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("--logit-bias"), std::string::npos);
  auto range = run_nexttok(base({"-n", "2", "--top-p", "1.5"}));
  EXPECT_EQ(range.rc, 2);
  EXPECT_NE(range.err.find("--top-p"), std::string::npos);
}

// Seeds take the whole unsigned 64-bit range: a seed above 2^63-1 (as random ones often are) is
// used and printed as given, and reproduces its output.
TEST(RunSampling, SeedsAboveInt64MaxAreUsedAsGiven) {
  NT_REQUIRE_SHARED();
  const std::string big = "15134005993355998545";
  auto a = run_nexttok(base({"-n", "24", "--temp", "1.0", "--seed", big}));
  ASSERT_EQ(a.rc, 0) << a.err;
  EXPECT_NE(a.err.find("seed: " + big + " "), std::string::npos) << a.err;
  auto b = run_nexttok(base({"-n", "24", "--temp", "1.0", "--seed", big}));
  EXPECT_EQ(a.out, b.out);
  // Not clamped to 2^63-1, and the top value is a seed like any other (not "random").
  auto clamped = run_nexttok(base({"-n", "24", "--temp", "1.0", "--seed", "9223372036854775807"}));
  ASSERT_EQ(clamped.rc, 0) << clamped.err;
  EXPECT_NE(a.out, clamped.out);
  auto top = run_nexttok(base({"-n", "8", "--temp", "1.0", "--seed", "18446744073709551615", "--json"}));
  ASSERT_EQ(top.rc, 0) << top.err;
  EXPECT_EQ(nlohmann::json::parse(top.out)["stats"]["seed"].get<uint64_t>(), 18446744073709551615ull);
}

// Sampled output is reproducible per SIMD level, so the level is printed beside the seed.
TEST(RunSampling, SimdLevelIsReportedBesideTheSeed) {
  NT_REQUIRE_SHARED();
  ::setenv("NEXTTOK_SIMD", "scalar", 1);
  auto text = run_nexttok(base({"-n", "4", "--temp", "1.0", "--seed", "5"}));
  auto json = run_nexttok(base({"-n", "4", "--temp", "1.0", "--seed", "5", "--json"}));
  ::unsetenv("NEXTTOK_SIMD");
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_NE(text.err.find("seed: 5 | simd: scalar |"), std::string::npos) << text.err;
  ASSERT_EQ(json.rc, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out)["stats"]["simd"], "scalar") << json.out;
}

}  // namespace
}  // namespace nt

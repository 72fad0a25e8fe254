// `nexttok chat` (a scripted session over stdin) and `nexttok check` verdicts on stories15M.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace nt {
namespace {

using test::run_nexttok;

std::string model() { return test::shared_path("models/stories15M-q8_0.gguf"); }

std::vector<std::pair<int, int>> turn_stats(const std::string& err) {
  std::vector<std::pair<int, int>> out;  // (reused, prefilled) per turn
  const std::regex re(R"(\[turn \d+: (\d+) tokens reused from the prefix cache, (\d+) prefilled \| time to first token [0-9.]+ ms)");
  for (auto it = std::sregex_iterator(err.begin(), err.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back({std::stoi((*it)[1].str()), std::stoi((*it)[2].str())});
  return out;
}

// A first message long enough to fill whole KV blocks, which the prefix cache shares (12 parts:
// ~200 tokens of stories15M's 256-token context).
std::string long_line(int parts = 12) {
  std::string s;
  for (int i = 0; i < parts; ++i) s += "Once upon a time, there was a little girl named Lily who loved to play outside. ";
  return s + "One day";
}

TEST(Chat, ScriptedSessionReusesTheCacheAndSavesLoads) {
  NT_REQUIRE_SHARED();
  const std::string dir = test::temp_dir();
  const std::string saved = dir + "/conv.json";
  const std::string script = long_line() + "\nThe dog was happy\n/stats\n/save " + saved + "\n/reset\n" + long_line() +
                             "\n/quit\nnever read\n";
  auto r = run_nexttok({"chat", "-m", model(), "-n", "8", "--temp", "0"}, script);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("format plain"), std::string::npos) << r.err;  // stories15M has no template
  const auto turns = turn_stats(r.err);
  ASSERT_EQ(turns.size(), 3u) << r.err;
  EXPECT_EQ(turns[0].first, 0);  // nothing cached yet
  EXPECT_GT(turns[1].first, 0);  // the second turn reuses the first turn's full blocks
  EXPECT_LT(turns[1].second, turns[1].first);
  // After /reset the conversation starts again; the shared prefix cache still holds its start.
  EXPECT_GT(turns[2].first, 0);
  EXPECT_EQ(turns[2].first + turns[2].second, turns[0].second);
  EXPECT_NE(r.out.find("[stats: turns 2 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("reused"), std::string::npos);
  EXPECT_NE(r.out.find("[saved 4 messages"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[conversation reset"), std::string::npos);
  auto doc = nlohmann::json::parse(test::read_text(saved));
  ASSERT_EQ(doc["messages"].size(), 4u);
  EXPECT_EQ(doc["messages"][0]["content"], long_line());
  EXPECT_EQ(doc["messages"][1]["role"], "assistant");
  // The first and third turns are the same request (the third with prefix-cache hits): same greedy reply.
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < r.out.size()) {
    const size_t eol = r.out.find('\n', pos);
    lines.push_back(r.out.substr(pos, eol - pos));
    pos = eol == std::string::npos ? r.out.size() : eol + 1;
  }
  ASSERT_GE(lines.size(), 6u);
  EXPECT_EQ(lines[0], doc["messages"][1]["content"].get<std::string>());
  EXPECT_EQ(lines.back(), lines[0]);

  // /load in a new session, then continue: the loaded conversation is prefilled once.
  auto l = run_nexttok({"chat", "-m", model(), "-n", "4", "--temp", "0"}, "/load " + saved + "\nAnd then\n");
  ASSERT_EQ(l.rc, 0) << l.err;
  EXPECT_NE(l.out.find("[loaded 4 messages"), std::string::npos) << l.out;
  const auto lt = turn_stats(l.err);
  ASSERT_EQ(lt.size(), 1u);
  EXPECT_EQ(lt[0].first, 0);  // a new process starts with an empty cache
  EXPECT_GT(lt[0].second, turns[1].first);  // the whole loaded conversation is in the prompt
}

TEST(Chat, BuiltInFormatSelectedByFlag) {
  NT_REQUIRE_SHARED();
  auto r = run_nexttok({"chat", "-m", model(), "-n", "4", "--temp", "0", "--chat-format", "chatml"}, "Hi\n");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("format chatml"), std::string::npos);
  auto bad = run_nexttok({"chat", "-m", model(), "--chat-format", "nope"}, "");
  EXPECT_EQ(bad.rc, 2);
}

TEST(Chat, JinjaTemplateFileIsRenderedAndReused) {
  NT_REQUIRE_SHARED();
  const std::string tmpl = test::shared_path("templates/Qwen-Qwen2.5-7B-Instruct.jinja");
  auto r = run_nexttok({"chat", "-m", model(), "-n", "4", "--temp", "0", "--chat-template-file", tmpl},
                       long_line(6) + "\nMore\n");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("format jinja template"), std::string::npos) << r.err;
  const auto turns = turn_stats(r.err);
  ASSERT_EQ(turns.size(), 2u) << r.err;
  EXPECT_GT(turns[0].second, 20);  // the template's default system prompt is in the first prefill
  // The first turn's full blocks are reused (all but its last partial block).
  EXPECT_GT(turns[1].first, turns[0].second / 2);
  auto missing = run_nexttok({"chat", "-m", model(), "--chat-template-file", "/nonexistent.jinja"}, "");
  EXPECT_EQ(missing.rc, 1);
}

nlohmann::json check_json(std::vector<std::string> extra, const std::string& prompt = "Once upon a time") {
  std::vector<std::string> args = {"check", "-m", model(), "-p", prompt, "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = run_nexttok(args);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1);
  return nlohmann::json::parse(r.out);
}

TEST(Check, TemperatureZeroIsStable) {
  NT_REQUIRE_SHARED();
  auto j = check_json({"--temp", "0", "-n", "16", "-r", "3"});
  EXPECT_EQ(j["runs"], 3);
  EXPECT_EQ(j["distinct_outputs"], 1);
  EXPECT_TRUE(j["first_divergence"].is_null());
  EXPECT_FALSE(j["truncated"].get<bool>());
  EXPECT_GT(j["mean_entropy"].get<double>(), 0.0);
  EXPECT_NE(j["verdict"].get<std::string>().find("stable across runs"), std::string::npos) << j["verdict"];
}

TEST(Check, TemperatureOneVariesBecauseOfSampling) {
  NT_REQUIRE_SHARED();
  auto j = check_json({"--temp", "1.0", "-n", "24", "-r", "4"});
  EXPECT_GT(j["distinct_outputs"].get<int>(), 1);
  ASSERT_TRUE(j["first_divergence"].is_number());
  EXPECT_LT(j["first_divergence"].get<int>(), 24);
  EXPECT_EQ(j["greedy"]["distinct_outputs"], 1);
  EXPECT_NE(j["verdict"].get<std::string>().find("the differences come from sampling"), std::string::npos)
      << j["verdict"];
  // Seeds differ per run without --seed; with --seed every run is the same.
  const auto seeds = j["seeds"].get<std::vector<uint64_t>>();
  EXPECT_NE(seeds[0], seeds[1]);
  auto s = check_json({"--temp", "1.0", "-n", "24", "-r", "3", "--seed", "9"});
  EXPECT_EQ(s["distinct_outputs"], 1);
  EXPECT_NE(s["verdict"].get<std::string>().find("stable across runs"), std::string::npos);
}

TEST(Check, ReportsTruncation) {
  NT_REQUIRE_SHARED();
  std::string longp;
  for (int i = 0; i < 12; ++i) longp += "The cat sat on the mat. ";
  auto r = run_nexttok({"check", "-m", model(), "-p", longp, "-c", "64", "-n", "16", "-r", "2", "--temp", "0"});
  EXPECT_EQ(r.rc, 1);  // over the context without --truncate
  EXPECT_NE(r.err.find("over"), std::string::npos);
  auto j = check_json({"-c", "64", "-n", "16", "-r", "2", "--temp", "0", "--truncate", "start"}, longp);
  EXPECT_TRUE(j["truncated"].get<bool>());
  const int dropped = j["truncated_tokens"].get<int>();
  EXPECT_GT(dropped, 0);
  EXPECT_NE(j["verdict"].get<std::string>().find("input was truncated by " + std::to_string(dropped) + " tokens"),
            std::string::npos)
      << j["verdict"];
  auto text = run_nexttok({"check", "-m", model(), "-p", "Once upon a time", "-n", "8", "-r", "2", "--temp", "0"});
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_NE(text.out.find("verdict: stable across runs"), std::string::npos) << text.out;
}

TEST(Check, ReportsSimdLevelBesideTheSeeds) {
  NT_REQUIRE_SHARED();
  ::setenv("NEXTTOK_SIMD", "scalar", 1);
  auto text = run_nexttok({"check", "-m", model(), "-p", "Once upon a time", "-n", "4", "-r", "2", "--temp", "1",
                           "--seed", "3"});
  auto j = check_json({"--temp", "1.0", "-n", "4", "-r", "2", "--seed", "3"});
  ::unsetenv("NEXTTOK_SIMD");
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_NE(text.out.find("every run uses --seed 3 | simd scalar"), std::string::npos) << text.out;
  EXPECT_EQ(j["simd"], "scalar") << j.dump();
}

// Errors of chat commands go to stderr; an unknown command says so.
TEST(Chat, CommandErrorsGoToStderr) {
  NT_REQUIRE_SHARED();
  const std::string dir = test::temp_dir();
  test::write_text(dir + "/bad.json", "{\"messages\": [\n  {\"role\": \"user\",\n}\n");
  auto r = run_nexttok({"chat", "-m", model(), "-n", "2", "--temp", "0"},
                       "/load " + dir + "/missing.json\n/load " + dir + "/bad.json\n/frobnicate\n/save\n");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.find("error"), std::string::npos) << "errors on stdout: " << r.out;
  EXPECT_NE(r.err.find(dir + "/missing.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(dir + "/bad.json:3:"), std::string::npos) << "JSON errors name file and line: " << r.err;
  EXPECT_NE(r.err.find("unknown command '/frobnicate'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/save needs a file name"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace nt

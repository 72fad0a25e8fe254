// `nexttok chat` over a hybrid model (a small qwen35 `nexttok synth` file, the shape of
// GoldenSynth.Qwen35_F32): the second turn resumes from the recurrent-state snapshot taken at the
// end of the first turn's prompt, so it reports reused tokens; --state-snapshots 0 turns that off.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace nt {
namespace {

using test::run_nexttok;

const std::string& qwen35_model() { return test::qwen35_f32_model(); }

std::vector<std::pair<int, int>> turn_stats(const std::string& err) {
  std::vector<std::pair<int, int>> out;  // (reused, prefilled) per turn
  const std::regex re(R"(\[turn \d+: (\d+) tokens reused from the prefix cache, (\d+) prefilled)");
  for (auto it = std::sregex_iterator(err.begin(), err.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back({std::stoi((*it)[1].str()), std::stoi((*it)[2].str())});
  return out;
}

std::string script() {
  std::string s;
  for (int i = 0; i < 8; ++i) s += "Once upon a time, there was a little girl named Lily who loved to play outside. ";
  return s + "One day\nThe dog was happy\n/quit\n";
}

TEST(ChatQwen35, TheSecondTurnResumesFromTheFirstPromptsStateSnapshot) {
  NT_REQUIRE_SHARED();
  auto r = run_nexttok({"chat", "-m", qwen35_model(), "-n", "8", "--temp", "0", "-t", "1"}, script());
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto turns = turn_stats(r.err);
  ASSERT_EQ(turns.size(), 2u) << r.err;
  EXPECT_EQ(turns[0].first, 0);
  // The first prompt's end rounded down to a 32-token block: the second turn starts there.
  EXPECT_GT(turns[1].first, 0) << r.err;
  EXPECT_EQ(turns[1].first % 32, 0) << r.err;
  EXPECT_LT(turns[1].first, turns[0].second) << r.err;
  EXPECT_GE(turns[1].first, turns[0].second - 32) << r.err;

  auto off = run_nexttok({"chat", "-m", qwen35_model(), "-n", "8", "--temp", "0", "-t", "1", "--state-snapshots", "0"},
                         script());
  ASSERT_EQ(off.rc, 0) << off.err;
  const auto off_turns = turn_stats(off.err);
  ASSERT_EQ(off_turns.size(), 2u) << off.err;
  EXPECT_EQ(off_turns[1].first, 0);
  EXPECT_EQ(off.out, r.out);  // the same greedy replies either way
}

}  // namespace
}  // namespace nt

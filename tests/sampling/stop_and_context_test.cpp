// Tests for sampling/stop_strings.h, context_plan.h and check_report.h.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sampling/check_report.h"
#include "sampling/context_plan.h"
#include "sampling/stop_strings.h"

namespace nt {
namespace {

std::string feed(StopMatcher& m, const std::vector<std::string>& pieces, std::string* printed_before_stop = nullptr) {
  std::string out;
  for (const std::string& p : pieces) out += m.push(p);
  if (printed_before_stop) *printed_before_stop = out;
  out += m.flush();
  return out;
}

TEST(StopMatcher, MatchesAcrossTokenBoundariesAndNeverPrintsIt) {
  StopMatcher m({"\nUser:"});
  std::string out;
  out += m.push("Hello");
  EXPECT_EQ(out, "Hello");
  out += m.push(" there\nUs");  // "\nUs" could start the stop string: held back
  EXPECT_EQ(out, "Hello there");
  EXPECT_EQ(m.held(), 3u);
  out += m.push("er");
  EXPECT_EQ(out, "Hello there");
  out += m.push(": what");
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.matched(), "\nUser:");
  EXPECT_EQ(out, "Hello there");
  EXPECT_EQ(m.push("more"), "");
  EXPECT_EQ(m.flush(), "");
}

TEST(StopMatcher, ReleasesHeldTextWhenItStopsMatching) {
  StopMatcher m({"END"});
  EXPECT_EQ(m.push("the EN"), "the ");
  EXPECT_EQ(m.push("D"), "");
  EXPECT_TRUE(m.stopped());
  StopMatcher n({"END"});
  EXPECT_EQ(n.push("the EN"), "the ");
  EXPECT_EQ(n.push("TRY"), "ENTRY");
  EXPECT_FALSE(n.stopped());
  EXPECT_EQ(n.push("E"), "");
  EXPECT_EQ(n.flush(), "E");  // end of generation: held text is printed
}

TEST(StopMatcher, EarliestOfSeveralStopsWinsAndStopInsideOnePiece) {
  StopMatcher m({"world", "lo w"});
  std::string before;
  feed(m, {"hello world"}, &before);
  EXPECT_EQ(before, "hel");
  EXPECT_EQ(m.matched(), "lo w");
}

TEST(StopMatcher, OverlappingPrefixesAndNoStops) {
  StopMatcher m({"aab"});
  std::string printed;
  feed(m, {"a", "a", "a", "a", "b", "c"}, &printed);
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(printed, "aa");  // "aaaab" -> stop at index 2
  StopMatcher none;
  EXPECT_EQ(none.push("abc"), "abc");
  StopMatcher empty(std::vector<std::string>{""});
  EXPECT_FALSE(empty.active());
  EXPECT_EQ(empty.push("abc"), "abc");
}

TEST(StopMatcher, ByteAtATimeEqualsWhole) {
  const std::string text = "one two <stop> three";
  StopMatcher a({"<stop>"}), b({"<stop>"});
  std::string whole = a.push(text) + a.flush();
  std::string bytes;
  for (char c : text) bytes += b.push(std::string(1, c));
  bytes += b.flush();
  EXPECT_EQ(whole, "one two ");
  EXPECT_EQ(bytes, whole);
}

std::vector<int32_t> iota_tokens(int n) {
  std::vector<int32_t> v;
  for (int i = 0; i < n; ++i) v.push_back(100 + i);
  v[0] = 1;  // BOS
  return v;
}

TEST(ContextPlan, FitsUnchangedAndResolvesUntilFull) {
  auto p = plan_context(iota_tokens(10), true, 5, 20, TruncateMode::None);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->prompt.size(), 10u);
  EXPECT_EQ(p->n_predict, 5);
  EXPECT_EQ(p->dropped, 0);
  auto q = plan_context(iota_tokens(10), true, -1, 20, TruncateMode::None);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->n_predict, 10);
  auto exact = plan_context(iota_tokens(10), true, 10, 20, TruncateMode::None);
  EXPECT_TRUE(exact.ok());
}

TEST(ContextPlan, OverIsAnErrorSayingByHowMuch) {
  auto p = plan_context(iota_tokens(10), true, 15, 20, TruncateMode::None);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("5 tokens over"), std::string::npos) << p.error().message;
  EXPECT_NE(p.error().message.find("truncate it (start or middle)"), std::string::npos);
  EXPECT_EQ(p.error().message.find("--"), std::string::npos) << "no CLI flags below the CLI";
  EXPECT_EQ(p.error().kind, ErrorKind::PromptTooLong);
  auto q = plan_context(iota_tokens(20), true, -1, 20, TruncateMode::None);
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.error().message.find("1 token over"), std::string::npos) << q.error().message;
}

TEST(ContextPlan, TruncateStartKeepsBosAndNewest) {
  auto p = plan_context(iota_tokens(10), true, 15, 20, TruncateMode::Start);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->dropped, 5);
  EXPECT_EQ(p->prompt, (std::vector<int32_t>{1, 106, 107, 108, 109}));
  EXPECT_EQ(p->n_predict, 15);
  const std::string w = truncation_warning(*p, TruncateMode::Start, 20);
  EXPECT_NE(w.find("truncated"), std::string::npos);
  EXPECT_NE(w.find("dropped 5 tokens"), std::string::npos) << w;
}

TEST(ContextPlan, TruncateMiddleKeepsBeginningAndEnd) {
  auto p = plan_context(iota_tokens(10), true, 15, 20, TruncateMode::Middle);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->dropped, 5);
  // 4 kept after BOS: 2 from the beginning, 2 from the end
  EXPECT_EQ(p->prompt, (std::vector<int32_t>{1, 101, 102, 108, 109}));
  auto nobos = plan_context(std::vector<int32_t>{5, 6, 7, 8, 9}, false, 2, 5, TruncateMode::Middle);
  ASSERT_TRUE(nobos.ok());
  EXPECT_EQ(nobos->prompt, (std::vector<int32_t>{5, 8, 9}));  // odd: the end gets the extra
}

TEST(ContextPlan, TruncationThatLeavesNothingIsAnError) {
  EXPECT_FALSE(plan_context(iota_tokens(10), true, 19, 20, TruncateMode::Start).ok());
  EXPECT_TRUE(plan_context(iota_tokens(10), true, 18, 20, TruncateMode::Start).ok());
  auto u = plan_context(iota_tokens(30), true, -1, 20, TruncateMode::Start);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->dropped, 11);
  EXPECT_EQ(u->n_predict, 1);
  EXPECT_TRUE(parse_truncate_mode("MIDDLE").ok());
  EXPECT_FALSE(parse_truncate_mode("end").ok());
}

RunRecord rec(std::vector<int32_t> t, double e = 1.0) {
  RunRecord r;
  r.entropies.assign(t.size(), e);
  r.tokens = std::move(t);
  return r;
}

TEST(CheckReport, DistinctDivergenceAndEntropy) {
  auto s = summarize_runs({rec({1, 2, 3}, 1.0), rec({1, 2, 4}, 2.0), rec({1, 2, 3}, 3.0),
                           rec({1, 5, 3}, 2.0)});
  EXPECT_EQ(s.runs, 4);
  EXPECT_EQ(s.distinct_outputs, 3);
  ASSERT_TRUE(s.first_divergence.has_value());
  EXPECT_EQ(*s.first_divergence, 1);
  EXPECT_DOUBLE_EQ(s.mean_entropy, 2.0);
  auto same = summarize_runs({rec({1, 2}), rec({1, 2})});
  EXPECT_EQ(same.distinct_outputs, 1);
  EXPECT_FALSE(same.first_divergence.has_value());
  auto prefix = summarize_runs({rec({1, 2, 3}), rec({1, 2})});  // one stopped early
  ASSERT_TRUE(prefix.first_divergence.has_value());
  EXPECT_EQ(*prefix.first_divergence, 2);
  // The earliest divergence may be between two runs that both differ from run 0 later.
  auto pair = summarize_runs({rec({1, 2, 3, 4}), rec({1, 2, 3, 5}), rec({1, 2, 9, 9})});
  EXPECT_EQ(*pair.first_divergence, 2);
}

TEST(CheckReport, Verdicts) {
  CheckFacts f;
  f.sampled = summarize_runs({rec({1, 2}), rec({1, 3})});
  f.greedy = summarize_runs({rec({1, 2}), rec({1, 2})});
  EXPECT_NE(check_verdict(f).find("the differences come from sampling: lower the temperature"),
            std::string::npos);
  f.sampled = f.greedy;
  EXPECT_NE(check_verdict(f).find("stable across runs: the same error every time points at the "
                                  "prompt or the model"),
            std::string::npos);
  f.truncated_by = 7;
  const std::string v = check_verdict(f);
  EXPECT_NE(v.find("input was truncated by 7 tokens"), std::string::npos) << v;
  EXPECT_NE(v.find("stable across runs"), std::string::npos) << v;
  f.truncated_by = 0;
  f.greedy = summarize_runs({rec({1, 2}), rec({1, 4})});
  EXPECT_NE(check_verdict(f).find("not deterministic"), std::string::npos);
}

}  // namespace
}  // namespace nt

// The scheduler through the engine and the fake model: token budgets, decode before prefill,
// chunked prompts, max running requests, preemption with recompute, cancellation, and that no
// block stays referenced after any mix of finished and cancelled requests.
#include <gtest/gtest.h>

#include <set>

#include "engine_harness.h"

namespace nt {
namespace {

using test::Harness;
using test::opts;
using test::prompt_of;
using test::request;

int64_t step_tokens(const std::vector<test::FakeChunk>& step) {
  int64_t n = 0;
  for (const auto& c : step) n += c.n;
  return n;
}

TEST(Scheduler, EveryStepStaysWithinTheTokenBudgetAndMaxRunning) {
  Harness h(opts(/*n_batch=*/7, /*n_parallel=*/3));
  for (uint32_t i = 0; i < 8; ++i) h.submit(request(prompt_of(3 + 5 * int(i), i), 6, i));
  int64_t max_running = 0;
  while (h.eng->step()) max_running = std::max(max_running, h.eng->stats().running);
  ASSERT_FALSE(h.fake->steps.empty());
  for (const auto& s : h.fake->steps) {
    EXPECT_LE(step_tokens(s), 7);
    std::set<int> seqs;
    for (const auto& c : s) seqs.insert(c.seq);
    EXPECT_LE(seqs.size(), 3u);
  }
  EXPECT_LE(max_running, 3);
  EXPECT_EQ(max_running, 3);  // the limit is used, not just respected
  for (auto& [id, o] : h.out) {
    EXPECT_EQ(o.finals, 1);
    EXPECT_EQ(o.tokens.size(), 6u);
    EXPECT_EQ(o.reason, FinishReason::Length);
  }
  EXPECT_EQ(h.eng->stats().blocks_used, 0);
}

// A prompt longer than the budget is computed in chunks of the budget; the output is the same as
// with the whole prompt in one step.
TEST(Scheduler, ChunkedPromptGivesTheSameTokens) {
  const auto p = request(prompt_of(23, 7), 5, 42);
  const auto whole = test::run_alone(p);
  Harness h(opts(/*n_batch=*/4));
  const RequestId id = h.submit(p);
  h.run();
  ASSERT_GE(h.fake->steps.size(), 6u);
  for (int i = 0; i < 6; ++i) {  // 23 = 5 chunks of 4 + 3
    ASSERT_EQ(h.fake->steps[size_t(i)].size(), 1u);
    EXPECT_EQ(h.fake->steps[size_t(i)][0].pos, 4 * i);
    EXPECT_EQ(h.fake->steps[size_t(i)][0].n, i < 5 ? 4 : 3);
  }
  EXPECT_EQ(h.out[id].tokens, whole.tokens);
  EXPECT_EQ(h.out[id].logprobs, whole.logprobs);
}

// While a new prompt is prefilled in chunks, the running request still gets its decode token
// every step, first in the batch; the prompt gets what is left of the budget.
TEST(Scheduler, DecodeBeforePrefill) {
  Harness h(opts(/*n_batch=*/4));
  const RequestId a = h.submit(request(prompt_of(3, 1), 20, 1));
  ASSERT_TRUE(h.eng->step());  // a's prompt, first token
  const size_t before = h.out[a].tokens.size();
  ASSERT_EQ(before, 1u);
  const RequestId b = h.submit(request(prompt_of(10, 2), 2, 2));
  for (int i = 0; i < 4; ++i) {  // b's 10 prompt tokens as 3 + 3 + 3 + 1
    ASSERT_TRUE(h.eng->step());
    const auto& s = h.fake->steps.back();
    ASSERT_EQ(s.size(), 2u) << "step " << i;
    EXPECT_EQ(s[0].n, 1) << "a's decode token comes first";
    EXPECT_EQ(s[1].n, i < 3 ? 3 : 1);
    EXPECT_EQ(h.out[a].tokens.size(), before + size_t(i) + 1);
  }
  EXPECT_EQ(h.out[b].tokens.size(), 1u);
  h.run();
  EXPECT_EQ(h.out[b].tokens, test::run_alone(request(prompt_of(10, 2), 2, 2)).tokens);
}

// A pool far too small for all requests at once: the youngest running request is preempted and
// recomputed later, and every request still returns what it returns alone.
TEST(Scheduler, PreemptionAndRecomputeGiveTheSameTokens) {
  // 8 blocks of 4 tokens; each request needs 6 + 14 = 20 tokens (5 blocks) by its end.
  Harness h(opts(/*n_batch=*/16, /*n_parallel=*/4, /*n_ctx=*/32));
  std::vector<RequestId> ids;
  std::vector<RequestParams> ps;
  for (uint32_t i = 0; i < 4; ++i) {
    ps.push_back(request(prompt_of(6, 100 + i), 14, 7 + i));
    ids.push_back(h.submit(ps.back()));
  }
  h.run();
  int preempted = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto& o = h.out[ids[i]];
    const auto alone = test::run_alone(ps[i]);
    EXPECT_EQ(o.finals, 1);
    EXPECT_EQ(o.tokens, alone.tokens) << "request " << i;
    EXPECT_EQ(o.logprobs, alone.logprobs) << "request " << i;
    preempted += o.stats.preemptions;
  }
  EXPECT_GT(preempted, 0);
  EXPECT_EQ(h.eng->stats().preemptions, preempted);
  EXPECT_EQ(h.eng->stats().blocks_used, 0);
}

TEST(Scheduler, CancellationTakesEffectAtTheNextStepAndFreesBlocks) {
  Harness h(opts());
  const RequestId a = h.submit(request(prompt_of(9, 3), 1000, 3));
  const RequestId waiting = h.submit(request(prompt_of(5, 4), 10, 4));
  EXPECT_TRUE(h.eng->cancel(waiting));  // before any step: never runs
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(h.eng->step());
  EXPECT_GT(h.eng->stats().blocks_used, 0);
  const size_t n = h.out[a].tokens.size();
  EXPECT_TRUE(h.eng->cancel(a));
  EXPECT_EQ(h.out[a].finals, 0) << "nothing happens before the next step";
  EXPECT_FALSE(h.eng->step());
  EXPECT_EQ(h.out[a].finals, 1);
  EXPECT_EQ(h.out[a].reason, FinishReason::Cancelled);
  EXPECT_EQ(h.out[a].tokens.size(), n);
  EXPECT_EQ(h.out[a].events.back().token, -1);
  EXPECT_EQ(h.out[waiting].reason, FinishReason::Cancelled);
  EXPECT_TRUE(h.out[waiting].tokens.empty());
  EXPECT_EQ(h.eng->stats().blocks_used, 0);
  EXPECT_EQ(h.eng->kv().stats().blocks_used, 0);
  EXPECT_FALSE(h.eng->cancel(a)) << "already finished";
  EXPECT_FALSE(h.eng->cancel(12345)) << "unknown";
}

// Many requests, some cancelled at different times, in a pool small enough to preempt: each gets
// exactly one final event and afterwards no block is referenced.
TEST(Scheduler, NoBlockStaysReferencedAfterAnyMixOfFinishAndCancel) {
  Harness h(opts(/*n_batch=*/9, /*n_parallel=*/5, /*n_ctx=*/48));
  std::vector<RequestId> ids;
  for (uint32_t i = 0; i < 20; ++i)
    ids.push_back(h.submit(request(prompt_of(2 + int(i % 7) * 3, i % 5), 3 + i % 9, i)));
  for (int s = 0; h.eng->step(); ++s) {
    ASSERT_LT(s, 10000);
    if (s % 3 == 1 && size_t(s / 3) < ids.size()) h.eng->cancel(ids[size_t(s / 3) * 7 % ids.size()]);
  }
  int cancelled = 0;
  for (RequestId id : ids) {
    EXPECT_EQ(h.out[id].finals, 1) << id;
    cancelled += h.out[id].reason == FinishReason::Cancelled;
  }
  EXPECT_GT(cancelled, 0);
  const EngineStats st = h.eng->stats();
  EXPECT_EQ(st.blocks_used, 0);
  EXPECT_EQ(st.running, 0);
  EXPECT_EQ(st.waiting, 0);
  EXPECT_EQ(st.requests_finished, 20);
  EXPECT_EQ(st.blocks_free + st.blocks_cached, st.blocks_total);
}

}  // namespace
}  // namespace nt

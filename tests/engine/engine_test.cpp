// The request engine over the fake model: batch invariance (alone vs. batched with 15 others,
// different chunking, with prefix-cache hits), the prefix cache's counts and the last-token rule,
// request validation and the fit rule, the context limit, log-probs and statistics.
#include <gtest/gtest.h>

#include <cmath>

#include "engine_harness.h"

namespace nt {
namespace {

using test::Harness;
using test::opts;
using test::prompt_of;
using test::request;

// 16 requests with their own seeds, several sharing a prompt prefix, submitted together.
std::vector<RequestParams> sixteen() {
  std::vector<RequestParams> ps;
  const auto shared = prompt_of(13, 99);
  for (uint32_t i = 0; i < 16; ++i) {
    auto prompt = i % 2 ? shared : prompt_of(1 + int(i) * 3, i);
    if (i % 2) {
      const auto tail = prompt_of(int(i % 5), i);
      prompt.insert(prompt.end(), tail.begin(), tail.end());
    }
    auto p = request(prompt, 4 + int(i % 6), 1000 + i);
    if (i % 4 == 3) p.sampling.temp = 0;  // greedy too
    ps.push_back(p);
  }
  return ps;
}

TEST(Engine, SixteenRequestsTogetherReturnWhatEachReturnsAlone) {
  const auto ps = sixteen();
  std::vector<test::Outcome> alone;
  for (const auto& p : ps) alone.push_back(test::run_alone(p));
  for (int n_batch : {512, 5, 1}) {
    Harness h(opts(n_batch, /*n_parallel=*/16));
    std::vector<RequestId> ids;
    for (const auto& p : ps) ids.push_back(h.submit(p));
    h.run();
    // The same again on the warm engine: prompts now hit the prefix cache.
    std::vector<RequestId> again;
    for (const auto& p : ps) again.push_back(h.submit(p));
    h.run();
    for (size_t i = 0; i < ps.size(); ++i) {
      for (RequestId id : {ids[i], again[i]}) {
        const auto& o = h.out[id];
        EXPECT_EQ(o.finals, 1);
        EXPECT_EQ(o.tokens, alone[i].tokens) << "request " << i << " n_batch " << n_batch;
        EXPECT_EQ(o.logprobs, alone[i].logprobs) << "request " << i << " n_batch " << n_batch;
      }
      // Every prompt token but the last was cached by its first run (whole blocks and copied rows).
      EXPECT_EQ(h.out[again[i]].stats.cached_tokens, int64_t(ps[i].prompt.size()) - 1) << i;
    }
    EXPECT_GT(h.eng->stats().prefix_hit_tokens, 0);
    EXPECT_EQ(h.eng->stats().blocks_used, 0);
  }
}

// The blocks of a finished request are found by the next request with the same prefix, to the
// token (whole blocks shared, the rest of a partly matching block copied); the prompt's last token
// is never a hit (its logits are needed).
TEST(Engine, PrefixCacheHitsAreCountedAndNeverCoverTheLastToken) {
  Harness h(opts());  // blocks of 4
  const auto p10 = prompt_of(10, 5);
  const RequestId first = h.submit(request(p10, 3, 8));
  h.run();
  EXPECT_EQ(h.out[first].stats.cached_tokens, 0);
  EXPECT_EQ(h.out[first].stats.computed_prompt_tokens, 10);
  const EngineStats before = h.eng->stats();
  h.fake->steps.clear();
  const RequestId second = h.submit(request(p10, 3, 8));
  h.run();
  const auto& o = h.out[second];
  EXPECT_EQ(o.stats.prompt_tokens, 10);
  EXPECT_EQ(o.stats.cached_tokens, 9);
  EXPECT_EQ(o.stats.computed_prompt_tokens, 1);
  EXPECT_EQ(o.tokens, h.out[first].tokens);
  ASSERT_FALSE(h.fake->steps.empty());
  EXPECT_EQ(h.fake->steps[0][0].pos, 9);  // only the last position was computed
  EXPECT_EQ(h.fake->steps[0][0].n, 1);
  const EngineStats after = h.eng->stats();
  EXPECT_EQ(after.prefix_queried_tokens - before.prefix_queried_tokens, 10);
  EXPECT_EQ(after.prefix_hit_tokens - before.prefix_hit_tokens, 9);
  EXPECT_EQ(after.cached_tokens - before.cached_tokens, 9);
  // A prompt of exactly two blocks: the second block holds the last token, so 7 tokens are hits.
  const RequestId whole = h.submit(request(std::vector<int32_t>(p10.begin(), p10.begin() + 8), 2, 8));
  h.run();
  EXPECT_EQ(h.out[whole].stats.cached_tokens, 7);
  // Another prompt sharing the first five tokens: the first block whole, one row of the second.
  auto other = p10;
  other[5] = (other[5] + 1) % 64;
  const RequestId diverging = h.submit(request(other, 2, 8));
  h.run();
  EXPECT_EQ(h.out[diverging].stats.cached_tokens, 5);
  EXPECT_EQ(h.out[diverging].tokens, test::run_alone(request(other, 2, 8)).tokens);
  EXPECT_EQ(h.eng->stats().blocks_used, 0);
}

TEST(Engine, RefusesWhatCanNeverFitWithTheCounts) {
  Harness h(opts(512, 8, /*n_ctx=*/128), 64, /*n_ctx_train=*/64);
  EXPECT_EQ(h.eng->context_limit(), 64);
  auto r = h.eng->submit(request(prompt_of(60, 1), 5, 1), nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::PromptTooLong);
  for (const char* n : {"60", "5", "65", "64", "by 1"})
    EXPECT_NE(r.error().message.find(n), std::string::npos) << n << ": " << r.error().message;
  auto full = h.eng->submit(request(prompt_of(64, 1), -1, 1), nullptr);
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.error().kind, ErrorKind::PromptTooLong);
  EXPECT_TRUE(h.eng->submit(request(prompt_of(60, 1), 4, 1), nullptr).ok());
  EXPECT_TRUE(h.eng->submit(request(prompt_of(63, 1), -1, 1), nullptr).ok());
  h.run();
  EXPECT_EQ(h.eng->stats().blocks_used, 0);
}

TEST(Engine, RefusesBadRequests) {
  Harness h(opts());
  auto kind_of = [&](RequestParams p) {
    auto r = h.eng->submit(std::move(p), nullptr);
    return r.ok() ? std::string("ok") : std::string(error_kind_name(r.error().kind)) + ": " + r.error().message;
  };
  EXPECT_EQ(kind_of(request({}, 3, 1)).rfind("invalid_argument", 0), 0u);
  EXPECT_EQ(kind_of(request({1, 64}, 3, 1)).rfind("invalid_argument", 0), 0u);
  EXPECT_EQ(kind_of(request({1, -1}, 3, 1)).rfind("invalid_argument", 0), 0u);
  auto p = request({1, 2}, 3, 1);
  p.sampling.top_p = 2;
  EXPECT_EQ(kind_of(p).rfind("invalid_argument", 0), 0u);
  p = request({1, 2}, 3, 1);
  p.sampling.logit_bias.push_back({70, 1.0f});
  EXPECT_EQ(kind_of(p).rfind("invalid_argument", 0), 0u);
  p = request({1, 2}, 3, 1);
  p.stop = {"x"};  // no tokenizer: no text to match
  EXPECT_EQ(kind_of(p).rfind("invalid_argument", 0), 0u);
  EXPECT_EQ(kind_of(request({1, 2}, -2, 1)).rfind("invalid_argument", 0), 0u);
  EXPECT_EQ(kind_of(request({1, 2}, 3, 1)), "ok");
  h.run();
  EXPECT_EQ(h.eng->stats().requests_finished, 1);  // the refused requests left nothing behind
}

TEST(Engine, ContextLimitFinishesTheRequest) {
  Harness h(opts(512, 8, 128), 64, /*n_ctx_train=*/40);
  const RequestId id = h.submit(request(prompt_of(30, 2), -1, 2));
  h.run();
  EXPECT_EQ(h.out[id].reason, FinishReason::Context);
  EXPECT_EQ(h.out[id].tokens.size(), 10u);  // prompt + generated == the limit
  const RequestId capped = h.submit(request(prompt_of(30, 2), 10, 2));
  h.run();
  EXPECT_EQ(h.out[capped].reason, FinishReason::Length);  // max_tokens is checked first
  EXPECT_EQ(h.out[capped].tokens, h.out[id].tokens);
}

TEST(Engine, MaxTokensZeroComputesThePromptOnly) {
  Harness h(opts());
  const RequestId id = h.submit(request(prompt_of(9, 2), 0, 2));
  h.run();
  const auto& o = h.out[id];
  EXPECT_EQ(o.finals, 1);
  EXPECT_EQ(o.reason, FinishReason::Length);
  EXPECT_TRUE(o.tokens.empty());
  EXPECT_EQ(o.events.size(), 1u);
  EXPECT_EQ(o.events[0].token, -1);
  EXPECT_EQ(o.stats.computed_prompt_tokens, 9);
  EXPECT_EQ(h.eng->stats().computed_tokens, 9);
}

// Log-probs are the log-softmax of the raw logits, before any sampling transform; the top logits
// are the raw ones. Checked against the logits the low-level path returns for the same prompt.
TEST(Engine, LogprobsAndTopLogitsComeFromTheRawLogits) {
  Harness h(opts());
  const auto prompt = prompt_of(7, 3);
  auto p = request(prompt, 1, 3);
  p.n_logprobs = 5;
  p.n_top_logits = 64;
  p.sampling.top_k = 1;  // a sampling filter: must not change the reported distribution
  const RequestId id = h.submit(p);
  h.run();
  const TokenEvent& e = h.out[id].events.at(0);
  const int seq = h.eng->new_seq();
  auto lg = h.eng->eval(seq, prompt.data(), int64_t(prompt.size()));
  ASSERT_TRUE(lg.ok()) << lg.error().message;
  std::vector<float> raw(*lg, *lg + 64);
  h.eng->free_seq(seq);
  double sum = 0;
  for (float x : raw) sum += std::exp(double(x));
  ASSERT_EQ(e.top_logits.size(), 64u);
  for (size_t i = 0; i < e.top_logits.size(); ++i) {
    EXPECT_EQ(e.top_logits[i].logit, raw[size_t(e.top_logits[i].token)]);
    if (i > 0) {
      EXPECT_GE(e.top_logits[i - 1].logit, e.top_logits[i].logit);
    }
  }
  ASSERT_EQ(e.top_logprobs.size(), 5u);
  EXPECT_EQ(e.token, e.top_logits[0].token);  // top_k 1: the argmax
  EXPECT_EQ(e.top_logprobs[0].token, e.token);
  EXPECT_NEAR(e.logprob, double(raw[size_t(e.token)]) - std::log(sum), 1e-5);
  EXPECT_EQ(e.top_logprobs[0].logprob, e.logprob);
  EXPECT_LT(e.logprob, -0.01f) << "the distribution before top-k, not after";
  EXPECT_EQ(h.eng->stats().blocks_used, 0);
}

TEST(Engine, StepInfoAndStats) {
  Harness h(opts(/*n_batch=*/4));
  auto p = request(prompt_of(6, 4), 5, 77);
  p.want_step_info = true;
  p.n_step_top = 3;
  const RequestId id = h.submit(p);
  auto q = request(prompt_of(6, 4), 5, 0);
  q.sampling.seed.reset();  // drawn by the engine, reported
  const RequestId drawn = h.submit(q);
  h.run();
  const auto& o = h.out[id];
  ASSERT_EQ(o.events.size(), 5u);
  for (const auto& e : o.events) {
    EXPECT_EQ(e.step.token, e.token);
    EXPECT_GT(e.step.prob, 0.0f);
    EXPECT_LE(e.step.top.size(), 3u);
    EXPECT_GE(e.step.top.size(), 1u);
  }
  EXPECT_EQ(o.stats.seed, 77u);
  EXPECT_EQ(o.stats.prompt_tokens, 6);
  EXPECT_EQ(o.stats.generated_tokens, 5);
  EXPECT_GE(o.stats.ttft_ms, o.stats.queue_ms);
  EXPECT_GE(o.stats.decode_ms, 0.0);
  const auto& d = h.out[drawn];
  auto replay = request(prompt_of(6, 4), 5, d.stats.seed);
  EXPECT_EQ(test::run_alone(replay).tokens, d.tokens) << "the reported seed repeats the run";
  const EngineStats st = h.eng->stats();
  EXPECT_EQ(st.generated_tokens, 10);
  EXPECT_EQ(st.prompt_tokens, 12);
  EXPECT_EQ(st.requests_finished, 2);
  EXPECT_GT(st.steps, 0);
}

}  // namespace
}  // namespace nt

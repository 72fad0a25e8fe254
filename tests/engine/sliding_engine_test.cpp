// The engine over a fake model with two layer groups: layer 0 attends to everything, layer 1 to
// its last 6 positions (the fake fails a step that reads a dropped row). Requests whose prompts
// and generations run far past the window return what each returns alone, through chunked
// prefill, preemption, prefix-cache hits and cancellation; the sliding group's pool is sized for
// the requests that run at once and never holds more than their windows.
#include <gtest/gtest.h>

#include <vector>

#include "engine_harness.h"

namespace nt {
namespace {

using test::opts;
using test::Outcome;
using test::prompt_of;
using test::request;

constexpr int kWindow = 6;

struct SlidingHarness {
  explicit SlidingHarness(const EngineOptions& o) {
    auto m = std::make_unique<test::FakeModel>(64, 4096, kWindow);
    fake = m.get();
    auto e = Engine::create(std::move(m), o);
    EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message);
    if (e) eng = std::move(*e);
  }
  RequestId submit(RequestParams p) {
    auto id = eng->submit(std::move(p), [this](const TokenEvent& e) { test::record(out[e.id], e); });
    EXPECT_TRUE(id.ok()) << (id.ok() ? "" : id.error().message);
    return id.ok() ? *id : 0;
  }
  // Runs until idle; records the most blocks the sliding group (group 1) held after any step.
  void run() {
    for (int guard = 0; eng->step(); ++guard) {
      ASSERT_LT(guard, 100000) << "the engine never went idle";
      peak_sliding = std::max(peak_sliding, eng->kv().group_stats(1).blocks_used);
    }
  }
  test::FakeModel* fake = nullptr;
  std::unique_ptr<Engine> eng;
  std::map<RequestId, Outcome> out;
  int32_t peak_sliding = 0;
};

Outcome alone(const RequestParams& p) {
  SlidingHarness h(opts());
  const RequestId id = h.submit(p);
  h.run();
  EXPECT_EQ(h.out[id].reason, FinishReason::Length) << h.out[id].error.message;
  return h.out[id];
}

TEST(EngineSliding, TheCacheHasAFullAndASlidingGroup) {
  SlidingHarness h(opts(/*n_batch=*/16, /*n_parallel=*/4, /*n_ctx=*/4096));
  const KvCacheManager& kv = h.eng->kv();
  ASSERT_EQ(kv.groups().size(), 2u);
  EXPECT_EQ(kv.groups()[1].kind, LayerKind::Sliding);
  EXPECT_EQ(kv.groups()[1].window, kWindow);
  EXPECT_EQ(kv.group_stats(0).blocks_total, 1024);
  // 5 running at most (4 requests and a low-level sequence), 5 blocks each, and 16 tokens in flight.
  EXPECT_EQ(kv.group_stats(1).blocks_total, 5 * 5 + 4);
  EXPECT_EQ(h.eng->stats().blocks_total, 1024 + 29);
  EXPECT_LT(h.eng->kv_bytes(), size_t(4096) * kv.layout().bytes_per_token() * 6 / 10);
}

TEST(EngineSliding, RequestsPastTheWindowReturnWhatEachReturnsAlone) {
  // Chunks of 5, 4 running at once, a pool of 12 full blocks (a request needs up to 11): preemption
  // and recompute happen.
  SlidingHarness h(opts(/*n_batch=*/5, /*n_parallel=*/4, /*n_ctx=*/48));
  std::vector<RequestParams> ps;
  std::vector<RequestId> ids;
  for (uint32_t i = 0; i < 8; ++i) {
    ps.push_back(request(prompt_of(9 + 3 * int(i), 40 + i), 12, 5 + i));
    ids.push_back(h.submit(ps.back()));
  }
  h.run();
  int preempted = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    const Outcome& o = h.out[ids[i]];
    ASSERT_EQ(o.reason, FinishReason::Length) << "request " << i << ": " << o.error.message;
    const Outcome a = alone(ps[i]);
    EXPECT_EQ(o.tokens, a.tokens) << "request " << i;
    EXPECT_EQ(o.logprobs, a.logprobs) << "request " << i;
    preempted += o.stats.preemptions;
  }
  EXPECT_GT(preempted, 0);
  // After a step, each running request's last 5 positions lie in at most 2 blocks.
  EXPECT_GT(h.peak_sliding, 0);
  EXPECT_LE(h.peak_sliding, 4 * 2);
  EXPECT_EQ(h.eng->stats().blocks_used, 0);
}

TEST(EngineSliding, APrefixHitPastTheWindowGivesTheSameTokens) {
  SlidingHarness h(opts(/*n_batch=*/7));
  const auto base = prompt_of(30, 9);
  const RequestId first = h.submit(request(base, 3, 1));
  h.run();
  auto longer = base;
  for (int32_t t : prompt_of(5, 10)) longer.push_back(t);
  const auto p = request(longer, 10, 2);
  const RequestId second = h.submit(p);
  h.run();
  EXPECT_EQ(h.out[first].reason, FinishReason::Length);
  EXPECT_EQ(h.out[second].stats.cached_tokens, 28);  // 7 full blocks of the 30-token prompt
  const Outcome a = alone(p);
  EXPECT_EQ(a.stats.cached_tokens, 0);
  EXPECT_EQ(h.out[second].tokens, a.tokens);
  EXPECT_EQ(h.out[second].logprobs, a.logprobs);
  EXPECT_EQ(h.eng->stats().blocks_used, 0);
}

TEST(EngineSliding, CancelledAndFinishedRequestsLeaveNoBlockReferenced) {
  SlidingHarness h(opts(/*n_batch=*/9, /*n_parallel=*/3, /*n_ctx=*/64));
  std::vector<RequestId> ids;
  for (uint32_t i = 0; i < 10; ++i) ids.push_back(h.submit(request(prompt_of(5 + int(i) * 2, 70 + i), 15, i)));
  for (int s = 0; s < 6; ++s) ASSERT_TRUE(h.eng->step());
  for (size_t i = 0; i < ids.size(); i += 3) h.eng->cancel(ids[i]);
  h.run();
  for (RequestId id : ids) {
    EXPECT_EQ(h.out[id].finals, 1);
    EXPECT_NE(h.out[id].reason, FinishReason::Error) << h.out[id].error.message;
  }
  EXPECT_EQ(h.eng->kv().group_stats(0).blocks_used, 0);
  EXPECT_EQ(h.eng->kv().group_stats(1).blocks_used, 0);
}

}  // namespace
}  // namespace nt

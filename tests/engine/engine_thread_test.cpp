// The engine's thread contract: submit, cancel and stats from other threads while the engine
// thread steps (bounded; meant to run under TSan as well).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "engine_harness.h"

namespace nt {
namespace {

using test::opts;
using test::prompt_of;
using test::request;

TEST(EngineThreads, SubmitCancelAndStatsFromOtherThreadsWhileStepping) {
  test::Harness h(opts(/*n_batch=*/8, /*n_parallel=*/4, /*n_ctx=*/64));
  Engine& eng = *h.eng;
  constexpr int kRequests = 60;
  std::mutex ids_mu;
  std::vector<RequestId> ids;
  std::atomic<bool> done_submitting{false}, done{false};
  std::atomic<int> refused{0};
  std::thread submitter([&] {
    for (int i = 0; i < kRequests; ++i) {
      auto id = eng.submit(request(prompt_of(1 + i % 13, uint32_t(i)), 2 + i % 7, uint64_t(i)),
                           [&h](const TokenEvent& e) { test::record(h.out[e.id], e); });
      if (!id) {
        ++refused;
        continue;
      }
      std::lock_guard lock(ids_mu);
      ids.push_back(*id);
      if (i % 4 == 3) eng.cancel(ids[ids.size() / 2]);
      if (i % 8 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    done_submitting = true;
  });
  std::atomic<int64_t> polls{0};
  std::thread poller([&] {
    while (!done) {
      const EngineStats s = eng.stats();
      EXPECT_LE(s.running, 4);
      EXPECT_EQ(s.blocks_used + s.blocks_cached + s.blocks_free, s.blocks_total);
      ++polls;
      std::this_thread::yield();
    }
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the engine did not finish the requests";
    if (eng.step()) continue;
    if (done_submitting && !eng.step()) break;  // a last step sees anything submitted meanwhile
    eng.wait_for_work(std::chrono::milliseconds(2));
  }
  done = true;
  submitter.join();
  poller.join();
  EXPECT_EQ(refused, 0);
  EXPECT_GT(polls, 0);
  ASSERT_EQ(ids.size(), size_t(kRequests));
  int cancelled = 0;
  for (RequestId id : ids) {
    EXPECT_EQ(h.out[id].finals, 1) << id;
    cancelled += h.out[id].reason == FinishReason::Cancelled;
  }
  EXPECT_EQ(eng.stats().requests_finished, kRequests);
  EXPECT_EQ(eng.stats().blocks_used, 0);
  EXPECT_GE(cancelled, 0);
}

// A sink may submit and cancel (it runs on the engine thread, outside the engine's locks).
TEST(EngineThreads, SinksMaySubmitAndCancel) {
  test::Harness h(opts());
  Engine& eng = *h.eng;
  RequestId follow_up = 0, victim = 0;
  victim = h.submit(request(prompt_of(4, 1), 100, 1));
  auto first = eng.submit(request(prompt_of(4, 2), 2, 2), [&](const TokenEvent& e) {
    test::record(h.out[e.id], e);
    if (e.finished) {
      eng.cancel(victim);
      follow_up = h.submit(request(prompt_of(4, 3), 2, 3));
    }
  });
  ASSERT_TRUE(first.ok());
  h.run();
  EXPECT_EQ(h.out[*first].finals, 1);
  EXPECT_EQ(h.out[victim].reason, FinishReason::Cancelled);
  ASSERT_NE(follow_up, 0u);
  EXPECT_EQ(h.out[follow_up].reason, FinishReason::Length);
  EXPECT_EQ(eng.stats().blocks_used, 0);
}

}  // namespace
}  // namespace nt

// The counter snapshot as a request's final event sees it. A server frees the request's queue slot
// on that event and may admit the next one at once, so the snapshot must no longer count the
// finished request as running or holding KV blocks: else /metrics reads running + waiting above
// -np + --max-queue (seen in the overload test: running 4, waiting 9 with -np 4 --max-queue 8).
#include <gtest/gtest.h>

#include "engine_harness.h"

namespace nt::test {
namespace {

TEST(EngineStats, AFinishedRequestIsNoLongerCountedWhenItsFinalEventArrives) {
  Harness h(opts(512, 2));  // two run at once, the third waits
  struct AtFinal {
    RequestId id;
    EngineStats stats;
  };
  std::vector<AtFinal> finals;
  int unfinished = 0;
  std::vector<int> unfinished_at_final;  // requests not yet finished, this one excluded
  for (int i = 0; i < 3; ++i) {
    const int64_t max_tokens = i == 0 ? 2 : 6;
    auto id = h.eng->submit(request(prompt_of(6, uint32_t(i)), max_tokens, uint64_t(i)), [&](const TokenEvent& e) {
      record(h.out[e.id], e);
      if (!e.finished) return;
      finals.push_back({e.id, h.eng->stats()});
      unfinished_at_final.push_back(--unfinished);
    });
    ASSERT_TRUE(id.ok());
    ++unfinished;
  }
  h.run();
  ASSERT_EQ(finals.size(), 3u);
  for (size_t i = 0; i < finals.size(); ++i) {
    const EngineStats& s = finals[i].stats;
    EXPECT_EQ(s.running + s.waiting, unfinished_at_final[i])
        << "final event " << i << ": running " << s.running << ", waiting " << s.waiting;
    EXPECT_LE(s.running, 2);
    EXPECT_EQ(s.requests_finished, int64_t(i) + 1);
  }
  // The first to finish (2 tokens) left one running and one waiting, its blocks already freed.
  EXPECT_EQ(finals[0].stats.running, 1);
  EXPECT_EQ(finals[0].stats.waiting, 1);
  EXPECT_EQ(finals.back().stats.blocks_used, 0);
}

}  // namespace
}  // namespace nt::test

// Tests for core/thread_latency.h: the short slice is applied to the calling thread only and keeps
// its nice value.
#include "core/thread_latency.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <thread>

namespace nt {
namespace {

pid_t tid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

TEST(ThreadLatency, ShortSliceAppliesToTheCallingThreadAndKeepsItsNice) {
  bool supported = false;
  uint32_t other_before = 0, other_after = 0;
  std::thread other([&] { other_before = current_slice_us(); });
  other.join();
  std::thread t([&] {
    ASSERT_EQ(setpriority(PRIO_PROCESS, static_cast<id_t>(tid()), 3), 0);
    supported = request_short_slice(250);
    if (!supported) return;
    EXPECT_EQ(current_slice_us(), 250u);
    errno = 0;
    EXPECT_EQ(getpriority(PRIO_PROCESS, static_cast<id_t>(tid())), 3);
    EXPECT_EQ(errno, 0);
  });
  t.join();
  if (!supported) GTEST_SKIP() << "this kernel has no per-thread slice for SCHED_OTHER (Linux 6.12+)";
  std::thread later([&] { other_after = current_slice_us(); });
  later.join();
  EXPECT_EQ(other_after, other_before) << "a new thread must keep the default slice";
  EXPECT_NE(other_after, 250u);
}

}  // namespace
}  // namespace nt

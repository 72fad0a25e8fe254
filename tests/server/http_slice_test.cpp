// The HTTP threads ask for a short scheduling slice (--http-slice), and only they do: the engine
// and compute threads keep the kernel's default.
#include <gtest/gtest.h>

#include <dirent.h>

#include <fstream>
#include <string>
#include <thread>

#include "core/thread_latency.h"
#include "server_harness.h"

namespace nt::test {
namespace {

// Threads of this process whose /proc .../sched reports se.slice == ns, or -1 where the kernel
// does not report slices.
int threads_with_slice_ns(long ns) {
  DIR* d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  bool seen = false;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream f(std::string("/proc/self/task/") + e->d_name + "/sched");
    for (std::string line; std::getline(f, line);) {
      if (line.rfind("se.slice", 0) != 0) continue;
      seen = true;
      if (std::stol(line.substr(line.find(':') + 1)) == ns) ++n;
    }
  }
  closedir(d);
  return seen ? n : -1;
}

bool kernel_supports_slices() {
  bool ok = false;
  std::thread t([&] { ok = request_short_slice(300); });
  t.join();
  return ok;
}

TEST(HttpSlice, HttpThreadsTakeTheShortSliceAndOnlyThey) {
  NT_REQUIRE_SHARED();
  if (!kernel_supports_slices() || threads_with_slice_ns(0) < 0)
    GTEST_SKIP() << "this kernel has no per-thread slice for SCHED_OTHER (Linux 6.12+)";
  for (int slice_us : {700, 0}) {
    server::ServerOptions opt;
    opt.n_parallel = 2;
    opt.max_queue = 2;
    opt.http_slice_us = slice_us;
    TestServer srv(opt, {});
    ASSERT_TRUE(srv.ok());
    auto c = srv.client();
    EXPECT_EQ(get(*c, "/health").status, 200);
    const int with = threads_with_slice_ns(700000);
    if (slice_us == 0) {
      EXPECT_EQ(with, 0) << "--http-slice 0 must leave every thread at the kernel's slice";
    } else {
      // The listen thread and the 2 + 2 + 4 workers (they inherit it from the listen thread that
      // starts them, and set it again before their first task); never the engine or compute pool.
      EXPECT_EQ(with, 9);
    }
  }
}

}  // namespace
}  // namespace nt::test

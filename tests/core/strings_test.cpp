#include <gtest/gtest.h>

#include "core/strings.h"
#include "core/thread_pool.h"

#include <atomic>
#include <vector>

namespace nt {

TEST(Strings, FormatAndCase) {
  EXPECT_EQ(format_thousands(15191712), "15,191,712");
  EXPECT_EQ(format_thousands(12), "12");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_TRUE(iequals("Q4_K_M", "q4_k_m"));
  EXPECT_FALSE(iequals("Q4_K", "q4_k_m"));
  EXPECT_EQ(str_printf("%d-%s", 3, "x"), "3-x");
}

// One escaping for every place that shows a token's text between single quotes (tokenize, run
// --show-probs): one line, unambiguous, valid UTF-8 kept as is.
TEST(Strings, VisiblePieceEscapes) {
  EXPECT_EQ(visible_piece(""), "");
  EXPECT_EQ(visible_piece(" Hello"), " Hello");
  EXPECT_EQ(visible_piece("a\nb\tc\rd"), "a\\nb\\tc\\rd");
  EXPECT_EQ(visible_piece("it's"), "it\\'s");           // the quotes around it stay unambiguous
  EXPECT_EQ(visible_piece("a\\nb"), "a\\\\nb");         // a literal backslash is not an escape
  EXPECT_EQ(visible_piece(std::string("\0\x01\x1f\x7f", 4)), "\\x00\\x01\\x1F\\x7F");
  EXPECT_EQ(visible_piece("caf\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80"), "caf\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80");
  EXPECT_EQ(visible_piece("\xFF"), "\\xFF");                             // never valid in UTF-8
  EXPECT_EQ(visible_piece("\xE6\x97"), "\\xE6\\x97");                    // truncated sequence
  EXPECT_EQ(visible_piece("\xC3" "A"), "\\xC3A");                        // lead byte, no continuation
  EXPECT_EQ(visible_piece("\x80" "b"), "\\x80b");                        // stray continuation byte
}

TEST(ThreadPool, RunsEveryTaskOnce) {
  for (int nt : {1, 2, 3}) {
    ThreadPool pool(nt);
    for (int rep = 0; rep < 200; ++rep) {
      std::vector<std::atomic<int>> hits(37);
      pool.run(37, [&](int task, int thread) {
        EXPECT_LT(thread, nt);
        hits[static_cast<size_t>(task)].fetch_add(1);
      });
      for (auto& h : hits) ASSERT_EQ(h.load(), 1);
    }
  }
}

// Back-to-back jobs of different sizes with more threads than cores: a worker that wakes late must
// never run a task of the next job with an index claimed from the previous one (each task of every
// job runs exactly once, and never after its job returned).
TEST(ThreadPool, BackToBackJobsNeverLeakTasks) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(16);
  for (int rep = 0; rep < 20000; ++rep) {
    const int n = 1 + rep % 9;
    for (auto& h : hits) h.store(0);
    pool.run(n, [&](int task, int) { hits[static_cast<size_t>(task)].fetch_add(1); });
    for (int i = 0; i < 16; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), i < n ? 1 : 0) << "rep " << rep;
  }
}

}  // namespace nt

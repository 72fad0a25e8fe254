// `nexttok pull` killed mid-download (issue 27, item 7): the partial download stays under its
// ".incomplete" name for resuming and never appears under the final names (the blob or the
// snapshot link); the next run resumes from it with a Range request and completes the file.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>

#include "hub/fake_hub.h"
#include "support/child_process.h"
#include "support/test_support.h"

namespace nt::test {
namespace {

const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";

int64_t file_size(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 ? int64_t(st.st_size) : -1;
}
bool exists_nofollow(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0;
}

class PullKillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    home_ = isolate_hub_env(hub_.endpoint());
    data_ = make_tiny_gguf("kill", 4 << 20);  // 16 MiB
    hub_.add_repo({"org/kill-GGUF", kCommit, {{"kill-Q8_0.gguf", data_}}});
  }
  void TearDown() override {
    for (const char* v : {"HF_HOME", "HF_HUB_CACHE", "HF_ENDPOINT"}) ::unsetenv(v);
  }
  FakeHub hub_;
  std::string home_, data_;
};

TEST_F(PullKillTest, PartialDownloadIsKeptForResumingAndNeverUnderTheFinalName) {
  const std::string repo = home_ + "/cache/models--org--kill-GGUF";
  const std::string blob = repo + "/blobs/" + sha256_oracle(data_);
  const std::string part = blob + ".incomplete";
  const std::string link = repo + "/snapshots/" + kCommit + "/kill-Q8_0.gguf";
  const std::vector<std::string> argv{nexttok_bin(), "pull", "org/kill-GGUF:q8_0"};
  hub_.chunk_delay_us = 600;  // 4096 chunks: the whole download would take about 3 s

  const unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  std::printf("random kill times from seed %u\n", seed);
  // kill when the partial file has reached these sizes (0: at a random time up to 0.5 s)
  const int64_t thresholds[] = {1 << 20, 3 << 20, 0, 0};
  int64_t last_part = 0;
  for (int64_t at : thresholds) {
    const double delay = std::uniform_real_distribution<double>(0.05, 0.5)(rng);
    Child child(argv, home_ + "/log-" + std::to_string(at));
    const auto start = std::chrono::steady_clock::now();
    bool finished = false;
    for (;;) {
      if (!child.running()) {
        finished = true;
        break;
      }
      const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if ((at > 0 && file_size(part) >= at) || (at == 0 && t >= delay) || t > 30) break;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    child.kill_now();
    ASSERT_FALSE(finished) << "the download finished before the kill: " << child.err();
    EXPECT_FALSE(exists_nofollow(blob)) << "a partial download appeared under the blob's final name";
    EXPECT_FALSE(exists_nofollow(link)) << "the snapshot link appeared before the download completed";
    const int64_t have = file_size(part);
    if (at > 0) {
      EXPECT_GE(have, at);
    }
    if (have >= 0) {
      EXPECT_GE(have, last_part) << "a resumed download started over";
      const std::string got = read_text(part);
      ASSERT_LE(got.size(), data_.size());
      EXPECT_TRUE(got == data_.substr(0, got.size())) << "the partial file is not a prefix of the blob";
      last_part = have;
    }
    std::printf("killed at %.2f s with %lld bytes kept in %s\n", child.seconds(), static_cast<long long>(have),
                part.substr(part.rfind('/') + 1).c_str());
  }
  ASSERT_GT(last_part, 0);

  // the next run resumes from the kept bytes and completes the file
  hub_.chunk_delay_us = 0;
  const size_t gets_before = hub_.ranges().size();
  auto r = run_nexttok({"pull", "org/kill-GGUF:q8_0"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, link + "\n");
  EXPECT_TRUE(read_text(link) == data_) << "the completed download differs";
  EXPECT_FALSE(exists_nofollow(part));
  auto ranges = hub_.ranges();
  ASSERT_EQ(ranges.size(), gets_before + 1) << "one request for the rest";
  EXPECT_EQ(ranges.back(), "bytes=" + std::to_string(last_part) + "-") << "resumed from the kept bytes";
  EXPECT_NE(r.err.find("resuming"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace nt::test

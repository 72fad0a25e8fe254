// Tests of core/atomic_file: whole-file replacement through a temporary in the target's folder, and
// which leftover temporaries the next writer removes (those of dead writers only).
#include "core/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "support/leftover_temps.h"
#include "support/test_support.h"

namespace nt {
namespace {

// Above the kernel's largest pid (2^22), so no process has it.
constexpr pid_t kDeadPid = 4194305;

TEST(AtomicFile, TemporaryNameIsHiddenBesideTheTarget) {
  EXPECT_EQ(atomic_temp_path("/a/b/out.json", 42), "/a/b/.out.json.nexttok-tmp-42");
  EXPECT_EQ(atomic_temp_path("out.gguf", 7), ".out.gguf.nexttok-tmp-7");
  EXPECT_EQ(atomic_temp_path("x"), ".x.nexttok-tmp-" + std::to_string(::getpid()));
}

TEST(AtomicFile, ReplacesTheWholeFileAndLeavesNoTemporary) {
  const std::string dir = test::temp_dir(), path = dir + "/c.json";
  test::write_text(path, "old content that is longer than the new one");
  ASSERT_TRUE(write_file_atomic(path, "new").ok());
  EXPECT_EQ(test::read_text(path), "new");
  ASSERT_TRUE(write_file_atomic(dir + "/fresh.json", "").ok());
  EXPECT_TRUE(std::filesystem::exists(dir + "/fresh.json"));
  EXPECT_TRUE(test::leftover_temps(dir).empty());
}

TEST(AtomicFile, UncommittedWriteLeavesTheTargetAndNoTemporary) {
  const std::string dir = test::temp_dir(), path = dir + "/m.gguf";
  test::write_text(path, "old");
  {
    AtomicFile f;
    ASSERT_TRUE(f.open(path).ok());
    EXPECT_EQ(f.temp_path(), atomic_temp_path(path));
    std::fputs("partial", f.file());
    std::fflush(f.file());
    EXPECT_EQ(test::read_text(f.temp_path()), "partial");
    EXPECT_EQ(test::read_text(path), "old") << "the target changes only at commit";
  }
  EXPECT_EQ(test::read_text(path), "old");
  EXPECT_TRUE(test::leftover_temps(dir).empty());
}

TEST(AtomicFile, StaleTemporariesOfDeadWritersAreRemovedOthersKept) {
  const std::string dir = test::temp_dir(), path = dir + "/out.gguf";
  const std::string dead = atomic_temp_path(path, kDeadPid);
  const std::string own_pred = atomic_temp_path(path);          // an earlier process with this pid
  const std::string live = atomic_temp_path(path, ::getppid());  // a concurrent writer still running
  const std::string locked = atomic_temp_path(path, kDeadPid + 1);
  const std::string other = atomic_temp_path(dir + "/other.gguf", kDeadPid);
  const std::string keep = atomic_temp_path(path, kDeadPid + 2);
  for (const std::string& p : {dead, own_pred, live, locked, other, keep}) test::write_text(p, "x");
  for (const std::string& p : {dir + "/.out.gguf.nexttok-tmp-12x", dir + "/out.gguf.tmp", dir + "/.out.gguf.nexttok-tmp-"})
    test::write_text(p, "not ours");
  // a writer whose pid the kernel lost track of (another pid namespace) still holds its flock
  int fd = ::open(locked.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);

  EXPECT_EQ(remove_stale_temps(path, {dir + "/./" + std::filesystem::path(keep).filename().string()}), 2);
  EXPECT_FALSE(std::filesystem::exists(dead));
  EXPECT_FALSE(std::filesystem::exists(own_pred));
  for (const std::string& p : {live, locked, other, keep}) EXPECT_TRUE(std::filesystem::exists(p)) << p;
  EXPECT_TRUE(std::filesystem::exists(dir + "/.out.gguf.nexttok-tmp-12x"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/out.gguf.tmp"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/.out.gguf.nexttok-tmp-"));
  ::close(fd);

  // the next write of the target cleans up what is stale by then (the lock is gone now)
  ASSERT_TRUE(write_file_atomic(path, "new", {keep}).ok());
  EXPECT_FALSE(std::filesystem::exists(locked));
  EXPECT_TRUE(std::filesystem::exists(live));
  EXPECT_TRUE(std::filesystem::exists(keep));
}

TEST(AtomicFile, ThroughASymlinkTheLinkedFileIsReplaced) {
  const std::string dir = test::temp_dir();
  std::filesystem::create_directory(dir + "/real");
  test::write_text(dir + "/real/c.json", "old");
  std::filesystem::create_symlink(dir + "/real/c.json", dir + "/link.json");
  ASSERT_TRUE(write_file_atomic(dir + "/link.json", "new").ok());
  EXPECT_TRUE(std::filesystem::is_symlink(dir + "/link.json"));
  EXPECT_EQ(test::read_text(dir + "/real/c.json"), "new");
  EXPECT_TRUE(test::leftover_temps(dir).empty());
  EXPECT_TRUE(test::leftover_temps(dir + "/real").empty());
}

TEST(AtomicFile, ErrorsNameThePath) {
  auto s = write_file_atomic("/nonexistent-dir/c.json", "x");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("/nonexistent-dir/.c.json.nexttok-tmp-"), std::string::npos) << s.error().message;
  s = write_file_atomic("/dev/null", "x");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("/dev/null: not a regular file"), std::string::npos) << s.error().message;
}

}  // namespace
}  // namespace nt

#include "core/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "core/check.h"
#include "core/files.h"
#include "core/strings.h"

namespace nt {

namespace {

constexpr const char* kTag = ".nexttok-tmp-";

// "dir/" (or "") and "name" of a path.
std::pair<std::string, std::string> split_path(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {"", path};
  return {path.substr(0, slash + 1), path.substr(slash + 1)};
}

// The pid in ".NAME.nexttok-tmp-PID", or -1 when `entry` is not a temporary of NAME.
long temp_pid(const std::string& entry, const std::string& name) {
  const std::string prefix = "." + name + kTag;
  if (entry.size() <= prefix.size() || entry.compare(0, prefix.size(), prefix) != 0) return -1;
  const std::string digits = entry.substr(prefix.size());
  if (digits.size() > 10) return -1;
  for (char c : digits)
    if (c < '0' || c > '9') return -1;
  return std::strtol(digits.c_str(), nullptr, 10);
}

bool process_running(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

}  // namespace

std::string atomic_temp_path(const std::string& path, pid_t pid) {
  auto [dir, name] = split_path(path);
  return dir + "." + name + kTag + std::to_string(pid);
}

std::string atomic_temp_path(const std::string& path) { return atomic_temp_path(path, ::getpid()); }

int remove_stale_temps(const std::string& path, const std::vector<std::string>& keep) {
  auto [dir, name] = split_path(path);
  if (name.empty()) return 0;
  DIR* d = ::opendir(dir.empty() ? "." : dir.c_str());
  if (!d) return 0;
  int removed = 0;
  while (dirent* e = ::readdir(d)) {
    const std::string entry = e->d_name;
    const long pid = temp_pid(entry, name);
    // a writer still running keeps its temporary (this process's own pid: a predecessor's file)
    if (pid < 0 || (pid != ::getpid() && process_running(pid))) continue;
    const std::string full = dir + entry;
    bool kept = false;
    for (const std::string& k : keep) kept = kept || same_file(full, k);
    if (kept) continue;
    // the writer's flock is the proof of life that survives pid reuse and pid namespaces
    int fd = ::open(full.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::flock(fd, LOCK_EX | LOCK_NB) == 0 &&
        ::unlink(full.c_str()) == 0)
      ++removed;
    ::close(fd);
  }
  ::closedir(d);
  return removed;
}

AtomicFile::~AtomicFile() {
  if (f_) {
    std::fclose(f_);
    ::unlink(tmp_.c_str());
  }
}

Status AtomicFile::open(const std::string& path, const std::vector<std::string>& keep) {
  NT_CHECK(f_ == nullptr);
  // through a symlink: the file it points to is replaced, the link stays
  std::string target = path;
  struct stat lst {};
  if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    std::error_code ec;
    auto resolved = std::filesystem::weakly_canonical(path, ec);
    if (!ec) target = resolved.string();
  }
  remove_stale_temps(target, keep);
  path_ = target;
  tmp_ = atomic_temp_path(target);
  int fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) return make_error("%s: cannot create its temporary file %s: %s", path.c_str(), tmp_.c_str(), std::strerror(errno));
  // held until the file is closed (or the process dies): tells other writers this one is alive
  (void)::flock(fd, LOCK_EX);
  f_ = ::fdopen(fd, "wb");
  if (!f_) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp_.c_str());
    return make_error("%s: cannot create its temporary file %s: %s", path.c_str(), tmp_.c_str(), std::strerror(err));
  }
  return {};
}

Status AtomicFile::commit() {
  NT_CHECK(f_ != nullptr);
  Status s;
  if (std::fflush(f_) != 0 || std::ferror(f_)) s = make_error("%s: write failed: %s", tmp_.c_str(), std::strerror(errno));
  if (std::fclose(f_) != 0 && s.ok()) s = make_error("%s: close failed: %s", tmp_.c_str(), std::strerror(errno));
  f_ = nullptr;
  if (s.ok() && std::rename(tmp_.c_str(), path_.c_str()) != 0)
    s = make_error("%s: cannot rename to %s: %s", tmp_.c_str(), path_.c_str(), std::strerror(errno));
  if (!s.ok()) ::unlink(tmp_.c_str());
  return s;
}

Status write_file_atomic(const std::string& path, std::string_view content, const std::vector<std::string>& keep) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return make_error("%s: not a regular file", path.c_str());
  AtomicFile f;
  NT_TRY(f.open(path, keep));
  if (!content.empty() && std::fwrite(content.data(), 1, content.size(), f.file()) != content.size())
    return make_error("%s: write failed: %s", f.temp_path().c_str(), std::strerror(errno));
  return f.commit();
}

}  // namespace nt

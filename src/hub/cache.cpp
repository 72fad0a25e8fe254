// hub/cache.cpp — file-system side of the Hugging Face cache layout.
#include "hub/cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "core/strings.h"
#include "hub/repo_spec.h"

namespace nt::hub {

std::string hub_cache_dir() {
  if (const char* v = std::getenv("HF_HUB_CACHE"); v && *v) return v;
  if (const char* v = std::getenv("HUGGINGFACE_HUB_CACHE"); v && *v) return v;
  if (const char* v = std::getenv("HF_HOME"); v && *v) return std::string(v) + "/hub";
  if (const char* v = std::getenv("XDG_CACHE_HOME"); v && *v) return std::string(v) + "/huggingface/hub";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.cache/huggingface/hub";
}

bool is_commit_hash(const std::string& s) {
  if (s.size() != 40) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

bool path_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

int64_t file_size_or(const std::string& path, int64_t fallback) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return fallback;
  return static_cast<int64_t>(st.st_size);
}

Status make_dirs(const std::string& path) {
  std::string cur;
  size_t i = 0;
  while (i <= path.size()) {
    size_t next = path.find('/', i);
    if (next == std::string::npos) next = path.size();
    cur = path.substr(0, next);
    if (!cur.empty() && ::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST)
      return Error{"cannot create folder " + cur + ": " + std::strerror(errno)};
    i = next + 1;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return Error{path + " is not a folder"};
  return {};
}

RepoCache::RepoCache(std::string root, const std::string& repo)
    : root_(std::move(root)), folder_(repo_folder_name(repo)), dir_(root_ + "/" + folder_) {}

std::string RepoCache::lock_path(const std::string& blob) const {
  return root_ + "/.locks/" + folder_ + "/" + blob + ".lock";
}

Result<std::string> RepoCache::resolve_revision(const std::string& rev) const {
  if (is_commit_hash(rev) && path_exists(dir_ + "/snapshots/" + rev)) return rev;
  std::string ref = dir_ + "/refs/" + rev;
  auto text = read_file(ref);
  if (!text.ok()) return Error{"revision '" + rev + "' is not in the cache (" + ref + " is missing)"};
  std::string commit = *text;
  while (!commit.empty() && (commit.back() == '\n' || commit.back() == '\r' || commit.back() == ' '))
    commit.pop_back();
  if (commit.empty()) return Error{ref + " is empty"};
  return commit;
}

Status RepoCache::write_ref(const std::string& rev, const std::string& commit) const {
  std::string ref = dir_ + "/refs/" + rev;
  NT_TRY(make_dirs(ref.substr(0, ref.rfind('/'))));
  std::string cur;
  if (auto old = read_file(ref); old.ok() && *old == commit) return {};
  static std::atomic<unsigned> counter{0};
  std::string tmp = ref + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return Error{"cannot write " + tmp + ": " + std::strerror(errno)};
  bool ok = std::fwrite(commit.data(), 1, commit.size(), f) == commit.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), ref.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return Error{"cannot write " + ref + ": " + std::strerror(errno)};
  }
  return {};
}

Status RepoCache::link_snapshot(const std::string& commit, const std::string& file, const std::string& blob) const {
  std::string link = snapshot_path(commit, file);
  NT_TRY(make_dirs(link.substr(0, link.rfind('/'))));
  std::string target = "../../";
  for (char c : file)
    if (c == '/') target += "../";
  target += "blobs/" + blob;
  char buf[4096];
  ssize_t n = ::readlink(link.c_str(), buf, sizeof(buf) - 1);
  if (n > 0 && std::string(buf, static_cast<size_t>(n)) == target) return {};
  // Made under a unique name and renamed over the link: the link is replaced atomically, so a
  // concurrent puller (thread or process) never sees it missing.
  static std::atomic<unsigned> counter{0};
  const std::string tmp = link + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  ::unlink(tmp.c_str());
  if (::symlink(target.c_str(), tmp.c_str()) != 0 || ::rename(tmp.c_str(), link.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return Error{"cannot create the link " + link + " -> " + target + ": " + std::strerror(err)};
  }
  return {};
}

static void walk(const std::string& base, const std::string& rel, std::vector<std::string>& out, int depth) {
  if (depth > 16) return;
  std::string dir = rel.empty() ? base : base + "/" + rel;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    std::string r = rel.empty() ? name : rel + "/" + name;
    struct stat st {};
    if (::stat((base + "/" + r).c_str(), &st) != 0) continue;  // broken link: not usable
    if (S_ISDIR(st.st_mode)) walk(base, r, out, depth + 1);
    else if (S_ISREG(st.st_mode)) out.push_back(r);
  }
  ::closedir(d);
}

std::vector<std::string> RepoCache::snapshot_files(const std::string& commit) const {
  std::vector<std::string> out;
  walk(dir_ + "/snapshots/" + commit, "", out, 0);
  return out;
}

std::string RepoCache::snapshot_blob(const std::string& commit, const std::string& file) const {
  char buf[4096];
  ssize_t n = ::readlink(snapshot_path(commit, file).c_str(), buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  std::string t(buf, static_cast<size_t>(n));
  size_t p = t.rfind("blobs/");
  return p == std::string::npos ? "" : t.substr(p + 6);
}

FileLock::~FileLock() {
  if (fd_ >= 0) {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
}

Status FileLock::acquire(const std::string& path, const std::function<void()>& on_wait) {
  NT_TRY(make_dirs(path.substr(0, path.rfind('/'))));
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) return Error{"cannot open the lock file " + path + ": " + std::strerror(errno)};
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return {};
  if (on_wait) on_wait();
  while (::flock(fd_, LOCK_EX) != 0)
    if (errno != EINTR) return Error{"cannot lock " + path + ": " + std::strerror(errno)};
  return {};
}

}  // namespace nt::hub

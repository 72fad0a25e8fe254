// hub/cache.h — the Hugging Face Hub cache on disk, shared with huggingface_hub, llama.cpp and
// friends. Owns: where the cache is ($HF_HUB_CACHE, else $HF_HOME/hub, else
// ~/.cache/huggingface/hub), and one repo's folder in it:
//   models--org--repo/blobs/<sha256>             the file (".incomplete" while downloading)
//   models--org--repo/snapshots/<commit>/<file>  relative symlink ../../blobs/<sha256>
//   models--org--repo/refs/<revision>            the commit that revision pointed to
//   .locks/models--org--repo/<sha256>.lock       held (flock) while a blob is being written
// Must not know: HTTP, the Hub's API, GGUF.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/result.h"

namespace nt::hub {

// The cache root from the environment (not created).
std::string hub_cache_dir();

// True for a full 40-hex-digit git commit id.
bool is_commit_hash(const std::string& s);

// mkdir -p.
Status make_dirs(const std::string& path);
bool path_exists(const std::string& path);  // follows symlinks
int64_t file_size_or(const std::string& path, int64_t fallback);

class RepoCache {
 public:
  RepoCache(std::string root, const std::string& repo);

  const std::string& dir() const { return dir_; }
  std::string blob_path(const std::string& blob) const { return dir_ + "/blobs/" + blob; }
  std::string incomplete_path(const std::string& blob) const { return blob_path(blob) + ".incomplete"; }
  std::string snapshot_path(const std::string& commit, const std::string& file) const {
    return dir_ + "/snapshots/" + commit + "/" + file;
  }
  std::string lock_path(const std::string& blob) const;

  // The commit `rev` names in the cache: rev itself when it is a commit with a snapshot folder,
  // else the content of refs/<rev>. Error says the revision is not cached.
  Result<std::string> resolve_revision(const std::string& rev) const;
  Status write_ref(const std::string& rev, const std::string& commit) const;
  // snapshots/<commit>/<file> -> ../../blobs/<blob> (more ../ for files in folders); replaces
  // whatever was there.
  Status link_snapshot(const std::string& commit, const std::string& file, const std::string& blob) const;
  // Files (relative paths) under snapshots/<commit> that resolve to an existing file.
  std::vector<std::string> snapshot_files(const std::string& commit) const;
  // The blob name a snapshot entry links to ("" when it is not a symlink into blobs/).
  std::string snapshot_blob(const std::string& commit, const std::string& file) const;

 private:
  std::string root_;
  std::string folder_;  // models--org--repo
  std::string dir_;
};

// An exclusive flock on a lock file (created if missing), released on destruction. Compatible with
// huggingface_hub's filelock on the same path.
class FileLock {
 public:
  FileLock() = default;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();
  // Takes the lock, waiting (after calling on_wait once) while another process holds it.
  Status acquire(const std::string& path, const std::function<void()>& on_wait);

 private:
  int fd_ = -1;
};

}  // namespace nt::hub

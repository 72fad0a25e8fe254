// core/atomic_file.h — replacing a file whole: the new content goes to a temporary file in the
// target's folder (".NAME.nexttok-tmp-PID") that is renamed onto the target only once complete,
// so a crash or SIGKILL at any moment leaves the old file or the whole new one under the name.
// A temporary is stale when its writer is gone (its pid is not running and no one holds the
// flock its writer keeps on it): the next writer of the same target removes it; a concurrent
// writer's temporary is left alone. Must not know: file formats.
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace nt {

// The temporary a writer with process id `pid` uses for `path`.
std::string atomic_temp_path(const std::string& path, pid_t pid);
// This process's temporary for `path`.
std::string atomic_temp_path(const std::string& path);

// Removes the stale temporaries of `path` (never one of `keep`, which are compared as files);
// returns how many it removed.
int remove_stale_temps(const std::string& path, const std::vector<std::string>& keep = {});

class AtomicFile {
 public:
  AtomicFile() = default;
  ~AtomicFile();  // without commit(): the temporary is removed, the target untouched
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Removes stale temporaries of `path` (except `keep`) and creates this process's temporary.
  // Errors name the temporary and the reason.
  Status open(const std::string& path, const std::vector<std::string>& keep = {});
  FILE* file() const { return f_; }
  const std::string& temp_path() const { return tmp_; }
  // Flushes and closes the temporary and renames it onto the target; on failure it is removed.
  Status commit();

 private:
  std::string path_, tmp_;
  FILE* f_ = nullptr;
};

// `content` as the whole of `path`, through an AtomicFile. Refuses a target that exists and is not
// a regular file (a rename would replace a device or FIFO instead of writing into it).
Status write_file_atomic(const std::string& path, std::string_view content, const std::vector<std::string>& keep = {});

}  // namespace nt

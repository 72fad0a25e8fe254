// core/files.h — what commands taking file paths share: whether two paths name the same file
// (by the file itself, not by spelling) and the checks an output path must pass before a command
// writes to it. Must not know: file formats.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"

namespace nt {

// True when a and b name the same file: the same device and inode when both exist (so "a.gguf",
// "./a.gguf", an absolute path, a symlink or a hard link all match), else the same absolute path
// once the symlinks of its existing part are resolved. Empty paths match nothing.
bool same_file(const std::string& a, const std::string& b);

// "PATH: is a directory" when `path` is one (symlinks followed); ok otherwise, missing included.
Status check_not_directory(const std::string& path);

// Checks that `out` may be written: not a directory and not the same file as any of `inputs`
// (the files the command reads, which writing `out` would destroy).
Status check_output_path(const std::string& out, const std::vector<std::string>& inputs);

}  // namespace nt

// core/mapped_file.h — a read-only memory map of a whole file (weights are mmapped, never copied).
// Owns: the mapping's lifetime. Must not know: file formats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/result.h"

namespace nt {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& o) noexcept;
  MappedFile& operator=(MappedFile&& o) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Maps `path` read-only. An empty file maps to size 0 with data() == nullptr.
  static Result<MappedFile> open(const std::string& path);

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Drops the whole pages of [offset, offset + len) from this process's resident memory (bytes
  // read once, e.g. a file's metadata after parsing); they stay readable and are read back from
  // the file if touched again. Clamped to the file; partial pages at either end are kept.
  void release_pages(size_t offset, size_t len) const;

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

}  // namespace nt

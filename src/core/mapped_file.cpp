#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/strings.h"

namespace nt {

MappedFile::~MappedFile() {
  if (data_) munmap(const_cast<uint8_t*>(data_), size_);
}

MappedFile::MappedFile(MappedFile&& o) noexcept : data_(o.data_), size_(o.size_), path_(std::move(o.path_)) {
  o.data_ = nullptr;
  o.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    if (data_) munmap(const_cast<uint8_t*>(data_), size_);
    data_ = o.data_;
    size_ = o.size_;
    path_ = std::move(o.path_);
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

void MappedFile::release_pages(size_t offset, size_t len) const {
  if (!data_ || offset >= size_) return;
  len = std::min(len, size_ - offset);
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t lo = (reinterpret_cast<uintptr_t>(data_) + offset + page - 1) / page * page;
  const uintptr_t hi = (reinterpret_cast<uintptr_t>(data_) + offset + len) / page * page;
  // A private read-only file mapping: dropped pages are refilled from the file, never zeroed.
  if (hi > lo) (void)madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
}

Result<MappedFile> MappedFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error("%s: cannot open: %s", path.c_str(), std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return make_error("%s: cannot stat: %s", path.c_str(), std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(S_ISDIR(st.st_mode) ? "%s: is a directory" : "%s: not a regular file", path.c_str());
  }
  MappedFile mf;
  mf.path_ = path;
  mf.size_ = static_cast<size_t>(st.st_size);
  if (mf.size_ > 0) {
    void* p = mmap(nullptr, mf.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      ::close(fd);
      return make_error("%s: cannot mmap: %s", path.c_str(), std::strerror(e));
    }
    // Ask for huge pages: weights stream through once per token, and 4 KiB pages cost a TLB miss
    // (and stop the hardware prefetcher) every 4 KiB. Advisory: ignored where unsupported.
    (void)madvise(p, mf.size_, MADV_HUGEPAGE);
    mf.data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
  return mf;
}

}  // namespace nt

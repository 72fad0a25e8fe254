// MappedFile: release_pages drops a range from the process's resident memory and the bytes stay
// readable (read back from the file).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "core/mapped_file.h"
#include "support/test_support.h"

namespace {

uint64_t checksum(const uint8_t* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

TEST(MappedFile, ReleasePagesDropsResidentPagesAndKeepsTheBytes) {
  const std::string path = nt::test::temp_dir() + "/data.bin";
  const size_t n = 4u << 20;
  {
    std::string bytes(n, '\0');
    for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<char>(i * 2654435761u >> 13);
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(n));
  }
  auto m = nt::MappedFile::open(path);
  ASSERT_TRUE(m.ok()) << m.error().message;
  const uint64_t sum = checksum(m->data(), n);  // touches every page
  const long before = nt::test::resident_kib(m->data());
  ASSERT_GE(before, 3 * 1024) << "the file's pages should be resident after reading them";
  m->release_pages(0, n);
  const long after = nt::test::resident_kib(m->data());
  EXPECT_LE(after, 64) << "resident KiB of the mapping: " << before << " before, " << after << " after";
  EXPECT_EQ(checksum(m->data(), n), sum);  // read back from the file
}

// Only whole pages inside the range are released: a partial page at either end stays.
TEST(MappedFile, ReleasePagesKeepsPartialPagesAndIgnoresOutOfRange) {
  const std::string path = nt::test::temp_dir() + "/small.bin";
  std::ofstream(path, std::ios::binary) << std::string(3 * 4096 + 100, 'x');
  auto m = nt::MappedFile::open(path);
  ASSERT_TRUE(m.ok()) << m.error().message;
  m->release_pages(100, 50);          // inside one page: nothing
  m->release_pages(1 << 20, 4096);    // past the end: nothing
  m->release_pages(10, size_t(1) << 40);  // clamped to the file
  EXPECT_EQ(checksum(m->data(), m->size()), checksum(reinterpret_cast<const uint8_t*>(std::string(3 * 4096 + 100, 'x').data()), 3 * 4096 + 100));
  nt::MappedFile empty;
  empty.release_pages(0, 10);  // no mapping: nothing
}

}  // namespace

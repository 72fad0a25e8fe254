// GgufFile::release_metadata_pages: after the loaders have read the metadata (vocabulary, merges,
// template), its pages leave the resident set and every view into them still reads the same bytes.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "gguf/gguf.h"
#include "support/test_support.h"

namespace {

// Resident KiB of the mapping that contains p, from /proc/self/smaps; -1 when not found.
long resident_kib(const void* p) {
  std::ifstream f("/proc/self/smaps");
  const auto addr = reinterpret_cast<uintptr_t>(p);
  std::string line;
  bool in = false;
  while (std::getline(f, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2) {
      in = addr >= lo && addr < hi;
      continue;
    }
    if (in && line.rfind("Rss:", 0) == 0) return std::stol(line.substr(4));
  }
  return -1;
}

TEST(GgufMetadataPages, ReleasedAfterReadingAndStillReadable) {
  NT_REQUIRE_SHARED();
  auto f = nt::GgufFile::open(nt::test::shared_path("vocab/ggml-vocab-qwen2.gguf"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  const nt::GgufValue* toks = f->get_array("tokenizer.ggml.tokens");
  ASSERT_TRUE(toks && toks->strs.size() == 151936);
  size_t n_bytes = 0;
  for (auto s : toks->strs) n_bytes += s.size();
  const long before = resident_kib(toks->strs[0].data());
  ASSERT_GE(before, 1024) << "parsing reads the whole metadata";
  f->release_metadata_pages();
  const long after = resident_kib(toks->strs[0].data());
  EXPECT_LE(after, 64) << "resident KiB of the GGUF mapping: " << before << " before, " << after << " after";
  size_t again = 0;
  for (auto s : toks->strs) again += s.size();
  EXPECT_EQ(again, n_bytes);
  EXPECT_EQ(toks->strs[151643], "<|endoftext|>");
}

}  // namespace

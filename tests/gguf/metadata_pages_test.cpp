// GgufFile::release_metadata_pages: after the loaders have read the metadata (vocabulary, merges,
// template), its pages leave the resident set and every view into them still reads the same bytes.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "gguf/gguf.h"
#include "support/test_support.h"

namespace {

TEST(GgufMetadataPages, ReleasedAfterReadingAndStillReadable) {
  NT_REQUIRE_SHARED();
  auto f = nt::GgufFile::open(nt::test::shared_path("vocab/ggml-vocab-qwen2.gguf"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  const nt::GgufValue* toks = f->get_array("tokenizer.ggml.tokens");
  ASSERT_TRUE(toks && toks->strs.size() == 151936);
  size_t n_bytes = 0;
  for (auto s : toks->strs) n_bytes += s.size();
  const long before = nt::test::resident_kib(toks->strs[0].data());
  ASSERT_GE(before, 1024) << "parsing reads the whole metadata";
  f->release_metadata_pages();
  const long after = nt::test::resident_kib(toks->strs[0].data());
  EXPECT_LE(after, 64) << "resident KiB of the GGUF mapping: " << before << " before, " << after << " after";
  size_t again = 0;
  for (auto s : toks->strs) again += s.size();
  EXPECT_EQ(again, n_bytes);
  EXPECT_EQ(toks->strs[151643], "<|endoftext|>");
}

}  // namespace

// A parsed GGUF holds its string arrays (a vocabulary's tokens and merges: 300,000 strings) as
// offsets into the mapping, 4 bytes an element, for as long as the model is loaded.
#include <gtest/gtest.h>
#include <malloc.h>

#include "gguf/gguf.h"
#include "support/test_support.h"

namespace {

size_t heap_in_use() {
  const struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

TEST(GgufStringArrays, HeapPerElementIsBounded) {
  NT_REQUIRE_SHARED();
  const size_t before = heap_in_use();
  auto f = nt::GgufFile::open(nt::test::shared_path("vocab/ggml-vocab-qwen2.gguf"));
  const size_t after = heap_in_use();
  ASSERT_TRUE(f.ok()) << f.error().message;
  if (after < before + (64u << 10)) GTEST_SKIP() << "mallinfo2 does not see this allocator's heap";
  const nt::GgufValue* toks = f->get_array("tokenizer.ggml.tokens");
  const nt::GgufValue* merges = f->get_array("tokenizer.ggml.merges");
  ASSERT_TRUE(toks && merges);
  const size_t n = toks->strs.size() + merges->strs.size();
  ASSERT_EQ(n, 151936u + 151387u);
  const double per_elem = double(after - before) / double(n);
  EXPECT_LE(per_elem, 6.0) << "GgufFile heap " << (after - before) / 1024 << " KiB for " << n << " strings";
  EXPECT_EQ(toks->strs[151643], "<|endoftext|>");
  EXPECT_EQ(merges->strs[0], "Ġ Ġ");
}

}  // namespace

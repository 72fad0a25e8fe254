// The tokenizer's heap footprint: a server holds one tokenizer for its whole life, and its resident
// memory should stay close to weights + KV cache (docs/memory.md). Measured with glibc's
// mallinfo2 (bytes in use, arenas and mmapped chunks); skipped where a sanitizer replaces malloc.
#include <gtest/gtest.h>
#include <malloc.h>

#include <string>

#include "gguf/gguf.h"
#include "support/test_support.h"
#include "tokenizer/tokenizer.h"

namespace {

size_t heap_in_use() {
  const struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

// Heap bytes per vocabulary entry that Tokenizer::from_gguf keeps (the GGUF file itself opened
// before, so its own tables are not counted); 0 when the allocator does not report.
double heap_per_token(const std::string& vocab, int32_t* n_vocab) {
  auto f = nt::GgufFile::open(nt::test::shared_path("vocab/ggml-vocab-" + vocab + ".gguf"));
  EXPECT_TRUE(f.ok()) << (f.ok() ? "" : f.error().message);
  if (!f.ok()) return 0;
  const size_t before = heap_in_use();
  auto t = nt::Tokenizer::from_gguf(*f);
  const size_t after = heap_in_use();
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
  if (!t.ok() || after < before + (64u << 10)) return 0;
  *n_vocab = t.value()->n_vocab();
  const double per_token = double(after - before) / double(*n_vocab);
  testing::Test::RecordProperty("heap_bytes_per_token", std::to_string(per_token));
  return per_token;
}

// qwen2: 151,936 tokens and 151,387 merges. Strings packed in one buffer, an open-addressing text
// index and a flat merge table: about 66 bytes a token (node-based maps and one std::string per
// text and piece took 211).
TEST(TokenizerMemory, Qwen2VocabHeapIsBounded) {
  NT_REQUIRE_SHARED();
  int32_t n = 0;
  const double per_token = heap_per_token("qwen2", &n);
  if (per_token == 0) GTEST_SKIP() << "mallinfo2 does not see this allocator's heap";
  EXPECT_EQ(n, 151936);
  EXPECT_LE(per_token, 72.0) << "tokenizer heap " << per_token * n / (1 << 20) << " MiB for " << n << " tokens";
}

// SentencePiece (no merges): the texts, pieces, scores and types, and the index.
TEST(TokenizerMemory, LlamaSpmVocabHeapIsBounded) {
  NT_REQUIRE_SHARED();
  int32_t n = 0;
  const double per_token = heap_per_token("llama-spm", &n);
  if (per_token == 0) GTEST_SKIP() << "mallinfo2 does not see this allocator's heap";
  EXPECT_EQ(n, 32000);
  EXPECT_LE(per_token, 48.0) << "tokenizer heap " << per_token * n / (1 << 20) << " MiB for " << n << " tokens";
}

}  // namespace

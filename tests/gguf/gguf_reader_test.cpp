// Tests of the GGUF reader: hand-built files, real files from ../shared, and corruption.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "support/test_support.h"

namespace nt {
namespace {

// Builds GGUF bytes by hand (independent of our writer) for precise control.
struct Bytes {
  std::vector<uint8_t> b;
  template <class T> void put(T v) {
    uint8_t tmp[sizeof(T)];
    std::memcpy(tmp, &v, sizeof(T));
    b.insert(b.end(), tmp, tmp + sizeof(T));
  }
  void str(const std::string& s) { put<uint64_t>(s.size()); b.insert(b.end(), s.begin(), s.end()); }
  void pad(size_t align) { while (b.size() % align) b.push_back(0); }
};

std::vector<uint8_t> tiny_gguf() {
  Bytes w;
  w.put<uint32_t>(0x46554747);
  w.put<uint32_t>(3);
  w.put<uint64_t>(2);  // tensors
  w.put<uint64_t>(5);  // kvs
  w.str("general.architecture"); w.put<uint32_t>(8); w.str("llama");
  w.str("llama.block_count"); w.put<uint32_t>(4); w.put<uint32_t>(6);
  w.str("llama.rope.freq_base"); w.put<uint32_t>(6); w.put<float>(10000.f);
  w.str("tokenizer.ggml.tokens"); w.put<uint32_t>(9); w.put<uint32_t>(8); w.put<uint64_t>(3);
  w.str("<unk>"); w.str("a"); w.str("bc");
  w.str("tokenizer.ggml.scores"); w.put<uint32_t>(9); w.put<uint32_t>(6); w.put<uint64_t>(3);
  w.put<float>(0.f); w.put<float>(-1.5f); w.put<float>(-2.f);
  // tensor directory
  w.str("a.weight"); w.put<uint32_t>(2); w.put<uint64_t>(4); w.put<uint64_t>(2); w.put<uint32_t>(0); w.put<uint64_t>(0);
  w.str("b.weight"); w.put<uint32_t>(1); w.put<uint64_t>(32); w.put<uint32_t>(8); w.put<uint64_t>(32);
  w.pad(32);
  for (int i = 0; i < 8; ++i) w.put<float>(static_cast<float>(i));  // a: 32 bytes
  w.put<uint16_t>(0x3c00);  // b: one Q8_0 block, d = 1.0
  for (int i = 0; i < 32; ++i) w.put<int8_t>(static_cast<int8_t>(i - 16));
  return w.b;
}

TEST(GgufReader, ParsesHandBuiltFile) {
  auto bytes = tiny_gguf();
  auto f = GgufFile::parse(bytes.data(), bytes.size(), "tiny.gguf");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->get_str("general.architecture").value(), "llama");
  EXPECT_EQ(f->get_u64("llama.block_count").value(), 6u);
  EXPECT_FLOAT_EQ(static_cast<float>(f->get_f64("llama.rope.freq_base").value()), 10000.f);
  const GgufValue* toks = f->get_array("tokenizer.ggml.tokens");
  ASSERT_NE(toks, nullptr);
  ASSERT_EQ(toks->strs.size(), 3u);
  EXPECT_EQ(toks->strs[2], "bc");
  const GgufValue* scores = f->get_array("tokenizer.ggml.scores");
  ASSERT_NE(scores, nullptr);
  EXPECT_FLOAT_EQ(static_cast<float>(scores->num_at(1)), -1.5f);
  ASSERT_EQ(f->tensors().size(), 2u);
  const GgufTensor* a = f->find_tensor("a.weight");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->ne[0], 4u);
  EXPECT_EQ(a->ne[1], 2u);
  EXPECT_EQ(a->n_bytes, 32u);
  float v;
  std::memcpy(&v, a->data + 4 * 5, 4);
  EXPECT_EQ(v, 5.f);
  const GgufTensor* b = f->find_tensor("b.weight");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->type, DType::Q8_0);
  EXPECT_EQ(b->n_bytes, 34u);
  EXPECT_EQ(f->find("missing"), nullptr);
  EXPECT_FALSE(f->get_u64("general.architecture").has_value());  // wrong type
}

// Every truncation of a valid file must give a clean error naming the file and a byte offset.
TEST(GgufReader, EveryTruncationFailsCleanly) {
  auto bytes = tiny_gguf();
  for (size_t len = 0; len < bytes.size(); ++len) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(len));
    auto f = GgufFile::parse(cut.data(), cut.size(), "cut.gguf");
    ASSERT_FALSE(f.ok()) << "length " << len;
    EXPECT_NE(f.error().message.find("cut.gguf"), std::string::npos) << f.error().message;
    EXPECT_NE(f.error().message.find("byte"), std::string::npos) << f.error().message;
  }
}

TEST(GgufReader, RejectsBadHeaderFields) {
  auto bytes = tiny_gguf();
  auto expect_error = [](std::vector<uint8_t> b, const char* what) {
    auto f = GgufFile::parse(b.data(), b.size(), "bad.gguf");
    ASSERT_FALSE(f.ok()) << what;
    EXPECT_NE(f.error().message.find(what), std::string::npos) << f.error().message;
  };
  auto b = bytes; b[0] = 'X'; expect_error(b, "magic");
  b = bytes; b[4] = 9; expect_error(b, "version");
  b = bytes; b[16] = 0xff; b[23] = 0x7f; expect_error(b, "metadata count");  // n_kv huge
  b = bytes; b[8] = 0xff; b[15] = 0x7f; expect_error(b, "tensor count");
}

// Flip bytes all over a real file: every result must be a clean parse or a clean error.
TEST(GgufReader, ByteFlipsNeverCrash) {
  auto bytes = tiny_gguf();
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (uint8_t x : {uint8_t(0xff), uint8_t(0x80), uint8_t(0x01)}) {
      auto b = bytes;
      b[i] ^= x;
      auto f = GgufFile::parse(b.data(), b.size(), "flip.gguf");
      if (f.ok()) {
        for (const auto& t : f->tensors()) {
          ASSERT_GE(t.data, b.data());
          ASSERT_LE(t.data + t.n_bytes, b.data() + b.size());
        }
      } else {
        EXPECT_FALSE(f.error().message.empty());
      }
    }
  }
}

TEST(GgufReader, OpenReportsMissingFile) {
  auto f = GgufFile::open("/nonexistent/model.gguf");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.error().message.find("/nonexistent/model.gguf"), std::string::npos);
}

TEST(GgufReader, RealModelsFromShared) {
  NT_REQUIRE_SHARED();
  auto f = GgufFile::open(test::shared_path("models/stories15M-f32.gguf"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->get_str("general.architecture").value(), "llama");
  EXPECT_EQ(f->get_u64("llama.embedding_length").value(), 288u);
  EXPECT_EQ(f->get_u64("llama.block_count").value(), 6u);
  uint64_t n_params = 0;
  for (const auto& t : f->tensors()) n_params += t.n_elements();
  EXPECT_EQ(n_params, 15191712u);
  const GgufValue* toks = f->get_array("tokenizer.ggml.tokens");
  ASSERT_NE(toks, nullptr);
  EXPECT_EQ(toks->strs.size(), 32000u);
}

// Truncate and flip a real (vocab-only) file at many places.
TEST(GgufReader, RealFileCorruption) {
  NT_REQUIRE_SHARED();
  std::string data = test::read_text(test::shared_path("vocab/ggml-vocab-llama-spm.gguf"));
  ASSERT_GT(data.size(), 1000u);
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  ASSERT_TRUE(GgufFile::parse(p, data.size(), "spm.gguf").ok());
  for (size_t len = 0; len < data.size(); len += 1 + len / 7) {
    std::vector<uint8_t> cut(p, p + len);
    auto f = GgufFile::parse(cut.data(), cut.size(), "spm.gguf");
    ASSERT_FALSE(f.ok()) << len;
  }
  for (size_t i = 0; i < 4096 && i < data.size(); i += 3) {
    std::vector<uint8_t> b(p, p + data.size());
    b[i] ^= 0xA5;
    auto f = GgufFile::parse(b.data(), b.size(), "spm.gguf");
    if (!f.ok()) {
      EXPECT_NE(f.error().message.find("spm.gguf"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace nt

// Tokenizer behaviour beyond the shared vectors: special tokens, BOS/EOS, decoding, streaming,
// hostile input (invalid UTF-8, empty, 10 MB, 100,000 repeated characters).
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "support/test_support.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace {

using nt::Tokenizer;

std::unique_ptr<Tokenizer> load(const std::string& name) {
  auto t = Tokenizer::from_file(nt::test::shared_path("vocab/ggml-vocab-" + name + ".gguf"));
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
  return t.ok() ? std::move(t.value()) : nullptr;
}

const char* const kVocabs[] = {"llama-spm", "phi-3", "llama-bpe", "qwen2", "gpt-2", "deepseek-coder",
                               "falcon", "mpt", "starcoder", "refact", "gpt-neox", "baichuan", "bert-bge"};

TEST(Tokenizer, MetadataOfLlamaSpm) {
  NT_REQUIRE_SHARED();
  auto t = load("llama-spm");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->model_type(), "llama");
  EXPECT_EQ(t->n_vocab(), 32000);
  EXPECT_EQ(t->bos(), 1);
  EXPECT_EQ(t->eos(), 2);
  EXPECT_TRUE(t->add_bos());
  EXPECT_TRUE(t->is_eog(2));
  EXPECT_FALSE(t->is_eog(1));
  EXPECT_EQ(t->token_text(1), "<s>");
  EXPECT_EQ(t->token_type(1), nt::TokenType::Control);
  EXPECT_EQ(t->token_type(3), nt::TokenType::Byte);  // <0x00>
  EXPECT_EQ(t->token_to_piece(3), std::string(1, '\0'));
  EXPECT_EQ(t->token_type(-1), nt::TokenType::Undefined);
  EXPECT_EQ(t->token_text(1 << 20), "");
}

TEST(Tokenizer, AddSpecialAddsBosOnlyWhenAsked) {
  NT_REQUIRE_SHARED();
  auto t = load("llama-spm");
  ASSERT_TRUE(t);
  auto with = t->encode("Hello world", true, false);
  auto without = t->encode("Hello world", false, false);
  ASSERT_EQ(with.size(), without.size() + 1);
  EXPECT_EQ(with[0], 1);
  EXPECT_EQ(std::vector<int32_t>(with.begin() + 1, with.end()), without);
  EXPECT_EQ(t->decode(with, true), "Hello world");
  EXPECT_TRUE(t->encode("", false, false).empty());
  EXPECT_EQ(t->encode("", true, false), std::vector<int32_t>{1});
}

TEST(Tokenizer, ParseSpecialOnlyWhenAsked) {
  NT_REQUIRE_SHARED();
  auto t = load("qwen2");
  ASSERT_TRUE(t);
  const int32_t im_start = t->token_id("<|im_start|>");
  const int32_t im_end = t->token_id("<|im_end|>");
  ASSERT_GE(im_start, 0);
  ASSERT_GE(im_end, 0);
  EXPECT_TRUE(t->is_eog(im_end));
  const std::string text = "<|im_start|>user\nhi<|im_end|>";
  auto parsed = t->encode(text, false, true);
  auto plain = t->encode(text, false, false);
  EXPECT_EQ(parsed.front(), im_start);
  EXPECT_EQ(parsed.back(), im_end);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), im_start), 0);
  EXPECT_GT(plain.size(), parsed.size());
  EXPECT_EQ(t->decode(parsed), text);
  EXPECT_EQ(t->decode(plain), text);
  EXPECT_EQ(t->decode(parsed, true), "user\nhi");
}

TEST(Tokenizer, BertAddsClsAndSep) {
  NT_REQUIRE_SHARED();
  auto t = load("bert-bge");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->model_type(), "bert");
  auto ids = t->encode("Hello World!", true, false);
  auto raw = t->encode("Hello World!", false, false);
  ASSERT_EQ(ids.size(), raw.size() + 2);
  EXPECT_EQ(t->token_text(ids.front()), "[CLS]");
  EXPECT_EQ(t->token_text(ids.back()), "[SEP]");
  EXPECT_EQ(t->decode(raw), "hello world !");  // pieces joined; BERT decoding is not lossless
}

TEST(Tokenizer, EveryVocabLoadsAndRoundTrips) {
  NT_REQUIRE_SHARED();
  const std::string text = "Hello, world! 你好，世界。 int main() { return 0; }\n\t  x  ";
  for (const char* name : kVocabs) {
    auto t = load(name);
    ASSERT_TRUE(t) << name;
    auto ids = t->encode(text, false, false);
    EXPECT_FALSE(ids.empty()) << name;
    for (int32_t id : ids) EXPECT_TRUE(id >= 0 && id < t->n_vocab()) << name;
    if (t->model_type() != "bert") EXPECT_EQ(t->decode(ids), text) << name;
  }
}

// A tokenizer never crashes on bytes that are not UTF-8, and vocabularies with byte fallback or
// a token for each of the 256 byte symbols keep every byte. (Falcon, MPT, StarCoder, ... have no
// symbol for bytes that never occur in UTF-8, such as 0xFF, so they cannot keep those.)
TEST(Tokenizer, InvalidUtf8IsLossless) {
  NT_REQUIRE_SHARED();
  std::mt19937 rng(42);
  for (const char* name : {"llama-spm", "phi-3", "baichuan", "llama-bpe", "qwen2", "gpt-2"}) {
    auto t = load(name);
    ASSERT_TRUE(t) << name;
    for (int round = 0; round < 20; ++round) {
      std::string s;
      const int n = 1 + static_cast<int>(rng() % 64);
      for (int i = 0; i < n; ++i) s += static_cast<char>(rng() % 256);
      s += "\xC3(\xE2\x82 \xF0\x9F\x98 ok \xFF\xFE\xED\xA0\x80";
      auto ids = t->encode(s, true, true);
      for (int32_t id : ids) ASSERT_TRUE(id >= 0 && id < t->n_vocab()) << name;
      EXPECT_EQ(t->decode(ids, true), s) << name << " round " << round;
    }
  }
  for (const char* name : kVocabs) {  // the others: no crash, ids in range
    auto t = load(name);
    ASSERT_TRUE(t) << name;
    for (const std::string s : {std::string("\xFF\xFE\xC0\xC1 \xF5x"), std::string("\xE4\xB8"), std::string(1, '\0')})
      for (int32_t id : t->encode(s, true, true)) ASSERT_TRUE(id >= 0 && id < t->n_vocab()) << name;
  }
}

TEST(Tokenizer, StreamingNeverEmitsBrokenUtf8) {
  NT_REQUIRE_SHARED();
  const std::string text = "Emoji 🦙🚀 and 中文 and é, ü, 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 — done.";
  for (const char* name : {"llama-spm", "llama-bpe", "qwen2", "gpt-2", "phi-3"}) {
    auto t = load(name);
    ASSERT_TRUE(t);
    auto ids = t->encode(text, true, false);
    nt::StreamDecoder sd(*t, true);
    std::string all;
    for (int32_t id : ids) {
      std::string chunk = sd.push(id);
      EXPECT_TRUE(nt::tok::utf8_is_valid(chunk)) << name << " id " << id;
      all += chunk;
    }
    all += sd.flush();
    EXPECT_EQ(all, text) << name;
    EXPECT_EQ(all, t->decode(ids, true)) << name;
  }
}

TEST(Tokenizer, StreamDecoderHoldsPartialBytes) {
  NT_REQUIRE_SHARED();
  auto t = load("llama-spm");
  ASSERT_TRUE(t);
  // "🦙" = F0 9F A6 99 -> four byte-fallback tokens <0xF0> ... (ids 3 + byte)
  nt::StreamDecoder sd(*t);
  EXPECT_EQ(sd.push(3 + 0xF0), "");
  EXPECT_EQ(sd.push(3 + 0x9F), "");
  EXPECT_EQ(sd.push(3 + 0xA6), "");
  EXPECT_EQ(sd.push(3 + 0x99), "🦙");
  EXPECT_EQ(sd.push(3 + 0xE4), "");
  EXPECT_EQ(sd.flush(), "\xEF\xBF\xBD");  // an unfinished sequence comes out on flush as U+FFFD
  EXPECT_EQ(sd.push(3 + 0xFF), "\xEF\xBF\xBD");  // a byte that is never UTF-8: at once, replaced
  EXPECT_EQ(sd.push(3 + 'a'), "a");
}

TEST(Tokenizer, HugeAndRepetitiveInputsAreFast) {
  NT_REQUIRE_SHARED();
  for (const char* name : {"llama-spm", "llama-bpe", "qwen2", "bert-bge"}) {
    auto t = load(name);
    ASSERT_TRUE(t);
    for (const std::string& unit : {std::string("a"), std::string(" "), std::string("中"), std::string("\n"),
                                    std::string("ab")}) {
      std::string s;
      for (int i = 0; i < 100000; ++i) s += unit;
      auto t0 = std::chrono::steady_clock::now();
      auto ids = t->encode(s, false, false);
      double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (unit != " " && unit != "\n") EXPECT_FALSE(ids.empty()) << name;  // BERT drops whitespace
      EXPECT_LT(sec, 5.0) << name << " 100k x '" << unit << "'";
      if (t->model_type() != "bert") EXPECT_EQ(t->decode(ids), s) << name;
    }
  }
}

TEST(Tokenizer, TenMegabytes) {
  NT_REQUIRE_SHARED();
  auto t = load("llama-bpe");
  ASSERT_TRUE(t);
  std::string block = "The quick brown fox jumps over the lazy dog. 敏捷的棕色狐狸跳过了懒狗。 for (int i = 0; i < n; ++i) {}\n";
  std::string s;
  while (s.size() < 10u * 1024 * 1024) s += block;
  auto t0 = std::chrono::steady_clock::now();
  auto ids = t->encode(s, false, false);
  double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(sec, 60.0);
  auto one = t->encode(block, false, false);
  EXPECT_EQ(ids.size(), one.size() * (s.size() / block.size()));
  EXPECT_EQ(t->decode(ids), s);
}

TEST(Tokenizer, BadFilesAreErrorsNotCrashes) {
  const std::string dir = nt::test::temp_dir();
  nt::test::write_text(dir + "/junk.json", "{not json");
  auto r = Tokenizer::from_file(dir + "/junk.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("junk.json"), std::string::npos);
  EXPECT_FALSE(Tokenizer::from_file(dir + "/missing.gguf").ok());
  EXPECT_FALSE(Tokenizer::from_hf_json(R"({"model": {"type": "Unigram", "vocab": []}})").ok());
  if (nt::test::shared_available()) {
    // A model GGUF without tokenizer keys would fail; the real models have them.
    EXPECT_TRUE(Tokenizer::from_file(nt::test::shared_path("models/stories15M-q8_0.gguf")).ok());
  }
}

}  // namespace

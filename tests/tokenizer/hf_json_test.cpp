// Hugging Face tokenizer.json loading: a byte-level BPE and a Metaspace (SentencePiece-style)
// BPE written here, with merges, added tokens and a BOS post-processor.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/test_support.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace {

using nlohmann::json;

std::string byte_level_json(bool with_split) {
  json vocab = json::object();
  int id = 0;
  for (int b = 0; b < 256; ++b) vocab[nt::tok::byte_to_unicode(static_cast<uint8_t>(b))] = id++;
  for (const char* t : {"he", "ll", "hell", "hello", "Ġh", "Ġhello", "Ġw", "or", "ld"}) vocab[t] = id++;
  json merges = {"h e", "l l", "he ll", "hell o", "Ġ h", "Ġh ello", "Ġ w", "o r", "l d"};
  merges[5] = "Ġh ell";  // "Ġhell" is not a token: the merge result falls back to bytes if left alone
  json pre;
  if (with_split)
    pre = {{"type", "Sequence"},
           {"pretokenizers",
            {{{"type", "Split"}, {"pattern", {{"Regex", R"(\p{N}{1,3}| ?\p{L}+| ?[^\s\p{L}\p{N}]+|\s+)"}}},
              {"behavior", "Isolated"}, {"invert", false}},
             {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
  else
    pre = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
  json doc = {{"added_tokens",
               {{{"id", id}, {"content", "<|endoftext|>"}, {"special", true}},
                {{"id", id + 1}, {"content", "<tool>"}, {"special", false}}}},
              {"normalizer", nullptr},
              {"pre_tokenizer", pre},
              {"post_processor", nullptr},
              {"decoder", {{"type", "ByteLevel"}}},
              {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}}};
  return doc.dump();
}

TEST(HfJson, ByteLevelBpe) {
  auto r = nt::Tokenizer::from_hf_json(byte_level_json(false));
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& t = *r.value();
  EXPECT_EQ(t.model_type(), "gpt2");
  EXPECT_EQ(t.n_vocab(), 256 + 9 + 2);
  const int32_t hello = t.token_id("hello"), eot = t.token_id("<|endoftext|>"), tool = t.token_id("<tool>");
  const int32_t sp = t.token_id("Ġ"), w = t.token_id("Ġw"), orr = t.token_id("or"), ld = t.token_id("ld");
  // "hello world": "hello" merges fully; " world" -> Ġw or ld.
  EXPECT_EQ(t.encode("hello world", false, false), (std::vector<int32_t>{hello, w, orr, ld}));
  // " hello": Ġ h -> Ġh, then "Ġh ell" needs "ell" which never forms: Ġh + e + ll + o? h e merges
  // first (rank 0), so " hello" = Ġ + hello.
  EXPECT_EQ(t.encode(" hello", false, false), (std::vector<int32_t>{sp, hello}));
  // Special tokens: the special one only with parse_special, the non-special one always.
  auto parsed = t.encode("hello<|endoftext|><tool>", false, true);
  EXPECT_EQ(parsed, (std::vector<int32_t>{hello, eot, tool}));
  auto plain = t.encode("hello<|endoftext|><tool>", false, false);
  EXPECT_EQ(plain.back(), tool);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), eot), 0);
  EXPECT_TRUE(t.is_eog(eot));
  const std::string odd = "héllo wörld \xFF\x01 12345";
  EXPECT_EQ(t.decode(t.encode(odd, false, false)), odd);
}

TEST(HfJson, SplitRegexSequence) {
  auto r = nt::Tokenizer::from_hf_json(byte_level_json(true));
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& t = *r.value();
  // Digits in groups of three by the Split regex: "12345" -> "123" "45" -> bytes 1 2 3 4 5.
  auto ids = t.encode("12345", false, false);
  EXPECT_EQ(ids.size(), 5u);
  EXPECT_EQ(t.decode(ids), "12345");
}

std::string metaspace_json(bool normalizer_style) {
  json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}, {"▁", 3}, {"a", 4}, {"b", 5}, {"▁a", 6}, {"ab", 7}, {"▁ab", 8}};
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "<0x%02X>", b);
    vocab[buf] = 9 + b;
  }
  json merges = json::array({json::array({"▁", "a"}), json::array({"a", "b"}), json::array({"▁a", "b"})});
  json doc = {{"added_tokens",
               {{{"id", 0}, {"content", "<unk>"}, {"special", true}},
                {{"id", 1}, {"content", "<s>"}, {"special", true}},
                {{"id", 2}, {"content", "</s>"}, {"special", true}}}},
              {"post_processor",
               {{"type", "TemplateProcessing"},
                {"single", {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}}}},
              {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}, {"unk_token", "<unk>"}, {"byte_fallback", true}}}};
  if (normalizer_style) {
    doc["normalizer"] = {{"type", "Sequence"},
                         {"normalizers",
                          {{{"type", "Prepend"}, {"prepend", "▁"}},
                           {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "▁"}}}}};
    doc["pre_tokenizer"] = nullptr;
  } else {
    doc["normalizer"] = nullptr;
    doc["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", "first"}, {"split", false}};
  }
  return doc.dump();
}

TEST(HfJson, MetaspaceBpeWithByteFallback) {
  for (bool normalizer_style : {true, false}) {
    auto r = nt::Tokenizer::from_hf_json(metaspace_json(normalizer_style));
    ASSERT_TRUE(r.ok()) << r.error().message;
    const auto& t = *r.value();
    EXPECT_EQ(t.model_type(), "llama");
    EXPECT_EQ(t.bos(), 1);
    EXPECT_TRUE(t.add_bos());
    EXPECT_EQ(t.encode("ab ab", false, false), (std::vector<int32_t>{8, 8}));
    EXPECT_EQ(t.encode("ab ab", true, false), (std::vector<int32_t>{1, 8, 8}));
    // 'c' is not in the vocab: byte fallback <0x63>.
    EXPECT_EQ(t.encode("abc", false, false), (std::vector<int32_t>{8, 9 + 0x63}));
    EXPECT_EQ(t.decode(t.encode("abc ab", true, false), true), "abc ab");
    EXPECT_EQ(t.decode(t.encode("  a b 中", false, false)), "  a b 中");
  }
}

}  // namespace

// Pre-tokenizer regex sets: every supported tokenizer.ggml.pre name compiles, pieces always cover
// the text exactly (also for invalid UTF-8), and a few published behaviours hold.
#include <gtest/gtest.h>

#include "tokenizer/pretokenize.h"

namespace {

std::vector<std::string> split(const std::string& pre, const std::string& text) {
  auto re = nt::PreTokenizer::regexes_for(pre);
  EXPECT_TRUE(re.ok()) << pre;
  nt::PreTokenizer p;
  auto st = p.compile(re.value());
  EXPECT_TRUE(st.ok()) << pre << ": " << (st.ok() ? "" : st.error().message);
  std::vector<nt::PieceRange> r;
  p.split(text, r);
  std::vector<std::string> out;
  uint32_t expect_begin = 0;
  for (auto x : r) {
    EXPECT_EQ(x.begin, expect_begin) << pre;  // contiguous, in order, non-empty
    EXPECT_LT(x.begin, x.end) << pre;
    expect_begin = x.end;
    out.push_back(text.substr(x.begin, x.end - x.begin));
  }
  EXPECT_EQ(expect_begin, text.size()) << pre;
  return out;
}

using V = std::vector<std::string>;

TEST(PreTokenize, EveryNameCompilesAndCovers) {
  for (const char* pre : {"default", "llama-bpe", "qwen2", "qwen35", "deepseek-llm", "deepseek-coder", "deepseek-v3",
                          "falcon", "mpt", "starcoder", "refact", "command-r", "gpt-2", "", "smollm", "olmo",
                          "stablelm2", "tekken", "poro-chat", "viking", "dbrx", "smaug-bpe", "chatglm-bpe"}) {
    split(pre, "Hello World! It's 2026: 12345 apples\n\n\t  你好，世界。 ＡＢＣ  é\xCC\x81 \xFF\xC3(x");
    split(pre, "");
  }
  EXPECT_FALSE(nt::PreTokenizer::regexes_for("no-such-pre").ok());
}

TEST(PreTokenize, PublishedBehaviours) {
  // GPT-2: a space sticks to the next word; numbers stay whole; contractions split.
  EXPECT_EQ(split("gpt-2", "I'm 12345 ok"), (V{"I", "'m", " 12345", " ok"}));
  // Llama 3: digits in groups of up to three, punctuation + newlines together.
  EXPECT_EQ(split("llama-bpe", "x 12345!\n\ny"), (V{"x", " ", "123", "45", "!\n\n", "y"}));
  // Qwen2: single digits.
  EXPECT_EQ(split("qwen2", "a 123"), (V{"a", " ", "1", "2", "3"}));
  // StarCoder: every digit alone before the GPT-2 rule.
  EXPECT_EQ(split("starcoder", "v12 x"), (V{"v", "1", "2", " x"}));
  // Tekken: case changes split words.
  EXPECT_EQ(split("tekken", "HelloWorld"), (V{"Hello", "World"}));
  // DeepSeek V3: digits in threes, CJK runs alone.
  EXPECT_EQ(split("deepseek-v3", "1234你好ab"), (V{"123", "4", "你好", "ab"}));
  // Falcon: punctuation runs first.
  EXPECT_EQ(split("falcon", "a...b"), (V{"a", "...", "b"}));
  // Qwen3.5 keeps combining marks with letters.
  EXPECT_EQ(split("qwen35", "e\xCC\x81t\xC3\xA9 x"), (V{"e\xCC\x81t\xC3\xA9", " x"}));
}

}  // namespace

// Text events with a real (byte-level) tokenizer and a scripted fake model: streamed text, stop
// strings held back across tokens and never emitted, end of generation, ignore_eos, UTF-8 split
// across tokens.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine_harness.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace nt {
namespace {

using test::opts;

// 256 byte tokens (id == byte) and <|endoftext|> (id 256, end of generation).
std::unique_ptr<Tokenizer> byte_tokenizer() {
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[tok::byte_to_unicode(static_cast<uint8_t>(b))] = b;
  nlohmann::json doc = {{"added_tokens", {{{"id", 256}, {"content", "<|endoftext|>"}, {"special", true}}}},
                        {"normalizer", nullptr},
                        {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}},
                        {"post_processor", nullptr},
                        {"decoder", {{"type", "ByteLevel"}}},
                        {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array()}}}};
  auto t = Tokenizer::from_hf_json(doc.dump());
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
  return t ? std::move(*t) : nullptr;
}

constexpr int32_t kEot = 256;
const std::vector<int32_t> kPrompt = {'S', 'a', 'y', ':'};

// Greedy over a fake that writes `script` after the prompt (EOT after "hello world").
struct Scripted {
  explicit Scripted(std::string text = "hello world\x01" "again and again") : tok(byte_tokenizer()) {
    h = std::make_unique<test::Harness>(opts(), 257, 4096, tok.get());
    for (char c : text) script.push_back(c == '\x01' ? kEot : int32_t(static_cast<uint8_t>(c)));
    h->fake->oracle = [this](const std::vector<int32_t>& ctx) {
      const size_t i = ctx.size() - kPrompt.size();
      return i < script.size() ? script[i] : int32_t('.');
    };
  }
  test::Outcome run(std::vector<std::string> stop = {}, bool ignore_eos = false, int64_t max_tokens = -1) {
    RequestParams p;
    p.prompt = kPrompt;
    p.sampling.temp = 0;
    p.stop = std::move(stop);
    p.ignore_eos = ignore_eos;
    p.max_tokens = max_tokens;
    const RequestId id = h->submit(p);
    h->run();
    EXPECT_EQ(h->eng->stats().blocks_used, 0);
    return h->out[id];
  }
  std::unique_ptr<Tokenizer> tok;
  std::unique_ptr<test::Harness> h;
  std::vector<int32_t> script;
};

TEST(EngineText, StreamsTextUntilEndOfGeneration) {
  Scripted s;
  auto o = s.run();
  EXPECT_EQ(o.reason, FinishReason::Eog);
  EXPECT_EQ(o.text, "hello world");
  ASSERT_EQ(o.tokens.size(), 12u);
  EXPECT_EQ(o.tokens.back(), kEot);
  EXPECT_EQ(o.events.back().text, "");  // the end token has no text
  EXPECT_EQ(o.events[0].text, "h");      // streamed as it comes
}

TEST(EngineText, StopStringIsNeverEmittedEvenAcrossTokens) {
  Scripted s;
  auto o = s.run({"o w"});
  EXPECT_EQ(o.reason, FinishReason::Stop);
  EXPECT_EQ(o.text, "hell");
  EXPECT_EQ(o.tokens.size(), 7u);  // "hello w"
  // A prefix of a stop string that never completes is released at the end.
  Scripted t;
  auto u = t.run({"d!"});
  EXPECT_EQ(u.reason, FinishReason::Eog);
  EXPECT_EQ(u.text, "hello world");
}

TEST(EngineText, IgnoreEosGoesOnWithoutTheEndTokensText) {
  Scripted s;
  auto o = s.run({}, /*ignore_eos=*/true, /*max_tokens=*/16);
  EXPECT_EQ(o.reason, FinishReason::Length);
  EXPECT_EQ(o.text, "hello worldagai");
  EXPECT_EQ(o.tokens.size(), 16u);
}

TEST(EngineText, Utf8SplitAcrossTokensComesOutWhole) {
  Scripted s("caf\xC3\xA9!\x01");
  auto o = s.run();
  EXPECT_EQ(o.text, "caf\xC3\xA9!");
  ASSERT_GE(o.events.size(), 5u);
  EXPECT_EQ(o.events[3].text, "");  // the first byte of é alone is held
  EXPECT_EQ(o.events[4].text, "\xC3\xA9");
}

}  // namespace
}  // namespace nt

// The token commands run as the real executable: tokenize, detokenize (count: tests/cli/count_test.cpp).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/test_support.h"

namespace {

using nt::test::run_nexttok;
using nlohmann::json;

std::string vocab(const std::string& name) { return nt::test::shared_path("vocab/ggml-vocab-" + name + ".gguf"); }

TEST(CliTokenize, IdsLikeLlamaTokenize) {
  NT_REQUIRE_SHARED();
  auto r = run_nexttok({"tokenize", "-m", vocab("llama-spm"), "-p", "Hello world", "--ids"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "[1, 15043, 3186]\n");
  r = run_nexttok({"tokenize", "-m", vocab("llama-spm"), "-p", "Hello world", "--ids", "--no-bos", "--show-count"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "[15043, 3186]\nTotal number of tokens: 2\n");
}

TEST(CliTokenize, DefaultViewShowsPieces) {
  NT_REQUIRE_SHARED();
  auto r = run_nexttok({"tokenize", "-m", vocab("llama-spm"), "-p", "Hello\tworld"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("     1 -> '<s>'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("15043 -> ' Hello'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'\\t'"), std::string::npos) << r.out;  // invisible characters escaped
}

TEST(CliTokenize, StdinAndFileBytesAreUsedUnchanged) {
  NT_REQUIRE_SHARED();
  auto a = run_nexttok({"tokenize", "-m", vocab("llama-bpe"), "--stdin", "--ids", "--no-bos"}, "Hello\n");
  ASSERT_EQ(a.rc, 0) << a.err;
  EXPECT_EQ(a.out, "[9906, 198]\n");  // "Hello" "\n": the newline is kept
  const std::string f = nt::test::temp_dir() + "/in.txt";
  nt::test::write_text(f, "Hello\n");
  auto b = run_nexttok({"tokenize", "-m", vocab("llama-bpe"), "-f", f, "--ids", "--no-bos"});
  ASSERT_EQ(b.rc, 0) << b.err;
  EXPECT_EQ(b.out, a.out);
}

TEST(CliTokenize, ParseSpecialFlag) {
  NT_REQUIRE_SHARED();
  auto a = run_nexttok({"tokenize", "-m", vocab("qwen2"), "-p", "<|im_end|>", "--json"});
  ASSERT_EQ(a.rc, 0) << a.err;
  json j = json::parse(a.out);
  EXPECT_EQ(j["n_tokens"], 1);
  EXPECT_EQ(j["pieces"][0], "<|im_end|>");
  auto b = run_nexttok({"tokenize", "-m", vocab("qwen2"), "-p", "<|im_end|>", "--json", "--no-parse-special"});
  ASSERT_EQ(b.rc, 0) << b.err;
  EXPECT_GT(json::parse(b.out)["n_tokens"].get<int>(), 1);
}

TEST(CliTokenize, Errors) {
  NT_REQUIRE_SHARED();
  EXPECT_EQ(run_nexttok({"tokenize", "-m", vocab("llama-spm")}).rc, 2);  // no text
  EXPECT_EQ(run_nexttok({"tokenize", "-m", vocab("llama-spm"), "-p", "x", "--stdin"}).rc, 2);
  auto r = run_nexttok({"tokenize", "-m", "/nonexistent.gguf", "-p", "x"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("/nonexistent.gguf"), std::string::npos);
  EXPECT_EQ(run_nexttok({"tokenize", "--help"}).rc, 0);
}

TEST(CliDetokenize, ExactText) {
  NT_REQUIRE_SHARED();
  auto r = run_nexttok({"detokenize", "-m", vocab("llama-spm"), "[1, 15043, 3186]", "--skip-special"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "Hello world");
  r = run_nexttok({"detokenize", "-m", vocab("llama-bpe"), "9906", "198"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "Hello\n");
  r = run_nexttok({"detokenize", "-m", vocab("llama-bpe"), "--stdin", "--json"}, "[9906, 1917]");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["text"], "Hello world");
  EXPECT_EQ(run_nexttok({"detokenize", "-m", vocab("llama-bpe"), "999999999"}).rc, 1);
  EXPECT_EQ(run_nexttok({"detokenize", "-m", vocab("llama-bpe"), "12x"}).rc, 1);
  EXPECT_EQ(run_nexttok({"detokenize", "-m", vocab("llama-bpe")}).rc, 2);
}

TEST(CliTokenize, TokenizerJson) {
  const std::string dir = nt::test::temp_dir();
  json vocab = {{"<s>", 0}, {"</s>", 1}, {"▁", 2}, {"h", 3}, {"i", 4}, {"▁h", 5}, {"▁hi", 6}};
  json doc = {{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"▁ h", "▁h i"}}}},
              {"pre_tokenizer", {{"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", "always"}}},
              {"added_tokens", {{{"id", 0}, {"content", "<s>"}, {"special", true}}, {{"id", 1}, {"content", "</s>"}, {"special", true}}}},
              {"post_processor", {{"type", "TemplateProcessing"}, {"single", {{{"SpecialToken", {{"id", "<s>"}}}}, {{"Sequence", {{"id", "A"}}}}}}}}};
  nt::test::write_text(dir + "/tokenizer.json", doc.dump());
  auto r = run_nexttok({"tokenize", "-m", dir + "/tokenizer.json", "-p", "hi hi", "--ids"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "[0, 6, 6]\n");
}

TEST(CliDetokenize, MalformedListsAreRejected) {
  NT_REQUIRE_SHARED();
  const std::string vocab = nt::test::shared_path("vocab/ggml-vocab-llama-spm.gguf");
  for (const char* bad : {"[1, 2", "1, 2]", "1,,2", ",1", "1,", "[[1]]", "[1] 2", "[]x", "1 2 ]["}) {
    auto r = run_nexttok({"detokenize", "-m", vocab, "--stdin"}, bad);
    EXPECT_EQ(r.rc, 1) << "'" << bad << "' was accepted: " << r.out;
    EXPECT_NE(r.err.find("token id list"), std::string::npos) << bad << ": " << r.err;
  }
  for (const char* good : {"[1, 2, 3]", "1 2 3", "1,2,3", " [ 1 ,2 , 3 ] \n", "1\n2\n3\n"}) {
    auto r = run_nexttok({"detokenize", "-m", vocab, "--stdin", "--json"}, good);
    EXPECT_EQ(r.rc, 0) << "'" << good << "': " << r.err;
    EXPECT_NE(r.out.find("\"n_tokens\":3"), std::string::npos) << good << ": " << r.out;
  }
}

TEST(CliTokenize, HelpNamesTheJsonKeys) {
  auto r = run_nexttok({"tokenize", "--help"});
  ASSERT_EQ(r.rc, 0);
  for (const char* key : {"model", "tokenizer", "n_tokens", "ids", "pieces"})
    EXPECT_NE(r.out.find(key), std::string::npos) << key << " missing from:\n" << r.out;
}

}  // namespace

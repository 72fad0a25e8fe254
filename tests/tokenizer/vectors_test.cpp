// The test vectors of ../shared/vocab: every case of every tokenizer must match exactly
// (no special tokens added or parsed), and decode(encode(x)) == x where the tokenizer is lossless.
#include <gtest/gtest.h>

#include <sstream>

#include "support/test_support.h"
#include "tokenizer/tokenizer.h"

namespace {

struct VocabCase {
  std::string name;
  bool lossless;  // decode(encode(x)) == x for every case
};

std::vector<std::string> split_cases(const std::string& inp) {
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> out;
  size_t pos = 0;
  while (true) {
    size_t k = inp.find(sep, pos);
    if (k == std::string::npos) break;
    out.push_back(inp.substr(pos, k - pos));
    pos = k + sep.size();
  }
  return out;
}

std::vector<std::vector<int32_t>> parse_ids(const std::string& text) {
  std::vector<std::vector<int32_t>> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::vector<int32_t> ids;
    long long x;
    while (ls >> x) ids.push_back(static_cast<int32_t>(x));
    out.push_back(ids);
  }
  return out;
}

std::string show(const std::vector<int32_t>& ids) {
  std::string s;
  for (auto i : ids) s += " " + std::to_string(i);
  return s;
}

class VocabVectors : public ::testing::TestWithParam<VocabCase> {};

TEST_P(VocabVectors, MatchExactly) {
  NT_REQUIRE_SHARED();
  const auto& vc = GetParam();
  const std::string base = nt::test::shared_path("vocab/ggml-vocab-" + vc.name + ".gguf");
  auto tok = nt::Tokenizer::from_file(base);
  ASSERT_TRUE(tok.ok()) << tok.error().message;
  auto cases = split_cases(nt::test::read_text(base + ".inp"));
  auto expected = parse_ids(nt::test::read_text(base + ".out"));
  ASSERT_GT(cases.size(), 10u);
  ASSERT_EQ(cases.size(), expected.size());
  int failures = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    auto ids = (*tok)->encode(cases[i], false, false);
    EXPECT_EQ(ids, expected[i]) << "case " << i << " [" << cases[i] << "]\n got:     " << show(ids)
                                << "\n expected:" << show(expected[i]);
    if (ids != expected[i]) ++failures;
    if (vc.lossless) EXPECT_EQ((*tok)->decode(ids), cases[i]) << "case " << i;
  }
  EXPECT_EQ(failures, 0);
}

INSTANTIATE_TEST_SUITE_P(Shared, VocabVectors,
                         ::testing::Values(VocabCase{"llama-spm", true}, VocabCase{"phi-3", true},
                                           VocabCase{"llama-bpe", true}, VocabCase{"qwen2", true},
                                           VocabCase{"gpt-2", true}, VocabCase{"deepseek-coder", true},
                                           VocabCase{"falcon", true}, VocabCase{"mpt", true},
                                           VocabCase{"starcoder", true}, VocabCase{"refact", true},
                                           VocabCase{"bert-bge", false}),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           for (auto& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace

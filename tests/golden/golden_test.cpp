// Greedy `nexttok run` against llama.cpp's reference outputs in ../shared/golden, judged by the
// shared checker (../shared/tools/golden_compare.py) with the rule of ../shared/golden/README.md:
// tokens equal step by step (a fork allowed only at a near-tie), top-10 logits within 0.02 (F32) /
// 0.5 (quantized).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include "support/test_support.h"

namespace nt {
namespace {

bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

void check_golden(const std::string& model, const std::string& threads) {
  NT_REQUIRE_SHARED();
  const std::string golden = test::shared_path("golden/" + model + ".jsonl");
  const std::string gguf = test::shared_path("models/" + model + ".gguf");
  const std::string tool = test::shared_path("tools/golden_compare.py");
  if (!exists(golden) || !exists(gguf) || !exists(tool)) GTEST_SKIP() << "missing " << golden << " or its model";
  auto r = test::run_program({"/usr/bin/env", "python3", tool, test::nexttok_bin(), golden, gguf, "--threads", threads});
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("prompts agree"), std::string::npos) << r.out;
}

TEST(Golden, Stories15M_F32) { check_golden("stories15M-f32", "2"); }
TEST(Golden, Stories15M_Q8_0) { check_golden("stories15M-q8_0", "2"); }
TEST(Golden, Stories15M_Q4_0) { check_golden("stories15M-q4_0", "1"); }
TEST(Golden, TinyLlamaSpm_Q4_K_M) { check_golden("tiny-llama-spm-q4_k_m", "2"); }

}  // namespace
}  // namespace nt

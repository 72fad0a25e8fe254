// Every flag or argument that names an input file rejects a directory with "PATH: is a directory"
// (exit 1) instead of reading it as an empty file or calling it missing.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace nt {
namespace {

std::string model() { return test::shared_path("models/stories15M-q8_0.gguf"); }

void expect_directory_error(const std::vector<std::string>& args, const std::string& dir,
                            const std::string& stdin_data = "") {
  auto r = test::run_nexttok(args, stdin_data);
  std::string cmd;
  for (const auto& a : args) cmd += a + " ";
  EXPECT_EQ(r.rc, 1) << cmd << "\n" << r.err;
  EXPECT_NE(r.err.find(dir + ": is a directory"), std::string::npos) << cmd << "\n" << r.err;
}

TEST(DirectoryArgs, TextInputsAreErrors) {
  NT_REQUIRE_SHARED();
  const std::string dir = test::temp_dir();
  expect_directory_error({"run", "-m", model(), "-f", dir, "-n", "1"}, dir);
  expect_directory_error({"check", "-m", model(), "-f", dir, "-n", "1"}, dir);
  expect_directory_error({"tokenize", "-m", model(), "-f", dir}, dir);
  expect_directory_error({"count", "-m", model(), dir}, dir);
}

TEST(DirectoryArgs, TemplateFilesAreErrors) {
  const std::string dir = test::temp_dir();
  const std::string msgs = dir + "/m.json";
  test::write_text(msgs, R"([{"role": "user", "content": "hi"}])");
  const std::string tmpl = dir + "/t.jinja";
  test::write_text(tmpl, "{% for m in messages %}{{ m.content }}{% endfor %}");
  expect_directory_error({"template", "--template-file", dir, "--messages-file", msgs}, dir);
  expect_directory_error({"template", "--template-file", tmpl, "--messages-file", dir}, dir);
  expect_directory_error({"template", "--template-file", tmpl, "--messages-file", msgs, "--tools-file", dir}, dir);
}

TEST(DirectoryArgs, ModelDirectoryIsAnErrorNotMissing) {
  NT_REQUIRE_SHARED();
  const std::string dir = test::temp_dir();
  expect_directory_error({"inspect", dir}, dir);
  expect_directory_error({"inspect", "-m", dir}, dir);
  expect_directory_error({"tokenize", "-m", dir, "-p", "hi"}, dir);
  expect_directory_error({"detokenize", "-m", dir, "1"}, dir);
  expect_directory_error({"count", "-m", dir, "-p", "hi"}, dir);
  expect_directory_error({"run", "-m", dir, "-p", "hi", "-n", "1"}, dir);
  expect_directory_error({"chat", "-m", dir}, dir, "");
  expect_directory_error({"template", "-m", dir, "--messages-file", "-"}, dir, "[]");
  expect_directory_error({"bench", "-m", dir, "-p", "0", "-n", "1", "-r", "1"}, dir);
  expect_directory_error({"quantize", dir, dir + "-out.gguf", "q8_0"}, dir);
  expect_directory_error({"synth", "--arch", "llama", "--n-embd", "64", "--n-layer", "1", "--n-head", "2", "--n-ff",
                          "64", "--vocab", dir, "-o", dir + "-out.gguf"},
                         dir);
  expect_directory_error({"chat", "-m", model(), "--chat-template-file", dir}, dir, "");
}

}  // namespace
}  // namespace nt

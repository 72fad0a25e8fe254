// The README's examples run as written, from the repository root.
//
// Convention (README.md, "Commands"): inside ``` blocks, a line starting with "$ " is a command to
// run; a line ending with '\' continues on the next one; the other lines of the block are sample
// output and are not checked. Lines without "$ " (placeholders for the reader's own files, network
// commands such as pull and -hf) are not run. A command is run with bash from the source root with
// its `build/nexttok` replaced by the binary under test, and must exit 0 and print something on
// stdout; a command whose shell comment says "# writes PATH" must (instead) create PATH (such a
// line may prepare an input with another program, e.g. echo).
//
// The commands use the default model models/stories15M-q8_0.gguf (scripts/setup.sh). Without it the
// test links it from ../shared/models for its run (removed afterwards), or skips without ../shared.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace {

namespace fs = std::filesystem;

const char* const kDefaultModel = "models/stories15M-q8_0.gguf";

// The "$ " commands of every ``` block of `markdown`, continuation lines joined.
std::vector<std::string> readme_commands(const std::string& markdown) {
  std::vector<std::string> cmds;
  bool in_block = false, continuing = false;
  size_t pos = 0;
  while (pos < markdown.size()) {
    size_t end = markdown.find('\n', pos);
    if (end == std::string::npos) end = markdown.size();
    std::string line = markdown.substr(pos, end - pos);
    pos = end + 1;
    const size_t first = line.find_first_not_of(' ');
    const std::string trimmed = first == std::string::npos ? "" : line.substr(first);
    if (trimmed.rfind("```", 0) == 0) {
      in_block = !in_block;
      continuing = false;
      continue;
    }
    if (!in_block) continue;
    if (continuing) {
      cmds.back() += " " + trimmed;
    } else if (trimmed.rfind("$ ", 0) == 0) {
      cmds.push_back(trimmed.substr(2));
    } else {
      continue;
    }
    continuing = !cmds.back().empty() && cmds.back().back() == '\\';
    if (continuing) cmds.back().pop_back();
  }
  return cmds;
}

// Every whole-word "build/nexttok" of `cmd` replaced by `bin`.
std::string with_binary(std::string cmd, const std::string& bin) {
  const std::string word = "build/nexttok";
  size_t p = 0;
  while ((p = cmd.find(word, p)) != std::string::npos) {
    const bool starts = p == 0 || cmd[p - 1] == ' ' || cmd[p - 1] == '(' || cmd[p - 1] == '|';
    const bool ends = p + word.size() == cmd.size() || cmd[p + word.size()] == ' ';
    if (starts && ends) {
      cmd.replace(p, word.size(), bin);
      p += bin.size();
    } else {
      p += word.size();
    }
  }
  return cmd;
}

// The path after "# writes " in `cmd`, or "".
std::string written_path(const std::string& cmd) {
  const size_t p = cmd.find("# writes ");
  if (p == std::string::npos) return "";
  std::string path = cmd.substr(p + 9);
  const size_t e = path.find_first_of(" \t");
  return e == std::string::npos ? path : path.substr(0, e);
}

TEST(ReadmeExamples, ParserFindsCommandsJoinsContinuationsAndSkipsTheRest) {
  const std::string md =
      "text\n$ not in a block\n```\n$ build/nexttok run -p \"a\" \\\n    -n 2\nsample output\n"
      "$ printf 'x' | build/nexttok chat\n```\n```sh\nbuild/nexttok pull org/repo\n$ build/nexttok inspect\n```\n";
  const std::vector<std::string> want{"build/nexttok run -p \"a\"  -n 2", "printf 'x' | build/nexttok chat",
                                      "build/nexttok inspect"};
  EXPECT_EQ(readme_commands(md), want);
  EXPECT_EQ(with_binary("printf 'x' | build/nexttok chat -m build/nexttok.gguf", "/b/nt"),
            "printf 'x' | /b/nt chat -m build/nexttok.gguf");
  EXPECT_EQ(written_path("build/nexttok synth -o /tmp/a.gguf   # writes /tmp/a.gguf"), "/tmp/a.gguf");
  EXPECT_EQ(written_path("build/nexttok inspect"), "");
}

// Links models/stories15M-q8_0.gguf to ../shared's copy for the test's lifetime when it is absent.
class DefaultModel {
 public:
  explicit DefaultModel(const fs::path& root) : path_(root / kDefaultModel) {
    std::error_code ec;
    if (fs::exists(path_, ec)) {
      ok_ = true;
      return;
    }
    const fs::path shared = fs::absolute(nt::test::shared_path(kDefaultModel));
    if (!fs::exists(shared, ec)) return;
    made_dir_ = !fs::exists(path_.parent_path(), ec);
    fs::create_directories(path_.parent_path(), ec);
    const fs::path tmp = path_.string() + ".readme-test." + std::to_string(::getpid());
    fs::create_symlink(shared, tmp, ec);
    if (ec) return;
    fs::rename(tmp, path_, ec);
    made_link_ = ok_ = !ec;
    if (ec) fs::remove(tmp, ec);
  }
  ~DefaultModel() {
    std::error_code ec;
    if (made_link_) fs::remove(path_, ec);
    if (made_dir_) fs::remove(path_.parent_path(), ec);  // only if empty
  }
  bool ok() const { return ok_; }

 private:
  fs::path path_;
  bool ok_ = false, made_link_ = false, made_dir_ = false;
};

TEST(ReadmeExamples, EveryCommandRunsFromTheRepositoryRoot) {
  const fs::path root = NT_SOURCE_DIR;
  const std::string readme = nt::test::read_text((root / "README.md").string());
  ASSERT_FALSE(readme.empty()) << "cannot read " << (root / "README.md");
  const std::vector<std::string> cmds = readme_commands(readme);
  // The README documents run, chat, check, bench, inspect, tokenize, count, template, synth,
  // quantize: fewer examples than that means the convention (or the parser) broke.
  ASSERT_GE(cmds.size(), 10u) << "README.md has too few \"$ \" example commands";

  bool needs_model = false;
  for (const std::string& c : cmds) {
    EXPECT_TRUE(c.find("build/nexttok") != std::string::npos || !written_path(c).empty())
        << "README example neither runs build/nexttok nor writes a file: " << c;
    EXPECT_EQ(c.find(" pull "), std::string::npos) << "network command marked as runnable: " << c;
    EXPECT_EQ(c.find(" -hf "), std::string::npos) << "network command marked as runnable: " << c;
    if (c.find(" -m ") == std::string::npos || c.find(kDefaultModel) != std::string::npos) needs_model = true;
  }
  if (::testing::Test::HasFailure()) return;
  DefaultModel model(root);
  if (needs_model && !model.ok()) {
    NT_REQUIRE_SHARED();
    FAIL() << "no default model at " << (root / kDefaultModel) << " and none to link from "
           << nt::test::shared_path(kDefaultModel);
  }

  for (const std::string& c : cmds) {
    SCOPED_TRACE("README command: $ " + c);
    const std::string out = written_path(c);
    std::error_code ec;
    if (!out.empty()) fs::remove(out, ec);
    const std::string script = "cd '" + root.string() + "' && unset NEXTTOK_MODEL && " +
                               with_binary(c, nt::test::nexttok_bin());
    const nt::test::CmdResult r = nt::test::run_program({"/bin/bash", "-o", "pipefail", "-c", script});
    EXPECT_EQ(r.rc, 0) << "stderr:\n" << r.err;
    if (out.empty()) EXPECT_FALSE(r.out.empty()) << "no output on stdout; stderr:\n" << r.err;
    else EXPECT_TRUE(fs::exists(out, ec) && fs::file_size(out, ec) > 0) << out << " was not written";
  }
  for (const std::string& c : cmds) {
    std::error_code ec;
    if (const std::string out = written_path(c); !out.empty()) fs::remove(out, ec);
  }
}

}  // namespace

// Flag values are checked before anything is loaded: a bad one exits 2 (usage) with a message in the
// project's words that names the flag, even when the model path does not exist (so no model was
// read first). Also: -t 0 = physical cores in every command, -t above the cores warns, -n -1 is
// "until the end", help usage lines start with `nexttok CMD`.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace nt {
namespace {

using test::run_nexttok;

const char* kMissingModel = "/nonexistent/model.gguf";

struct BadFlag {
  std::vector<std::string> args;  // after the command name and -m <missing>
  const char* cmd;
  const char* expect;  // substring of stderr
};

TEST(Flags, BadValuesExitTwoBeforeTheModelIsRead) {
  const std::vector<BadFlag> cases = {
      {{"--top-p", "2"}, "run", "--top-p must be between 0 and 1 (got 2)"},
      {{"--min-p", "-0.5"}, "run", "--min-p must be between 0 and 1 (got -0.5)"},
      {{"--temp", "nan"}, "run", "--temp must be a finite number"},
      {{"--logit-bias", "abc"}, "run", "--logit-bias 'abc'"},
      {{"--logit-bias", "5+nan"}, "check", "--logit-bias"},
      {{"--typical", "1.5"}, "check", "--typical must be between 0 and 1"},
      {{"--repeat-last-n", "-2"}, "run", "--repeat-last-n"},
      {{"-b", "0"}, "run", "-b must be between 1 and 65536 (got 0)"},
      {{"-b", "70000"}, "chat", "-b must be between 1 and 65536 (got 70000)"},
      {{"-c", "-5"}, "run", "-c must be"},
      {{"-t", "-1"}, "run", "-t must be"},
      {{"-n", "-2"}, "run", "-n must be -1 (until the end) or a non-negative count (got -2)"},
      {{"-n", "-2"}, "chat", "-n must be -1"},
      {{"-n", "0"}, "check", "-n must be"},
      {{"-r", "0"}, "check", "-r must be between 1 and 1000 (got 0)"},
      {{"--seed", "-2"}, "run", "--seed must be -1 (random) or an integer from 0 to 18446744073709551615"},
      {{"--seed", "18446744073709551616"}, "run", "--seed must be -1"},
      {{"--seed", "12abc"}, "check", "--seed must be -1"},
      {{"-ctk", "q4_0"}, "run", "KV cache type"},
      {{"--state-snapshot-every", "100"}, "run", "--state-snapshot-every must be a multiple of the KV block size 32 (got 100)"},
      {{"--state-snapshot-every", "-32"}, "chat", "--state-snapshot-every must be between 0 and"},
      {{"--state-snapshots", "-2"}, "run", "--state-snapshots must be between -1 and"},
      {{"--truncate", "sideways"}, "run", "--truncate"},
      {{"--chat-format", "bogus"}, "chat", "--chat-format"},
      {{"--n-probs", "0"}, "run", "--n-probs must be"},
      {{"--stop", ""}, "run", "--stop"},
  };
  for (const BadFlag& c : cases) {
    std::vector<std::string> args = {c.cmd, "-m", kMissingModel, "-p", "hi"};
    if (std::string(c.cmd) == "chat") args = {c.cmd, "-m", kMissingModel};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = run_nexttok(args, "");
    std::string what = std::string(c.cmd);
    for (const auto& s : c.args) what += " " + s;
    EXPECT_EQ(r.rc, 2) << what << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << what << "\nstderr: " << r.err;
    EXPECT_EQ(r.err.find("no such file"), std::string::npos) << what << ": the model was looked at first\n" << r.err;
    EXPECT_EQ(r.err.find("Value "), std::string::npos) << what << ": CLI11's wording, not ours\n" << r.err;
  }
}

TEST(Flags, BenchListsAndCountsExitTwo) {
  const std::vector<std::pair<std::vector<std::string>, const char*>> cases = {
      {{"-p", "abc"}, "-p: 'abc' is not"},
      {{"-n", "1,,2"}, "-n: '' is not"},
      {{"-t", "-1"}, "-t: '-1' is not"},
      {{"-r", "0"}, "-r must be between 1 and 1000 (got 0)"},
      {{"-b", "0"}, "-b must be between 1 and 65536 (got 0)"},
      {{"-ctv", "bogus"}, "KV cache type"},
  };
  for (const auto& [extra, expect] : cases) {
    std::vector<std::string> args = {"bench", "-m", kMissingModel};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = run_nexttok(args);
    EXPECT_EQ(r.rc, 2) << extra[0] << " " << extra[1] << "\n" << r.err;
    EXPECT_NE(r.err.find(expect), std::string::npos) << r.err;
  }
}

TEST(Flags, ThreadsZeroMeansPhysicalCoresEverywhere) {
  NT_REQUIRE_SHARED();
  const std::string model = test::shared_path("models/stories15M-q8_0.gguf");
  auto run = run_nexttok({"run", "-m", model, "-p", "Once", "-n", "2", "--temp", "0", "-t", "0"});
  EXPECT_EQ(run.rc, 0) << run.err;
  auto bench = run_nexttok({"bench", "-m", model, "-p", "4", "-n", "0", "-r", "1", "-t", "0", "-o", "json"});
  EXPECT_EQ(bench.rc, 0) << bench.err;
  EXPECT_NE(bench.out.find("\"n_threads\":"), std::string::npos) << bench.out;
  EXPECT_EQ(bench.out.find("\"n_threads\":0"), std::string::npos) << "-t 0 is resolved to the core count: " << bench.out;
  const std::string out = test::temp_dir() + "/q.gguf";
  auto q = run_nexttok({"quantize", test::shared_path("models/stories15M-f32.gguf"), out, "q8_0", "-t", "0"});
  EXPECT_EQ(q.rc, 0) << q.err;
}

TEST(Flags, ThreadsAboveTheCoresWarn) {
  NT_REQUIRE_SHARED();
  auto r = run_nexttok({"run", "-m", test::shared_path("models/stories15M-q8_0.gguf"), "-p", "Once", "-n", "1",
                        "--temp", "0", "-t", "512"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("warning: -t 512 is more than"), std::string::npos) << r.err;
}

TEST(Flags, NPredictMinusOneRunsToTheEnd) {
  NT_REQUIRE_SHARED();
  // -c 24: the prompt plus everything generated fills the context unless an end token comes first.
  auto r = run_nexttok({"run", "-m", test::shared_path("models/stories15M-q8_0.gguf"), "-p", "Once upon a time",
                        "-n", "-1", "-c", "24", "--temp", "0", "--json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("\"stop_reason\":\"context\""), std::string::npos) << r.out;
}

TEST(Flags, HelpUsageLinesStartWithNexttokCommand) {
  for (const char* cmd : {"run", "chat", "check", "bench", "inspect", "tokenize", "detokenize", "count",
                          "template", "pull", "quantize", "convert", "synth"}) {
    auto r = run_nexttok({cmd, "--help"});
    EXPECT_EQ(r.rc, 0) << cmd;
    EXPECT_NE(r.out.find(std::string("nexttok ") + cmd + " [OPTIONS]"), std::string::npos) << r.out;
  }
}

// The default model (models/ beside the executable's build folder) is printed as a clean path,
// without "build/../". A copy of the executable in a scratch tree plays the project.
TEST(Flags, DefaultModelPathIsPrintedWithoutDotDot) {
  NT_REQUIRE_SHARED();
  const std::string root = test::temp_dir() + "/proj";
  namespace fs = std::filesystem;
  fs::create_directories(root + "/build");
  fs::create_directories(root + "/models");
  fs::copy_file(test::nexttok_bin(), root + "/build/nexttok");
  fs::create_symlink(test::shared_path("models/stories15M-q8_0.gguf"), root + "/models/stories15M-q8_0.gguf");
  const char* saved = std::getenv("NEXTTOK_MODEL");
  const std::string keep = saved ? saved : "";
  ::unsetenv("NEXTTOK_MODEL");
  auto r = test::run_program({root + "/build/nexttok", "run", "-p", "Once", "-n", "1", "--temp", "0"});
  if (saved) ::setenv("NEXTTOK_MODEL", keep.c_str(), 1);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("model: " + root + "/models/stories15M-q8_0.gguf"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("/../"), std::string::npos) << r.err;
}

TEST(Flags, OtherCommandsUseTheSameWording) {
  const std::vector<std::pair<std::vector<std::string>, const char*>> cases = {
      {{"count", "-p", "hi", "--concurrency", "0"}, "--concurrency must be between 1 and 1000000 (got 0)"},
      {{"count", "-p", "hi", "--price-in", "-1"}, "--price-in must be a non-negative number"},
      {{"bench", "-m", kMissingModel, "-o", "xml"}, "-o must be md or json (got 'xml')"},
      {{"pull", "org/repo", "--retries", "200"}, "--retries must be between 0 and 100 (got 200)"},
      {{"synth", "--arch", "gpt9", "--n-embd", "8", "--n-layer", "1", "--n-head", "1", "--n-ff", "8", "--vocab",
        "/nonexistent", "-o", "/nonexistent/x.gguf"},
       "--arch 'gpt9' is not supported (choose from: "},
      {{"synth", "--arch", "llama", "--n-embd", "0", "--n-layer", "1", "--n-head", "1", "--n-ff", "8", "--vocab",
        "/nonexistent", "-o", "/nonexistent/x.gguf"},
       "--n-embd must be between 1 and 1048576 (got 0)"},
      {{"quantize", "/nonexistent/in.gguf", "/nonexistent/out.gguf", "q8_0", "-t", "-3"}, "-t must be between 0"},
  };
  for (const auto& [args, expect] : cases) {
    auto r = run_nexttok(args);
    EXPECT_EQ(r.rc, 2) << args[0] << " " << args[1] << "\n" << r.err;
    EXPECT_NE(r.err.find(expect), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("Value "), std::string::npos) << "CLI11's wording, not ours\n" << r.err;
    EXPECT_EQ(r.err.find(" not in {"), std::string::npos) << "CLI11's wording, not ours\n" << r.err;
  }
}

}  // namespace
}  // namespace nt

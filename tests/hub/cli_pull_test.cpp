// `nexttok pull` and `-hf` through the real executable, against the fake Hub (environment:
// HF_ENDPOINT, HF_HUB_CACHE, HF_HUB_OFFLINE are inherited by the child process).
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "hub/fake_hub.h"
#include "support/test_support.h"

namespace nt::test {
namespace {

const std::string kCommit = "fedcba9876543210fedcba9876543210fedcba98";

class CliPullTest : public ::testing::Test {
 protected:
  void SetUp() override {
    home_ = isolate_hub_env(hub_.endpoint());
    data_ = make_tiny_gguf("cli", 2048);
    hub_.add_repo({"org/cli-GGUF", kCommit, {{"cli-Q8_0.gguf", data_}, {"cli-Q4_0.gguf", make_tiny_gguf("q4")}}});
    hub_.add_repo({"org/gated-GGUF", kCommit, {{"g-Q8_0.gguf", make_tiny_gguf("g")}}, true});
  }
  void TearDown() override {
    for (const char* v : {"HF_HOME", "HF_HUB_CACHE", "HF_ENDPOINT", "HF_HUB_OFFLINE"}) ::unsetenv(v);
  }
  FakeHub hub_;
  std::string home_, data_;
};

TEST_F(CliPullTest, PrintsThePathAndJson) {
  auto r = run_nexttok({"pull", "org/cli-GGUF:q8_0", "--json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1);  // one line
  EXPECT_EQ(j["repo"], "org/cli-GGUF");
  EXPECT_EQ(j["file"], "cli-Q8_0.gguf");
  EXPECT_EQ(j["revision"], "main");
  EXPECT_EQ(j["commit"], kCommit);
  EXPECT_EQ(j["path"], home_ + "/cache/models--org--cli-GGUF/snapshots/" + kCommit + "/cli-Q8_0.gguf");
  EXPECT_EQ(j["bytes"], data_.size());
  EXPECT_EQ(j["sha256"], sha256_oracle(data_));
  EXPECT_EQ(j["cached"], false);
  ASSERT_EQ(j["files"].size(), 1u);
  EXPECT_EQ(read_text(j["path"].get<std::string>()), data_);

  auto again = run_nexttok({"pull", "org/cli-GGUF:Q8_0"});
  ASSERT_EQ(again.rc, 0) << again.err;
  EXPECT_EQ(again.out, j["path"].get<std::string>() + "\n");
  EXPECT_NE(again.err.find("cached"), std::string::npos) << again.err;

  hub_.down = true;
  auto off = run_nexttok({"pull", "org/cli-GGUF:Q8_0", "--offline", "--json"});
  ASSERT_EQ(off.rc, 0) << off.err;
  auto jo = nlohmann::json::parse(off.out, nullptr, false);
  EXPECT_EQ(jo["cached"], true);
  EXPECT_EQ(jo["path"], j["path"]);
}

TEST_F(CliPullTest, ErrorsAndUsage) {
  auto none = run_nexttok({"pull", "org/cli-GGUF:Q5_K_M"});
  EXPECT_EQ(none.rc, 1);
  EXPECT_NE(none.err.find("cli-Q4_0.gguf"), std::string::npos) << none.err;
  auto gated = run_nexttok({"pull", "org/gated-GGUF:Q8_0"});
  EXPECT_EQ(gated.rc, 1);
  EXPECT_NE(gated.err.find("401"), std::string::npos) << gated.err;
  EXPECT_NE(gated.err.find("HF_TOKEN"), std::string::npos) << gated.err;
  auto ok = run_nexttok({"pull", "org/gated-GGUF:Q8_0", "--token", FakeHub::kToken, "-q"});
  EXPECT_EQ(ok.rc, 0) << ok.err;
  EXPECT_EQ(run_nexttok({"pull"}).rc, 2);
  EXPECT_EQ(run_nexttok({"pull", "--help"}).rc, 0);
  auto bad = run_nexttok({"pull", "not-a-repo"});
  EXPECT_EQ(bad.rc, 1);
  EXPECT_NE(bad.err.find("org/repo"), std::string::npos) << bad.err;
}

// -hf on a model-taking command: a real model from ../shared served by the fake Hub.
TEST_F(CliPullTest, HfFlagOnInspect) {
  NT_REQUIRE_SHARED();
  std::string model = read_text(shared_path("models/stories15M-q4_0.gguf"));
  ASSERT_FALSE(model.empty());
  hub_.add_repo({"org/stories-GGUF", kCommit, {{"stories15M-q4_0.gguf", model}, {"stories15M-q8_0.gguf", data_}}});
  auto r = run_nexttok({"inspect", "-hf", "org/stories-GGUF:Q4_0", "--json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_NE(r.out.find("llama"), std::string::npos);
  EXPECT_EQ(hub_.blob_gets, 1);
  hub_.down = true;
  ::setenv("HF_HUB_OFFLINE", "1", 1);
  auto off = run_nexttok({"inspect", "-hf", "org/stories-GGUF:Q4_0", "--json"});
  EXPECT_EQ(off.rc, 0) << off.err;
  EXPECT_EQ(off.out, r.out);
  auto miss = run_nexttok({"inspect", "-hf", "org/stories-GGUF:Q8_0"});
  EXPECT_EQ(miss.rc, 1);
  EXPECT_NE(miss.err.find("offline"), std::string::npos) << miss.err;
}

}  // namespace
}  // namespace nt::test

// Repo spec parsing, quantization matching, multi-part sets and GGUF selection (no network).
#include <gtest/gtest.h>

#include "hub/repo_spec.h"

namespace nt::hub {
namespace {

TEST(RepoSpec, ParsesTheThreeForms) {
  auto a = parse_repo_spec("org/repo");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->repo, "org/repo");
  EXPECT_TRUE(a->quant.empty());
  EXPECT_TRUE(a->file.empty());
  auto b = parse_repo_spec("bartowski/Qwen2.5-0.5B-Instruct-GGUF:q4_k_m");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->repo, "bartowski/Qwen2.5-0.5B-Instruct-GGUF");
  EXPECT_EQ(b->quant, "q4_k_m");
  auto c = parse_repo_spec("org/repo/sub/dir/model-Q8_0.gguf");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->repo, "org/repo");
  EXPECT_EQ(c->file, "sub/dir/model-Q8_0.gguf");
  auto d = parse_repo_spec("https://huggingface.co/org/repo:Q8_0");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->repo, "org/repo");
}

TEST(RepoSpec, RejectsMalformedSpecs) {
  for (const char* bad : {"", "repo", "org/", "/repo", "org/repo:", "org/repo/", "org/repo/x.bin",
                          "org/re po", "org/../x", "org/repo/../../etc/passwd.gguf", "org/repo/a.gguf:Q4",
                          "org--x/repo", "org/repo:Q4/x"}) {
    auto r = parse_repo_spec(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.error().message.find("org/repo"), std::string::npos) << r.error().message;
    }
  }
}

TEST(RepoSpec, QuantMatchesWholeNamesCaseInsensitively) {
  EXPECT_TRUE(file_has_quant("model-Q4_K_M.gguf", "q4_k_m"));
  EXPECT_TRUE(file_has_quant("model.q8_0.gguf", "Q8_0"));
  EXPECT_TRUE(file_has_quant("Q4_K_M/model-Q4_K_M-00001-of-00002.gguf", "Q4_K_M"));
  EXPECT_FALSE(file_has_quant("model-Q4_K_M.gguf", "Q4_K"));   // prefix of a longer name
  EXPECT_FALSE(file_has_quant("model-IQ4_XS.gguf", "Q4_XS"));  // suffix of a longer name
  EXPECT_FALSE(file_has_quant("model-Q4_0.gguf", "Q8_0"));
  EXPECT_TRUE(file_has_quant("model-F16.gguf", "f16"));
}

TEST(RepoSpec, SplitNames) {
  SplitName s = parse_split_name("dir/model-Q8_0-00002-of-00003.gguf");
  EXPECT_TRUE(s.is_split);
  EXPECT_EQ(s.stem, "dir/model-Q8_0");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 3);
  EXPECT_FALSE(parse_split_name("model-Q8_0.gguf").is_split);
  EXPECT_FALSE(parse_split_name("model-00004-of-00003.gguf").is_split);
  auto names = split_set_names("m-00002-of-00003.gguf");
  ASSERT_EQ(names.size(), 3u);
  EXPECT_EQ(names[0], "m-00001-of-00003.gguf");
  EXPECT_EQ(names[2], "m-00003-of-00003.gguf");
}

const std::vector<std::string> kFiles = {
    "README.md", "config.json", "model-Q4_K_M.gguf", "model-Q4_K_S.gguf", "model-Q8_0.gguf",
    "mmproj-model-f16.gguf", "big/model-F16-00001-of-00002.gguf", "big/model-F16-00002-of-00002.gguf",
};

TEST(RepoSpec, SelectsByQuant) {
  auto r = select_gguf_files({"org/m", "q8_0", ""}, kFiles);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, std::vector<std::string>{"model-Q8_0.gguf"});
  auto split = select_gguf_files({"org/m", "F16", ""}, kFiles);  // mmproj-model-f16 is not a candidate
  ASSERT_TRUE(split.ok()) << split.error().message;
  EXPECT_EQ(*split, (std::vector<std::string>{"big/model-F16-00001-of-00002.gguf", "big/model-F16-00002-of-00002.gguf"}));
  auto def = select_gguf_files({"org/m", "", ""}, kFiles);  // several: Q4_K_M is the default
  ASSERT_TRUE(def.ok()) << def.error().message;
  EXPECT_EQ(*def, std::vector<std::string>{"model-Q4_K_M.gguf"});
}

TEST(RepoSpec, QuantErrorsListWhatExists) {
  auto none = select_gguf_files({"org/m", "Q5_K_M", ""}, kFiles);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("Q5_K_M"), std::string::npos) << none.error().message;
  EXPECT_NE(none.error().message.find("model-Q8_0.gguf"), std::string::npos) << none.error().message;
  EXPECT_NE(none.error().message.find("model-F16-00001-of-00002.gguf (2 parts)"), std::string::npos);

  std::vector<std::string> two = {"a-Q4_0.gguf", "b-Q4_0.gguf", "c-Q8_0.gguf"};
  auto several = select_gguf_files({"org/m", "Q4_0", ""}, two);
  ASSERT_FALSE(several.ok());
  EXPECT_NE(several.error().message.find("several"), std::string::npos);
  EXPECT_NE(several.error().message.find("a-Q4_0.gguf"), std::string::npos);
  EXPECT_NE(several.error().message.find("b-Q4_0.gguf"), std::string::npos);
  EXPECT_EQ(several.error().message.find("c-Q8_0.gguf"), std::string::npos);

  auto no_default = select_gguf_files({"org/m", "", ""}, two);
  ASSERT_FALSE(no_default.ok());
  EXPECT_NE(no_default.error().message.find(":QUANT"), std::string::npos);

  auto empty = select_gguf_files({"org/m", "Q4_0", ""}, {"README.md"});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("no GGUF"), std::string::npos);
}

TEST(RepoSpec, SelectsByFileAndCompletesSets) {
  auto one = select_gguf_files({"org/m", "", "mmproj-model-f16.gguf"}, kFiles);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, std::vector<std::string>{"mmproj-model-f16.gguf"});
  auto part2 = select_gguf_files({"org/m", "", "big/model-F16-00002-of-00002.gguf"}, kFiles);
  ASSERT_TRUE(part2.ok());
  EXPECT_EQ(part2->front(), "big/model-F16-00001-of-00002.gguf");
  EXPECT_EQ(part2->size(), 2u);
  auto missing = select_gguf_files({"org/m", "", "nope.gguf"}, kFiles);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("model-Q8_0.gguf"), std::string::npos);
  auto incomplete = select_gguf_files({"org/m", "", "x-00001-of-00003.gguf"},
                                      {"x-00001-of-00003.gguf", "x-00003-of-00003.gguf"});
  ASSERT_FALSE(incomplete.ok());
  EXPECT_NE(incomplete.error().message.find("x-00002-of-00003.gguf"), std::string::npos);
}

TEST(RepoSpec, CacheFolderName) { EXPECT_EQ(repo_folder_name("org/my.repo"), "models--org--my.repo"); }

}  // namespace
}  // namespace nt::hub

// core/files.h and read_file: files compared as files (not by spelling), directories refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/files.h"
#include "core/strings.h"
#include "support/test_support.h"

namespace nt {
namespace {

TEST(SameFile, ComparesFilesNotSpellings) {
  const std::string dir = test::temp_dir();
  const std::string a = dir + "/a.gguf";
  test::write_text(a, "x");
  std::filesystem::create_symlink(a, dir + "/sym");
  std::filesystem::create_hard_link(a, dir + "/hard");
  test::write_text(dir + "/b.gguf", "x");
  EXPECT_TRUE(same_file(a, a));
  EXPECT_TRUE(same_file(a, dir + "/./a.gguf"));
  EXPECT_TRUE(same_file(a, dir + "//a.gguf"));
  EXPECT_TRUE(same_file(a, dir + "/../" + std::filesystem::path(dir).filename().string() + "/a.gguf"));
  EXPECT_TRUE(same_file(a, dir + "/sym"));
  EXPECT_TRUE(same_file(a, dir + "/hard"));
  EXPECT_FALSE(same_file(a, dir + "/b.gguf")) << "equal contents are not the same file";
  EXPECT_FALSE(same_file(a, dir + "/missing"));
  EXPECT_FALSE(same_file("", ""));
  // neither exists yet: the resolved paths decide
  EXPECT_TRUE(same_file(dir + "/new.gguf", dir + "/./new.gguf"));
  EXPECT_TRUE(same_file(dir + "/sub/../new.gguf", dir + "/new.gguf"));
  EXPECT_FALSE(same_file(dir + "/new.gguf", dir + "/other.gguf"));
}

TEST(SameFile, RelativeAndAbsolutePathsMatch) {
  const std::string rel = "nt-files-test-rel.tmp";
  test::write_text(rel, "x");
  EXPECT_TRUE(same_file(rel, "./" + rel));
  EXPECT_TRUE(same_file(rel, std::filesystem::absolute(rel).string()));
  std::filesystem::remove(rel);
}

TEST(CheckOutputPath, RefusesDirectoriesAndInputs) {
  const std::string dir = test::temp_dir();
  const std::string in = dir + "/in.gguf";
  test::write_text(in, "x");
  auto s = check_output_path(dir, {in});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, dir + ": is a directory");
  s = check_output_path(dir + "/./in.gguf", {dir + "/other", in});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("same file as the input " + in), std::string::npos) << s.error().message;
  EXPECT_TRUE(check_output_path(dir + "/out.gguf", {in, ""}).ok());
  EXPECT_TRUE(check_output_path(in, {}).ok()) << "an existing file that is no input may be replaced";
}

TEST(ReadFile, DirectoryIsAnErrorNotEmpty) {
  const std::string dir = test::temp_dir();
  auto r = read_file(dir);
  ASSERT_FALSE(r.ok()) << "read as " << r->size() << " bytes";
  EXPECT_EQ(r.error().message, dir + ": is a directory");
  test::write_text(dir + "/f", std::string(200000, 'a') + "end");
  auto f = read_file(dir + "/f");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->size(), 200003u);
  EXPECT_EQ(f->substr(f->size() - 3), "end");
  auto missing = read_file(dir + "/missing");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("cannot open"), std::string::npos) << missing.error().message;
}

}  // namespace
}  // namespace nt

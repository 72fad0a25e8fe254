// `nexttok chat` /save and /load against files they must not touch: the model being run (under any
// spelling of its path, or a link to it), the --chat-template-file, and directories.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/test_support.h"

namespace nt {
namespace {

TEST(ChatFiles, SaveRefusesTheModelAndTemplateFilesAndDirectories) {
  NT_REQUIRE_SHARED();
  const std::string dir = test::temp_dir();
  const std::string model = dir + "/m.gguf";
  std::filesystem::copy_file(test::shared_path("models/stories15M-q8_0.gguf"), model);
  std::filesystem::create_symlink(model, dir + "/link.gguf");
  const std::string tmpl = dir + "/t.jinja";
  const std::string tmpl_text = "{% for m in messages %}{{ m.content }}\n{% endfor %}";
  test::write_text(tmpl, tmpl_text);
  const std::string original = test::read_text(model);
  std::filesystem::create_directory(dir + "/d");
  // saving over the mmapped model would truncate it under the running engine: the turn after
  // the /save commands must still run
  auto r = test::run_nexttok({"chat", "-m", model, "-n", "4", "--temp", "0", "--chat-template-file", tmpl},
                             "Once upon a time\n/save " + dir + "/./m.gguf\n/save " + dir + "/link.gguf\n/save " +
                                 tmpl + "\n/save " + dir + "/d\n/load " + dir + "/d\nThe dog\n/quit\n");
  const std::string all = r.out + r.err;
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(all.find("[saved"), std::string::npos) << all;
  size_t n_same = 0;
  for (size_t p = all.find("same file"); p != std::string::npos; p = all.find("same file", p + 1)) ++n_same;
  EXPECT_EQ(n_same, 3u) << all;
  EXPECT_NE(all.find(dir + "/d: is a directory"), std::string::npos) << all;
  EXPECT_NE(all.find(dir + "/d: is a directory", all.find(dir + "/d: is a directory") + 1), std::string::npos)
      << "both /save and /load: " << all;
  EXPECT_NE(r.err.find("[turn 2:"), std::string::npos) << "the second turn ran: " << r.err;
  EXPECT_TRUE(test::read_text(model) == original) << "the model file was overwritten";
  EXPECT_EQ(test::read_text(tmpl), tmpl_text) << "the template file was overwritten";
  // a conversation file can be saved and saved over
  r = test::run_nexttok({"chat", "-m", model, "-n", "2", "--temp", "0"},
                        "Hi\n/save " + dir + "/c.json\n/save " + dir + "/./c.json\n");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE((r.out + r.err).find("[saved 2 messages to " + dir + "/./c.json]"), std::string::npos) << r.out << r.err;
}

}  // namespace
}  // namespace nt

// tests/template/cli_test.cpp — `nexttok template`: exact text on stdout (no added newline),
// errors on stderr with a non-zero exit.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace {

using nt::test::run_nexttok;

TEST(TemplateCli, RendersTemplateFileExactly) {
  std::string dir = nt::test::temp_dir();
  nt::test::write_text(dir + "/t.jinja",
                       "{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
                       "{% if add_generation_prompt %}<assistant>{% endif %}{{ strftime_now('%d %b %Y') }}\n");
  nt::test::write_text(dir + "/m.json", R"([{"role": "user", "content": "héllo\n"}])");
  auto r = run_nexttok({"template", "--template-file", dir + "/t.jinja", "--messages-file", dir + "/m.json",
                        "--add-generation-prompt", "--bos-token", "", "--date", "2026-11-29"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "<user>héllo\n<assistant>29 Nov 2026");
  r = run_nexttok({"template", "--template-file", dir + "/t.jinja", "--messages-file", dir + "/m.json",
                   "--bos-token", "<s>", "--date", "2026-11-29"});
  EXPECT_EQ(r.out, "<s><user>héllo\n29 Nov 2026");
}

TEST(TemplateCli, GoldenTemplateMatches) {
  NT_REQUIRE_SHARED();
  std::string dir = nt::test::temp_dir();
  nt::test::write_text(dir + "/m.json", R"([{"role": "user", "content": "Write a haiku about tokens."}, {"role": "assistant", "content": "Tokens flow like rain / each one a small prediction / the loop turns again"}])");
  auto r = run_nexttok({"template", "--template-file", nt::test::shared_path("templates/Qwen-Qwen2.5-7B-Instruct.jinja"),
                        "--messages-file", dir + "/m.json", "--eos-token", "<|im_end|>"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
            "<|im_start|>user\nWrite a haiku about tokens.<|im_end|>\n<|im_start|>assistant\n"
            "Tokens flow like rain / each one a small prediction / the loop turns again<|im_end|>\n");
}

TEST(TemplateCli, ErrorsGoToStderr) {
  std::string dir = nt::test::temp_dir();
  nt::test::write_text(dir + "/bad.jinja", "{% if x %}\nunclosed");
  nt::test::write_text(dir + "/raise.jinja", "{{ raise_exception('System role not supported') }}");
  nt::test::write_text(dir + "/m.json", R"([{"role": "system", "content": "x"}])");
  auto r = run_nexttok({"template", "--template-file", dir + "/bad.jinja", "--messages-file", dir + "/m.json"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("bad.jinja:2:9: template syntax error"), std::string::npos) << r.err;
  r = run_nexttok({"template", "--template-file", dir + "/raise.jinja", "--messages-file", dir + "/m.json"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("System role not supported"), std::string::npos) << r.err;
  r = run_nexttok({"template", "--template-file", dir + "/raise.jinja"});
  EXPECT_EQ(r.rc, 2);  // --messages-file is required
}

}  // namespace

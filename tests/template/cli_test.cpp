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

// A JSON error in --messages-file names the file, line and column.
TEST(TemplateCli, MessagesFileJsonErrorNamesFileAndLine) {
  std::string dir = nt::test::temp_dir();
  nt::test::write_text(dir + "/t.jinja", "{% for m in messages %}{{ m.content }}{% endfor %}");
  nt::test::write_text(dir + "/bad.json", "[\n  {\"role\": \"user\", \"content\": \"hi\"},\n  {\"role\": }\n]\n");
  auto r = run_nexttok({"template", "--template-file", dir + "/t.jinja", "--messages-file", dir + "/bad.json"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find(dir + "/bad.json:3:"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << "the library's tag is noise: " << r.err;
}

// --show-tokens without -m counts with the default model's tokenizer and says so.
TEST(TemplateCli, ShowTokensNamesTheTokenizer) {
  NT_REQUIRE_SHARED();
  std::string dir = nt::test::temp_dir();
  nt::test::write_text(dir + "/t.jinja", "{% for m in messages %}{{ m.content }}{% endfor %}");
  nt::test::write_text(dir + "/m.json", R"([{"role": "user", "content": "Once upon a time"}])");
  const std::string model = nt::test::shared_path("models/stories15M-q8_0.gguf");
  ::setenv("NEXTTOK_MODEL", model.c_str(), 1);
  auto r = run_nexttok({"template", "--template-file", dir + "/t.jinja", "--messages-file", dir + "/m.json",
                        "--show-tokens"});
  auto j = run_nexttok({"template", "--template-file", dir + "/t.jinja", "--messages-file", dir + "/m.json",
                        "--show-tokens", "--json"});
  ::unsetenv("NEXTTOK_MODEL");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("tokens: 4 (counted with the tokenizer of " + model + ")"), std::string::npos) << r.err;
  EXPECT_NE(j.out.find("\"tokenizer\":\"" + model + "\""), std::string::npos) << j.out;
}

}  // namespace

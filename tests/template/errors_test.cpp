// tests/template/errors_test.cpp — errors a user can act on (parse errors with template, line and
// column; raise_exception's message; runtime errors naming the expression), HF sandbox refusals,
// and the limits that bound every render.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "template/chat_template.h"

namespace {

nt::Result<std::string> try_render(const std::string& src, const std::string& messages = R"([{"role":"user","content":"hi"}])") {
  auto t = nt::ChatTemplate::parse(src, "chat.jinja");
  if (!t.ok()) return t.error();
  nt::ChatTemplateOptions o;
  o.date = "2026-11-29";
  return t->render(nlohmann::ordered_json::parse(messages), o);
}

std::string error_of(const std::string& src) {
  auto r = try_render(src);
  EXPECT_FALSE(r.ok()) << "expected an error for: " << src << " got: " << (r.ok() ? r.value() : "");
  return r.ok() ? "" : r.error().message;
}

TEST(TemplateErrors, ParseErrorNamesTemplateLineColumn) {
  EXPECT_EQ(error_of("line one\n{% if x %}\nno end"),
            "chat.jinja:3:7: template syntax error: unexpected end of template; expected 'elif' or 'else' or 'endif' to close the block opened here");
  EXPECT_EQ(error_of("ab\n  {{ 1 + }}"), "chat.jinja:2:10: template syntax error: unexpected '}}'");
  EXPECT_NE(error_of("{% endfor %}").find("chat.jinja:1:4: template syntax error: unknown or unsupported tag 'endfor'"), std::string::npos);
  EXPECT_NE(error_of("{{ 'abc }}").find("chat.jinja:1:4: template syntax error: unterminated string"), std::string::npos);
  EXPECT_NE(error_of("{% include 'x' %}").find("unsupported tag 'include'"), std::string::npos);
  EXPECT_NE(error_of("{% break %}").find("outside of a loop"), std::string::npos);
  EXPECT_NE(error_of("{# open comment").find("missing end of comment tag"), std::string::npos);
}

TEST(TemplateErrors, RaiseExceptionSurfacesMessage) {
  std::string e = error_of("{% if messages[0].role == 'user' %}\n  {{ raise_exception('Only system first!') }}{% endif %}");
  EXPECT_EQ(e, "chat.jinja:2:6: Only system first!");
}

TEST(TemplateErrors, RuntimeErrorsNameTheExpression) {
  EXPECT_EQ(error_of("{{ 'a' + functions }}"), "chat.jinja:1:4: UndefinedError: 'functions' is undefined (in ''a' + functions')");
  EXPECT_EQ(error_of("{% for t in tools %}{% endfor %}"),
            "chat.jinja:1:13: TypeError: 'NoneType' object is not iterable (in 'tools')");
  EXPECT_NE(error_of("{{ x.y.z }}").find("'x' is undefined"), std::string::npos);
  EXPECT_NE(error_of("{{ 1 / 0 }}").find("division by zero"), std::string::npos);
  EXPECT_NE(error_of("{{ 'a' < 1 }}").find("'<' not supported between instances of 'str' and 'int'"), std::string::npos);
  EXPECT_NE(error_of("{{ [1]|nosuchfilter }}").find("No filter named 'nosuchfilter'"), std::string::npos);
  EXPECT_NE(error_of("{{ 1 is nosuchtest }}").find("No test named 'nosuchtest'"), std::string::npos);
  EXPECT_NE(error_of("{% set x = 1 %}{% set x.y = 2 %}").find("non-namespace"), std::string::npos);
  EXPECT_NE(error_of("{{ x|tojson }}").find("not JSON serializable"), std::string::npos);
}

TEST(TemplateErrors, MutatingMethodsRefusedAsHfSandbox) {
  EXPECT_NE(error_of("{% set l = [1] %}{{ l.append(2) }}").find("access to attribute 'append' of 'list' object is unsafe"),
            std::string::npos);
  EXPECT_NE(error_of("{% set d = {} %}{{ d.update({'a': 1}) }}").find("unsafe"), std::string::npos);
  EXPECT_NE(error_of("{{ messages.pop() }}").find("unsafe"), std::string::npos);
  auto r = try_render("[{{ [1].append }}]");  // reading without calling prints an empty Undefined
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), "[]");
}

// Renders with small limits so the test stays fast under sanitizers; the defaults bound the same
// templates in about a second (see bench/template_bench.cpp).
std::string error_with_limits(const std::string& src, uint64_t max_steps, uint64_t max_bytes) {
  auto t = nt::ChatTemplate::parse(src, "t");
  EXPECT_TRUE(t.ok());
  if (!t.ok()) return "";
  t->limits().max_steps = max_steps;
  t->limits().max_output_bytes = max_bytes;
  auto r = t->render(nlohmann::ordered_json::array(), {});
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.error().message;
}

TEST(TemplateErrors, BoundedWork) {
  // Nested loops: far beyond the step budget, must stop with a limit error, not hang.
  EXPECT_NE(error_with_limits("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}", 200000, 1 << 20)
                .find("too many steps"),
            std::string::npos);
  EXPECT_NE(error_with_limits("{% for a in range(20) %}{{ 'x' * 100000 }}{% endfor %}", 200000, 1 << 20).find("output exceeds"),
            std::string::npos);
  // The sandbox's range cap.
  EXPECT_NE(error_of("{{ range(1000000)|length }}").find("Range too big"), std::string::npos);
  // Exponential string growth hits the size limit.
  EXPECT_NE(error_with_limits("{% set ns = namespace(s='xxxxxxxx') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
                              200000, 1 << 20).find("a string would exceed"),
            std::string::npos);
  EXPECT_NE(error_of("{{ 'x' * 1000000000000 }}").find("limit exceeded"), std::string::npos);
  // Unbounded recursion.
  EXPECT_NE(error_of("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}").find("limit exceeded"), std::string::npos);
  // Deep nesting is a parse error, not a stack overflow.
  EXPECT_NE(error_of("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}").find("nested too deeply"),
            std::string::npos);
  EXPECT_NE(error_of("{{ " + std::string(3000, '[') + std::string(3000, ']') + " }}").find("nested too deeply"), std::string::npos);
}

TEST(TemplateErrors, CustomLimits) {
  auto t = nt::ChatTemplate::parse("{% for i in range(100) %}{{ i }}{% endfor %}", "t");
  ASSERT_TRUE(t.ok());
  t->limits().max_output_bytes = 50;
  auto r = t->render(nlohmann::ordered_json::array(), {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("output exceeds 50 bytes"), std::string::npos);
}

TEST(TemplateErrors, BadDate) {
  auto t = nt::ChatTemplate::parse("x", "t");
  ASSERT_TRUE(t.ok());
  nt::ChatTemplateOptions o;
  o.date = "2026-02-30";
  EXPECT_FALSE(t->render(nlohmann::ordered_json::array(), o).ok());
  o.date = "yesterday";
  EXPECT_FALSE(t->render(nlohmann::ordered_json::array(), o).ok());
}

TEST(TemplateErrors, ParseOnceRenderMany) {
  auto t = nt::ChatTemplate::parse("{% for m in messages %}{{ m.role }}:{{ m.content }};{% endfor %}{{ bos_token }}{{ enable_thinking }}", "t");
  ASSERT_TRUE(t.ok());
  nt::ChatTemplateOptions o;
  o.bos_token = "<s>";
  o.extra_context = {{"enable_thinking", false}};
  for (int k = 0; k < 3; k++) {
    auto r = t->render(nlohmann::json::parse(R"([{"role":"user","content":"a"}])"), o);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value(), "user:a;<s>False");
  }
}

}  // namespace

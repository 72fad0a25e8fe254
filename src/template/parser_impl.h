// template/parser_impl.h — the Parser class shared by parser.cpp (statements) and
// parser_expr.cpp (expressions). Internal to the template module.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "template/ast.h"
#include "template/lexer.h"
#include "template/parser.h"

namespace nt::jinja {

class Parser {
 public:
  explicit Parser(const std::vector<Token>& tokens) : toks_(tokens) {}

  Body parse_body(std::initializer_list<const char*> ends);

 private:
  static constexpr int kMaxDepth = 200;

  const Token& peek(size_t ahead = 0) const {
    size_t k = pos_ + ahead;
    return k < toks_.size() ? toks_[k] : toks_.back();
  }
  const Token& next() {
    const Token& t = peek();
    if (pos_ < toks_.size() - 1) pos_++;
    return t;
  }
  [[noreturn]] void fail(const std::string& msg);
  [[noreturn]] void fail_at(const std::string& msg, uint32_t pos);
  bool at_op(const char* op) const;
  bool at_name(const char* name) const;
  void expect_op(const char* op);
  std::string expect_name();
  void expect_stmt_end();
  static std::string describe(const Token& t);

  StmtPtr parse_statement();
  StmtPtr parse_if(uint32_t at);
  StmtPtr parse_for(uint32_t at);
  StmtPtr parse_set(uint32_t at);
  StmtPtr parse_macro(uint32_t at);

  // Expressions (parser_expr.cpp), Jinja2 precedence.
  ExprPtr parse_tuple(bool with_condexpr = true);
  ExprPtr parse_expression(bool with_condexpr = true);
  ExprPtr parse_or();
  ExprPtr parse_and();
  ExprPtr parse_not();
  ExprPtr parse_compare();
  ExprPtr parse_math1();
  ExprPtr parse_concat();
  ExprPtr parse_math2();
  ExprPtr parse_pow();
  ExprPtr parse_unary(bool with_filter = true);
  ExprPtr parse_primary();
  ExprPtr parse_postfix(ExprPtr node);
  ExprPtr parse_filter_expr(ExprPtr node);
  ExprPtr parse_subscript(ExprPtr node);
  ExprPtr parse_filter_call(ExprPtr subject);  // at the filter name (after '|')
  ExprPtr parse_test(ExprPtr subject);         // after 'is'
  void parse_call_args(Expr& call);            // at '('
  void enter();
  void leave() { depth_--; }
  void finish(Expr& e) const { e.end = peek().pos > e.pos ? peek().pos : e.pos; }

  const std::vector<Token>& toks_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
};

}  // namespace nt::jinja

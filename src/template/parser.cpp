// template/parser.cpp — recursive-descent Jinja parser (statements; expressions in parser_expr.cpp).
#include "template/parser.h"

#include "template/lexer.h"
#include "template/parser_impl.h"

namespace nt::jinja {

void Parser::fail(const std::string& msg) { throw ParseError{msg, peek().pos}; }
void Parser::fail_at(const std::string& msg, uint32_t pos) { throw ParseError{msg, pos}; }

bool Parser::at_op(const char* op) const { return peek().type == Tok::Op && peek().text == op; }
bool Parser::at_name(const char* name) const { return peek().type == Tok::Name && peek().text == name; }

void Parser::expect_op(const char* op) {
  if (!at_op(op)) fail(std::string("expected '") + op + "', got " + describe(peek()));
  next();
}
std::string Parser::expect_name() {
  if (peek().type != Tok::Name) fail("expected a name, got " + describe(peek()));
  return next().text;
}
void Parser::expect_stmt_end() {
  if (peek().type != Tok::StmtEnd) fail("expected end of statement block ('%}'), got " + describe(peek()));
  next();
}

std::string Parser::describe(const Token& t) {
  switch (t.type) {
    case Tok::Eof: return "end of template";
    case Tok::StmtEnd: return "'%}'";
    case Tok::ExprEnd: return "'}}'";
    case Tok::Text: return "template text";
    case Tok::String: return "a string";
    case Tok::Int: case Tok::Float: return "number " + t.text;
    default: return "'" + t.text + "'";
  }
}

// Parses statements until a {% name %} with name in `ends` (left unconsumed, positioned at the
// name) or end of input (error if ends is non-empty).
Body Parser::parse_body(std::initializer_list<const char*> ends) {
  if (++depth_ > kMaxDepth) fail("template nested too deeply");
  Body body;
  while (true) {
    const Token& t = peek();
    if (t.type == Tok::Eof) {
      if (ends.size() != 0) {
        std::string list;
        for (const char* e : ends) list += (list.empty() ? "'" : " or '") + std::string(e) + "'";
        fail("unexpected end of template; expected " + list + " to close the block opened here");
      }
      break;
    }
    if (t.type == Tok::Text) {
      auto s = std::make_unique<Stmt>(StmtKind::Text, t.pos);
      s->text = next().text;
      body.push_back(std::move(s));
      continue;
    }
    if (t.type == Tok::ExprBegin) {
      auto s = std::make_unique<Stmt>(StmtKind::Output, next().pos);
      s->expr = parse_tuple();
      if (peek().type != Tok::ExprEnd) fail("expected end of print statement ('}}'), got " + describe(peek()));
      next();
      body.push_back(std::move(s));
      continue;
    }
    if (t.type != Tok::StmtBegin) fail("unexpected " + describe(t));
    size_t save = pos_;
    next();
    if (peek().type != Tok::Name) fail("expected a tag name, got " + describe(peek()));
    const std::string& tag = peek().text;
    for (const char* e : ends)
      if (tag == e) { depth_--; return body; }
    (void)save;
    body.push_back(parse_statement());
  }
  depth_--;
  return body;
}

StmtPtr Parser::parse_statement() {
  const Token& t = peek();
  uint32_t at = t.pos;
  std::string tag = next().text;
  if (tag == "if") return parse_if(at);
  if (tag == "for") return parse_for(at);
  if (tag == "set") return parse_set(at);
  if (tag == "macro") return parse_macro(at);
  if (tag == "filter") {
    auto s = std::make_unique<Stmt>(StmtKind::FilterBlock, at);
    do {
      s->filters.push_back(parse_filter_call(nullptr));
    } while (at_op("|") && (next(), true));
    expect_stmt_end();
    s->bodies.push_back(parse_body({"endfilter"}));
    next();
    expect_stmt_end();
    return s;
  }
  if (tag == "generation") {
    auto s = std::make_unique<Stmt>(StmtKind::Body, at);
    expect_stmt_end();
    s->bodies.push_back(parse_body({"endgeneration"}));
    next();
    expect_stmt_end();
    return s;
  }
  if (tag == "break" || tag == "continue") {
    if (loop_depth_ == 0) fail_at("'" + tag + "' outside of a loop", at);
    expect_stmt_end();
    return std::make_unique<Stmt>(tag == "break" ? StmtKind::Break : StmtKind::Continue, at);
  }
  fail_at("unknown or unsupported tag '" + tag + "'", at);
}

StmtPtr Parser::parse_if(uint32_t at) {
  auto s = std::make_unique<Stmt>(StmtKind::If, at);
  s->conds.push_back(parse_tuple());
  expect_stmt_end();
  while (true) {
    s->bodies.push_back(parse_body({"elif", "else", "endif"}));
    std::string tag = next().text;
    if (tag == "elif") {
      s->conds.push_back(parse_tuple());
      expect_stmt_end();
    } else if (tag == "else") {
      expect_stmt_end();
      s->bodies.push_back(parse_body({"endif"}));
      next();
      expect_stmt_end();
      return s;
    } else {
      expect_stmt_end();
      return s;
    }
  }
}

StmtPtr Parser::parse_for(uint32_t at) {
  auto s = std::make_unique<Stmt>(StmtKind::For, at);
  bool paren = at_op("(");
  if (paren) next();
  do {
    s->targets.push_back(expect_name());
  } while (at_op(",") && (next(), true));
  if (paren) expect_op(")");
  if (!at_name("in")) fail("expected 'in' in for loop, got " + describe(peek()));
  next();
  s->expr = parse_tuple(/*with_condexpr=*/false);
  if (at_name("if")) {
    next();
    s->cond = parse_expression();
  }
  if (at_name("recursive")) {
    next();
    s->loop_recursive = true;
  }
  expect_stmt_end();
  loop_depth_++;
  s->bodies.push_back(parse_body({"endfor", "else"}));
  loop_depth_--;
  if (next().text == "else") {
    expect_stmt_end();
    s->bodies.push_back(parse_body({"endfor"}));
    next();
  }
  expect_stmt_end();
  return s;
}

StmtPtr Parser::parse_set(uint32_t at) {
  std::string first = expect_name();
  if (at_op(".")) {
    next();
    auto s = std::make_unique<Stmt>(StmtKind::SetAttr, at);
    s->targets.push_back(first);
    s->text = expect_name();
    expect_op("=");
    s->expr = parse_tuple();
    expect_stmt_end();
    return s;
  }
  std::vector<std::string> names{first};
  while (at_op(",")) {
    next();
    names.push_back(expect_name());
  }
  if (at_op("=")) {
    next();
    auto s = std::make_unique<Stmt>(StmtKind::Set, at);
    s->targets = std::move(names);
    s->expr = parse_tuple();
    expect_stmt_end();
    return s;
  }
  if (names.size() != 1) fail("expected '=' after set targets");
  auto s = std::make_unique<Stmt>(StmtKind::SetBlock, at);
  s->targets = std::move(names);
  while (at_op("|")) {
    next();
    s->filters.push_back(parse_filter_call(nullptr));
  }
  expect_stmt_end();
  s->bodies.push_back(parse_body({"endset"}));
  next();
  expect_stmt_end();
  return s;
}

StmtPtr Parser::parse_macro(uint32_t at) {
  auto s = std::make_unique<Stmt>(StmtKind::Macro, at);
  s->text = expect_name();
  expect_op("(");
  while (!at_op(")")) {
    std::string p = expect_name();
    ExprPtr def;
    if (at_op("=")) {
      next();
      def = parse_expression();
    } else if (!s->params.empty() && s->params.back().second) {
      fail("non-default argument follows default argument");
    }
    s->params.emplace_back(std::move(p), std::move(def));
    if (!at_op(",")) break;
    next();
  }
  expect_op(")");
  expect_stmt_end();
  int saved_loops = loop_depth_;
  loop_depth_ = 0;
  s->bodies.push_back(parse_body({"endmacro"}));
  loop_depth_ = saved_loops;
  next();
  if (peek().type == Tok::Name) next();  // {% endmacro name %}
  expect_stmt_end();
  return s;
}

std::shared_ptr<Program> parse_program(std::string_view source, std::string_view name, ParseError& err) {
  auto prog = std::make_shared<Program>();
  prog->source = normalize_source(source);
  prog->name = std::string(name);
  LexResult lexed = lex(prog->source);
  if (!lexed.error.empty()) {
    err = ParseError{lexed.error, lexed.error_pos};
    return nullptr;
  }
  Parser p(lexed.tokens);
  try {
    prog->body = p.parse_body({});
  } catch (const ParseError& e) {
    err = e;
    return nullptr;
  }
  return prog;
}

}  // namespace nt::jinja

// template/parser_expr.cpp — Jinja expression grammar (precedence as Jinja2's parser):
// cond-expr < or < and < not < compare < + - < ~ < * / // % < ** < unary < postfix/filter/test.
#include "template/parser_impl.h"

namespace nt::jinja {

void Parser::enter() {
  if (++depth_ > kMaxDepth) fail("expression nested too deeply");
}

namespace {
ExprPtr make(ExprKind k, uint32_t pos) { return std::make_unique<Expr>(k, pos); }
}  // namespace

ExprPtr Parser::parse_tuple(bool with_condexpr) {
  uint32_t at = peek().pos;
  ExprPtr first = parse_expression(with_condexpr);
  if (!at_op(",")) return first;
  auto t = make(ExprKind::Tuple, at);
  t->children.push_back(std::move(first));
  while (at_op(",")) {
    next();
    Tok ty = peek().type;
    if (ty == Tok::StmtEnd || ty == Tok::ExprEnd || at_op(")") || at_name("if") || at_name("in")) break;
    t->children.push_back(parse_expression(with_condexpr));
  }
  finish(*t);
  return t;
}

ExprPtr Parser::parse_expression(bool with_condexpr) {
  enter();
  uint32_t at = peek().pos;
  ExprPtr e = parse_or();
  while (with_condexpr && at_name("if")) {
    next();
    auto c = make(ExprKind::Cond, at);
    ExprPtr cond = parse_or();
    ExprPtr other;
    if (at_name("else")) {
      next();
      other = parse_expression();
    }
    c->children.push_back(std::move(e));
    c->children.push_back(std::move(cond));
    c->children.push_back(std::move(other));
    finish(*c);
    e = std::move(c);
  }
  leave();
  return e;
}

ExprPtr Parser::parse_or() {
  uint32_t at = peek().pos;
  ExprPtr l = parse_and();
  while (at_name("or")) {
    next();
    auto n = make(ExprKind::Or, at);
    n->children.push_back(std::move(l));
    n->children.push_back(parse_and());
    finish(*n);
    l = std::move(n);
  }
  return l;
}

ExprPtr Parser::parse_and() {
  uint32_t at = peek().pos;
  ExprPtr l = parse_not();
  while (at_name("and")) {
    next();
    auto n = make(ExprKind::And, at);
    n->children.push_back(std::move(l));
    n->children.push_back(parse_not());
    finish(*n);
    l = std::move(n);
  }
  return l;
}

ExprPtr Parser::parse_not() {
  if (at_name("not")) {
    uint32_t at = next().pos;
    enter();
    auto n = make(ExprKind::Not, at);
    n->children.push_back(parse_not());
    leave();
    finish(*n);
    return n;
  }
  return parse_compare();
}

ExprPtr Parser::parse_compare() {
  uint32_t at = peek().pos;
  ExprPtr l = parse_math1();
  ExprPtr cmp;
  while (true) {
    CmpOp op;
    if (at_op("==")) op = CmpOp::Eq;
    else if (at_op("!=")) op = CmpOp::Ne;
    else if (at_op("<")) op = CmpOp::Lt;
    else if (at_op("<=")) op = CmpOp::Le;
    else if (at_op(">")) op = CmpOp::Gt;
    else if (at_op(">=")) op = CmpOp::Ge;
    else if (at_name("in")) op = CmpOp::In;
    else if (at_name("not") && peek(1).type == Tok::Name && peek(1).text == "in") { next(); op = CmpOp::NotIn; }
    else break;
    next();
    if (!cmp) {
      cmp = make(ExprKind::Compare, at);
      cmp->children.push_back(std::move(l));
    }
    cmp->cmp_ops.push_back(op);
    cmp->children.push_back(parse_math1());
  }
  if (!cmp) return l;
  finish(*cmp);
  return cmp;
}

static ExprPtr binary(BinOp op, uint32_t at, ExprPtr l, ExprPtr r) {
  auto n = make(ExprKind::Binary, at);
  n->op = op;
  n->children.push_back(std::move(l));
  n->children.push_back(std::move(r));
  return n;
}

ExprPtr Parser::parse_math1() {
  uint32_t at = peek().pos;
  ExprPtr l = parse_concat();
  while (at_op("+") || at_op("-")) {
    BinOp op = next().text == "+" ? BinOp::Add : BinOp::Sub;
    l = binary(op, at, std::move(l), parse_concat());
    finish(*l);
  }
  return l;
}

ExprPtr Parser::parse_concat() {
  uint32_t at = peek().pos;
  ExprPtr l = parse_math2();
  while (at_op("~")) {
    next();
    l = binary(BinOp::Concat, at, std::move(l), parse_math2());
    finish(*l);
  }
  return l;
}

ExprPtr Parser::parse_math2() {
  uint32_t at = peek().pos;
  ExprPtr l = parse_pow();
  while (at_op("*") || at_op("/") || at_op("//") || at_op("%")) {
    const std::string& t = next().text;
    BinOp op = t == "*" ? BinOp::Mul : t == "/" ? BinOp::Div : t == "//" ? BinOp::FloorDiv : BinOp::Mod;
    l = binary(op, at, std::move(l), parse_pow());
    finish(*l);
  }
  return l;
}

ExprPtr Parser::parse_pow() {
  uint32_t at = peek().pos;
  ExprPtr l = parse_unary();
  while (at_op("**")) {
    next();
    l = binary(BinOp::Pow, at, std::move(l), parse_unary());
    finish(*l);
  }
  return l;
}

ExprPtr Parser::parse_unary(bool with_filter) {
  enter();
  uint32_t at = peek().pos;
  ExprPtr node;
  if (at_op("-") || at_op("+")) {
    bool neg = next().text == "-";
    node = make(neg ? ExprKind::Neg : ExprKind::Pos, at);
    node->children.push_back(parse_unary(false));
    finish(*node);
  } else {
    node = parse_primary();
  }
  node = parse_postfix(std::move(node));
  if (with_filter) node = parse_filter_expr(std::move(node));
  leave();
  return node;
}

ExprPtr Parser::parse_primary() {
  const Token& t = peek();
  uint32_t at = t.pos;
  if (t.type == Tok::Name) {
    std::string n = next().text;
    auto e = make(ExprKind::Literal, at);
    if (n == "true" || n == "True") e->literal = Value::boolean(true);
    else if (n == "false" || n == "False") e->literal = Value::boolean(false);
    else if (n == "none" || n == "None") e->literal = Value::none();
    else { e->kind = ExprKind::Name; e->name = std::move(n); }
    finish(*e);
    return e;
  }
  if (t.type == Tok::String) {
    std::string s;
    while (peek().type == Tok::String) s += next().text;
    auto e = make(ExprKind::Literal, at);
    e->literal = Value::string(std::move(s));
    finish(*e);
    return e;
  }
  if (t.type == Tok::Int || t.type == Tok::Float) {
    auto e = make(ExprKind::Literal, at);
    e->literal = t.type == Tok::Int ? Value::integer(t.i) : Value::number(t.f);
    next();
    finish(*e);
    return e;
  }
  if (at_op("(")) {
    next();
    if (at_op(")")) {
      next();
      auto e = make(ExprKind::Tuple, at);
      finish(*e);
      return e;
    }
    ExprPtr inner = parse_expression();
    if (at_op(",")) {
      auto tup = make(ExprKind::Tuple, at);
      tup->children.push_back(std::move(inner));
      while (at_op(",")) {
        next();
        if (at_op(")")) break;
        tup->children.push_back(parse_expression());
      }
      inner = std::move(tup);
    }
    expect_op(")");
    finish(*inner);
    return inner;
  }
  if (at_op("[")) {
    next();
    auto e = make(ExprKind::List, at);
    while (!at_op("]")) {
      e->children.push_back(parse_expression());
      if (!at_op(",")) break;
      next();
    }
    expect_op("]");
    finish(*e);
    return e;
  }
  if (at_op("{")) {
    next();
    auto e = make(ExprKind::Dict, at);
    while (!at_op("}")) {
      e->children.push_back(parse_expression());
      expect_op(":");
      e->children.push_back(parse_expression());
      if (!at_op(",")) break;
      next();
    }
    expect_op("}");
    finish(*e);
    return e;
  }
  fail("unexpected " + describe(t));
}

ExprPtr Parser::parse_postfix(ExprPtr node) {
  while (true) {
    if (at_op(".")) {
      next();
      auto e = make(ExprKind::Attr, node->pos);
      if (peek().type == Tok::Int) {  // foo.0 is foo[0]
        e->kind = ExprKind::Index;
        auto idx = make(ExprKind::Literal, peek().pos);
        idx->literal = Value::integer(next().i);
        e->children.push_back(std::move(node));
        e->children.push_back(std::move(idx));
      } else {
        e->name = expect_name();
        e->children.push_back(std::move(node));
      }
      finish(*e);
      node = std::move(e);
    } else if (at_op("[")) {
      node = parse_subscript(std::move(node));
    } else if (at_op("(")) {
      auto c = make(ExprKind::Call, node->pos);
      c->children.push_back(std::move(node));
      parse_call_args(*c);
      finish(*c);
      node = std::move(c);
    } else {
      return node;
    }
  }
}

ExprPtr Parser::parse_subscript(ExprPtr node) {
  next();  // [
  uint32_t at = node->pos;
  ExprPtr parts[3];
  int colons = 0;
  if (!at_op(":")) parts[0] = parse_expression();
  while (at_op(":") && colons < 2) {
    next();
    colons++;
    if (!at_op(":") && !at_op("]")) parts[colons] = parse_expression();
  }
  if (colons == 0 && at_op(",")) {  // a[x, y] -> tuple key
    auto tup = make(ExprKind::Tuple, parts[0]->pos);
    tup->children.push_back(std::move(parts[0]));
    while (at_op(",")) {
      next();
      if (at_op("]")) break;
      tup->children.push_back(parse_expression());
    }
    parts[0] = std::move(tup);
  }
  expect_op("]");
  auto e = make(colons ? ExprKind::Slice : ExprKind::Index, at);
  e->children.push_back(std::move(node));
  e->children.push_back(std::move(parts[0]));
  if (colons) {
    e->children.push_back(std::move(parts[1]));
    e->children.push_back(std::move(parts[2]));
  }
  finish(*e);
  return e;
}

void Parser::parse_call_args(Expr& call) {
  expect_op("(");
  while (!at_op(")")) {
    if (peek().type == Tok::Name && peek(1).type == Tok::Op && peek(1).text == "=") {
      std::string k = next().text;
      next();
      call.kwargs.emplace_back(std::move(k), parse_expression());
    } else {
      if (at_op("*") || at_op("**")) fail("*args / **kwargs in calls are not supported");
      if (!call.kwargs.empty()) fail("positional argument follows keyword argument");
      call.children.push_back(parse_expression());
    }
    if (!at_op(",")) break;
    next();
  }
  expect_op(")");
}

ExprPtr Parser::parse_filter_expr(ExprPtr node) {
  while (true) {
    if (at_op("|")) {
      next();
      node = parse_filter_call(std::move(node));
    } else if (at_name("is")) {
      next();
      node = parse_test(std::move(node));
    } else if (at_op("(")) {
      auto c = make(ExprKind::Call, node->pos);
      c->children.push_back(std::move(node));
      parse_call_args(*c);
      finish(*c);
      node = std::move(c);
    } else {
      return node;
    }
  }
}

ExprPtr Parser::parse_filter_call(ExprPtr subject) {
  uint32_t at = subject ? subject->pos : peek().pos;
  auto f = make(ExprKind::Filter, at);
  f->name = expect_name();
  while (at_op(".")) {
    next();
    f->name += "." + expect_name();
  }
  f->children.push_back(std::move(subject));
  if (at_op("(")) parse_call_args(*f);
  finish(*f);
  return f;
}

ExprPtr Parser::parse_test(ExprPtr subject) {
  auto t = make(ExprKind::Test, subject->pos);
  if (at_name("not")) {
    next();
    t->negated = true;
  }
  t->name = expect_name();
  while (at_op(".")) {
    next();
    t->name += "." + expect_name();
  }
  t->children.push_back(std::move(subject));
  const Token& n = peek();
  if (at_op("(")) {
    parse_call_args(*t);
  } else if ((n.type == Tok::Name && n.text != "else" && n.text != "or" && n.text != "and" && n.text != "if" &&
              n.text != "is" && n.text != "in" && n.text != "not") ||
             n.type == Tok::String || n.type == Tok::Int || n.type == Tok::Float || at_op("[") || at_op("{")) {
    // `x is divisibleby 3`, `x is sameas none`: one argument without parentheses.
    t->children.push_back(parse_postfix(parse_primary()));
  }
  finish(*t);
  return t;
}

}  // namespace nt::jinja

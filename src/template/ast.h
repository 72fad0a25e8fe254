// template/ast.h — the parsed form of a Jinja template: expression and statement nodes, each
// with its source offset (for errors that name line, column and expression text).
// Owns: node shapes. Must not know: how nodes are evaluated.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "template/value.h"

namespace nt::jinja {

enum class ExprKind : uint8_t {
  Literal, Name, List, Tuple, Dict, Attr, Index, Slice, Call, Filter, Test,
  Not, Neg, Pos, Binary, And, Or, Compare, Cond,
};

enum class BinOp : uint8_t { Add, Sub, Mul, Div, FloorDiv, Mod, Pow, Concat };
enum class CmpOp : uint8_t { Eq, Ne, Lt, Le, Gt, Ge, In, NotIn };

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  ExprKind kind;
  uint32_t pos = 0, end = 0;  // source span [pos, end)
  Value literal;              // Literal
  std::string name;           // Name, Attr, Filter, Test
  BinOp op = BinOp::Add;      // Binary
  bool negated = false;       // Test: `is not`
  // Operands: Attr/Index/Slice/Call/Filter/Test: children[0] is the subject, then arguments;
  // Slice: children[1..3] start/stop/step (nullptr when omitted); Dict: key, value, key, ...;
  // Compare: operands (cmp_ops between them); Cond: body, condition, else (nullptr = none).
  std::vector<ExprPtr> children;
  std::vector<CmpOp> cmp_ops;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;  // Call/Filter/Test keyword arguments
  Expr(ExprKind k, uint32_t p) : kind(k), pos(p) {}
};

enum class StmtKind : uint8_t {
  Text, Output, If, For, Set, SetAttr, SetBlock, Macro, FilterBlock, Body, Break, Continue,
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Stmt {
  StmtKind kind;
  uint32_t pos = 0;
  std::string text;                  // Text: data; Macro: name; SetAttr: attribute
  ExprPtr expr;                      // Output / Set value / For iterable / SetAttr value
  std::vector<std::string> targets;  // For/Set: names (several = unpacking); SetAttr: object name
  ExprPtr cond;                      // For: `if` filter
  // If: conds[k] guards bodies[k]; a trailing extra body is the else. For: bodies[0] loop body,
  // bodies[1] else. Macro/SetBlock/FilterBlock/Body: bodies[0].
  std::vector<ExprPtr> conds;
  std::vector<Body> bodies;
  // Macro parameters (default nullptr when none). SetBlock/FilterBlock: filters as Filter exprs
  // whose subject (children[0]) is nullptr, applied in order.
  std::vector<std::pair<std::string, ExprPtr>> params;
  std::vector<ExprPtr> filters;
  bool loop_recursive = false;
  Stmt(StmtKind k, uint32_t p) : kind(k), pos(p) {}
};

struct Program {
  std::string source;  // normalized
  std::string name;
  Body body;
};

}  // namespace nt::jinja

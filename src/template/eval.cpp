// template/eval.cpp — expression evaluation (names, literals, operators, calls, filters, tests).
#include <cmath>

#include "template/interp.h"

namespace nt::jinja {

Value Interp::eval_inner(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Literal: return e.literal;
    case ExprKind::Name: return lookup(e.name);
    case ExprKind::List: case ExprKind::Tuple: {
      List items;
      items.reserve(e.children.size());
      for (const auto& c : e.children) items.push_back(eval(*c));
      return Value::list(std::move(items), e.kind == ExprKind::Tuple);
    }
    case ExprKind::Dict: {
      Value d = Value::dict();
      for (size_t k = 0; k + 1 < e.children.size(); k += 2) {
        Value key = eval(*e.children[k]);
        if (key.kind == Kind::List && !key.is_tuple()) throw_type_error("unhashable type: 'list'");
        if (key.kind == Kind::Dict) throw_type_error("unhashable type: 'dict'");
        d.map().set(key, eval(*e.children[k + 1]));
      }
      d.update_depth();
      return d;
    }
    case ExprKind::Attr: {
      Value obj = eval(*e.children[0]);
      return getattr(obj, e.name);
    }
    case ExprKind::Index: {
      Value obj = eval(*e.children[0]);
      return getitem(obj, eval(*e.children[1]));
    }
    case ExprKind::Slice: {
      Value obj = eval(*e.children[0]);
      Value a = e.children[1] ? eval(*e.children[1]) : Value::none();
      Value b = e.children[2] ? eval(*e.children[2]) : Value::none();
      Value c = e.children[3] ? eval(*e.children[3]) : Value::none();
      if (obj.is_undefined()) undefined_error(obj);
      return py_slice(obj, a, b, c);
    }
    case ExprKind::Call: return eval_call(e);
    case ExprKind::Filter: {
      Value subject = eval(*e.children[0]);
      Args args;
      for (size_t k = 1; k < e.children.size(); k++) args.pos.push_back(eval(*e.children[k]));
      for (const auto& [n, x] : e.kwargs) args.kw.emplace_back(n, eval(*x));
      return apply_filter(e.name, subject, args);
    }
    case ExprKind::Test: {
      Value subject = eval(*e.children[0]);
      Args args;
      for (size_t k = 1; k < e.children.size(); k++) args.pos.push_back(eval(*e.children[k]));
      for (const auto& [n, x] : e.kwargs) args.kw.emplace_back(n, eval(*x));
      bool r = apply_test(e.name, subject, args);
      return Value::boolean(e.negated ? !r : r);
    }
    case ExprKind::Not: return Value::boolean(!truthy(eval(*e.children[0])));
    case ExprKind::Neg: case ExprKind::Pos: {
      Value v = eval(*e.children[0]);
      if (v.is_undefined()) undefined_error(v);
      if (!v.is_number()) throw_type_error(std::string("bad operand type for unary ") + (e.kind == ExprKind::Neg ? "-" : "+") + ": '" + type_name(v) + "'");
      if (e.kind == ExprKind::Pos) return v.kind == Kind::Bool ? Value::integer(v.as_int()) : v;
      if (v.kind == Kind::Float) return Value::number(-v.f);
      if (v.as_int() == INT64_MIN) throw_error("OverflowError: integer overflow");
      return Value::integer(-v.as_int());
    }
    case ExprKind::Binary: return eval_binary(e);
    case ExprKind::And: {
      Value l = eval(*e.children[0]);
      return truthy(l) ? eval(*e.children[1]) : l;
    }
    case ExprKind::Or: {
      Value l = eval(*e.children[0]);
      return truthy(l) ? l : eval(*e.children[1]);
    }
    case ExprKind::Compare: return eval_compare(e);
    case ExprKind::Cond: {
      if (truthy(eval(*e.children[1]))) return eval(*e.children[0]);
      if (e.children[2]) return eval(*e.children[2]);
      return Value::undefined("the inline if expression evaluated to false and no else section was defined.");
    }
  }
  return Value::undefined();
}

Value Interp::eval_compare(const Expr& e) {
  Value left = eval(*e.children[0]);
  for (size_t k = 0; k < e.cmp_ops.size(); k++) {
    Value right = eval(*e.children[k + 1]);
    bool r = false;
    switch (e.cmp_ops[k]) {
      case CmpOp::Eq: r = equals(left, right); break;
      case CmpOp::Ne: r = !equals(left, right); break;
      case CmpOp::Lt: r = compare(left, right) < 0; break;
      case CmpOp::Le: r = compare(left, right) <= 0; break;
      case CmpOp::Gt: r = compare(left, right) > 0; break;
      case CmpOp::Ge: r = compare(left, right) >= 0; break;
      case CmpOp::In: r = py_in(left, right); break;
      case CmpOp::NotIn: r = !py_in(left, right); break;
    }
    if (!r) return Value::boolean(false);
    left = std::move(right);
  }
  return Value::boolean(true);
}

Value Interp::eval_call(const Expr& e) {
  const Expr& callee = *e.children[0];
  Args args;
  auto eval_args = [&] {
    args.pos.reserve(e.children.size() - 1);
    for (size_t k = 1; k < e.children.size(); k++) args.pos.push_back(eval(*e.children[k]));
    for (const auto& [n, x] : e.kwargs) args.kw.emplace_back(n, eval(*x));
  };
  if (callee.kind == ExprKind::Attr) {  // obj.method(...): no bound-method object needed
    Value obj = eval(*callee.children[0]);
    if (obj.is_undefined()) undefined_error(obj);
    eval_args();
    bool found = false;
    Value r = call_method(obj, callee.name, args, found);
    if (found) return r;
    Value fn = getattr(obj, callee.name);
    return call(fn, args);
  }
  Value fn = eval(callee);
  eval_args();
  return call(fn, args);
}

Value Interp::call(const Value& fn, Args& args) {
  if (fn.kind == Kind::Func) return fn.callable().fn(*this, args);
  if (fn.is_undefined()) {
    if (fn.b) throw TemplateError(TemplateError::Kind::Security, "SecurityError: " + fn.s);
    undefined_error(fn);
  }
  throw_type_error("'" + type_name(fn) + "' object is not callable");
}

Value Interp::apply_filter(const std::string& name, const Value& subject, Args& args) {
  Value result;
  if (!run_filter(*this, name, subject, args, result)) throw_error("No filter named '" + name + "'.");
  return result;
}

bool Interp::apply_test(const std::string& name, const Value& subject, Args& args) {
  bool result = false;
  if (!run_test(*this, name, subject, args, result)) throw_error("No test named '" + name + "'.");
  return result;
}

Value Interp::call_method(const Value& obj, const std::string& name, Args& args, bool& found) {
  Value result;
  found = run_method(*this, obj, name, args, result);
  return result;
}

}  // namespace nt::jinja

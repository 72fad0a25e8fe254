// template/tests.cpp — Jinja2's tests (`x is defined`, `x is string`, ...), Python semantics.
#include <unordered_map>

#include "template/interp.h"

namespace nt::jinja {

namespace {

using TestFn = bool (*)(Interp&, const Value&, Args&);

const Value& A0(const Args& a) { return arg_at(a, 0, nullptr); }

bool t_defined(Interp&, const Value& v, Args&) { return !v.is_undefined(); }
bool t_undefined(Interp&, const Value& v, Args&) { return v.is_undefined(); }
bool t_none(Interp&, const Value& v, Args&) { return v.is_none(); }
bool t_boolean(Interp&, const Value& v, Args&) { return v.kind == Kind::Bool; }
bool t_true(Interp&, const Value& v, Args&) { return v.kind == Kind::Bool && v.b; }
bool t_false(Interp&, const Value& v, Args&) { return v.kind == Kind::Bool && !v.b; }
bool t_integer(Interp&, const Value& v, Args&) { return v.kind == Kind::Int; }
bool t_float(Interp&, const Value& v, Args&) { return v.kind == Kind::Float; }
bool t_number(Interp&, const Value& v, Args&) { return v.is_number(); }
bool t_string(Interp&, const Value& v, Args&) { return v.is_string(); }
bool t_mapping(Interp&, const Value& v, Args&) { return v.is_dict() && !v.is_namespace(); }
bool t_iterable(Interp&, const Value& v, Args&) {
  return v.is_undefined() || v.is_string() || v.kind == Kind::List || (v.is_dict() && !v.is_namespace());
}
bool t_sequence(Interp& in, const Value& v, Args& a) { return !v.is_generator() && t_iterable(in, v, a); }
bool t_callable(Interp&, const Value& v, Args&) { return v.kind == Kind::Func; }
bool t_sameas(Interp&, const Value& v, Args& a) {
  const Value& o = A0(a);
  if (v.kind != o.kind) return false;
  switch (v.kind) {
    case Kind::None: case Kind::Undefined: return true;
    case Kind::Bool: return v.b == o.b;
    case Kind::Int: return v.i == o.i && v.i >= -5 && v.i <= 256;  // CPython small-int cache
    case Kind::String: case Kind::Float: return false;
    default: return v.p == o.p;
  }
}
bool t_eq(Interp&, const Value& v, Args& a) { return equals(v, A0(a)); }
bool t_ne(Interp&, const Value& v, Args& a) { return !equals(v, A0(a)); }
bool t_lt(Interp&, const Value& v, Args& a) { return compare(v, A0(a)) < 0; }
bool t_le(Interp&, const Value& v, Args& a) { return compare(v, A0(a)) <= 0; }
bool t_gt(Interp&, const Value& v, Args& a) { return compare(v, A0(a)) > 0; }
bool t_ge(Interp&, const Value& v, Args& a) { return compare(v, A0(a)) >= 0; }
bool t_in(Interp&, const Value& v, Args& a) { return py_in(v, A0(a)); }
int64_t int_arg(const Value& v) {
  if (v.is_undefined()) undefined_error(v);
  if (!v.is_int()) throw_type_error("an integer is required, got " + type_name(v));
  return v.as_int();
}
bool t_odd(Interp&, const Value& v, Args&) { return int_arg(v) % 2 != 0; }
bool t_even(Interp&, const Value& v, Args&) { return int_arg(v) % 2 == 0; }
bool t_divisibleby(Interp&, const Value& v, Args& a) {
  int64_t d = int_arg(A0(a));
  if (d == 0) throw_error("ZeroDivisionError: integer division or modulo by zero");
  if (d == -1) return true;
  return int_arg(v) % d == 0;
}
bool t_lower(Interp&, const Value& v, Args&) {
  std::string s = to_str(v);
  return py_lower(s) == s && py_upper(s) != s;
}
bool t_upper(Interp&, const Value& v, Args&) {
  std::string s = to_str(v);
  return py_upper(s) == s && py_lower(s) != s;
}
bool t_escaped(Interp&, const Value&, Args&) { return false; }

const std::unordered_map<std::string, TestFn>& tests() {
  static const std::unordered_map<std::string, TestFn> m = {
      {"defined", t_defined}, {"undefined", t_undefined}, {"none", t_none}, {"boolean", t_boolean},
      {"true", t_true}, {"false", t_false}, {"integer", t_integer}, {"float", t_float},
      {"number", t_number}, {"string", t_string}, {"mapping", t_mapping}, {"iterable", t_iterable},
      {"sequence", t_sequence}, {"callable", t_callable}, {"sameas", t_sameas},
      {"eq", t_eq}, {"equalto", t_eq}, {"==", t_eq}, {"ne", t_ne}, {"!=", t_ne},
      {"lt", t_lt}, {"lessthan", t_lt}, {"<", t_lt}, {"le", t_le}, {"<=", t_le},
      {"gt", t_gt}, {"greaterthan", t_gt}, {">", t_gt}, {"ge", t_ge}, {">=", t_ge},
      {"in", t_in}, {"odd", t_odd}, {"even", t_even}, {"divisibleby", t_divisibleby},
      {"lower", t_lower}, {"upper", t_upper}, {"escaped", t_escaped},
  };
  return m;
}

}  // namespace

bool run_test(Interp& in, const std::string& name, const Value& v, Args& args, bool& result) {
  const auto& m = tests();
  auto it = m.find(name);
  if (it == m.end()) return false;
  result = it->second(in, v, args);
  return true;
}

}  // namespace nt::jinja

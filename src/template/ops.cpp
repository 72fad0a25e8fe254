// template/ops.cpp — Python operators and object access as Jinja2's sandbox performs them:
// arithmetic (int vs float), + and * on str/list, `in`, attribute/item lookup with Undefined
// fallbacks, iteration and slicing.
#include <cmath>
#include <optional>

#include "template/interp.h"

namespace nt::jinja {

void undefined_error(const Value& u) {
  throw TemplateError(TemplateError::Kind::Undefined,
                      "UndefinedError: " + (u.s.empty() ? std::string("value is undefined") : u.s));
}

const Value& arg_at(const Args& a, size_t idx, const char* name) {
  static const Value kUndef;
  if (idx < a.pos.size()) return a.pos[idx];
  if (name)
    if (const Value* v = a.get_kw(name)) return *v;
  return kUndef;
}

static std::string object_desc(const Value& v) {
  if (v.is_none()) return "None";
  return "'" + type_name(v) + " object'";
}

static Value missing_attr(const Value& obj, const std::string& name) {
  return Value::undefined(object_desc(obj) + " has no attribute '" + name + "'");
}

static Value loop_attr(const LoopState& l, const std::string& name, bool& found) {
  found = true;
  auto n = static_cast<int64_t>(l.seq->size());
  if (name == "index") return Value::integer(l.index0 + 1);
  if (name == "index0") return Value::integer(l.index0);
  if (name == "revindex") return Value::integer(n - l.index0);
  if (name == "revindex0") return Value::integer(n - l.index0 - 1);
  if (name == "first") return Value::boolean(l.index0 == 0);
  if (name == "last") return Value::boolean(l.index0 == n - 1);
  if (name == "length") return Value::integer(n);
  if (name == "depth") return Value::integer(l.depth0 + 1);
  if (name == "depth0") return Value::integer(l.depth0);
  if (name == "previtem")
    return l.index0 > 0 ? (*l.seq)[static_cast<size_t>(l.index0 - 1)] : Value::undefined("there is no previous item");
  if (name == "nextitem")
    return l.index0 + 1 < n ? (*l.seq)[static_cast<size_t>(l.index0 + 1)] : Value::undefined("there is no next item");
  found = false;
  return Value::undefined();
}

// A bound method value for obj.name (used when the method is read without being called).
static Value bound_method(const Value& obj, const std::string& name) {
  return make_func(name, [obj, name](Interp& in, Args& args) {
    bool found = false;
    Value r = in.call_method(obj, name, args, found);
    return r;
  });
}

Value Interp::getattr(const Value& obj, const std::string& name) {
  switch (obj.kind) {
    case Kind::Undefined: undefined_error(obj);
    case Kind::Dict: {
      if (obj.is_namespace()) {
        if (const Value* v = obj.map().find(std::string_view(name))) return *v;
        return missing_attr(obj, name);
      }
      if (has_method(obj, name)) return bound_method(obj, name);
      if (is_mutating_method(obj, name)) break;
      if (const Value* v = obj.map().find(std::string_view(name))) return *v;
      return missing_attr(obj, name);
    }
    case Kind::Loop: {
      bool found = false;
      Value v = loop_attr(obj.loop(), name, found);
      if (found) return v;
      if (has_method(obj, name)) return bound_method(obj, name);
      return missing_attr(obj, name);
    }
    default:
      if (has_method(obj, name)) return bound_method(obj, name);
      break;
  }
  if (is_mutating_method(obj, name)) {
    Value u = Value::undefined("access to attribute '" + name + "' of '" + type_name(obj) + "' object is unsafe.");
    u.b = true;
    return u;
  }
  return missing_attr(obj, name);
}

Value Interp::getitem(const Value& obj, const Value& key) {
  switch (obj.kind) {
    case Kind::Undefined: undefined_error(obj);
    case Kind::Dict:
      if (!obj.is_namespace()) {
        if (const Value* v = obj.map().find(key)) return *v;
        if (key.is_string()) return getattr(obj, key.s);
        return Value::undefined(object_desc(obj) + " has no element " + repr(key));
      }
      break;
    case Kind::List: case Kind::String:
      if (key.is_int() && !obj.is_generator()) {
        int64_t n = obj.kind == Kind::List ? static_cast<int64_t>(obj.items().size())
                                           : static_cast<int64_t>(is_ascii(obj.s) ? obj.s.size() : utf8_length(obj.s));
        int64_t i = key.as_int();
        if (i < 0) i += n;
        if (i < 0 || i >= n) return Value::undefined(object_desc(obj) + " has no element " + repr(key));
        if (obj.kind == Kind::List) return obj.items()[static_cast<size_t>(i)];
        if (is_ascii(obj.s)) return Value::string(std::string(1, obj.s[static_cast<size_t>(i)]));
        return Value::string(std::string(utf8_chars(obj.s)[static_cast<size_t>(i)]));
      }
      break;
    default: break;
  }
  if (key.is_string()) return getattr(obj, key.s);
  return Value::undefined(object_desc(obj) + " has no element " + repr(key));
}

std::vector<Value> Interp::iterate(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined: return {};
    case Kind::List: return v.items();
    case Kind::Dict: {
      if (v.is_namespace()) break;
      std::vector<Value> keys;
      keys.reserve(v.map().entries.size());
      for (const auto& [k, x] : v.map().entries) keys.push_back(k);
      return keys;
    }
    case Kind::String: {
      std::vector<Value> out;
      for (auto c : utf8_chars(v.s)) out.push_back(Value::string(std::string(c)));
      return out;
    }
    default: break;
  }
  throw_type_error("'" + type_name(v) + "' object is not iterable");
}

bool py_in(const Value& item, const Value& c) {
  switch (c.kind) {
    case Kind::Undefined: return false;
    case Kind::String:
      if (item.is_undefined()) undefined_error(item);
      if (!item.is_string()) throw_type_error("'in <string>' requires string as left operand, not " + type_name(item));
      return c.s.find(item.s) != std::string::npos;
    case Kind::List:
      for (const auto& x : c.items())
        if (equals(x, item)) return true;
      return false;
    case Kind::Dict:
      if (c.is_namespace()) break;
      return c.map().find(item) != nullptr;
    default: break;
  }
  throw_type_error("argument of type '" + type_name(c) + "' is not iterable");
}

static void overflow_error() { throw_error("OverflowError: integer result too large"); }

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

Value py_add(Interp& in, const Value& a, const Value& b) {
  if (a.is_undefined()) undefined_error(a);
  if (b.is_undefined()) undefined_error(b);
  if (a.is_number() && b.is_number()) {
    if (a.kind == Kind::Float || b.kind == Kind::Float) return Value::number(a.as_double() + b.as_double());
    int64_t r = 0;
    if (__builtin_add_overflow(a.as_int(), b.as_int(), &r)) overflow_error();
    return Value::integer(r);
  }
  if (a.is_string() && b.is_string()) {
    in.check_string(a.s.size() + b.s.size());
    if (a.is_markup() != b.is_markup())  // Markup + str escapes the plain operand
      return Value::markup((a.is_markup() ? a.s : html_escape(a.s)) + (b.is_markup() ? b.s : html_escape(b.s)));
    return a.is_markup() ? Value::markup(a.s + b.s) : Value::string(a.s + b.s);
  }
  if (a.kind == Kind::List && b.kind == Kind::List && a.is_tuple() == b.is_tuple() && !a.is_generator() && !b.is_generator()) {
    in.check_collection(a.items().size() + b.items().size());
    List l = a.items();
    l.insert(l.end(), b.items().begin(), b.items().end());
    return Value::list(std::move(l), a.is_tuple());
  }
  if (a.is_string() || b.is_string())
    throw_type_error("can only concatenate str (not \"" + type_name(a.is_string() ? b : a) + "\") to str");
  throw_type_error("unsupported operand type(s) for +: '" + type_name(a) + "' and '" + type_name(b) + "'");
}

static Value repeat(Interp& in, const Value& seq, int64_t n) {
  if (n < 0) n = 0;
  if (seq.is_string()) {
    if (n > 0 && seq.s.size() > 0) in.check_string(seq.s.size() * static_cast<size_t>(std::min<int64_t>(n, INT32_MAX)));
    std::string out;
    for (int64_t k = 0; k < n; k++) out += seq.s;
    return Value::string(std::move(out));
  }
  if (n > 0 && !seq.items().empty()) in.check_collection(seq.items().size() * static_cast<size_t>(std::min<int64_t>(n, INT32_MAX)));
  List out;
  for (int64_t k = 0; k < n; k++) out.insert(out.end(), seq.items().begin(), seq.items().end());
  return Value::list(std::move(out), seq.is_tuple());
}

Value Interp::eval_binary(const Expr& e) {
  Value a = eval(*e.children[0]);
  Value b = eval(*e.children[1]);
  if (e.op == BinOp::Concat) {
    std::string tmp_a = a.is_string() ? std::string() : to_str(a);
    std::string tmp_b = b.is_string() ? std::string() : to_str(b);
    const std::string& x = a.is_string() ? a.s : tmp_a;
    const std::string& y = b.is_string() ? b.s : tmp_b;
    check_string(x.size() + y.size());  // before allocating
    std::string s;
    s.reserve(x.size() + y.size());
    s += x;
    s += y;
    return Value::string(std::move(s));
  }
  if (e.op == BinOp::Add) return py_add(*this, a, b);
  if (a.is_undefined()) undefined_error(a);
  if (b.is_undefined()) undefined_error(b);
  static const char* const kSym[] = {"+", "-", "*", "/", "//", "%", "**", "~"};
  const char* sym = kSym[static_cast<int>(e.op)];
  if (e.op == BinOp::Mul) {
    if ((a.is_string() || a.kind == Kind::List) && b.is_int() && b.kind != Kind::Float) return repeat(*this, a, b.as_int());
    if ((b.is_string() || b.kind == Kind::List) && a.is_int() && a.kind != Kind::Float) return repeat(*this, b, a.as_int());
  }
  if (e.op == BinOp::Mod && a.is_string()) return Value::string(py_percent(*this, a.s, b));
  if (!a.is_number() || !b.is_number())
    throw_type_error(std::string("unsupported operand type(s) for ") + sym + ": '" + type_name(a) + "' and '" + type_name(b) + "'");
  bool fl = a.kind == Kind::Float || b.kind == Kind::Float;
  if (e.op == BinOp::Div) {
    if (b.as_double() == 0) throw_error("ZeroDivisionError: division by zero");
    return Value::number(a.as_double() / b.as_double());
  }
  if (fl) {
    double x = a.as_double(), y = b.as_double();
    switch (e.op) {
      case BinOp::Sub: return Value::number(x - y);
      case BinOp::Mul: return Value::number(x * y);
      case BinOp::FloorDiv:
        if (y == 0) throw_error("ZeroDivisionError: float floor division by zero");
        return Value::number(std::floor(x / y));
      case BinOp::Mod: {
        if (y == 0) throw_error("ZeroDivisionError: float modulo");
        double r = std::fmod(x, y);
        if (r != 0 && ((r < 0) != (y < 0))) r += y;
        return Value::number(r);
      }
      case BinOp::Pow: return Value::number(std::pow(x, y));
      default: break;
    }
  }
  int64_t x = a.as_int(), y = b.as_int(), r = 0;
  switch (e.op) {
    case BinOp::Sub:
      if (__builtin_sub_overflow(x, y, &r)) overflow_error();
      return Value::integer(r);
    case BinOp::Mul:
      if (__builtin_mul_overflow(x, y, &r)) overflow_error();
      return Value::integer(r);
    case BinOp::FloorDiv:
      if (y == 0) throw_error("ZeroDivisionError: integer division or modulo by zero");
      if (x == INT64_MIN && y == -1) throw_error("OverflowError: integer result too large");
      return Value::integer(floor_div(x, y));
    case BinOp::Mod:
      if (y == 0) throw_error("ZeroDivisionError: integer division or modulo by zero");
      if (y == -1) return Value::integer(0);
      return Value::integer(x - floor_div(x, y) * y);
    case BinOp::Pow: {
      if (y < 0) return Value::number(std::pow(static_cast<double>(x), static_cast<double>(y)));
      int64_t acc = 1;
      for (int64_t k = 0; k < y; k++) {
        if (__builtin_mul_overflow(acc, x, &acc)) throw_error("OverflowError: integer result too large");
        if (acc == 0 || acc == 1) break;
        if (acc == -1) { acc = ((y - k - 1) % 2 == 0) ? -1 : 1; break; }
      }
      return Value::integer(acc);
    }
    default: break;
  }
  throw_error("unsupported operator");
}

static int64_t clamp_index(int64_t i, int64_t n, bool neg_step) {
  if (i < 0) {
    i += n;
    if (i < 0) i = neg_step ? -1 : 0;
  } else if (i >= n) {
    i = neg_step ? n - 1 : n;
  }
  return i;
}

Value py_slice(const Value& v, const Value& start, const Value& stop, const Value& step_v) {
  auto as_idx = [](const Value& x, const char* what) -> std::optional<int64_t> {
    if (x.is_none() || x.is_undefined()) return std::nullopt;
    if (!x.is_int()) throw_type_error(std::string("slice ") + what + " must be an integer or None");
    return x.as_int();
  };
  int64_t step = as_idx(step_v, "step").value_or(1);
  if (step == 0) throw_error("ValueError: slice step cannot be zero");
  std::vector<std::string_view> chars;
  bool str = v.is_string(), ascii = str && is_ascii(v.s);
  if (str && !ascii) chars = utf8_chars(v.s);
  int64_t n;
  if (v.kind == Kind::List && !v.is_generator()) n = static_cast<int64_t>(v.items().size());
  else if (str) n = static_cast<int64_t>(ascii ? v.s.size() : chars.size());
  else return Value::undefined("'" + type_name(v) + "' object is not subscriptable");
  bool neg = step < 0;
  auto a0 = as_idx(start, "start"), b0 = as_idx(stop, "stop");
  int64_t a = a0 ? clamp_index(*a0, n, neg) : (neg ? n - 1 : 0);
  int64_t b = b0 ? clamp_index(*b0, n, neg) : (neg ? -1 : n);
  if (str) {
    std::string out;
    for (int64_t i = a; neg ? i > b : i < b;) {
      if (ascii) out += v.s[static_cast<size_t>(i)];
      else out.append(chars[static_cast<size_t>(i)]);
      if (__builtin_add_overflow(i, step, &i)) break;
    }
    return Value::string(std::move(out));
  }
  List out;
  for (int64_t i = a; neg ? i > b : i < b;) {
    out.push_back(v.items()[static_cast<size_t>(i)]);
    if (__builtin_add_overflow(i, step, &i)) break;
  }
  return Value::list(std::move(out), v.is_tuple());
}

}  // namespace nt::jinja

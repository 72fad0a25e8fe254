// template/value.cpp — Python semantics of runtime values: truthiness, ==, ordering, str(),
// repr(), float formatting and UTF-8 helpers. JSON in/out lives in value_json.cpp.
#include "template/value.h"
#include "template/strutil.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

namespace nt::jinja {

void throw_error(const std::string& msg) { throw TemplateError(TemplateError::Kind::Runtime, msg); }
void throw_type_error(const std::string& msg) {
  throw TemplateError(TemplateError::Kind::Runtime, "TypeError: " + msg);
}

Value Value::list(List items, bool tuple) {
  Value v;
  v.kind = Kind::List;
  v.b = tuple;
  v.p = std::make_shared<List>(std::move(items));
  v.update_depth();
  return v;
}

void Value::update_depth() {
  uint32_t d = 0;
  if (kind == Kind::List) {
    for (const Value& x : items()) d = std::max(d, x.depth);
  } else if (kind == Kind::Dict) {
    for (const auto& [k, x] : map().entries) d = std::max(d, x.depth);
  } else {
    return;
  }
  depth = d + 1;
  if (depth > kMaxNesting)
    throw TemplateError(TemplateError::Kind::Limit, "limit exceeded: values nested deeper than " + std::to_string(kMaxNesting));
}

Value Value::dict(bool namespace_) {
  Value v;
  v.kind = Kind::Dict;
  v.b = namespace_;
  v.p = std::make_shared<Dict>();
  return v;
}

const Value* Dict::find(const Value& key) const {
  if (key.kind == Kind::String) return find(std::string_view(key.s));
  for (const auto& [k, v] : entries)
    if (k.kind != Kind::String && equals(k, key)) return &v;
  return nullptr;
}

const Value* Dict::find(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k.kind == Kind::String && k.s == key) return &v;
  return nullptr;
}

void Dict::set(const Value& key, Value value) {
  for (auto& [k, v] : entries) {
    if ((k.kind == Kind::String && key.kind == Kind::String) ? k.s == key.s : equals(k, key)) {
      v = std::move(value);
      return;
    }
  }
  entries.emplace_back(key, std::move(value));
}

const Value* Args::get_kw(std::string_view name) const {
  for (const auto& [k, v] : kw)
    if (k == name) return &v;
  return nullptr;
}

bool truthy(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined: case Kind::None: return false;
    case Kind::Bool: return v.b;
    case Kind::Int: return v.i != 0;
    case Kind::Float: return v.f != 0.0;
    case Kind::String: return !v.s.empty();
    case Kind::List: return v.is_generator() || !v.items().empty();
    case Kind::Dict: return v.is_namespace() || !v.map().entries.empty();
    case Kind::Loop: case Kind::Func: return true;
  }
  return false;
}

bool equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind == Kind::Float || b.kind == Kind::Float) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Kind::Undefined: case Kind::None: return true;
    case Kind::String: return a.s == b.s;
    case Kind::List: {
      if (a.is_generator() || b.is_generator()) return a.p == b.p;
      if (a.is_tuple() != b.is_tuple()) return false;
      const List &x = a.items(), &y = b.items();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); i++)
        if (!equals(x[i], y[i])) return false;
      return true;
    }
    case Kind::Dict: {
      if (a.is_namespace() || b.is_namespace()) return a.p == b.p;
      const Dict &x = a.map(), &y = b.map();
      if (x.entries.size() != y.entries.size()) return false;
      for (const auto& [k, v] : x.entries) {
        const Value* o = y.find(k);
        if (!o || !equals(v, *o)) return false;
      }
      return true;
    }
    default: return a.p == b.p;
  }
}

int compare(const Value& a, const Value& b) {
  if (a.is_undefined() || b.is_undefined())
    throw TemplateError(TemplateError::Kind::Undefined,
                        a.is_undefined() && !a.s.empty() ? a.s : (b.s.empty() ? "value is undefined" : b.s));
  if (a.is_number() && b.is_number()) {
    if (a.kind == Kind::Float || b.kind == Kind::Float) {
      double x = a.as_double(), y = b.as_double();
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    int64_t x = a.as_int(), y = b.as_int();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (a.kind == Kind::String && b.kind == Kind::String) {
    int c = a.s.compare(b.s);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (a.kind == Kind::List && b.kind == Kind::List && a.is_tuple() == b.is_tuple()) {
    const List &x = a.items(), &y = b.items();
    for (size_t i = 0; i < x.size() && i < y.size(); i++) {
      if (equals(x[i], y[i])) continue;
      return compare(x[i], y[i]);
    }
    return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
  }
  throw_type_error("'<' not supported between instances of '" + type_name(a) + "' and '" +
                   type_name(b) + "'");
}

std::string type_name(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined: return "Undefined";
    case Kind::None: return "NoneType";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "str";
    case Kind::List: return v.is_generator() ? "generator" : v.is_tuple() ? "tuple" : "list";
    case Kind::Dict: return v.is_namespace() ? "Namespace" : "dict";
    case Kind::Loop: return "LoopContext";
    case Kind::Func: return "function";
  }
  return "object";
}

std::string float_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string sci(buf, r.ptr);  // [-]d[.ddd]e[+-]XX
  std::string sign;
  if (sci[0] == '-') { sign = "-"; sci.erase(0, 1); }
  size_t epos = sci.find('e');
  int exp = std::atoi(sci.c_str() + epos + 1);
  std::string digits;
  for (size_t k = 0; k < epos; k++)
    if (sci[k] != '.') digits += sci[k];
  std::string out = sign;
  if (exp >= -4 && exp < 16) {
    if (exp >= 0) {
      size_t int_len = static_cast<size_t>(exp) + 1;
      if (digits.size() <= int_len) {
        out += digits + std::string(int_len - digits.size(), '0') + ".0";
      } else {
        out += digits.substr(0, int_len) + "." + digits.substr(int_len);
      }
    } else {
      out += "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    }
  } else {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char e[16];
    std::snprintf(e, sizeof e, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    out += e;
  }
  return out;
}

std::string repr_string(std::string_view s) {
  char q = (s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos) ? '"' : '\'';
  std::string out(1, q);
  for (size_t i = 0; i < s.size();) {
    size_t start = i;
    uint32_t cp = decode_utf8(s, i);
    char buf[16];
    if (cp == '\\') out += "\\\\";
    else if (cp == static_cast<uint32_t>(q)) { out += '\\'; out += q; }
    else if (cp == '\n') out += "\\n";
    else if (cp == '\r') out += "\\r";
    else if (cp == '\t') out += "\\t";
    else if (cp < 0x20 || (cp >= 0x7f && cp <= 0xa0) || cp == 0xad) {
      std::snprintf(buf, sizeof buf, "\\x%02x", cp);
      out += buf;
    } else if ((cp >= 0x200b && cp <= 0x200f) || cp == 0x2028 || cp == 0x2029 || cp == 0xfeff ||
               (cp >= 0x2060 && cp <= 0x2064)) {
      std::snprintf(buf, sizeof buf, "\\u%04x", cp);
      out += buf;
    } else {
      out.append(s.substr(start, i - start));
    }
  }
  out += q;
  return out;
}

std::string repr(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined: return "Undefined";
    case Kind::String: return repr_string(v.s);
    case Kind::List: {
      if (v.is_generator()) return "<generator object>";
      const List& l = v.items();
      std::string out = v.is_tuple() ? "(" : "[";
      for (size_t k = 0; k < l.size(); k++) {
        if (k) out += ", ";
        out += repr(l[k]);
      }
      if (v.is_tuple() && l.size() == 1) out += ",";
      out += v.is_tuple() ? ")" : "]";
      return out;
    }
    case Kind::Dict: {
      std::string out = v.is_namespace() ? "<Namespace {" : "{";
      bool first = true;
      for (const auto& [k, x] : v.map().entries) {
        if (!first) out += ", ";
        first = false;
        out += repr(k) + ": " + repr(x);
      }
      out += v.is_namespace() ? "}>" : "}";
      return out;
    }
    default: return to_str(v);
  }
}

std::string to_str(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined: return "";
    case Kind::None: return "None";
    case Kind::Bool: return v.b ? "True" : "False";
    case Kind::Int: return std::to_string(v.i);
    case Kind::Float: return float_repr(v.f);
    case Kind::String: return v.s;
    case Kind::List: case Kind::Dict: return repr(v);
    case Kind::Loop: return "<LoopContext>";
    case Kind::Func: return "<function " + v.callable().name + ">";
  }
  return "";
}

size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size();) { decode_utf8(s, i); n++; }
  return n;
}

std::vector<std::string_view> utf8_chars(std::string_view s) {
  std::vector<std::string_view> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t start = i;
    decode_utf8(s, i);
    out.push_back(s.substr(start, i - start));
  }
  return out;
}

bool is_ascii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

}  // namespace nt::jinja

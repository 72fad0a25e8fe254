// template/value_json.cpp — JSON in (nlohmann -> Value, keeping key order when the input is an
// ordered_json) and JSON out with Python json.dumps semantics (what HF's tojson filter calls).
#include <algorithm>
#include <cmath>

#include "template/value.h"

namespace nt::jinja {

template <class J>
static Value from_json_impl(const J& j) {
  switch (j.type()) {
    case J::value_t::null: return Value::none();
    case J::value_t::boolean: return Value::boolean(j.template get<bool>());
    case J::value_t::number_integer: return Value::integer(j.template get<int64_t>());
    case J::value_t::number_unsigned: {
      auto u = j.template get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) return Value::integer(static_cast<int64_t>(u));
      return Value::number(static_cast<double>(u));
    }
    case J::value_t::number_float: return Value::number(j.template get<double>());
    case J::value_t::string: return Value::string(j.template get<std::string>());
    case J::value_t::array: {
      List l;
      l.reserve(j.size());
      for (const auto& x : j) l.push_back(from_json_impl(x));
      return Value::list(std::move(l));
    }
    case J::value_t::object: {
      Value d = Value::dict();
      d.map().entries.reserve(j.size());
      for (auto it = j.begin(); it != j.end(); ++it)
        d.map().entries.emplace_back(Value::string(it.key()), from_json_impl(it.value()));
      d.update_depth();
      return d;
    }
    default: return Value::none();  // binary / discarded: not produced by JSON text
  }
}

Value from_json(const nlohmann::json& j) { return from_json_impl(j); }
Value from_json(const nlohmann::ordered_json& j) { return from_json_impl(j); }

static void dump_string(std::string_view s, bool ensure_ascii, std::string& out) {
  out += '"';
  for (size_t i = 0; i < s.size(); i++) {
    auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else if (c >= 0x80 && ensure_ascii) {
          // Decode the code point and write \uXXXX (surrogate pairs above the BMP).
          uint32_t cp = c;
          size_t n = (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
          if (n > 1 && i + n <= s.size()) {
            cp = n == 2 ? (c & 0x1f) : n == 3 ? (c & 0x0f) : (c & 0x07);
            for (size_t k = 1; k < n; k++) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
            i += n - 1;
          }
          char buf[16];
          if (cp >= 0x10000) {
            cp -= 0x10000;
            std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
          } else {
            std::snprintf(buf, sizeof buf, "\\u%04x", cp);
          }
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

static std::string json_float(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x < 0 ? "-Infinity" : "Infinity";
  return float_repr(x);
}

static void newline_indent(const JsonDumpOptions& o, int level, std::string& out) {
  out += '\n';
  for (int k = 0; k < level; k++) {
    if (o.indent_is_str) out += o.indent_str;
    else out.append(static_cast<size_t>(std::max(0, o.indent)), ' ');
  }
}

static std::string json_key(const Value& k) {
  switch (k.kind) {
    case Kind::String: return k.s;
    case Kind::Bool: return k.b ? "true" : "false";
    case Kind::None: return "null";
    case Kind::Int: return std::to_string(k.i);
    case Kind::Float: return json_float(k.f);
    default: throw_type_error("keys must be str, int, float, bool or None, not " + type_name(k));
  }
}

void dump_json(const Value& v, const JsonDumpOptions& o, std::string& out, int level) {
  if (level > 500) throw_error("ValueError: JSON nesting too deep");
  if (out.size() > (256u << 20)) throw TemplateError(TemplateError::Kind::Limit, "tojson output too large");
  bool pretty = o.indent >= 0 || o.indent_is_str;
  switch (v.kind) {
    case Kind::None: out += "null"; return;
    case Kind::Bool: out += v.b ? "true" : "false"; return;
    case Kind::Int: out += std::to_string(v.i); return;
    case Kind::Float: out += json_float(v.f); return;
    case Kind::String: dump_string(v.s, o.ensure_ascii, out); return;
    case Kind::List: {
      if (v.is_generator()) break;
      const List& l = v.items();
      if (l.empty()) { out += "[]"; return; }
      out += '[';
      for (size_t k = 0; k < l.size(); k++) {
        if (k) out += o.item_sep;
        if (pretty) newline_indent(o, level + 1, out);
        dump_json(l[k], o, out, level + 1);
      }
      if (pretty) newline_indent(o, level, out);
      out += ']';
      return;
    }
    case Kind::Dict: {
      if (v.is_namespace()) break;
      const auto& entries = v.map().entries;
      if (entries.empty()) { out += "{}"; return; }
      std::vector<std::pair<std::string, const Value*>> items;
      items.reserve(entries.size());
      for (const auto& [k, x] : entries) items.emplace_back(json_key(k), &x);
      if (o.sort_keys)
        std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      out += '{';
      for (size_t k = 0; k < items.size(); k++) {
        if (k) out += o.item_sep;
        if (pretty) newline_indent(o, level + 1, out);
        dump_string(items[k].first, o.ensure_ascii, out);
        out += o.key_sep;
        dump_json(*items[k].second, o, out, level + 1);
      }
      if (pretty) newline_indent(o, level, out);
      out += '}';
      return;
    }
    default: break;
  }
  throw_type_error("Object of type " + type_name(v) + " is not JSON serializable");
}

}  // namespace nt::jinja

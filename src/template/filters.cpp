// template/filters.cpp — Jinja2's built-in filters (and HF's tojson), with Python semantics.
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "template/interp.h"
#include "template/strutil.h"

namespace nt::jinja {

namespace {

using FilterFn = Value (*)(Interp&, const Value&, Args&);

const Value& A(const Args& a, size_t i, const char* name) { return arg_at(a, i, name); }
bool flag(const Args& a, size_t i, const char* name) { return truthy(A(a, i, name)); }

std::string soft_str(const Value& v) { return v.is_string() ? v.s : to_str(v); }

// Jinja's make_attrgetter: "a.b.0" -> successive getitem.
Value get_path(Interp& in, const Value& item, const Value& attribute) {
  if (attribute.is_int()) return in.getitem(item, attribute);
  std::string path = soft_str(attribute);
  Value cur = item;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    bool numeric = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    cur = numeric ? in.getitem(cur, Value::integer(std::stoll(part))) : in.getitem(cur, Value::string(part));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return cur;
}

Value sort_key(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value::string(py_lower(v.s));
  return v;
}

Value f_length(Interp&, const Value& v, Args&) {
  switch (v.kind) {
    case Kind::Undefined: return Value::integer(0);
    case Kind::String: return Value::integer(static_cast<int64_t>(utf8_length(v.s)));
    case Kind::List:
      if (v.is_generator()) break;
      return Value::integer(static_cast<int64_t>(v.items().size()));
    case Kind::Dict:
      if (!v.is_namespace()) return Value::integer(static_cast<int64_t>(v.map().entries.size()));
      break;
    default: break;
  }
  throw_type_error("object of type '" + type_name(v) + "' has no len()");
}

Value f_tojson(Interp& in, const Value& v, Args& a) {
  JsonDumpOptions o;
  o.ensure_ascii = flag(a, 0, "ensure_ascii");
  const Value& indent = A(a, 1, "indent");
  if (indent.is_string()) { o.indent_is_str = true; o.indent_str = indent.s; }
  else if (indent.is_int()) o.indent = static_cast<int>(std::clamp<int64_t>(indent.as_int(), -1, 1000));
  else if (!indent.is_none() && !indent.is_undefined()) throw_type_error("indent must be an int or a string");
  if (o.indent < 0 && indent.is_int()) { o.indent_is_str = true; o.indent_str = ""; }
  if (o.indent >= 0 || o.indent_is_str) o.item_sep = ",";
  const Value& seps = A(a, 2, "separators");
  if (seps.kind == Kind::List) {
    if (seps.items().size() != 2 || !seps.items()[0].is_string() || !seps.items()[1].is_string())
      throw_error("ValueError: separators must be a pair of strings");
    o.item_sep = seps.items()[0].s;
    o.key_sep = seps.items()[1].s;
  }
  o.sort_keys = flag(a, 3, "sort_keys");
  std::string out;
  dump_json(v, o, out);
  in.check_string(out.size());
  return Value::string(std::move(out));
}

Value f_string(Interp&, const Value& v, Args&) { return v.is_string() ? v : Value::string(to_str(v)); }
Value f_safe(Interp&, const Value& v, Args&) { return v.is_string() ? Value::markup(v.s) : (v.is_undefined() ? Value::markup("") : Value::markup(to_str(v))); }
Value keep_markup(const Value& src, std::string s) { return src.is_markup() ? Value::markup(std::move(s)) : Value::string(std::move(s)); }
Value f_lower(Interp&, const Value& v, Args&) { return keep_markup(v, py_lower(soft_str(v))); }
Value f_upper(Interp&, const Value& v, Args&) { return keep_markup(v, py_upper(soft_str(v))); }
Value f_trim(Interp&, const Value& v, Args& a) {
  const Value& chars = A(a, 0, "chars");
  return keep_markup(v, py_strip(soft_str(v), chars.is_string() ? &chars.s : nullptr, true, true));
}
Value f_capitalize(Interp&, const Value& v, Args&) { return Value::string(py_capitalize(soft_str(v))); }
Value f_title(Interp&, const Value& v, Args&) { return Value::string(py_title(soft_str(v))); }

Value f_default(Interp&, const Value& v, Args& a) {
  bool boolean = flag(a, 1, "boolean");
  if (v.is_undefined() || (boolean && !truthy(v))) {
    const Value& d = A(a, 0, "default_value");
    return (a.pos.empty() && !a.get_kw("default_value")) ? Value::string("") : d;
  }
  return v;
}

Value f_join(Interp& in, const Value& v, Args& a) {
  const Value& sep_v = A(a, 0, "d");
  std::string sep = sep_v.is_undefined() ? "" : soft_str(sep_v);
  const Value& attr = A(a, 1, "attribute");
  std::string out;
  bool first = true;
  for (const Value& item : in.iterate(v)) {
    if (!first) out += sep;
    first = false;
    out += soft_str(attr.is_undefined() || attr.is_none() ? item : get_path(in, item, attr));
    in.check_string(out.size());
  }
  return Value::string(std::move(out));
}

Value f_items(Interp&, const Value& v, Args&) {
  if (v.is_undefined()) return Value::list();
  if (!v.is_dict() || v.is_namespace()) throw_error("FilterArgumentError: Can only get item pairs from a mapping.");
  List out;
  for (const auto& [k, x] : v.map().entries) out.push_back(Value::list({k, x}, true));
  return Value::generator(std::move(out));
}

Value f_list(Interp& in, const Value& v, Args&) { return Value::list(in.iterate(v)); }

Value f_first(Interp& in, const Value& v, Args&) {
  if (v.kind == Kind::List) return v.items().empty() ? Value::undefined("No first item, sequence was empty.") : v.items().front();
  std::vector<Value> items = in.iterate(v);
  return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
}
Value f_last(Interp& in, const Value& v, Args&) {
  if (v.kind == Kind::List) return v.items().empty() ? Value::undefined("No last item, sequence was empty.") : v.items().back();
  std::vector<Value> items = in.iterate(v);
  return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
}

Value f_replace(Interp& in, const Value& v, Args& a) {
  const Value& count = A(a, 2, "count");
  int64_t n = count.is_int() ? count.as_int() : -1;
  std::string out = py_replace(soft_str(v), soft_str(A(a, 0, "old")), soft_str(A(a, 1, "new")), n);
  in.check_string(out.size());
  return Value::string(std::move(out));
}

Value f_indent(Interp& in, const Value& v, Args& a) {
  const Value& width = A(a, 0, "width");
  std::string ind = width.is_string() ? width.s : std::string(width.is_int() ? static_cast<size_t>(std::clamp<int64_t>(width.as_int(), 0, 1000)) : 4, ' ');
  bool first = flag(a, 1, "first"), blank = flag(a, 2, "blank");
  std::string s = soft_str(v) + "\n";
  std::vector<std::string> lines = py_splitlines(s);
  std::string rv;
  if (blank) {
    for (size_t k = 0; k < lines.size(); k++) rv += (k ? "\n" + ind : "") + lines[k];
  } else if (!lines.empty()) {
    rv = lines[0];
    for (size_t k = 1; k < lines.size(); k++) rv += "\n" + (lines[k].empty() ? "" : ind + lines[k]);
  }
  if (first) rv = ind + rv;
  in.check_string(rv.size());
  return keep_markup(v, std::move(rv));
}

Value f_int(Interp&, const Value& v, Args& a) {
  const Value& def = A(a, 0, "default");
  Value d = def.is_undefined() ? Value::integer(0) : def;
  const Value& base_v = A(a, 1, "base");
  int base = base_v.is_int() ? static_cast<int>(base_v.as_int()) : 10;
  if (v.is_undefined()) undefined_error(v);
  if (v.is_int()) return Value::integer(v.as_int());
  if (v.kind == Kind::Float) {
    if (!std::isfinite(v.f) || std::fabs(v.f) > 9.2e18) return d;
    return Value::integer(static_cast<int64_t>(v.f));
  }
  if (v.is_string()) {
    int64_t r;
    if (py_parse_int(v.s, base, r)) return Value::integer(r);
    double f;
    if (py_parse_float(v.s, f) && std::isfinite(f) && std::fabs(f) < 9.2e18) return Value::integer(static_cast<int64_t>(f));
  }
  return d;
}

Value f_float(Interp&, const Value& v, Args& a) {
  const Value& def = A(a, 0, "default");
  Value d = def.is_undefined() ? Value::number(0.0) : def;
  if (v.is_undefined()) undefined_error(v);
  if (v.is_number()) return Value::number(v.as_double());
  double f;
  if (v.is_string() && py_parse_float(v.s, f)) return Value::number(f);
  return d;
}

Value f_abs(Interp&, const Value& v, Args&) {
  if (v.kind == Kind::Float) return Value::number(std::fabs(v.f));
  if (v.is_int()) {
    if (v.as_int() == INT64_MIN) throw_error("OverflowError: integer result too large");
    return Value::integer(v.as_int() < 0 ? -v.as_int() : v.as_int());
  }
  throw_type_error("bad operand type for abs(): '" + type_name(v) + "'");
}

Value f_round(Interp&, const Value& v, Args& a) {
  const Value& p = A(a, 0, "precision");
  int64_t prec = p.is_int() ? std::clamp<int64_t>(p.as_int(), -300, 300) : 0;
  std::string method = A(a, 1, "method").is_string() ? A(a, 1, "method").s : "common";
  if (!v.is_number()) throw_type_error("type " + type_name(v) + " doesn't define __round__ method");
  double scale = std::pow(10.0, static_cast<double>(prec)), x = v.as_double() * scale;
  if (method == "floor") return Value::number(std::floor(x) / scale);
  if (method == "ceil") return Value::number(std::ceil(x) / scale);
  if (method != "common") throw_error("FilterArgumentError: method must be common, ceil or floor");
  if (v.is_int() && prec >= 0) return Value::integer(v.as_int());
  double r = std::nearbyint(x) / scale;  // round-half-even, like Python
  return Value::number(r);
}

Value f_sort(Interp& in, const Value& v, Args& a) {
  bool reverse = flag(a, 0, "reverse"), cs = flag(a, 1, "case_sensitive");
  const Value& attr = A(a, 2, "attribute");
  std::vector<Value> items = in.iterate(v);
  std::vector<std::pair<Value, size_t>> keyed;
  for (size_t k = 0; k < items.size(); k++)
    keyed.emplace_back(sort_key(attr.is_undefined() || attr.is_none() ? items[k] : get_path(in, items[k], attr), cs), k);
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
    int c = compare(x.first, y.first);
    return reverse ? c > 0 : c < 0;
  });
  List out;
  for (auto& [key, k] : keyed) out.push_back(items[k]);
  return Value::list(std::move(out));
}

Value f_dictsort(Interp&, const Value& v, Args& a) {
  bool cs = flag(a, 0, "case_sensitive");
  const Value& by_v = A(a, 1, "by");
  bool by_value = by_v.is_string() && by_v.s == "value";
  if (by_v.is_string() && by_v.s != "key" && by_v.s != "value") throw_error("FilterArgumentError: You can only sort by either \"key\" or \"value\"");
  bool reverse = flag(a, 2, "reverse");
  if (v.is_undefined()) undefined_error(v);
  if (!v.is_dict() || v.is_namespace()) throw_error("AttributeError: '" + type_name(v) + "' object has no attribute 'items'");
  auto entries = v.map().entries;
  std::stable_sort(entries.begin(), entries.end(), [&](const auto& x, const auto& y) {
    int c = compare(sort_key(by_value ? x.second : x.first, cs), sort_key(by_value ? y.second : y.first, cs));
    return reverse ? c > 0 : c < 0;
  });
  List out;
  for (auto& [k, x] : entries) out.push_back(Value::list({k, x}, true));
  return Value::list(std::move(out));
}

Value f_unique(Interp& in, const Value& v, Args& a) {
  bool cs = flag(a, 0, "case_sensitive");
  const Value& attr = A(a, 1, "attribute");
  List out, seen;
  for (const Value& item : in.iterate(v)) {
    Value key = sort_key(attr.is_undefined() || attr.is_none() ? item : get_path(in, item, attr), cs);
    bool dup = false;
    for (const Value& s : seen) if (equals(s, key)) { dup = true; break; }
    if (dup) continue;
    seen.push_back(key);
    out.push_back(item);
  }
  return Value::generator(std::move(out));
}

Value min_max(Interp& in, const Value& v, Args& a, bool want_max) {
  bool cs = flag(a, 0, "case_sensitive");
  const Value& attr = A(a, 1, "attribute");
  std::vector<Value> items = in.iterate(v);
  if (items.empty()) return Value::undefined(std::string("No aggregated item, sequence was empty."));
  size_t best = 0;
  Value best_key;
  for (size_t k = 0; k < items.size(); k++) {
    Value key = sort_key(attr.is_undefined() || attr.is_none() ? items[k] : get_path(in, items[k], attr), cs);
    if (k == 0 || (want_max ? compare(key, best_key) > 0 : compare(key, best_key) < 0)) { best = k; best_key = key; }
  }
  return items[best];
}
Value f_min(Interp& in, const Value& v, Args& a) { return min_max(in, v, a, false); }
Value f_max(Interp& in, const Value& v, Args& a) { return min_max(in, v, a, true); }

Value as_generator(Value v) {
  v.i = 1;
  return v;
}

Value select_common(Interp& in, const Value& v, Args& a, bool by_attr, bool keep) {
  size_t first = by_attr ? 1 : 0;
  Value attr = by_attr ? A(a, 0, nullptr) : Value();
  std::string test = first < a.pos.size() ? soft_str(a.pos[first]) : "";
  Args targs;
  for (size_t k = first + 1; k < a.pos.size(); k++) targs.pos.push_back(a.pos[k]);
  List out;
  if (!truthy(v)) return Value::list();  // Jinja: `if value:` guards the loop
  for (const Value& item : in.iterate(v)) {
    Value subject = by_attr ? get_path(in, item, attr) : item;
    Args copy = targs;
    bool r = test.empty() ? truthy(subject) : in.apply_test(test, subject, copy);
    if (r == keep) out.push_back(item);
  }
  return Value::list(std::move(out));
}
Value f_select(Interp& in, const Value& v, Args& a) { return as_generator(select_common(in, v, a, false, true)); }
Value f_reject(Interp& in, const Value& v, Args& a) { return as_generator(select_common(in, v, a, false, false)); }
Value f_selectattr(Interp& in, const Value& v, Args& a) { return as_generator(select_common(in, v, a, true, true)); }
Value f_rejectattr(Interp& in, const Value& v, Args& a) { return as_generator(select_common(in, v, a, true, false)); }

Value f_map(Interp& in, const Value& v, Args& a) {
  List out;
  if (!truthy(v)) return Value::list();  // Jinja: `if value:` guards the loop
  if (const Value* attr = a.get_kw("attribute")) {
    const Value* def = a.get_kw("default");
    for (const Value& item : in.iterate(v)) {
      Value r = get_path(in, item, *attr);
      out.push_back(r.is_undefined() && def ? *def : r);
    }
    return Value::generator(std::move(out));
  }
  if (a.pos.empty()) throw_error("FilterArgumentError: map requires a filter argument");
  std::string filter = soft_str(a.pos[0]);
  Args fargs;
  fargs.pos.assign(a.pos.begin() + 1, a.pos.end());
  fargs.kw = a.kw;
  for (const Value& item : in.iterate(v)) {
    Args copy = fargs;
    out.push_back(in.apply_filter(filter, item, copy));
  }
  return Value::generator(std::move(out));
}

Value f_reverse(Interp& in, const Value& v, Args&) {
  if (v.is_string()) {
    auto chars = utf8_chars(v.s);
    std::string out;
    for (size_t k = chars.size(); k-- > 0;) out.append(chars[k]);
    return Value::string(std::move(out));
  }
  std::vector<Value> items = in.iterate(v);
  std::reverse(items.begin(), items.end());
  return Value::generator(std::move(items));  // reversed(): an iterator
}

Value f_sum(Interp& in, const Value& v, Args& a) {
  const Value& attr = A(a, 0, "attribute");
  const Value& start = A(a, 1, "start");
  Value acc = start.is_undefined() ? Value::integer(0) : start;
  for (const Value& item : in.iterate(v))
    acc = py_add(in, acc, attr.is_undefined() || attr.is_none() ? item : get_path(in, item, attr));
  return acc;
}

Value f_escape(Interp&, const Value& v, Args&) {
  if (v.is_markup()) return v;
  return Value::markup(html_escape(soft_str(v)));
}

Value f_forceescape(Interp&, const Value& v, Args&) { return Value::markup(html_escape(soft_str(v))); }

}  // namespace

std::string html_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

Value f_format(Interp& in, const Value& v, Args& a) {
  if (!a.kw.empty()) {
    Value d = Value::dict();
    for (auto& [k, x] : a.kw) d.map().set(k, x);
    return Value::string(py_percent(in, soft_str(v), d));
  }
  return Value::string(py_percent(in, soft_str(v), Value::list(a.pos, true)));
}

Value f_center(Interp& in, const Value& v, Args& a) {
  const Value& w = A(a, 0, "width");
  int64_t width = w.is_int() ? std::clamp<int64_t>(w.as_int(), 0, 100000) : 80;
  std::string s = soft_str(v);
  int64_t len = static_cast<int64_t>(utf8_length(s));
  if (width <= len) return Value::string(s);
  int64_t pad = width - len, left = pad / 2 + (pad & width & 1);
  return Value::string(std::string(static_cast<size_t>(left), ' ') + s + std::string(static_cast<size_t>(pad - left), ' '));
}

Value f_wordcount(Interp&, const Value& v, Args&) {
  std::string s = soft_str(v);
  int64_t n = 0;
  bool in_word = false;
  for (unsigned char c : s) {
    bool w = std::isalnum(c) || c == '_' || c >= 0x80;
    if (w && !in_word) n++;
    in_word = w;
  }
  return Value::integer(n);
}

Value f_batch(Interp& in, const Value& v, Args& a) {
  const Value& n_v = A(a, 0, "linecount");
  if (!n_v.is_int() || n_v.as_int() <= 0) throw_error("ValueError: batch linecount must be a positive integer");
  size_t n = static_cast<size_t>(n_v.as_int());
  const Value& fill = A(a, 1, "fill_with");
  List out, cur;
  for (const Value& item : in.iterate(v)) {
    cur.push_back(item);
    if (cur.size() == n) { out.push_back(Value::list(std::move(cur))); cur.clear(); }
  }
  if (!cur.empty()) {
    if (!fill.is_undefined() && !fill.is_none())
      while (cur.size() < n) cur.push_back(fill);
    out.push_back(Value::list(std::move(cur)));
  }
  return Value::generator(std::move(out));
}

Value f_attr(Interp& in, const Value& v, Args& a) { return in.getattr(v, soft_str(A(a, 0, "name"))); }
Value f_pprint(Interp&, const Value& v, Args&) { return Value::string(repr(v)); }

const std::unordered_map<std::string, FilterFn>& filters() {
  static const std::unordered_map<std::string, FilterFn> m = {
      {"length", f_length}, {"count", f_length}, {"tojson", f_tojson}, {"string", f_string},
      {"safe", f_safe}, {"lower", f_lower}, {"upper", f_upper}, {"trim", f_trim},
      {"capitalize", f_capitalize}, {"title", f_title}, {"default", f_default}, {"d", f_default},
      {"join", f_join}, {"items", f_items}, {"list", f_list}, {"first", f_first}, {"last", f_last},
      {"replace", f_replace}, {"indent", f_indent}, {"int", f_int}, {"float", f_float},
      {"abs", f_abs}, {"round", f_round}, {"sort", f_sort}, {"dictsort", f_dictsort},
      {"unique", f_unique}, {"min", f_min}, {"max", f_max}, {"select", f_select},
      {"reject", f_reject}, {"selectattr", f_selectattr}, {"rejectattr", f_rejectattr},
      {"map", f_map}, {"reverse", f_reverse}, {"sum", f_sum}, {"escape", f_escape}, {"e", f_escape},
      {"forceescape", f_forceescape}, {"format", f_format}, {"center", f_center},
      {"wordcount", f_wordcount}, {"attr", f_attr}, {"batch", f_batch}, {"pprint", f_pprint},
  };
  return m;
}

}  // namespace

bool run_filter(Interp& in, const std::string& name, const Value& v, Args& args, Value& result) {
  const auto& m = filters();
  auto it = m.find(name);
  if (it == m.end()) return false;
  result = it->second(in, v, args);
  return true;
}

}  // namespace nt::jinja

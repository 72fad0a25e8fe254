// template/methods.cpp — Python methods on str, dict and list that templates call
// (`.split()`, `.strip()`, `.get()`, `.items()`, `.format()`...), plus loop.cycle/changed.
// Mutating methods (append, pop, update, ...) are refused as HF's ImmutableSandboxedEnvironment
// refuses them: they are not found here, and reading them yields an unsafe Undefined.
#include <algorithm>
#include <cstring>

#include "template/interp.h"

namespace nt::jinja {

namespace {

const char* const kStrMethods[] = {
    "split", "rsplit", "strip", "lstrip", "rstrip", "startswith", "endswith", "replace", "upper",
    "lower", "title", "capitalize", "format", "find", "rfind", "index", "rindex", "count", "join",
    "isdigit", "isalpha", "isalnum", "isspace", "isupper", "islower", "isnumeric", "isdecimal",
    "splitlines", "partition", "rpartition", "zfill", "casefold", "swapcase", "removeprefix",
    "removesuffix", "center", "ljust", "rjust", "istitle", "expandtabs"};
const char* const kDictMethods[] = {"get", "items", "keys", "values", "copy"};
const char* const kListMethods[] = {"index", "count", "copy"};
const char* const kMutList[] = {"append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear"};
const char* const kMutDict[] = {"clear", "pop", "popitem", "setdefault", "update"};

template <size_t N>
bool in_list(const char* const (&list)[N], const std::string& name) {
  for (const char* m : list) if (name == m) return true;
  return false;
}

const Value& A(const Args& a, size_t i, const char* name = nullptr) { return arg_at(a, i, name); }
const std::string* opt_str(const Value& v) { return v.is_string() ? &v.s : nullptr; }
int64_t opt_int(const Value& v, int64_t def) { return v.is_int() ? v.as_int() : def; }

Value str_list(std::vector<std::string> parts) {
  List l;
  l.reserve(parts.size());
  for (auto& p : parts) l.push_back(Value::string(std::move(p)));
  return Value::list(std::move(l));
}

bool affix_match(const std::string& s, const Value& affix, bool prefix) {
  auto one = [&](const Value& x) {
    if (!x.is_string()) throw_type_error(std::string(prefix ? "startswith" : "endswith") + " first arg must be str or a tuple of str, not " + type_name(x));
    if (x.s.size() > s.size()) return false;
    return prefix ? s.compare(0, x.s.size(), x.s) == 0 : s.compare(s.size() - x.s.size(), x.s.size(), x.s) == 0;
  };
  if (affix.kind == Kind::List && affix.is_tuple()) {
    for (const Value& x : affix.items()) if (one(x)) return true;
    return false;
  }
  return one(affix);
}

template <class Pred>
bool all_chars(const std::string& s, Pred p) {
  if (s.empty()) return false;
  for (unsigned char c : s) if (!p(c)) return false;
  return true;
}

Value str_method(Interp& in, const std::string& s, const std::string& name, Args& a) {
  if (name == "split" || name == "rsplit") {
    const Value& sep = A(a, 0, "sep");
    if (sep.is_string() && sep.s.empty()) throw_error("ValueError: empty separator");
    int64_t maxsplit = opt_int(A(a, 1, "maxsplit"), -1);
    return str_list(name == "split" ? py_split(s, opt_str(sep), maxsplit) : py_rsplit(s, opt_str(sep), maxsplit));
  }
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    const Value& chars = A(a, 0, "chars");
    return Value::string(py_strip(s, opt_str(chars), name != "rstrip", name != "lstrip"));
  }
  if (name == "startswith" || name == "endswith") return Value::boolean(affix_match(s, A(a, 0), name == "startswith"));
  if (name == "replace") {
    const Value &o = A(a, 0), &n = A(a, 1);
    if (!o.is_string() || !n.is_string()) throw_type_error("replace() arguments must be str");
    std::string out = py_replace(s, o.s, n.s, opt_int(A(a, 2, "count"), -1));
    in.check_string(out.size());
    return Value::string(std::move(out));
  }
  if (name == "upper") return Value::string(py_upper(s));
  if (name == "lower" || name == "casefold") return Value::string(py_lower(s));
  if (name == "title") return Value::string(py_title(s));
  if (name == "capitalize") return Value::string(py_capitalize(s));
  if (name == "swapcase") {
    std::string out = s;
    for (char& c : out) c = (c >= 'a' && c <= 'z') ? c - 32 : (c >= 'A' && c <= 'Z') ? c + 32 : c;
    return Value::string(out);
  }
  if (name == "format") return Value::string(py_format(in, s, a));
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex") {
    const Value& sub = A(a, 0);
    if (!sub.is_string()) throw_type_error("must be str, not " + type_name(sub));
    size_t f = (name[0] == 'r') ? s.rfind(sub.s) : s.find(sub.s);
    if (f == std::string::npos) {
      if (name == "index" || name == "rindex") throw_error("ValueError: substring not found");
      return Value::integer(-1);
    }
    return Value::integer(static_cast<int64_t>(utf8_length(std::string_view(s).substr(0, f))));
  }
  if (name == "count") {
    const Value& sub = A(a, 0);
    if (!sub.is_string()) throw_type_error("must be str, not " + type_name(sub));
    if (sub.s.empty()) return Value::integer(static_cast<int64_t>(utf8_length(s) + 1));
    int64_t n = 0;
    for (size_t p = s.find(sub.s); p != std::string::npos; p = s.find(sub.s, p + sub.s.size())) n++;
    return Value::integer(n);
  }
  if (name == "join") {
    std::string out;
    bool first = true;
    for (const Value& x : in.iterate(A(a, 0))) {
      if (!x.is_string()) throw_type_error("sequence item: expected str instance, " + type_name(x) + " found");
      if (!first) out += s;
      first = false;
      out += x.s;
      in.check_string(out.size());
    }
    return Value::string(std::move(out));
  }
  if (name == "isdigit" || name == "isnumeric" || name == "isdecimal")
    return Value::boolean(all_chars(s, [](unsigned char c) { return c >= '0' && c <= '9'; }));
  if (name == "isalpha") return Value::boolean(all_chars(s, [](unsigned char c) { return std::isalpha(c) || c >= 0x80; }));
  if (name == "isalnum") return Value::boolean(all_chars(s, [](unsigned char c) { return std::isalnum(c) || c >= 0x80; }));
  if (name == "isspace") return Value::boolean(all_chars(s, [](unsigned char c) { return py_is_space(c); }));
  if (name == "isupper") return Value::boolean(py_upper(s) == s && py_lower(s) != s);
  if (name == "islower") return Value::boolean(py_lower(s) == s && py_upper(s) != s);
  if (name == "istitle") return Value::boolean(py_title(s) == s && py_lower(s) != s);
  if (name == "splitlines") return str_list(py_splitlines(s, truthy(A(a, 0, "keepends"))));
  if (name == "partition" || name == "rpartition") {
    const Value& sep = A(a, 0);
    if (!sep.is_string() || sep.s.empty()) throw_error("ValueError: empty separator");
    size_t f = name == "partition" ? s.find(sep.s) : s.rfind(sep.s);
    if (f == std::string::npos)
      return name == "partition" ? Value::list({Value::string(s), Value::string(""), Value::string("")}, true)
                                 : Value::list({Value::string(""), Value::string(""), Value::string(s)}, true);
    return Value::list({Value::string(s.substr(0, f)), sep, Value::string(s.substr(f + sep.s.size()))}, true);
  }
  if (name == "removeprefix" || name == "removesuffix") {
    const Value& x = A(a, 0);
    if (!x.is_string()) throw_type_error("must be str, not " + type_name(x));
    if (name == "removeprefix") return Value::string(s.rfind(x.s, 0) == 0 ? s.substr(x.s.size()) : s);
    return Value::string(x.s.size() <= s.size() && s.compare(s.size() - x.s.size(), x.s.size(), x.s) == 0 ? s.substr(0, s.size() - x.s.size()) : s);
  }
  if (name == "zfill" || name == "center" || name == "ljust" || name == "rjust") {
    int64_t width = std::clamp<int64_t>(opt_int(A(a, 0), 0), 0, 100000);
    std::string fill = name == "zfill" ? "0" : (A(a, 1).is_string() ? A(a, 1).s : " ");
    int64_t len = static_cast<int64_t>(utf8_length(s));
    if (width <= len) return Value::string(s);
    int64_t pad = width - len;
    auto rep = [&](int64_t n) { std::string r; for (int64_t k = 0; k < n; k++) r += fill; return r; };
    if (name == "ljust") return Value::string(s + rep(pad));
    if (name == "rjust") return Value::string(rep(pad) + s);
    if (name == "zfill") {
      if (!s.empty() && (s[0] == '-' || s[0] == '+')) return Value::string(s.substr(0, 1) + rep(pad) + s.substr(1));
      return Value::string(rep(pad) + s);
    }
    int64_t left = pad / 2 + (pad & width & 1);
    return Value::string(rep(left) + s + rep(pad - left));
  }
  if (name == "expandtabs") return Value::string(py_replace(s, "\t", "        ", -1));
  throw_error("unsupported str method '" + name + "'");
}

Value dict_method(const Value& d, const std::string& name, Args& a) {
  if (name == "get") {
    const Value* v = d.map().find(A(a, 0, "key"));
    if (v) return *v;
    return a.pos.size() > 1 ? a.pos[1] : (a.get_kw("default") ? *a.get_kw("default") : Value::none());
  }
  List out;
  for (const auto& [k, v] : d.map().entries) {
    if (name == "items") out.push_back(Value::list({k, v}, true));
    else if (name == "keys") out.push_back(k);
    else if (name == "values") out.push_back(v);
  }
  if (name == "copy") {
    Value c = Value::dict();
    c.map() = d.map();
    c.depth = d.depth;
    return c;
  }
  return Value::list(std::move(out));
}

Value list_method(const Value& l, const std::string& name, Args& a) {
  const List& items = l.items();
  if (name == "copy") return Value::list(items, l.is_tuple());
  const Value& x = A(a, 0);
  if (name == "count") {
    int64_t n = 0;
    for (const Value& v : items) n += equals(v, x) ? 1 : 0;
    return Value::integer(n);
  }
  for (size_t k = 0; k < items.size(); k++)
    if (equals(items[k], x)) return Value::integer(static_cast<int64_t>(k));
  throw_error("ValueError: " + repr(x) + " is not in list");
}

}  // namespace

bool has_method(const Value& obj, const std::string& name) {
  switch (obj.kind) {
    case Kind::String: return in_list(kStrMethods, name);
    case Kind::Dict: return !obj.is_namespace() && in_list(kDictMethods, name);
    case Kind::List: return in_list(kListMethods, name);
    case Kind::Loop: return name == "cycle" || name == "changed";
    default: return false;
  }
}

bool is_mutating_method(const Value& obj, const std::string& name) {
  if (obj.kind == Kind::List) return !obj.is_tuple() && in_list(kMutList, name);
  if (obj.kind == Kind::Dict) return !obj.is_namespace() && in_list(kMutDict, name);
  return false;
}

bool run_method(Interp& in, const Value& obj, const std::string& name, Args& args, Value& result) {
  if (!has_method(obj, name)) return false;
  switch (obj.kind) {
    case Kind::String:
      result = str_method(in, obj.s, name, args);
      if (obj.is_markup() && result.is_string()) result.b = true;  // Markup methods return Markup
      return true;
    case Kind::Dict: result = dict_method(obj, name, args); return true;
    case Kind::List: result = list_method(obj, name, args); return true;
    case Kind::Loop: {
      LoopState& l = obj.loop();
      if (name == "cycle") {
        if (args.pos.empty()) throw_type_error("no items for cycling given");
        result = args.pos[static_cast<size_t>(l.index0) % args.pos.size()];
        return true;
      }
      Value cur = Value::list(args.pos, true);
      bool changed = !l.changed_seen || !equals(cur, l.changed_last);
      l.changed_seen = true;
      l.changed_last = cur;
      result = Value::boolean(changed);
      return true;
    }
    default: return false;
  }
}

}  // namespace nt::jinja

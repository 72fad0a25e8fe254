// template/globals.cpp — global functions (range, namespace, dict, raise_exception,
// strftime_now) and Python string formatting (str.format and the % operator).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "template/interp.h"

namespace nt::jinja {

namespace {

constexpr int64_t kMaxRange = 100000;  // Jinja2 sandbox MAX_RANGE

Value g_range(Interp& in, Args& a) {
  if (!a.kw.empty()) throw_type_error("range() takes no keyword arguments");
  if (a.pos.empty() || a.pos.size() > 3) throw_type_error("range expected 1 to 3 arguments, got " + std::to_string(a.pos.size()));
  for (const Value& v : a.pos) {
    if (v.is_undefined()) undefined_error(v);
    if (!v.is_int()) throw_type_error("'" + type_name(v) + "' object cannot be interpreted as an integer");
  }
  int64_t start = 0, stop, step = 1;
  if (a.pos.size() == 1) stop = a.pos[0].as_int();
  else { start = a.pos[0].as_int(); stop = a.pos[1].as_int(); }
  if (a.pos.size() == 3) step = a.pos[2].as_int();
  if (step == 0) throw_error("ValueError: range() arg 3 must not be zero");
  // Length computed in long double to avoid overflow on extreme bounds.
  long double span = step > 0 ? (long double)stop - start : (long double)start - stop;
  long double n = span <= 0 ? 0 : std::ceil(span / std::fabs((long double)step));
  if (n > kMaxRange) throw_error("OverflowError: Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
  List out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t k = 0, v = start; k < static_cast<int64_t>(n); k++, v += step) {
    in.step();
    out.push_back(Value::integer(v));
  }
  return Value::list(std::move(out));
}

Value g_namespace(Interp&, Args& a) {
  Value ns = Value::dict(true);
  for (const Value& p : a.pos) {
    if (!p.is_dict()) throw_type_error("namespace() positional argument must be a mapping");
    for (const auto& [k, v] : p.map().entries) ns.map().set(k, v);
  }
  for (auto& [k, v] : a.kw) ns.map().set(k, v);
  ns.update_depth();
  return ns;
}

Value g_dict(Interp&, Args& a) {
  Value d = Value::dict();
  for (const Value& p : a.pos) {
    if (!p.is_dict()) throw_type_error("dict() positional argument must be a mapping");
    for (const auto& [k, v] : p.map().entries) d.map().set(k, v);
  }
  for (auto& [k, v] : a.kw) d.map().set(k, v);
  d.update_depth();
  return d;
}

Value g_raise(Interp&, Args& a) {
  const Value& msg = arg_at(a, 0, "message");
  throw TemplateError(TemplateError::Kind::Raised, to_str(msg));
}

Value g_strftime(Interp& in, Args& a) {
  const Value& fmt = arg_at(a, 0, "format");
  if (!fmt.is_string()) throw_type_error("strftime() argument 1 must be str, not " + type_name(fmt));
  if (fmt.s.empty()) return Value::string("");
  if (fmt.s.size() > 4096) in.limit_error("strftime format too long");
  std::vector<char> buf(fmt.s.size() * 16 + 64);
  size_t n = std::strftime(buf.data(), buf.size(), fmt.s.c_str(), &in.now());
  return Value::string(std::string(buf.data(), n));
}

}  // namespace

Value global_function(const std::string& name) {
  static const Value range = make_func("range", g_range);
  static const Value ns = make_func("namespace", g_namespace);
  static const Value dict = make_func("dict", g_dict);
  static const Value raise = make_func("raise_exception", g_raise);
  static const Value strftime = make_func("strftime_now", g_strftime);
  if (name == "range") return range;
  if (name == "namespace") return ns;
  if (name == "dict") return dict;
  if (name == "raise_exception") return raise;
  if (name == "strftime_now") return strftime;
  return Value::undefined();
}

// ---- Python format specs -------------------------------------------------------------------

namespace {

struct Spec {
  char fill = ' ', align = 0, sign = '-', type = 0;
  bool alt = false, zero = false, comma = false;
  int width = -1, precision = -1;
};

Spec parse_spec(const std::string& s) {
  Spec sp;
  size_t i = 0;
  auto is_align = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
  if (s.size() >= 2 && is_align(s[1])) { sp.fill = s[0]; sp.align = s[1]; i = 2; }
  else if (!s.empty() && is_align(s[0])) { sp.align = s[0]; i = 1; }
  if (i < s.size() && (s[i] == '+' || s[i] == '-' || s[i] == ' ')) sp.sign = s[i++];
  if (i < s.size() && s[i] == '#') { sp.alt = true; i++; }
  if (i < s.size() && s[i] == '0') { sp.zero = true; i++; }
  int w = 0; bool has_w = false;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) { w = std::min(w * 10 + (s[i++] - '0'), 100000); has_w = true; }
  if (has_w) sp.width = w;
  if (i < s.size() && (s[i] == ',' || s[i] == '_')) { sp.comma = true; i++; }
  if (i < s.size() && s[i] == '.') {
    i++;
    int p = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) p = std::min(p * 10 + (s[i++] - '0'), 1000);
    sp.precision = p;
  }
  if (i < s.size()) sp.type = s[i++];
  if (i != s.size()) throw_error("ValueError: Invalid format specifier '" + s + "'");
  return sp;
}

std::string pad(const std::string& body, const Spec& sp, bool numeric) {
  int64_t len = static_cast<int64_t>(utf8_length(body));
  if (sp.width <= len) return body;
  size_t n = static_cast<size_t>(sp.width - len);
  char align = sp.align ? sp.align : (numeric ? '>' : '<');
  char fill = sp.fill;
  if (sp.zero && !sp.align && numeric) { align = '='; fill = '0'; }
  if (align == '<') return body + std::string(n, fill);
  if (align == '>') return std::string(n, fill) + body;
  if (align == '^') return std::string(n / 2, fill) + body + std::string(n - n / 2, fill);
  size_t sign_len = (!body.empty() && (body[0] == '-' || body[0] == '+' || body[0] == ' ')) ? 1 : 0;
  return body.substr(0, sign_len) + std::string(n, fill) + body.substr(sign_len);
}

std::string format_value(const Value& v, const std::string& spec_s) {
  if (spec_s.empty()) return to_str(v);
  Spec sp = parse_spec(spec_s);
  char t = sp.type;
  if (v.is_number() && (t == 0 || std::strchr("dfFeEgG%xXobn", t))) {
    std::string body;
    bool neg = false;
    if (v.kind != Kind::Float && (t == 0 || std::strchr("dxXobn", t))) {
      int64_t x = v.as_int();
      neg = x < 0;
      uint64_t ux = neg ? 0 - static_cast<uint64_t>(x) : static_cast<uint64_t>(x);
      char buf[80];
      if (t == 'x' || t == 'X') std::snprintf(buf, sizeof buf, t == 'x' ? "%llx" : "%llX", (unsigned long long)ux);
      else if (t == 'o') std::snprintf(buf, sizeof buf, "%llo", (unsigned long long)ux);
      else if (t == 'b') { std::string b; do { b.insert(b.begin(), char('0' + (ux & 1))); ux >>= 1; } while (ux); std::snprintf(buf, sizeof buf, "%s", b.c_str()); }
      else std::snprintf(buf, sizeof buf, "%llu", (unsigned long long)ux);
      body = buf;
      if (sp.comma && (t == 0 || t == 'd' || t == 'n'))
        for (int k = static_cast<int>(body.size()) - 3; k > 0; k -= 3) body.insert(static_cast<size_t>(k), ",");
    } else {
      if (t == 'd' || t == 'x' || t == 'X' || t == 'o' || t == 'b') throw_error("ValueError: Unknown format code '" + std::string(1, t) + "' for object of type 'float'");
      double x = v.as_double();
      neg = std::signbit(x);
      x = std::fabs(x);
      int prec = sp.precision < 0 ? 6 : sp.precision;
      char buf[1200];
      if (t == 0 && sp.precision < 0) { std::snprintf(buf, sizeof buf, "%s", float_repr(x).c_str()); }
      else if (t == '%') { std::snprintf(buf, sizeof buf, "%.*f%%", prec, x * 100); }
      else { char f[8] = {'%', '.', '*', t ? t : 'g', 0}; std::snprintf(buf, sizeof buf, f, prec, x); }
      body = buf;
    }
    if (neg) body = "-" + body;
    else if (sp.sign == '+') body = "+" + body;
    else if (sp.sign == ' ') body = " " + body;
    return pad(body, sp, true);
  }
  if (t != 0 && t != 's') throw_error("ValueError: Unknown format code '" + std::string(1, t) + "' for object of type '" + type_name(v) + "'");
  std::string s = to_str(v);
  if (sp.precision >= 0) {
    auto chars = utf8_chars(s);
    if (chars.size() > static_cast<size_t>(sp.precision)) {
      std::string cut;
      for (int k = 0; k < sp.precision; k++) cut.append(chars[static_cast<size_t>(k)]);
      s = cut;
    }
  }
  return pad(s, sp, false);
}

}  // namespace

std::string py_format(Interp& in, const std::string& fmt, Args& args) {
  std::string out;
  size_t auto_idx = 0;
  for (size_t i = 0; i < fmt.size(); i++) {
    char c = fmt[i];
    if (c == '}') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}') { out += '}'; i++; continue; }
      throw_error("ValueError: Single '}' encountered in format string");
    }
    if (c != '{') { out += c; continue; }
    if (i + 1 < fmt.size() && fmt[i + 1] == '{') { out += '{'; i++; continue; }
    size_t close = fmt.find('}', i);
    if (close == std::string::npos) throw_error("ValueError: Single '{' encountered in format string");
    std::string field = fmt.substr(i + 1, close - i - 1);
    i = close;
    std::string spec, conv;
    if (size_t colon = field.find(':'); colon != std::string::npos) { spec = field.substr(colon + 1); field.resize(colon); }
    if (size_t bang = field.find('!'); bang != std::string::npos) { conv = field.substr(bang + 1); field.resize(bang); }
    size_t name_end = std::min(field.find('.'), field.find('['));
    std::string head = field.substr(0, name_end);
    Value v;
    if (head.empty()) {
      if (auto_idx >= args.pos.size()) throw_error("IndexError: Replacement index " + std::to_string(auto_idx) + " out of range for positional args tuple");
      v = args.pos[auto_idx++];
    } else if (std::all_of(head.begin(), head.end(), [](char d) { return d >= '0' && d <= '9'; })) {
      size_t idx = std::stoul(head.substr(0, 9));
      if (idx >= args.pos.size()) throw_error("IndexError: Replacement index " + head + " out of range for positional args tuple");
      v = args.pos[idx];
    } else {
      const Value* kv = args.get_kw(head);
      if (!kv) throw_error("KeyError: '" + head + "'");
      v = *kv;
    }
    std::string rest = name_end == std::string::npos ? "" : field.substr(name_end);
    while (!rest.empty()) {
      if (rest[0] == '.') {
        size_t e = std::min(rest.find('.', 1), rest.find('['));
        v = in.getattr(v, rest.substr(1, e == std::string::npos ? std::string::npos : e - 1));
        rest = e == std::string::npos ? "" : rest.substr(e);
      } else {
        size_t e = rest.find(']');
        if (e == std::string::npos) throw_error("ValueError: Missing ']' in format string");
        std::string key = rest.substr(1, e - 1);
        bool num = !key.empty() && std::all_of(key.begin(), key.end(), [](char d) { return d >= '0' && d <= '9'; });
        v = in.getitem(v, num ? Value::integer(std::stoll(key.substr(0, 15))) : Value::string(key));
        rest = rest.substr(e + 1);
      }
    }
    if (conv == "r") v = Value::string(repr(v));
    else if (conv == "s") v = Value::string(to_str(v));
    out += format_value(v, spec);
    in.check_string(out.size());
  }
  return out;
}

std::string py_percent(Interp& in, const std::string& fmt, const Value& args) {
  std::vector<Value> items;
  bool is_tuple = args.kind == Kind::List && args.is_tuple();
  if (is_tuple) items = args.items();
  else items.push_back(args);
  size_t next = 0;
  std::string out;
  for (size_t i = 0; i < fmt.size(); i++) {
    if (fmt[i] != '%') { out += fmt[i]; continue; }
    if (++i >= fmt.size()) throw_error("ValueError: incomplete format");
    if (fmt[i] == '%') { out += '%'; continue; }
    Value v;
    bool have = false;
    if (fmt[i] == '(') {
      size_t e = fmt.find(')', i);
      if (e == std::string::npos) throw_error("ValueError: incomplete format key");
      if (!args.is_dict()) throw_type_error("format requires a mapping");
      const Value* kv = args.map().find(std::string_view(fmt).substr(i + 1, e - i - 1));
      if (!kv) throw_error("KeyError: '" + fmt.substr(i + 1, e - i - 1) + "'");
      v = *kv;
      have = true;
      i = e + 1;
    }
    std::string flags;
    while (i < fmt.size() && std::strchr("-+ #0", fmt[i]) && fmt[i]) flags += fmt[i++];
    std::string width, prec;
    while (i < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[i]))) width += fmt[i++];
    if (i < fmt.size() && fmt[i] == '.') { i++; prec = "."; while (i < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[i]))) prec += fmt[i++]; }
    if (i >= fmt.size()) throw_error("ValueError: incomplete format");
    char conv = fmt[i];
    if (!have) {
      if (next >= items.size()) throw_type_error("not enough arguments for format string");
      v = items[next++];
    }
    Spec sp;
    sp.width = width.empty() ? -1 : std::min(std::stoi(width.substr(0, 6)), 100000);
    sp.precision = prec.size() > 1 ? std::min(std::stoi(prec.substr(1, 6)), 1000) : (prec.empty() ? -1 : 0);
    if (flags.find('-') != std::string::npos) sp.align = '<';
    if (flags.find('+') != std::string::npos) sp.sign = '+';
    else if (flags.find(' ') != std::string::npos) sp.sign = ' ';
    if (flags.find('0') != std::string::npos && !sp.align) sp.zero = true;
    std::string spec;
    if (conv == 's' || conv == 'r' || conv == 'a') {
      std::string s = conv == 's' ? to_str(v) : repr(v);
      Spec ss = sp;
      ss.zero = false;
      if (!ss.align) ss.align = '>';
      if (ss.precision >= 0) {
        auto chars = utf8_chars(s);
        if (chars.size() > static_cast<size_t>(ss.precision)) {
          std::string cut;
          for (int k = 0; k < ss.precision; k++) cut.append(chars[static_cast<size_t>(k)]);
          s = cut;
        }
      }
      out += pad(s, ss, false);
    } else if (std::strchr("diouxXeEfFgGc", conv)) {
      if (!v.is_number()) throw_type_error(std::string("%") + conv + " format: a real number is required, not " + type_name(v));
      if (conv == 'c') { out += static_cast<char>(v.as_int() & 0x7f); continue; }
      char t = (conv == 'i' || conv == 'u') ? 'd' : conv;
      Value num = (t == 'd' || t == 'x' || t == 'X' || t == 'o') && v.kind == Kind::Float
                      ? Value::integer(static_cast<int64_t>(std::trunc(std::clamp(v.f, -9.2e18, 9.2e18)))) : v;
      if ((t == 'd' || t == 'x' || t == 'X' || t == 'o')) sp.precision = -1;
      sp.type = t;
      std::string body = format_value(num, std::string(1, t));
      if (sp.sign == '+' && body[0] != '-') body = "+" + body;
      else if (sp.sign == ' ' && body[0] != '-') body = " " + body;
      if (std::strchr("eEfFgG", t)) {
        char buf[1200];
        char f[8] = {'%', '.', '*', t, 0};
        double x = num.as_double();
        std::snprintf(buf, sizeof buf, f, sp.precision < 0 ? 6 : sp.precision, std::fabs(x));
        body = std::string(std::signbit(x) ? "-" : (sp.sign == '+' ? "+" : (sp.sign == ' ' ? " " : ""))) + buf;
      }
      if (!sp.align) sp.align = sp.zero ? 0 : '>';
      out += pad(body, sp, true);
    } else {
      throw_error(std::string("ValueError: unsupported format character '") + conv + "'");
    }
    in.check_string(out.size());
  }
  if (!items.empty() && is_tuple && next < items.size() && !args.is_dict())
    throw_type_error("not all arguments converted during string formatting");
  if (!is_tuple && !args.is_dict() && next == 0 && items.size() == 1)
    throw_type_error("not all arguments converted during string formatting");
  return out;
}

}  // namespace nt::jinja

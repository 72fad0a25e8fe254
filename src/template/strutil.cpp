// template/strutil.cpp — Python str semantics over UTF-8 (see strutil.h).
#include "template/strutil.h"

#include <cerrno>
#include <cstdlib>

#include "template/value.h"

namespace nt::jinja {

uint32_t decode_utf8(std::string_view s, size_t& i) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (n == 0 || i + n > s.size()) { i++; return c; }
  uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1f) : n == 3 ? (c & 0x0f) : (c & 0x07);
  for (size_t k = 1; k < n; k++) {
    auto d = static_cast<unsigned char>(s[i + k]);
    if ((d >> 6) != 2) { i++; return c; }
    cp = (cp << 6) | (d & 0x3f);
  }
  i += n;
  return cp;
}
namespace {
bool is_alpha_ascii(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
}  // namespace

bool py_is_space(uint32_t cp) {
  return cp == ' ' || (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x1f) || cp == 0x85 || cp == 0xa0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 || cp == 0x202f ||
         cp == 0x205f || cp == 0x3000;
}

std::string py_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}
std::string py_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}
std::string py_capitalize(std::string_view s) {
  std::string out = py_lower(s);
  if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 'a' + 'A');
  return out;
}
// Jinja's title filter: words start after [-\s({\[<]; first char upper, rest lower.
std::string py_title(std::string_view s) {
  std::string out;
  bool start = true;
  for (char c : s) {
    bool sep = c == '-' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' ||
               c == '(' || c == '{' || c == '[' || c == '<';
    if (sep) { out += c; start = true; continue; }
    if (start && c >= 'a' && c <= 'z') out += static_cast<char>(c - 'a' + 'A');
    else if (!start && c >= 'A' && c <= 'Z') out += static_cast<char>(c - 'A' + 'a');
    else out += c;
    start = false;
  }
  return out;
}

std::string py_strip(std::string_view s, const std::string* chars, bool left, bool right) {
  std::vector<uint32_t> set;
  if (chars)
    for (size_t i = 0; i < chars->size();) set.push_back(decode_utf8(*chars, i));
  auto strip_cp = [&](uint32_t cp) {
    if (!chars) return py_is_space(cp);
    for (uint32_t x : set) if (x == cp) return true;
    return false;
  };
  size_t b = 0, e = s.size();
  if (left) {
    while (b < e) {
      size_t i = b;
      uint32_t cp = decode_utf8(s, i);
      if (!strip_cp(cp)) break;
      b = i;
    }
  }
  if (right) {
    while (e > b) {
      size_t start = e - 1;
      while (start > b && (static_cast<unsigned char>(s[start]) & 0xc0) == 0x80) start--;
      size_t i = start;
      uint32_t cp = decode_utf8(s, i);
      if (i != e) { start = e - 1; i = start; cp = decode_utf8(s, i); }
      if (!strip_cp(cp)) break;
      e = start;
    }
  }
  return std::string(s.substr(b, e - b));
}

std::string py_replace(std::string_view s, std::string_view old, std::string_view repl, int64_t count) {
  std::string out;
  if (old.empty()) {
    auto chars = utf8_chars(s);
    int64_t done = 0;
    for (size_t k = 0; k <= chars.size(); k++) {
      if (count < 0 || done < count) { out.append(repl); done++; }
      if (k < chars.size()) out.append(chars[k]);
    }
    return out;
  }
  size_t pos = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    size_t f = s.find(old, pos);
    if (f == std::string_view::npos) break;
    out.append(s.substr(pos, f - pos));
    out.append(repl);
    pos = f + old.size();
    done++;
  }
  out.append(s.substr(pos));
  return out;
}

std::vector<std::string> py_split(std::string_view s, const std::string* sep, int64_t maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    size_t pos = 0;
    while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
      size_t f = s.find(*sep, pos);
      if (f == std::string_view::npos) break;
      out.emplace_back(s.substr(pos, f - pos));
      pos = f + sep->size();
    }
    out.emplace_back(s.substr(pos));
    return out;
  }
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i;
    uint32_t cp = decode_utf8(s, j);
    if (py_is_space(cp)) { i = j; continue; }
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit) {
      out.push_back(py_strip(s.substr(i), nullptr, false, true));
      return out;
    }
    size_t start = i;
    while (i < s.size()) {
      size_t k = i;
      if (py_is_space(decode_utf8(s, k))) break;
      i = k;
    }
    out.emplace_back(s.substr(start, i - start));
  }
  return out;
}

std::vector<std::string> py_rsplit(std::string_view s, const std::string* sep, int64_t maxsplit) {
  if (maxsplit < 0) return py_split(s, sep, maxsplit);
  std::vector<std::string> out;
  if (sep) {
    size_t end = s.size();
    while (static_cast<int64_t>(out.size()) < maxsplit) {
      if (end < sep->size()) break;
      size_t f = s.rfind(*sep, end - sep->size());
      if (f == std::string_view::npos) break;
      out.insert(out.begin(), std::string(s.substr(f + sep->size(), end - f - sep->size())));
      end = f;
    }
    out.insert(out.begin(), std::string(s.substr(0, end)));
    return out;
  }
  std::string rest = py_strip(s, nullptr, false, true);
  while (static_cast<int64_t>(out.size()) < maxsplit && !rest.empty()) {
    size_t k = rest.size();
    while (k > 0 && !py_is_space(static_cast<unsigned char>(rest[k - 1]))) k--;
    if (k == 0) break;
    out.insert(out.begin(), rest.substr(k));
    rest = py_strip(std::string_view(rest).substr(0, k), nullptr, false, true);
  }
  if (!rest.empty()) out.insert(out.begin(), py_strip(rest, nullptr, true, false));
  return out;
}

std::vector<std::string> py_splitlines(std::string_view s, bool keepends) {
  std::vector<std::string> out;
  size_t start = 0, i = 0;
  while (i < s.size()) {
    size_t j = i;
    uint32_t cp = decode_utf8(s, j);
    bool br = cp == '\n' || cp == '\r' || cp == 0x0b || cp == 0x0c || cp == 0x1c || cp == 0x1d || cp == 0x1e ||
              cp == 0x85 || cp == 0x2028 || cp == 0x2029;
    if (!br) { i = j; continue; }
    if (cp == '\r' && j < s.size() && s[j] == '\n') j++;
    out.emplace_back(s.substr(start, (keepends ? j : i) - start));
    start = i = j;
  }
  if (start < s.size()) out.emplace_back(s.substr(start));
  return out;
}

bool py_parse_int(std::string_view s, int base, int64_t& out) {
  std::string t = py_strip(s, nullptr, true, true);
  std::string clean;
  for (size_t k = 0; k < t.size(); k++) {
    if (t[k] == '_' && k > 0 && k + 1 < t.size()) continue;
    clean += t[k];
  }
  if (clean.empty() || base < 2 || base > 36) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(clean.c_str(), &end, base);
  if (errno != 0 || end != clean.c_str() + clean.size()) return false;
  if (clean[0] == ' ') return false;
  out = v;
  return true;
}

bool py_parse_float(std::string_view s, double& out) {
  std::string t = py_strip(s, nullptr, true, true);
  if (t.empty()) return false;
  for (char c : t)
    if (!(is_alpha_ascii(c) || (c >= '0' && c <= '9') || c == '.' || c == '+' || c == '-' || c == '_')) return false;
  std::string clean;
  for (char c : t) if (c != '_') clean += c;
  char* end = nullptr;
  out = std::strtod(clean.c_str(), &end);
  if (end != clean.c_str() + clean.size()) return false;
  // strtod accepts hex floats and "infinity"/"nan" variants that Python spells differently.
  std::string low = py_lower(clean);
  if (low.find('x') != std::string::npos) return false;
  return true;
}

}  // namespace nt::jinja

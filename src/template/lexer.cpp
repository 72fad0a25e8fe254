// template/lexer.cpp — the Jinja lexer (see lexer.h).
#include "template/lexer.h"

#include <cstring>

namespace nt::jinja {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string rstrip_ws(std::string_view s) {
  size_t n = s.size();
  while (n > 0 && is_space(s[n - 1])) n--;
  return std::string(s.substr(0, n));
}

// Python-style unescaping of a Jinja string literal body (unknown escapes are kept verbatim).
void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

bool parse_hex(std::string_view s, size_t start, size_t n, uint32_t& cp) {
  if (start + n > s.size()) return false;
  cp = 0;
  for (size_t k = 0; k < n; k++) {
    char c = s[start + k];
    int d = is_digit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (d < 0) return false;
    cp = cp * 16 + static_cast<uint32_t>(d);
  }
  return true;
}

std::string unescape(std::string_view body) {
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); i++) {
    char c = body[i];
    if (c != '\\' || i + 1 >= body.size()) { out += c; continue; }
    char e = body[++i];
    uint32_t cp = 0;
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'v': out += '\v'; break;
      case '\n': break;  // line continuation
      case 'x': if (parse_hex(body, i + 1, 2, cp)) { append_utf8(out, cp); i += 2; } else { out += "\\x"; } break;
      case 'u': if (parse_hex(body, i + 1, 4, cp)) { append_utf8(out, cp); i += 4; } else { out += "\\u"; } break;
      case 'U':
        if (parse_hex(body, i + 1, 8, cp) && cp <= 0x10ffff) { append_utf8(out, cp); i += 8; } else { out += "\\U"; }
        break;
      default:
        if (e >= '0' && e <= '7') {  // octal, up to 3 digits
          size_t k = 0;
          while (k < 3 && i + k < body.size() && body[i + k] >= '0' && body[i + k] <= '7') cp = cp * 8 + (body[i + k++] - '0');
          append_utf8(out, cp);
          i += k - 1;
        } else {
          out += '\\';
          out += e;
        }
    }
  }
  return out;
}

const char* const kOps2[] = {"//", "**", "==", "!=", ">=", "<="};
const char kOps1[] = "+-/*%~[](){}><=.:|,;";

struct Lexer {
  const std::string& src;
  LexResult r;
  size_t pos = 0;

  bool fail(const std::string& msg, size_t at) {
    if (r.error.empty()) { r.error = msg; r.error_pos = static_cast<uint32_t>(at); }
    return false;
  }
  void push(Tok t, size_t at, std::string text = {}) {
    r.tokens.push_back(Token{t, static_cast<uint32_t>(at), std::move(text)});
  }
  // After a block/comment end without '-'/'+': trim_blocks drops one newline.
  void after_end(char mod, bool trim) {
    if (mod == '-') {
      while (pos < src.size() && is_space(src[pos])) pos++;
    } else if (mod != '+' && trim && pos < src.size() && src[pos] == '\n') {
      pos++;
    }
  }

  // Tokenizes the inside of {{ }} or {% %} until its end delimiter. Returns false on error.
  bool lex_tag(bool stmt, size_t tag_start) {
    int depth = 0;
    while (true) {
      while (pos < src.size() && is_space(src[pos])) pos++;
      if (pos >= src.size()) return fail(stmt ? "unexpected end of template, expected '%}'" : "unexpected end of template, expected '}}'", tag_start);
      if (depth == 0) {
        std::string_view rest(src.data() + pos, src.size() - pos);
        if (stmt) {
          char mod = 0;
          size_t len = 0;
          if (rest.rfind("-%}", 0) == 0) { mod = '-'; len = 3; }
          else if (rest.rfind("+%}", 0) == 0) { mod = '+'; len = 3; }
          else if (rest.rfind("%}", 0) == 0) { len = 2; }
          if (len) {
            push(Tok::StmtEnd, pos);
            pos += len;
            after_end(mod, true);
            return true;
          }
        } else {
          if (rest.rfind("-}}", 0) == 0) {
            push(Tok::ExprEnd, pos);
            pos += 3;
            after_end('-', false);
            return true;
          }
          if (rest.rfind("}}", 0) == 0) {
            push(Tok::ExprEnd, pos);
            pos += 2;
            return true;
          }
        }
      }
      char c = src[pos];
      size_t start = pos;
      if (c == '\'' || c == '"') {
        size_t k = pos + 1;
        while (k < src.size() && src[k] != c) k += (src[k] == '\\') ? 2 : 1;
        if (k >= src.size()) return fail("unterminated string literal", start);
        push(Tok::String, start, unescape(std::string_view(src).substr(pos + 1, k - pos - 1)));
        pos = k + 1;
      } else if (is_digit(c)) {
        size_t k = pos;
        bool is_float = false;
        auto digits = [&] { while (k < src.size() && (is_digit(src[k]) || (src[k] == '_' && k + 1 < src.size() && is_digit(src[k + 1])))) k++; };
        digits();
        if (k + 1 < src.size() && src[k] == '.' && is_digit(src[k + 1])) { is_float = true; k++; digits(); }
        if (k < src.size() && (src[k] == 'e' || src[k] == 'E')) {
          size_t e = k + 1;
          if (e < src.size() && (src[e] == '+' || src[e] == '-')) e++;
          if (e < src.size() && is_digit(src[e])) { is_float = true; k = e; digits(); }
        }
        std::string num;
        for (size_t q = pos; q < k; q++) if (src[q] != '_') num += src[q];
        Token t{is_float ? Tok::Float : Tok::Int, static_cast<uint32_t>(start), num};
        if (is_float) {
          t.f = std::strtod(num.c_str(), nullptr);
        } else {
          errno = 0;
          unsigned long long v = std::strtoull(num.c_str(), nullptr, 10);
          if (errno != 0 || v > static_cast<unsigned long long>(INT64_MAX)) return fail("integer literal too large", start);
          t.i = static_cast<int64_t>(v);
        }
        r.tokens.push_back(std::move(t));
        pos = k;
      } else if (is_name_start(c)) {
        size_t k = pos;
        while (k < src.size() && (is_name_start(src[k]) || is_digit(src[k]))) k++;
        push(Tok::Name, start, src.substr(pos, k - pos));
        pos = k;
      } else {
        std::string op;
        for (const char* o2 : kOps2)
          if (src.compare(pos, 2, o2) == 0) { op = o2; break; }
        if (op.empty() && std::strchr(kOps1, c) && c != 0) op = std::string(1, c);
        if (op.empty()) return fail(std::string("unexpected character '") + c + "'", start);
        if (op == "(" || op == "[" || op == "{") depth++;
        if (op == ")" || op == "]" || op == "}") {
          if (depth == 0) return fail("unexpected '" + op + "'", start);
          depth--;
        }
        push(Tok::Op, start, op);
        pos += op.size();
      }
    }
  }

  // At "{%": if this is "{% raw %}", consumes through "{% endraw %}" and returns true.
  bool try_raw(size_t at, std::string& text_before) {
    size_t k = at + 2;
    if (k < src.size() && (src[k] == '-' || src[k] == '+')) k++;
    while (k < src.size() && is_space(src[k])) k++;
    if (src.compare(k, 3, "raw") != 0) return false;
    k += 3;
    while (k < src.size() && is_space(src[k])) k++;
    char mod = 0;
    if (k < src.size() && (src[k] == '-' || src[k] == '+')) mod = src[k++];
    if (src.compare(k, 2, "%}") != 0) return false;
    pos = k + 2;
    after_end(mod, true);
    // Find {%[-+]? endraw [-+]?%}
    for (size_t s = src.find("{%", pos); s != std::string::npos; s = src.find("{%", s + 2)) {
      size_t q = s + 2;
      char lmod = 0;
      if (q < src.size() && (src[q] == '-' || src[q] == '+')) lmod = src[q++];
      while (q < src.size() && is_space(src[q])) q++;
      if (src.compare(q, 6, "endraw") != 0) continue;
      q += 6;
      while (q < src.size() && is_space(src[q])) q++;
      char emod = 0;
      if (q < src.size() && (src[q] == '-' || src[q] == '+')) emod = src[q++];
      if (src.compare(q, 2, "%}") != 0) continue;
      std::string body = src.substr(pos, s - pos);
      if (lmod == '-') body = rstrip_ws(body);
      else if (lmod != '+') body = lstrip_line(body, true);
      if (!text_before.empty()) { push(Tok::Text, at, std::move(text_before)); text_before.clear(); }
      if (!body.empty()) push(Tok::Text, pos, std::move(body));
      pos = q + 2;
      after_end(emod, true);
      return true;
    }
    fail("missing end of raw directive", at);
    return true;
  }

  // lstrip_blocks: strips spaces/tabs between the last line start and a block/comment tag.
  static std::string lstrip_line(const std::string& text, bool line_starting) {
    size_t l_pos = text.rfind('\n');
    l_pos = (l_pos == std::string::npos) ? 0 : l_pos + 1;
    if (l_pos == 0 && !line_starting) return text;
    if (l_pos == text.size()) return text;
    for (size_t k = l_pos; k < text.size(); k++)
      if (!is_space(text[k])) return text;
    return text.substr(0, l_pos);
  }

  void run() {
    while (pos < src.size() && r.error.empty()) {
      size_t text_start = pos;
      size_t open = src.find('{', pos);
      while (open != std::string::npos && open + 1 < src.size() && src[open + 1] != '{' && src[open + 1] != '%' && src[open + 1] != '#')
        open = src.find('{', open + 1);
      if (open == std::string::npos || open + 1 >= src.size()) {
        push(Tok::Text, pos, src.substr(pos));
        pos = src.size();
        break;
      }
      char kind = src[open + 1];
      char mod = open + 2 < src.size() ? src[open + 2] : 0;
      std::string text = src.substr(pos, open - pos);
      bool line_starting = text_start == 0 || src[text_start - 1] == '\n';
      if (mod == '-') text = rstrip_ws(text);
      else if (mod != '+' && kind != '{') text = lstrip_line(text, line_starting);
      if (kind == '%' && try_raw(open, text)) continue;
      if (!text.empty()) push(Tok::Text, text_start, std::move(text));
      pos = open + 2 + ((mod == '-' || mod == '+') ? 1 : 0);
      if (kind == '#') {
        size_t end = src.find("#}", pos);
        if (end == std::string::npos) { fail("missing end of comment tag", open); return; }
        char emod = (end > pos && (src[end - 1] == '-' || src[end - 1] == '+')) ? src[end - 1] : 0;
        pos = end + 2;
        after_end(emod, true);
        continue;
      }
      bool stmt = kind == '%';
      push(stmt ? Tok::StmtBegin : Tok::ExprBegin, open);
      if (!lex_tag(stmt, open)) return;
    }
    push(Tok::Eof, src.size());
  }
};

}  // namespace

std::string normalize_source(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); i++) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') i++;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

LexResult lex(const std::string& source) {
  Lexer lx{source, {}};
  lx.run();
  if (!lx.r.error.empty()) lx.r.tokens.clear();
  return std::move(lx.r);
}

void line_col(const std::string& source, uint32_t pos, int& line, int& col) {
  line = 1;
  col = 1;
  for (size_t i = 0; i < pos && i < source.size(); i++) {
    if (source[i] == '\n') { line++; col = 1; } else { col++; }
  }
}

}  // namespace nt::jinja

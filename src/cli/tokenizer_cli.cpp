#include "cli/tokenizer_cli.h"

#include <cerrno>
#include <cstdlib>

#include "core/strings.h"

namespace nt::cli {

std::string format_id_list(const std::vector<int32_t>& ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(ids[i]);
  }
  s += "]";
  return s;
}

Result<std::vector<int32_t>> parse_id_list(const std::vector<std::string>& args) {
  std::vector<int32_t> ids;
  for (const auto& a : args) {
    std::string item;
    auto flush = [&]() -> Status {
      if (item.empty()) return {};
      errno = 0;
      char* end = nullptr;
      long long v = std::strtoll(item.c_str(), &end, 10);
      if (errno != 0 || *end != '\0' || v < 0 || v > INT32_MAX)
        return make_error("'%s' is not a token id", item.c_str());
      ids.push_back(static_cast<int32_t>(v));
      item.clear();
      return {};
    };
    for (char c : a) {
      if (c == '[' || c == ']' || c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        NT_TRY(flush());
      } else {
        item += c;
      }
    }
    NT_TRY(flush());
  }
  return ids;
}

std::string visible_piece(std::string_view p) {
  std::string out;
  for (size_t i = 0; i < p.size();) {
    unsigned char c = static_cast<unsigned char>(p[i]);
    if (c == '\n') { out += "\\n"; ++i; continue; }
    if (c == '\t') { out += "\\t"; ++i; continue; }
    if (c == '\r') { out += "\\r"; ++i; continue; }
    if (c < 0x20 || c == 0x7F) { out += str_printf("\\x%02X", c); ++i; continue; }
    if (c < 0x80) { out += static_cast<char>(c); ++i; continue; }
    // Multi-byte: copy a complete valid sequence, escape stray bytes.
    size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    bool ok = len > 0 && i + len <= p.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(p[i + k]) & 0xC0) == 0x80;
    if (ok) {
      out.append(p.substr(i, len));
      i += len;
    } else {
      out += str_printf("\\x%02X", c);
      ++i;
    }
  }
  return out;
}

}  // namespace nt::cli

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
  // The arguments joined form one list: ids separated by commas and/or whitespace, optionally in
  // one pair of brackets; no empty items, nothing after the closing bracket.
  std::string text;
  for (const auto& a : args) text += a + " ";
  auto bad = [&](const char* why) {
    std::string shown = text.size() > 60 ? text.substr(0, 60) + "..." : text;
    while (!shown.empty() && (shown.back() == ' ' || shown.back() == '\n')) shown.pop_back();
    return make_error("malformed token id list '%s': %s (expected e.g. '1 2 3', '1,2,3' or '[1, 2, 3]')",
                      shown.c_str(), why);
  };
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  auto word_end = [&](size_t k) {  // end of the non-separator run starting at k
    while (k < text.size() && text[k] != ',' && text[k] != ']' && !is_space(text[k])) ++k;
    return k;
  };
  std::vector<int32_t> ids;
  size_t i = 0;
  while (i < text.size() && is_space(text[i])) ++i;
  const bool bracketed = i < text.size() && text[i] == '[';
  if (bracketed) ++i;
  bool closed = false, after_comma = false;
  while (true) {
    while (i < text.size() && is_space(text[i])) ++i;
    if (i == text.size()) break;
    const char c = text[i];
    if (c == ']') {
      if (!bracketed) return bad("']' without '['");
      if (after_comma) return bad("a comma before ']'");
      closed = true;
      for (++i; i < text.size(); ++i)
        if (!is_space(text[i])) return bad("text after ']'");
      break;
    }
    if (c == ',') {
      if (ids.empty() || after_comma) return bad("an empty item between commas");
      after_comma = true;
      ++i;
      continue;
    }
    if (c == '[') return bad("nested or repeated '['");
    const size_t e = word_end(i);
    const std::string item = text.substr(i, e - i);
    if (item.find_first_not_of("0123456789") != std::string::npos) return make_error("'%s' is not a token id", item.c_str());
    errno = 0;
    const long long v = std::strtoll(item.c_str(), nullptr, 10);
    if (errno != 0 || v > INT32_MAX) return make_error("'%s' is not a token id (too large)", item.c_str());
    ids.push_back(static_cast<int32_t>(v));
    after_comma = false;
    i = e;
  }
  if (after_comma) return bad("a trailing comma");
  if (bracketed && !closed) return bad("'[' without ']'");
  return ids;
}


}  // namespace nt::cli

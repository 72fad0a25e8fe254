// cli/json_input.cpp — see json_input.h.
#include "cli/json_input.h"

#include "core/strings.h"

namespace nt::cli {

Result<nlohmann::ordered_json> parse_json_input(const std::string& text, const std::string& source) {
  try {
    return nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based: the offending character (or one past the end).
    const size_t at = e.byte > 0 ? std::min(e.byte - 1, text.size()) : 0;
    size_t line = 1, col = 1;
    for (size_t i = 0; i < at; ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    // The library's message is "[json.exception.parse_error.101] parse error at line L, column C:
    // syntax error while parsing ... - reason"; keep the reason.
    std::string what = e.what();
    const size_t cut = what.find("syntax error");
    if (cut != std::string::npos) what = what.substr(cut);
    return make_error("%s:%zu:%zu: invalid JSON: %s", source.c_str(), line, col, what.c_str());
  }
}

}  // namespace nt::cli

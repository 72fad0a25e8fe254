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


}  // namespace nt::cli

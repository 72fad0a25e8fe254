// cli/json_input.h — JSON from user files (--messages-file, --tools-file, chat /load): a syntax
// error names the source, line and column ("conv.json:3:14: invalid JSON: ...").
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/result.h"

namespace nt::cli {

Result<nlohmann::ordered_json> parse_json_input(const std::string& text, const std::string& source);

}  // namespace nt::cli

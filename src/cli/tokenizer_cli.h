// cli/tokenizer_cli.h — small helpers shared by the token commands (tokenize, detokenize, count):
// id lists.
// Must not know: tokenizer internals.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace nt::cli {

// "[1, 2, 3]" exactly as llama-tokenize --ids prints it.
std::string format_id_list(const std::vector<int32_t>& ids);
// Parses ids from arguments like "1 2 3", "[1, 2, 3]", "1,2,3". Error names the bad item.
Result<std::vector<int32_t>> parse_id_list(const std::vector<std::string>& args);

}  // namespace nt::cli

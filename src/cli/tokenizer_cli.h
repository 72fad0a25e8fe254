// cli/tokenizer_cli.h — small helpers shared by the token commands (tokenize, detokenize, count):
// id lists and visible pieces.
// Must not know: tokenizer internals.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace nt::cli {

// "[1, 2, 3]" exactly as llama-tokenize --ids prints it.
std::string format_id_list(const std::vector<int32_t>& ids);
// Parses ids from arguments like "1 2 3", "[1, 2, 3]", "1,2,3". Error names the bad item.
Result<std::vector<int32_t>> parse_id_list(const std::vector<std::string>& args);
// A piece with invisible characters escaped (\n, \t, \r, \xNN for bytes that are not UTF-8).
std::string visible_piece(std::string_view piece);

}  // namespace nt::cli

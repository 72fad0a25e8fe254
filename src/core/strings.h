// core/strings.h — small string helpers shared by every layer (printf-style formatting,
// case-insensitive compare, byte sizes, escaping for display). Must not know: anything
// model-specific.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace nt {

// printf-style formatting into a std::string.
std::string str_printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// Error with a printf-style message.
Error make_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// The same with a kind other than InvalidArgument.
Error make_error(ErrorKind kind, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

std::string to_lower(std::string_view s);
bool iequals(std::string_view a, std::string_view b);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);

// "1.23 GiB", "456.0 MiB", "789 B"
std::string format_bytes(uint64_t bytes);
// "15,191,712"
std::string format_thousands(uint64_t n);

// A token's text (or any bytes) made visible on one line between single quotes: newline, tab, CR,
// quote and backslash as \n \t \r \' \\, other control bytes and bytes that are not valid UTF-8
// as \xNN; valid UTF-8 kept.
std::string visible_piece(std::string_view piece);

// Reads a whole file (binary). Error names the path.
Result<std::string> read_file(const std::string& path);

}  // namespace nt

// template/strutil.h — Python str methods over UTF-8 (split, strip, replace, splitlines, case,
// int/float parsing) as the template engine needs them. Case mapping covers ASCII only.
// Must not know: templates, values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nt::jinja {

std::string py_lower(std::string_view s);
std::string py_upper(std::string_view s);
std::string py_capitalize(std::string_view s);
std::string py_title(std::string_view s);
// chars == nullptr: strip whitespace; else strip any code point in *chars.
std::string py_strip(std::string_view s, const std::string* chars, bool left, bool right);
std::string py_replace(std::string_view s, std::string_view old, std::string_view repl, int64_t count);
// sep == nullptr: split on runs of whitespace. maxsplit < 0: no limit.
std::vector<std::string> py_split(std::string_view s, const std::string* sep, int64_t maxsplit);
std::vector<std::string> py_rsplit(std::string_view s, const std::string* sep, int64_t maxsplit);
std::vector<std::string> py_splitlines(std::string_view s, bool keepends = false);
bool py_parse_int(std::string_view s, int base, int64_t& out);
bool py_parse_float(std::string_view s, double& out);
bool py_is_space(uint32_t cp);
// Decodes one UTF-8 code point at s[i] and advances i; an invalid byte decodes as itself (one byte).
uint32_t decode_utf8(std::string_view s, size_t& i);

}  // namespace nt::jinja

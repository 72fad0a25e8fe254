// template/parser.h — Jinja parsing: tokens -> Program (statements and expressions).
// Owns: the grammar (Jinja2's operator precedence, statements HF templates use).
// Must not know: evaluation, models.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "template/ast.h"

namespace nt::jinja {

struct ParseError {
  std::string message;
  uint32_t pos = 0;
};

// Parses `source` (raw template text). On failure returns nullptr and fills `err`.
std::shared_ptr<Program> parse_program(std::string_view source, std::string_view name, ParseError& err);

}  // namespace nt::jinja

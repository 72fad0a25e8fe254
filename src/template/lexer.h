// template/lexer.h — Jinja lexing: template text, {{ }}, {% %} and {# #} with whitespace control
// as Hugging Face configures Jinja2 (trim_blocks, lstrip_blocks, keep_trailing_newline=False,
// newlines normalized to \n, {%- -%} {%+ +%} modifiers, {% raw %} blocks).
// Owns: tokens and their source offsets. Must not know: the grammar, evaluation.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nt::jinja {

enum class Tok : uint8_t { Text, ExprBegin, ExprEnd, StmtBegin, StmtEnd, Name, String, Int, Float, Op, Eof };

struct Token {
  Tok type;
  uint32_t pos;      // byte offset in the (normalized) source
  std::string text;  // Text: the data; Name/Op: the spelling; String: the unescaped value
  int64_t i = 0;     // Int
  double f = 0;      // Float
};

struct LexResult {
  std::vector<Token> tokens;
  std::string error;       // empty on success
  uint32_t error_pos = 0;
};

// Normalizes newlines (\r\n, \r -> \n) and drops one trailing \n, as Jinja2 does.
std::string normalize_source(std::string_view source);
// Lexes normalized source.
LexResult lex(const std::string& source);

// 1-based line and column (in bytes) of a byte offset.
void line_col(const std::string& source, uint32_t pos, int& line, int& col);

}  // namespace nt::jinja

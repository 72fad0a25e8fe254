// tokenizer/pretokenize.h — splitting text into pre-tokens with a sequence of Unicode regexes
// (PCRE2 with UTF + UCP, JIT-compiled), as Hugging Face's Split(..., behavior=Isolated)
// pre-tokenizers do: each regex splits every piece of the previous step into its matches and the
// gaps between them. Owns the regex sets of the tokenizer.ggml.pre names. Must not know: vocabularies.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace nt {

struct PieceRange {
  uint32_t begin, end;  // byte offsets into the text
};

class PreTokenizer {
 public:
  PreTokenizer();
  ~PreTokenizer();
  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;

  // The regex list for a tokenizer.ggml.pre name ("" = absent). Error names unknown names.
  static Result<std::vector<std::string>> regexes_for(std::string_view pre);
  // Compiles the regexes (PCRE2 syntax). Error carries PCRE2's message and offset.
  Status compile(const std::vector<std::string>& regexes);
  bool empty() const;
  // Splits text (any bytes; invalid UTF-8 is never matched and ends up in gap pieces) into
  // pieces covering the whole text in order. Appends to out.
  void split(std::string_view text, std::vector<PieceRange>& out) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nt

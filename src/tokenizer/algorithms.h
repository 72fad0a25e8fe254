// tokenizer/algorithms.h — the tokenization algorithms over a loaded Vocab (internal):
// SentencePiece score BPE, merge-rank BPE (byte-level or per character), WordPiece, and the
// literal special-token partition that runs before them. Must not know: file formats, the CLI.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace nt::algo {

struct Fragment {
  int32_t token;        // >= 0: a special token matched in the text; -1: raw text
  uint32_t begin, end;  // raw text byte range
};
// Splits text into raw-text fragments and literal special tokens (leftmost, longest first).
void partition_specials(const Vocab& v, std::string_view text, bool parse_special,
                        std::vector<Fragment>& out);

// SentencePiece BPE: text already has spaces escaped to U+2581 (and the prefix added).
void spm_encode(const Vocab& v, std::string_view text, std::vector<int32_t>& out);
// Byte-level BPE: pre-tokenize with v.pretok, then merge each piece by merge rank.
void bpe_encode_byte_level(const Vocab& v, std::string_view text, std::vector<int32_t>& out);
// Character BPE by merge rank with byte fallback (tokenizer.json Metaspace models); text is escaped.
void bpe_encode_chars(const Vocab& v, std::string_view text, std::vector<int32_t>& out);
// BERT basic tokenization + WordPiece.
void wpm_encode(const Vocab& v, std::string_view text, std::vector<int32_t>& out);

}  // namespace nt::algo

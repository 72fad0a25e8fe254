// tokenizer/unicode.h — the UTF-8 and Unicode helpers the tokenizers share: decoding and encoding
// code points, UTF-8 validity and completeness, the GPT-2 byte <-> unicode mapping, and the
// character classes BERT's basic tokenizer needs. Must not know: vocabularies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nt::tok {

// Length (1..4) of the valid UTF-8 sequence starting at s[i] (code point in *cp), or 0 when the
// bytes there are not valid UTF-8 (overlong, surrogate, truncated, stray continuation byte).
size_t utf8_seq_len(std::string_view s, size_t i, uint32_t* cp = nullptr);
void utf8_append(std::string& out, uint32_t cp);
// Length of the longest prefix of s that does not end inside an incomplete (but so far valid)
// multi-byte sequence. Invalid bytes are not held back.
size_t utf8_complete_prefix(std::string_view s);
bool utf8_is_valid(std::string_view s);
// Decodes s into code points; each invalid byte becomes U+FFFD.
std::vector<uint32_t> utf8_to_cpts(std::string_view s);

// GPT-2 byte-level mapping: every byte has a printable code point ('Ġ' for space).
const std::string& byte_to_unicode(uint8_t b);  // UTF-8 of the mapped code point
int unicode_to_byte(uint32_t cp);                // -1 when cp is not in the mapping

// Character classes (BERT basic tokenizer, Hugging Face semantics).
bool is_white_space(uint32_t cp);  // Unicode White_Space
bool is_other(uint32_t cp);        // general category C* (control, format, unassigned, ...)
bool is_punct(uint32_t cp);        // general category P* or ASCII punctuation
bool is_mark_nonspacing(uint32_t cp);  // Mn
bool is_cjk(uint32_t cp);          // the CJK ideograph blocks BERT isolates
// Appends the canonical (NFD) decomposition / the full lower-case mapping of cp.
void append_nfd(uint32_t cp, std::vector<uint32_t>& out);
void append_lower(uint32_t cp, std::vector<uint32_t>& out);

}  // namespace nt::tok

// tokenizer/unicode_tables.h — generated Unicode data for BERT's basic tokenizer (see
// gen_unicode_tables.py): canonical decompositions, lower-case mappings, category ranges.
// Must not know: tokenizers. Use through tokenizer/unicode.h.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nt::tok::tables {

// {code point, offset into pool, length}, sorted by code point.
extern const uint32_t kDecompIndex[][3];
extern const size_t kDecompIndexSize;
extern const uint32_t kDecompPool[];
extern const uint32_t kLowerIndex[][3];
extern const size_t kLowerIndexSize;
extern const uint32_t kLowerPool[];
// Inclusive ranges, sorted.
extern const uint32_t kMn[][2];
extern const size_t kMnSize;
extern const uint32_t kPunct[][2];
extern const size_t kPunctSize;
extern const uint32_t kOther[][2];
extern const size_t kOtherSize;

}  // namespace nt::tok::tables

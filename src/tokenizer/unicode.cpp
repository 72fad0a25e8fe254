#include "tokenizer/unicode.h"

#include <algorithm>
#include <array>

#include "tokenizer/unicode_tables.h"

namespace nt::tok {

size_t utf8_seq_len(std::string_view s, size_t i, uint32_t* cp) {
  const size_t n = s.size();
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  uint8_t c0 = b(i);
  if (c0 < 0x80) {
    if (cp) *cp = c0;
    return 1;
  }
  size_t len;
  uint32_t v, min;
  if ((c0 & 0xE0) == 0xC0) { len = 2; v = c0 & 0x1F; min = 0x80; }
  else if ((c0 & 0xF0) == 0xE0) { len = 3; v = c0 & 0x0F; min = 0x800; }
  else if ((c0 & 0xF8) == 0xF0) { len = 4; v = c0 & 0x07; min = 0x10000; }
  else return 0;
  if (i + len > n) return 0;
  for (size_t k = 1; k < len; ++k) {
    uint8_t c = b(i + k);
    if ((c & 0xC0) != 0x80) return 0;
    v = (v << 6) | (c & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v < 0xE000)) return 0;
  if (cp) *cp = v;
  return len;
}

void utf8_append(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

size_t utf8_complete_prefix(std::string_view s) {
  // Look back at most 3 bytes for a lead byte whose sequence runs past the end.
  const size_t n = s.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    uint8_t c = static_cast<uint8_t>(s[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    size_t need = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
    if (need > back) {
      // Incomplete: hold it only if what we have so far could still become valid.
      std::string probe(s.substr(n - back));
      static const char kCont[3] = {'\x80', '\x80', '\x80'};
      // Pad with the smallest continuation bytes; E0/F0 need larger second bytes.
      probe.append(kCont, need - back);
      if (back == 1 && (c == 0xE0)) probe[1] = '\xA0';
      if (back == 1 && (c == 0xF0)) probe[1] = '\x90';
      if (utf8_seq_len(probe, 0) == need) return n - back;
    }
    return n;
  }
  return n;
}

bool utf8_is_valid(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t l = utf8_seq_len(s, i);
    if (l == 0) return false;
    i += l;
  }
  return true;
}

std::vector<uint32_t> utf8_to_cpts(std::string_view s) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    size_t l = utf8_seq_len(s, i, &cp);
    if (l == 0) {
      out.push_back(0xFFFD);
      i += 1;
    } else {
      out.push_back(cp);
      i += l;
    }
  }
  return out;
}

namespace {

struct ByteMap {
  std::array<std::string, 256> to_utf8;
  std::array<uint32_t, 256> to_cp{};
  ByteMap() {
    // Printable bytes map to themselves; the others to 256, 257, ... in byte order.
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      to_cp[b] = printable ? static_cast<uint32_t>(b) : next++;
      utf8_append(to_utf8[b], to_cp[b]);
    }
  }
};
const ByteMap& byte_map() {
  static const ByteMap m;
  return m;
}

bool in_ranges(const uint32_t (*r)[2], size_t n, uint32_t cp) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (r[mid][1] < cp) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && r[lo][0] <= cp && cp <= r[lo][1];
}

void append_mapped(const uint32_t (*idx)[3], size_t n, const uint32_t* pool, uint32_t cp,
                   std::vector<uint32_t>& out) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (idx[mid][0] < cp) lo = mid + 1;
    else hi = mid;
  }
  if (lo < n && idx[lo][0] == cp) {
    out.insert(out.end(), pool + idx[lo][1], pool + idx[lo][1] + idx[lo][2]);
  } else {
    out.push_back(cp);
  }
}

}  // namespace

const std::string& byte_to_unicode(uint8_t b) { return byte_map().to_utf8[b]; }

int unicode_to_byte(uint32_t cp) {
  if (cp < 256) {
    const auto& m = byte_map();
    return m.to_cp[cp] == cp ? static_cast<int>(cp) : -1;
  }
  if (cp < 256 + 68) {
    const auto& m = byte_map();
    for (int b = 0; b < 256; ++b)
      if (m.to_cp[b] == cp) return b;
  }
  return -1;
}

bool is_white_space(uint32_t cp) {
  switch (cp) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0x85: case 0xA0:
    case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

bool is_other(uint32_t cp) { return in_ranges(tables::kOther, tables::kOtherSize, cp); }

bool is_punct(uint32_t cp) {
  if (cp < 0x80) return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
                        (cp >= 123 && cp <= 126);
  return in_ranges(tables::kPunct, tables::kPunctSize, cp);
}

bool is_mark_nonspacing(uint32_t cp) { return in_ranges(tables::kMn, tables::kMnSize, cp); }

bool is_cjk(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

void append_nfd(uint32_t cp, std::vector<uint32_t>& out) {
  if (cp >= 0xAC00 && cp <= 0xD7A3) {  // Hangul syllables decompose algorithmically
    uint32_t s = cp - 0xAC00;
    out.push_back(0x1100 + s / 588);
    out.push_back(0x1161 + (s % 588) / 28);
    if (s % 28 != 0) out.push_back(0x11A7 + s % 28);
    return;
  }
  if (cp < 0xC0) {
    out.push_back(cp);
    return;
  }
  append_mapped(tables::kDecompIndex, tables::kDecompIndexSize, tables::kDecompPool, cp, out);
}

void append_lower(uint32_t cp, std::vector<uint32_t>& out) {
  if (cp < 0x80) {
    out.push_back(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp);
    return;
  }
  append_mapped(tables::kLowerIndex, tables::kLowerIndexSize, tables::kLowerPool, cp, out);
}

}  // namespace nt::tok

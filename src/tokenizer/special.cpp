// The literal special-token partition: user-defined tokens are always recognised in text,
// control (and unknown) tokens only when parse_special is set. Scans once, leftmost first,
// trying the candidates for each first byte longest first.
#include <cstring>

#include "tokenizer/algorithms.h"

namespace nt::algo {

void partition_specials(const Vocab& v, std::string_view text, bool parse_special, std::vector<Fragment>& out) {
  const uint32_t n = static_cast<uint32_t>(text.size());
  if (n == 0) return;
  if (v.specials.empty() || (!parse_special && !v.has_always_special)) {
    out.push_back({-1, 0, n});
    return;
  }
  uint32_t seg = 0;
  for (uint32_t i = 0; i < n;) {
    const auto& cands = v.special_by_byte[static_cast<uint8_t>(text[i])];
    int32_t hit = -1;
    uint32_t hit_len = 0;
    for (int32_t k : cands) {
      const auto& s = v.specials[k];
      if (!s.always && !parse_special) continue;
      if (s.text.size() <= n - i && std::memcmp(text.data() + i, s.text.data(), s.text.size()) == 0) {
        hit = s.id;
        hit_len = static_cast<uint32_t>(s.text.size());
        break;
      }
    }
    if (hit < 0) {
      ++i;
      continue;
    }
    if (i > seg) out.push_back({-1, seg, i});
    out.push_back({hit, i, i + hit_len});
    i += hit_len;
    seg = i;
  }
  if (seg < n) out.push_back({-1, seg, n});
}

}  // namespace nt::algo

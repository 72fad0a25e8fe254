#include "tokenizer/vocab.h"

#include <algorithm>
#include <cstdio>

#include "tokenizer/unicode.h"

namespace nt {

namespace {

// "<0xAB>" -> 0xAB, else -1.
int parse_byte_token(std::string_view t) {
  if (t.size() != 6 || t[0] != '<' || t[1] != '0' || t[2] != 'x' || t[5] != '>') return -1;
  auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  int hi = hex(t[3]), lo = hex(t[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

std::string unescape_spaces(std::string_view t) {
  std::string out;
  out.reserve(t.size());
  for (size_t i = 0; i < t.size();) {
    if (t.compare(i, 3, "\xE2\x96\x81") == 0) {
      out += ' ';
      i += 3;
    } else {
      out += t[i++];
    }
  }
  return out;
}

std::string byte_level_decode(std::string_view t) {
  std::string out;
  out.reserve(t.size());
  for (size_t i = 0; i < t.size();) {
    uint32_t cp = 0;
    size_t l = tok::utf8_seq_len(t, i, &cp);
    if (l == 0) {
      out += t[i++];
      continue;
    }
    int b = tok::unicode_to_byte(cp);
    if (b >= 0) out += static_cast<char>(b);
    else out.append(t.substr(i, l));
    i += l;
  }
  return out;
}

}  // namespace

int32_t Vocab::intern(std::string_view s) {
  int32_t id = find(s);
  if (id >= 0) return id;
  auto it = extra_to_id.find(s);
  if (it != extra_to_id.end()) return it->second;
  int32_t nid = n_vocab() + static_cast<int32_t>(extra_text.size());
  extra_text.emplace_back(s);
  extra_to_id.emplace(std::string(s), nid);
  return nid;
}

int32_t Vocab::find_symbol(std::string_view s) const {
  int32_t id = find(s);
  if (id >= 0) return id;
  auto it = extra_to_id.find(s);
  return it == extra_to_id.end() ? -1 : it->second;
}

void Vocab::add_merge(std::string_view left, std::string_view right, int32_t rank) {
  int32_t l = intern(left), r = intern(right);
  std::string joined;
  joined.reserve(left.size() + right.size());
  joined.append(left).append(right);
  int32_t res = intern(joined);
  uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(r);
  merges.insert(key, MergeResult{rank, res});  // the first (best-ranked) duplicate wins
}

size_t Vocab::heap_bytes() const {
  return text.heap_bytes() + piece.heap_bytes() + text_to_id.heap_bytes() + merges.heap_bytes() +
         score.capacity() * sizeof(float) + type.capacity() * sizeof(TokenType);
}

void Vocab::finalize_tokens() {
  const int32_t n = n_vocab();
  score.resize(n, 0.0f);
  type.resize(n, TokenType::Normal);
  text.shrink_to_fit();
  text_to_id.build(text);  // a duplicate text maps to its last id
  max_token_len = 0;
  for (int32_t i = 0; i < n; ++i) {
    if (type[i] == TokenType::Undefined) type[i] = TokenType::Normal;
    max_token_len = std::max(max_token_len, text[i].size());
  }

  byte_token.fill(-1);
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "<0x%02X>", b);
    byte_token[b] = find(buf);
  }

  piece.clear();
  piece.reserve(static_cast<size_t>(n), text.n_bytes());
  for (int32_t i = 0; i < n; ++i) {
    const std::string_view t = text[i];
    switch (type[i]) {
      case TokenType::Control:
      case TokenType::UserDefined:
      case TokenType::Unknown:
        piece.push_back(t);
        break;
      case TokenType::Unused:
        piece.push_back({});
        break;
      case TokenType::Byte: {
        int b = parse_byte_token(t);
        if (b >= 0) piece.push_back(std::string(1, static_cast<char>(b)));
        else piece.push_back(byte_level ? byte_level_decode(t) : std::string(t));
        break;
      }
      default:
        if (byte_level) piece.push_back(byte_level_decode(t));
        else if (escape_spaces || kind == VocabKind::Wpm) piece.push_back(unescape_spaces(t));
        else piece.push_back(t);
        break;
    }
  }
  piece.shrink_to_fit();

  // Literal special tokens, longest first (ties: lower id first).
  specials.clear();
  for (auto& v : special_by_byte) v.clear();
  for (int32_t i = 0; i < n; ++i) {
    TokenType ty = type[i];
    if (text[i].empty()) continue;
    if (ty == TokenType::Control || ty == TokenType::Unknown || ty == TokenType::UserDefined)
      specials.push_back({text[i], i, ty == TokenType::UserDefined});
  }
  std::stable_sort(specials.begin(), specials.end(),
                   [](const Special& a, const Special& b) { return a.text.size() > b.text.size(); });
  for (size_t k = 0; k < specials.size(); ++k)
    special_by_byte[static_cast<uint8_t>(specials[k].text[0])].push_back(static_cast<int32_t>(k));
  has_always_special = false;
  for (const auto& s : specials) has_always_special |= s.always;

  // End of generation: the metadata ids, then well-known end-of-turn tokens of the vocab.
  eog.clear();
  for (int32_t id : {eos, eot, eom})
    if (id >= 0 && id < n) eog.push_back(id);
  static const char* const kEog[] = {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
                                     "<|eom_id|>", "<EOT>", "_<EOT>", "<|end_of_text|>", "<｜end▁of▁sentence｜>",
                                     "<|return|>", "<|call|>", "</s>"};
  for (const char* t : kEog) {
    int32_t id = find(t);
    if (id >= 0 && (type[id] == TokenType::Control || type[id] == TokenType::UserDefined)) eog.push_back(id);
  }
  std::sort(eog.begin(), eog.end());
  eog.erase(std::unique(eog.begin(), eog.end()), eog.end());

  spm_word_split = true;
  static const std::string_view kSp = "\xE2\x96\x81";
  for (int32_t i = 0; i < n && spm_word_split; ++i) {
    std::string_view t = text[i];
    for (size_t pos = t.find(kSp, 1); pos != std::string_view::npos; pos = t.find(kSp, pos + 1)) {
      if (pos < 3 || t.substr(pos - 3, 3) != kSp) {
        spm_word_split = false;
        break;
      }
    }
  }

  if (byte_level) {
    for (int b = 0; b < 256; ++b) byte_symbol[b] = intern(tok::byte_to_unicode(static_cast<uint8_t>(b)));
  }
}

}  // namespace nt

// tokenizer/vocab.h — the loaded vocabulary every tokenizer algorithm reads: token texts,
// scores, types, special ids, BPE merges (interned as id pairs), precomputed decode pieces and the
// pre-tokenizer. Internal to the tokenizer layer. Must not know: GGUF or JSON parsing (loaders
// fill it), the algorithms' working state.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/packed_tables.h"
#include "tokenizer/pretokenize.h"
#include "tokenizer/tokenizer.h"

namespace nt {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TextToId = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

enum class VocabKind { Spm, Bpe, Wpm };

struct Vocab {
  VocabKind kind = VocabKind::Spm;
  std::string model_name;  // "llama", "gpt2", "bert"
  std::string pre;         // tokenizer.ggml.pre ("" when absent)

  StringTable text;               // [n_vocab]
  std::vector<float> score;       // [n_vocab]
  std::vector<TokenType> type;    // [n_vocab]
  StringTable piece;              // [n_vocab] bytes each token contributes to decoded text
  TextIndex text_to_id;

  int32_t bos = -1, eos = -1, eot = -1, eom = -1, unk = -1, pad = -1, sep = -1, cls = -1, mask = -1;
  bool add_bos = false, add_eos = false, add_sep = false;
  bool add_space_prefix = false;  // SentencePiece: prefix ' ' to text at start / after a special
  bool escape_spaces = false;     // ' ' -> U+2581 before the model (SentencePiece / Metaspace)
  bool byte_level = false;        // GPT-2 byte-level symbols
  bool ignore_merges = false;     // a pre-token that is a whole token is taken as is
  bool bpe_with_merges = false;   // Spm kind: merge by merges ranks (tokenizer.json) not scores
  bool byte_fallback = true;      // unknown characters -> <0xXX> tokens
  // tokenizer.json Metaspace: prefix mode and whether words are split at each U+2581.
  enum class Prefix { Always, First, Never } prefix = Prefix::Always;
  bool metaspace_split = false;
  int32_t wpm_max_word_chars = 100;
  std::vector<int32_t> eog;       // sorted end-of-generation ids

  // Tokens matched literally in text before the model runs, longest first; user-defined ones
  // always, control/unknown ones only with parse_special.
  struct Special {
    std::string_view text;
    int32_t id;
    bool always;
  };
  std::vector<Special> specials;
  std::array<std::vector<int32_t>, 256> special_by_byte;  // indices into specials by first byte
  bool has_always_special = false;

  // BPE: merges keyed by (left symbol id << 32 | right symbol id).
  MergeTable merges;
  std::vector<std::string> extra_text;  // texts of symbol ids >= n_vocab
  TextToId extra_to_id;
  std::array<int32_t, 256> byte_symbol{};  // byte-level: symbol id of each byte's mapped char
  std::array<int32_t, 256> byte_token{};   // <0xXX> token ids (-1 when absent)

  // SentencePiece: no token has a U+2581 right after another character, so no merge can cross
  // the start of a run of U+2581 and the text can be merged word by word (same result, small heaps).
  bool spm_word_split = false;

  PreTokenizer pretok;
  size_t max_token_len = 0;

  int32_t n_vocab() const { return static_cast<int32_t>(text.size()); }
  int32_t find(std::string_view s) const {
    return text_to_id.find(text, s);
  }
  // Symbol id for a text (token id, or an interned extra id >= n_vocab).
  int32_t intern(std::string_view s);
  int32_t find_symbol(std::string_view s) const;  // token or interned id, -1 when neither
  std::string_view symbol_text(int32_t sym) const {
    return sym < n_vocab() ? text[static_cast<size_t>(sym)] : std::string_view(extra_text[sym - n_vocab()]);
  }
  size_t heap_bytes() const;  // the large tables' heap (texts, pieces, index, merges, scores, types)

  // After text/score/type/special ids/flags are set: builds text_to_id, pieces, specials, eog,
  // byte tables. merges (list of "a b" strings or pairs) are added with add_merge.
  void finalize_tokens();
  void add_merge(std::string_view left, std::string_view right, int32_t rank);
};

}  // namespace nt

// BERT: the basic tokenizer as Hugging Face's BertNormalizer + BertPreTokenizer do it (drop
// control characters, whitespace -> split, isolate CJK ideographs, NFD and drop non-spacing
// marks, lower-case, isolate punctuation), then WordPiece: greedy longest match from the start of
// each word; a word with any unmatchable rest becomes [UNK]. GGUF vocabularies mark word-initial
// pieces with a leading U+2581 instead of continuation pieces with "##".
#include "tokenizer/algorithms.h"
#include "tokenizer/unicode.h"

namespace nt::algo {

namespace {

void basic_tokenize(std::string_view text, std::vector<std::string>& words, std::vector<size_t>& n_chars) {
  std::vector<uint32_t> cpts = tok::utf8_to_cpts(text);
  std::vector<uint32_t> nfd, low;
  std::string cur;
  size_t cur_chars = 0;
  const auto end_word = [&] {
    if (!cur.empty()) {
      words.push_back(std::move(cur));
      n_chars.push_back(cur_chars);
    }
    cur.clear();
    cur_chars = 0;
  };
  for (uint32_t cp : cpts) {
    if (cp == 0 || cp == 0xFFFD) continue;
    if (cp == '\t' || cp == '\n' || cp == '\r' || tok::is_white_space(cp)) {
      end_word();
      continue;
    }
    if (tok::is_other(cp)) continue;
    if (tok::is_cjk(cp)) {
      end_word();
      tok::utf8_append(cur, cp);
      cur_chars = 1;
      end_word();
      continue;
    }
    nfd.clear();
    tok::append_nfd(cp, nfd);
    for (uint32_t d : nfd) {
      if (tok::is_mark_nonspacing(d)) continue;
      low.clear();
      tok::append_lower(d, low);
      for (uint32_t c : low) {
        if (tok::is_punct(c)) {
          end_word();
          tok::utf8_append(cur, c);
          cur_chars = 1;
          end_word();
        } else {
          tok::utf8_append(cur, c);
          ++cur_chars;
        }
      }
    }
  }
  end_word();
}

}  // namespace

void wpm_encode(const Vocab& v, std::string_view text, std::vector<int32_t>& out) {
  std::vector<std::string> words;
  std::vector<size_t> n_chars;
  basic_tokenize(text, words, n_chars);
  std::string w;
  for (size_t k = 0; k < words.size(); ++k) {
    if (static_cast<int32_t>(n_chars[k]) > v.wpm_max_word_chars) {
      if (v.unk >= 0) out.push_back(v.unk);
      continue;
    }
    w = "\xE2\x96\x81" + words[k];
    const size_t before = out.size();
    bool ok = true;
    for (size_t i = 0; i < w.size();) {
      size_t best = 0;
      int32_t best_id = -1;
      for (size_t j = std::min(w.size(), i + v.max_token_len); j > i; --j) {
        int32_t id = v.find(std::string_view(w).substr(i, j - i));
        if (id >= 0) {
          best = j;
          best_id = id;
          break;
        }
      }
      if (best_id < 0) {
        ok = false;
        break;
      }
      out.push_back(best_id);
      i = best;
    }
    if (!ok) {
      out.resize(before);
      if (v.unk >= 0) out.push_back(v.unk);
    }
  }
}

}  // namespace nt::algo

// SentencePiece BPE by token scores: start from single characters, repeatedly merge the adjacent
// pair whose concatenation is the best-scoring token (ties: leftmost), then map what is left to
// tokens, falling back to <0xXX> byte tokens for characters the vocab lacks.
#include <algorithm>

#include "tokenizer/algorithms.h"
#include "tokenizer/unicode.h"

namespace nt::algo {

namespace {

struct Sym {
  int32_t prev, next;
  uint32_t start, len;
};
struct Bigram {
  float score;
  int32_t left, right;
  uint32_t size;
};
struct BigramLess {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

struct SpmWork {
  std::vector<Sym> syms;
  std::vector<Bigram> heap;
};

}  // namespace

static void spm_encode_word(const Vocab& v, std::string_view text, std::vector<int32_t>& out);

void spm_encode(const Vocab& v, std::string_view text, std::vector<int32_t>& out) {
  if (!v.spm_word_split) return spm_encode_word(v, text, out);
  // Cut before each run of U+2581 that follows another character (see Vocab::spm_word_split).
  static const std::string_view kSp = "\xE2\x96\x81";
  size_t start = 0;
  for (size_t pos = text.find(kSp, 1); pos != std::string_view::npos; pos = text.find(kSp, pos + 3)) {
    if (pos >= 3 && text.substr(pos - 3, 3) == kSp) continue;
    spm_encode_word(v, text.substr(start, pos - start), out);
    start = pos;
  }
  spm_encode_word(v, text.substr(start), out);
}

static void spm_encode_word(const Vocab& v, std::string_view text, std::vector<int32_t>& out) {
  if (text.empty()) return;
  thread_local SpmWork w;
  auto& syms = w.syms;
  auto& heap = w.heap;
  syms.clear();
  heap.clear();
  for (size_t i = 0; i < text.size();) {
    size_t l = tok::utf8_seq_len(text, i);
    if (l == 0) l = 1;
    int32_t idx = static_cast<int32_t>(syms.size());
    syms.push_back({idx - 1, -1, static_cast<uint32_t>(i), static_cast<uint32_t>(l)});
    i += l;
  }
  for (size_t k = 0; k + 1 < syms.size(); ++k) syms[k].next = static_cast<int32_t>(k + 1);

  const auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    uint32_t size = syms[left].len + syms[right].len;
    int32_t id = v.find(text.substr(syms[left].start, size));
    if (id < 0) return;
    heap.push_back({v.score[id], left, right, size});
    std::push_heap(heap.begin(), heap.end(), BigramLess{});
  };
  for (size_t k = 0; k + 1 < syms.size(); ++k) try_add(static_cast<int32_t>(k), static_cast<int32_t>(k + 1));

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), BigramLess{});
    Bigram b = heap.back();
    heap.pop_back();
    Sym& l = syms[b.left];
    Sym& r = syms[b.right];
    if (l.len == 0 || r.len == 0 || l.len + r.len != b.size || l.next != b.right) continue;
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) syms[r.next].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, syms[b.left].next);
  }

  for (int32_t k = 0; k >= 0 && k < static_cast<int32_t>(syms.size()); k = syms[k].next) {
    const Sym& s = syms[k];
    std::string_view t = text.substr(s.start, s.len);
    int32_t id = v.find(t);
    if (id >= 0) {
      out.push_back(id);
      continue;
    }
    for (char c : t) {
      int32_t bt = v.byte_token[static_cast<uint8_t>(c)];
      if (bt >= 0) out.push_back(bt);
      else if (v.unk >= 0) out.push_back(v.unk);
    }
  }
}

}  // namespace nt::algo

// Merge-rank BPE (GPT-2 style): start from symbols (one per byte for byte-level vocabularies, one
// per character otherwise), repeatedly apply the adjacent merge with the lowest rank (ties:
// leftmost). Symbols are ids (tokens, or interned non-token texts), so a merge is one hash lookup
// of an id pair, with no string building; a heap keeps it O(n log n) for any input.
#include <algorithm>

#include "tokenizer/algorithms.h"
#include "tokenizer/unicode.h"

namespace nt::algo {

namespace {

struct Sym {
  int32_t id;
  int32_t prev, next;
  uint32_t start, len;  // bytes of the source text this symbol covers
};
struct Cand {
  int32_t rank, left, right, result, lid, rid;
};
struct CandGreater {
  bool operator()(const Cand& a, const Cand& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

struct BpeWork {
  std::vector<Sym> syms;
  std::vector<Cand> heap;
  std::vector<PieceRange> pieces;
  std::string mapped;
};

inline uint64_t pair_key(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

// Runs the merges over w.syms (linked in order from index 0).
void merge_symbols(const Vocab& v, BpeWork& w) {
  auto& syms = w.syms;
  auto& heap = w.heap;
  heap.clear();
  const auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    int32_t a = syms[left].id, b = syms[right].id;
    if (a < 0 || b < 0) return;
    const MergeResult* m = v.merges.find(pair_key(a, b));
    if (!m) return;
    heap.push_back({m->rank, left, right, m->result, a, b});
    std::push_heap(heap.begin(), heap.end(), CandGreater{});
  };
  for (size_t k = 0; k + 1 < syms.size(); ++k) try_add(static_cast<int32_t>(k), static_cast<int32_t>(k + 1));
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), CandGreater{});
    Cand c = heap.back();
    heap.pop_back();
    Sym& l = syms[c.left];
    Sym& r = syms[c.right];
    if (l.len == 0 || r.len == 0 || l.next != c.right || l.id != c.lid || r.id != c.rid) continue;
    l.id = c.result;
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) syms[r.next].prev = c.left;
    try_add(l.prev, c.left);
    try_add(c.left, l.next);
  }
}

void link(std::vector<Sym>& syms) {
  for (size_t k = 0; k < syms.size(); ++k) {
    syms[k].prev = static_cast<int32_t>(k) - 1;
    syms[k].next = k + 1 < syms.size() ? static_cast<int32_t>(k + 1) : -1;
  }
}

}  // namespace

void bpe_encode_byte_level(const Vocab& v, std::string_view text, std::vector<int32_t>& out) {
  thread_local BpeWork w;
  w.pieces.clear();
  if (v.pretok.empty()) w.pieces.push_back({0, static_cast<uint32_t>(text.size())});
  else v.pretok.split(text, w.pieces);
  const int32_t n_vocab = v.n_vocab();
  for (PieceRange p : w.pieces) {
    std::string_view word = text.substr(p.begin, p.end - p.begin);
    if (word.empty()) continue;
    if (word.size() == 1) {  // fast path: one byte, one symbol
      int32_t id = v.byte_symbol[static_cast<uint8_t>(word[0])];
      if (id < n_vocab) out.push_back(id);
      continue;
    }
    if (v.ignore_merges) {
      w.mapped.clear();
      for (char c : word) w.mapped += tok::byte_to_unicode(static_cast<uint8_t>(c));
      int32_t id = v.find(w.mapped);
      if (id >= 0) {
        out.push_back(id);
        continue;
      }
    }
    auto& syms = w.syms;
    syms.resize(word.size());
    for (size_t k = 0; k < word.size(); ++k)
      syms[k] = {v.byte_symbol[static_cast<uint8_t>(word[k])], 0, 0, static_cast<uint32_t>(k), 1};
    link(syms);
    merge_symbols(v, w);
    for (int32_t k = 0; k >= 0; k = syms[k].next) {
      const Sym& s = syms[k];
      if (s.id >= 0 && s.id < n_vocab) {
        out.push_back(s.id);
        continue;
      }
      for (uint32_t j = 0; j < s.len; ++j) {  // not a token: its bytes one by one
        int32_t id = v.byte_symbol[static_cast<uint8_t>(word[s.start + j])];
        if (id < n_vocab) out.push_back(id);
      }
    }
  }
}

void bpe_encode_chars(const Vocab& v, std::string_view text, std::vector<int32_t>& out) {
  thread_local BpeWork w2;
  BpeWork& w = w2;
  const int32_t n_vocab = v.n_vocab();
  // Words: the whole text, or (Metaspace split) pieces that each start at a U+2581.
  w.pieces.clear();
  if (v.metaspace_split) {
    uint32_t start = 0;
    for (size_t i = 1; i + 2 < text.size() + 0; ++i) {
      if (text.compare(i, 3, "\xE2\x96\x81") == 0) {
        w.pieces.push_back({start, static_cast<uint32_t>(i)});
        start = static_cast<uint32_t>(i);
        i += 2;
      }
    }
    w.pieces.push_back({start, static_cast<uint32_t>(text.size())});
  } else {
    w.pieces.push_back({0, static_cast<uint32_t>(text.size())});
  }
  for (PieceRange p : w.pieces) {
    std::string_view word = text.substr(p.begin, p.end - p.begin);
    if (word.empty()) continue;
    if (v.ignore_merges) {
      int32_t id = v.find(word);
      if (id >= 0) {
        out.push_back(id);
        continue;
      }
    }
    auto& syms = w.syms;
    syms.clear();
    for (size_t i = 0; i < word.size();) {
      size_t l = tok::utf8_seq_len(word, i);
      if (l == 0) l = 1;
      syms.push_back({v.find_symbol(word.substr(i, l)), 0, 0, static_cast<uint32_t>(i), static_cast<uint32_t>(l)});
      i += l;
    }
    link(syms);
    merge_symbols(v, w);
    for (int32_t k = 0; k >= 0; k = syms[k].next) {
      const Sym& s = syms[k];
      if (s.id >= 0 && s.id < n_vocab) {
        out.push_back(s.id);
        continue;
      }
      bool all_bytes = v.byte_fallback;
      for (uint32_t j = 0; all_bytes && j < s.len; ++j)
        all_bytes = v.byte_token[static_cast<uint8_t>(word[s.start + j])] >= 0;
      if (all_bytes) {
        for (uint32_t j = 0; j < s.len; ++j) out.push_back(v.byte_token[static_cast<uint8_t>(word[s.start + j])]);
      } else if (v.unk >= 0) {
        out.push_back(v.unk);
      }
    }
  }
}

}  // namespace nt::algo

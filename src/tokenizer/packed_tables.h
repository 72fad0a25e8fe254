// tokenizer/packed_tables.h — the vocabulary's large tables in compact form: a vocabulary of 150k
// tokens held as one std::string per entry and node-based hash maps costs about 200 bytes a token;
// these cost about 66 (docs/memory.md). Internal to the tokenizer layer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nt {

// Strings packed back to back in one buffer; entry i is a view that stays valid until the table
// is changed. Append-only.
class StringTable {
 public:
  StringTable() = default;
  explicit StringTable(const std::vector<std::string>& strings);

  size_t size() const { return end_.size(); }
  bool empty() const { return end_.empty(); }
  size_t n_bytes() const { return bytes_.size(); }
  std::string_view operator[](size_t i) const {
    const uint32_t b = i == 0 ? 0 : end_[i - 1];
    return {bytes_.data() + b, end_[i] - b};
  }
  void push_back(std::string_view s);
  void clear();
  void reserve(size_t n_strings, size_t n_bytes);
  void shrink_to_fit();
  size_t heap_bytes() const { return bytes_.capacity() + end_.capacity() * sizeof(uint32_t); }

 private:
  std::string bytes_;
  std::vector<uint32_t> end_;  // end offset of each entry in bytes_
};

// The id of each text of a StringTable: open addressing over ids (linear probing, at most 2/3
// full), the texts compared in the table itself. A text that occurs twice maps to its last id.
class TextIndex {
 public:
  void build(const StringTable& texts);
  int32_t find(const StringTable& texts, std::string_view s) const;  // -1 when absent
  size_t heap_bytes() const { return slot_.capacity() * sizeof(int32_t); }

 private:
  std::vector<int32_t> slot_;  // -1: empty
  size_t mask_ = 0;
};

struct MergeResult {
  int32_t rank;
  int32_t result;  // symbol id of the merged text (>= n_vocab: not a token, see Vocab::extra_text)
};

// BPE merges keyed by (left symbol id << 32 | right symbol id): a flat open-addressing table
// (linear probing, at most 60% full), 16 bytes a slot.
class MergeTable {
 public:
  void reserve(size_t n);
  // Adds key -> value unless key is present (the first, best-ranked duplicate wins).
  void insert(uint64_t key, MergeResult value);
  const MergeResult* find(uint64_t key) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = slot_of(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == key) return &s.value;
      if (s.key == kEmpty) return nullptr;
    }
  }
  size_t size() const { return n_; }
  size_t heap_bytes() const { return slots_.capacity() * sizeof(Slot); }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t(0);  // keys are two non-negative int32 ids
  struct Slot {
    uint64_t key;
    MergeResult value;
  };
  size_t slot_of(uint64_t key) const { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_); }
  void rehash(size_t capacity);

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  int shift_ = 64;
  size_t n_ = 0;
};

}  // namespace nt

#include "tokenizer/packed_tables.h"

#include <algorithm>
#include <bit>
#include <functional>

#include "core/check.h"

namespace nt {

namespace {

size_t pow2_at_least(size_t n) {
  size_t c = 1;
  while (c < n) c <<= 1;
  return c;
}

}  // namespace

StringTable::StringTable(const std::vector<std::string>& strings) {
  size_t n_bytes = 0;
  for (const auto& s : strings) n_bytes += s.size();
  reserve(strings.size(), n_bytes);
  for (const auto& s : strings) push_back(s);
}

void StringTable::push_back(std::string_view s) {
  NT_CHECK(bytes_.size() + s.size() <= UINT32_MAX);
  bytes_.append(s);
  end_.push_back(static_cast<uint32_t>(bytes_.size()));
}

void StringTable::clear() {
  bytes_.clear();
  end_.clear();
}

void StringTable::reserve(size_t n_strings, size_t n_bytes) {
  end_.reserve(n_strings);
  bytes_.reserve(n_bytes);
}

void StringTable::shrink_to_fit() {
  bytes_.shrink_to_fit();
  end_.shrink_to_fit();
}

void TextIndex::build(const StringTable& texts) {
  const size_t cap = pow2_at_least(std::max<size_t>(texts.size() + texts.size() / 2, 16));  // <= 2/3 full
  slot_.assign(cap, -1);
  slot_.shrink_to_fit();
  mask_ = cap - 1;
  for (size_t id = 0; id < texts.size(); ++id) {
    const std::string_view t = texts[id];
    for (size_t i = std::hash<std::string_view>{}(t) & mask_;; i = (i + 1) & mask_) {
      if (slot_[i] < 0 || texts[static_cast<size_t>(slot_[i])] == t) {
        slot_[i] = static_cast<int32_t>(id);
        break;
      }
    }
  }
}

int32_t TextIndex::find(const StringTable& texts, std::string_view s) const {
  if (slot_.empty()) return -1;
  for (size_t i = std::hash<std::string_view>{}(s) & mask_;; i = (i + 1) & mask_) {
    const int32_t id = slot_[i];
    if (id < 0) return -1;
    if (texts[static_cast<size_t>(id)] == s) return id;
  }
}

void MergeTable::reserve(size_t n) {
  const size_t cap = pow2_at_least(std::max<size_t>(n + n / 2 + n / 6, 16));  // n / 0.6
  if (cap > slots_.size()) rehash(cap);
}

void MergeTable::rehash(size_t capacity) {
  std::vector<Slot> old;
  old.swap(slots_);
  slots_.assign(capacity, Slot{kEmpty, {0, 0}});
  slots_.shrink_to_fit();
  mask_ = capacity - 1;
  shift_ = 64 - std::countr_zero(capacity);
  n_ = 0;
  for (const Slot& s : old)
    if (s.key != kEmpty) insert(s.key, s.value);
}

void MergeTable::insert(uint64_t key, MergeResult value) {
  NT_CHECK(key != kEmpty);
  if ((n_ + 1) * 5 > slots_.size() * 3) rehash(std::max<size_t>(slots_.size() * 2, 16));
  for (size_t i = slot_of(key);; i = (i + 1) & mask_) {
    Slot& s = slots_[i];
    if (s.key == key) return;
    if (s.key == kEmpty) {
      s = Slot{key, value};
      ++n_;
      return;
    }
  }
}

}  // namespace nt

// gguf/gguf.h — reading GGUF files (versions 2 and 3) over mmap.
// Owns: the metadata key/value table, the tensor directory, data offsets, and the validation of
// every count, length, offset and dimension against the file size. Must not know: architectures,
// tokenizers, what the tensors mean.
//
// Invariant (enforced in parse): after a successful parse every string_view, array and tensor data
// pointer lies inside the mapped bytes, so users never bounds-check again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/mapped_file.h"
#include "core/result.h"
#include "tensor/dtype.h"

namespace nt {

enum class GgufType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6, BOOL = 7,
  STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};
const char* gguf_type_name(GgufType t);

// The elements of a parsed string array, read in place: each element's offset from the array's
// first byte, 4 bytes an element where views would take 16 (a vocabulary's tokens and merges are
// 300,000 strings, held for as long as the model is loaded). Elements are (u64 length, bytes).
class GgufStrings {
 public:
  size_t size() const { return start_.empty() ? 0 : start_.size() - 1; }
  bool empty() const { return size() == 0; }
  std::string_view operator[](size_t i) const {
    return {reinterpret_cast<const char*>(base_ + start_[i] + 8), start_[i + 1] - start_[i] - 8};
  }
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = std::string_view;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = std::string_view;
    iterator() = default;
    iterator(const GgufStrings* a, size_t i) : a_(a), i_(i) {}
    std::string_view operator*() const { return (*a_)[i_]; }
    iterator& operator++() { ++i_; return *this; }
    iterator operator++(int) { iterator t = *this; ++i_; return t; }
    bool operator==(const iterator& o) const { return i_ == o.i_; }

   private:
    const GgufStrings* a_ = nullptr;
    size_t i_ = 0;
  };
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, size()}; }
  friend bool operator==(const GgufStrings& a, const GgufStrings& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i]) return false;
    return true;
  }

 private:
  friend class GgufParser;
  const uint8_t* base_ = nullptr;
  std::vector<uint32_t> start_;  // [size + 1]: each element's start, then the array's end
};

struct GgufValue {
  GgufType type = GgufType::UINT8;
  // Scalars (whichever matches `type`; integers are also mirrored into i64/u64 when representable).
  uint64_t u64 = 0;
  int64_t i64 = 0;
  double f64 = 0;
  bool b = false;
  std::string_view str;
  // Arrays: element type and count; numbers and strings stay in the file (raw, little-endian;
  // strs reads the strings in place); nested arrays are kept as values.
  GgufType elem_type = GgufType::UINT8;
  uint64_t n = 0;
  const uint8_t* raw = nullptr;
  GgufStrings strs;
  std::vector<GgufValue> items;  // only for arrays of arrays

  bool is_array() const { return type == GgufType::ARRAY; }
  bool is_integer() const;
  bool is_number() const { return is_integer() || type == GgufType::FLOAT32 || type == GgufType::FLOAT64; }
  // Numeric array element i as double / int64 (elem_type must be numeric; i < n).
  double num_at(uint64_t i) const;
  int64_t int_at(uint64_t i) const;
  // Short human-readable rendering (arrays abbreviated).
  std::string to_string(size_t max_items = 8) const;
};

struct GgufKV {
  std::string key;
  GgufValue value;
};

struct GgufTensor {
  std::string name;
  uint32_t n_dims = 0;
  uint64_t ne[4] = {1, 1, 1, 1};  // ne[0] is the contiguous (row) dimension
  DType type = DType::F32;
  uint64_t offset = 0;  // relative to the data section
  uint64_t n_bytes = 0;
  const uint8_t* data = nullptr;  // inside the mapping
  uint64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
};

class GgufFile {
 public:
  // Maps and parses `path`. Errors name the file, the byte offset and the problem.
  static Result<GgufFile> open(const std::string& path);
  // Parses bytes already in memory (fuzzing, tests); `data` must outlive the result.
  static Result<GgufFile> parse(const uint8_t* data, size_t size, const std::string& name);

  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  uint64_t file_size() const { return size_; }
  const std::string& path() const { return name_; }

  const std::vector<GgufKV>& kvs() const { return kvs_; }
  const GgufValue* find(std::string_view key) const;
  // Typed getters: nullopt when absent or of an incompatible type.
  std::optional<uint64_t> get_u64(std::string_view key) const;
  std::optional<int64_t> get_i64(std::string_view key) const;
  std::optional<double> get_f64(std::string_view key) const;
  std::optional<bool> get_bool(std::string_view key) const;
  std::optional<std::string_view> get_str(std::string_view key) const;
  const GgufValue* get_array(std::string_view key) const;

  // Drops the metadata bytes (everything before the tensor data: the vocabulary, merges, chat
  // template) from the process's resident memory once they have been read; views into them stay
  // valid and read the file again if used. No-op for parse()d bytes.
  void release_metadata_pages() const;

  const std::vector<GgufTensor>& tensors() const { return tensors_; }
  const GgufTensor* find_tensor(std::string_view name) const;

 private:
  std::shared_ptr<MappedFile> map_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string name_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<GgufKV> kvs_;
  std::unordered_map<std::string, size_t> kv_index_;
  std::vector<GgufTensor> tensors_;
  std::unordered_map<std::string, size_t> tensor_index_;

  friend class GgufParser;
};

}  // namespace nt

// gguf/gguf_file.cpp — lookups and value helpers over a parsed GGUF.
#include <cstring>

#include "core/check.h"
#include "core/strings.h"
#include "gguf/gguf.h"

namespace nt {

bool GgufValue::is_integer() const {
  switch (type) {
    case GgufType::UINT8: case GgufType::INT8: case GgufType::UINT16: case GgufType::INT16:
    case GgufType::UINT32: case GgufType::INT32: case GgufType::UINT64: case GgufType::INT64:
      return true;
    default:
      return false;
  }
}

template <class T>
static T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

double GgufValue::num_at(uint64_t i) const {
  NT_CHECK(type == GgufType::ARRAY && i < n && raw != nullptr);
  switch (elem_type) {
    case GgufType::UINT8: return raw[i];
    case GgufType::INT8: return static_cast<int8_t>(raw[i]);
    case GgufType::BOOL: return raw[i];
    case GgufType::UINT16: return load<uint16_t>(raw + 2 * i);
    case GgufType::INT16: return load<int16_t>(raw + 2 * i);
    case GgufType::UINT32: return load<uint32_t>(raw + 4 * i);
    case GgufType::INT32: return load<int32_t>(raw + 4 * i);
    case GgufType::FLOAT32: return load<float>(raw + 4 * i);
    case GgufType::UINT64: return static_cast<double>(load<uint64_t>(raw + 8 * i));
    case GgufType::INT64: return static_cast<double>(load<int64_t>(raw + 8 * i));
    case GgufType::FLOAT64: return load<double>(raw + 8 * i);
    default: NT_CHECK(false && "not a numeric array"); return 0;
  }
}

int64_t GgufValue::int_at(uint64_t i) const {
  NT_CHECK(type == GgufType::ARRAY && i < n && raw != nullptr);
  switch (elem_type) {
    case GgufType::UINT64: return static_cast<int64_t>(load<uint64_t>(raw + 8 * i));
    case GgufType::INT64: return load<int64_t>(raw + 8 * i);
    default: return static_cast<int64_t>(num_at(i));
  }
}

std::string GgufValue::to_string(size_t max_items) const {
  switch (type) {
    case GgufType::STRING: {
      std::string s(str.substr(0, 120));
      for (char& c : s) if (c == '\n') c = ' ';
      return str.size() > 120 ? s + "..." : s;
    }
    case GgufType::BOOL: return b ? "true" : "false";
    case GgufType::FLOAT32: case GgufType::FLOAT64: return str_printf("%g", f64);
    case GgufType::ARRAY: {
      std::string s = str_printf("[%s x %llu]", gguf_type_name(elem_type), static_cast<unsigned long long>(n));
      return s;
    }
    default:
      if (type == GgufType::INT8 || type == GgufType::INT16 || type == GgufType::INT32 || type == GgufType::INT64)
        return std::to_string(i64);
      return std::to_string(u64);
  }
  (void)max_items;
}

const GgufValue* GgufFile::find(std::string_view key) const {
  auto it = kv_index_.find(std::string(key));
  return it == kv_index_.end() ? nullptr : &kvs_[it->second].value;
}

std::optional<uint64_t> GgufFile::get_u64(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v || !v->is_integer() || (v->i64 < 0 && v->type != GgufType::UINT64)) return std::nullopt;
  return v->u64;
}
std::optional<int64_t> GgufFile::get_i64(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v || !v->is_integer()) return std::nullopt;
  return v->i64;
}
std::optional<double> GgufFile::get_f64(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v || !v->is_number()) return std::nullopt;
  return v->f64;
}
std::optional<bool> GgufFile::get_bool(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v || v->type != GgufType::BOOL) return std::nullopt;
  return v->b;
}
std::optional<std::string_view> GgufFile::get_str(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v || v->type != GgufType::STRING) return std::nullopt;
  return v->str;
}
const GgufValue* GgufFile::get_array(std::string_view key) const {
  const GgufValue* v = find(key);
  return v && v->is_array() ? v : nullptr;
}

const GgufTensor* GgufFile::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(std::string(name));
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace nt

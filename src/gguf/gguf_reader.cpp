// gguf/gguf_reader.cpp — the bounds-checked GGUF parser (see gguf.h for the invariant).
#include <cstring>
#include <limits>

#include "core/strings.h"
#include "gguf/gguf.h"
#include "gguf/gguf_internal.h"

namespace nt {

namespace {
constexpr uint64_t kMaxStringLen = uint64_t(1) << 30;
constexpr int kMaxArrayDepth = 4;
constexpr uint32_t kMaxDims = 4;

}  // namespace

const char* gguf_type_name(GgufType t) {
  switch (t) {
    case GgufType::UINT8: return "u8";
    case GgufType::INT8: return "i8";
    case GgufType::UINT16: return "u16";
    case GgufType::INT16: return "i16";
    case GgufType::UINT32: return "u32";
    case GgufType::INT32: return "i32";
    case GgufType::FLOAT32: return "f32";
    case GgufType::BOOL: return "bool";
    case GgufType::STRING: return "str";
    case GgufType::ARRAY: return "arr";
    case GgufType::UINT64: return "u64";
    case GgufType::INT64: return "i64";
    case GgufType::FLOAT64: return "f64";
  }
  return "?";
}

class GgufParser {
 public:
  GgufParser(const uint8_t* d, size_t n, const std::string& name) : d_(d), n_(n), name_(name) {}

  Error fail(const char* what) const {
    return make_error("%s: invalid GGUF at byte %llu: %s", name_.c_str(),
                      static_cast<unsigned long long>(pos_), what);
  }
  Error fail(const std::string& what) const { return fail(what.c_str()); }

  bool has(uint64_t k) const { return k <= n_ - pos_; }

  template <class T>
  bool read(T& out) {
    if (!has(sizeof(T))) return false;
    std::memcpy(&out, d_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }

  Result<std::string_view> read_string(const char* what) {
    uint64_t len = 0;
    if (!read(len)) return fail(str_printf("truncated length of %s", what));
    if (len > kMaxStringLen || !has(len))
      return fail(str_printf("%s length %llu exceeds the remaining %llu bytes of the file", what,
                             static_cast<unsigned long long>(len),
                             static_cast<unsigned long long>(n_ - pos_)));
    std::string_view s(reinterpret_cast<const char*>(d_ + pos_), len);
    pos_ += len;
    return s;
  }

  Status read_value(GgufType type, GgufValue& v, int depth) {
    v.type = type;
    switch (type) {
      case GgufType::UINT8: { uint8_t x; if (!read(x)) break; v.u64 = x; v.i64 = x; v.f64 = x; return {}; }
      case GgufType::INT8: { int8_t x; if (!read(x)) break; v.i64 = x; v.u64 = static_cast<uint64_t>(x); v.f64 = x; return {}; }
      case GgufType::UINT16: { uint16_t x; if (!read(x)) break; v.u64 = x; v.i64 = x; v.f64 = x; return {}; }
      case GgufType::INT16: { int16_t x; if (!read(x)) break; v.i64 = x; v.u64 = static_cast<uint64_t>(x); v.f64 = x; return {}; }
      case GgufType::UINT32: { uint32_t x; if (!read(x)) break; v.u64 = x; v.i64 = x; v.f64 = x; return {}; }
      case GgufType::INT32: { int32_t x; if (!read(x)) break; v.i64 = x; v.u64 = static_cast<uint64_t>(x); v.f64 = x; return {}; }
      case GgufType::UINT64: { uint64_t x; if (!read(x)) break; v.u64 = x; v.i64 = static_cast<int64_t>(x); v.f64 = static_cast<double>(x); return {}; }
      case GgufType::INT64: { int64_t x; if (!read(x)) break; v.i64 = x; v.u64 = static_cast<uint64_t>(x); v.f64 = static_cast<double>(x); return {}; }
      case GgufType::FLOAT32: { float x; if (!read(x)) break; v.f64 = x; return {}; }
      case GgufType::FLOAT64: { double x; if (!read(x)) break; v.f64 = x; return {}; }
      case GgufType::BOOL: {
        uint8_t x;
        if (!read(x)) break;
        if (x > 1) { pos_ -= 1; return fail(str_printf("bool value %u is neither 0 nor 1", x)); }
        v.b = x != 0; v.u64 = x; v.i64 = x;
        return {};
      }
      case GgufType::STRING: {
        auto s = read_string("string value");
        if (!s) return s.error();
        v.str = *s;
        return {};
      }
      case GgufType::ARRAY: {
        if (depth >= kMaxArrayDepth) return fail("arrays nested too deeply");
        uint32_t et = 0;
        if (!read(et)) break;
        if (et > static_cast<uint32_t>(GgufType::FLOAT64)) { pos_ -= 4; return fail(str_printf("unknown array element type %u", et)); }
        v.elem_type = static_cast<GgufType>(et);
        if (!read(v.n)) break;
        const uint64_t count = v.n;
        if (size_t es = scalar_size(v.elem_type)) {
          if (count > (n_ - pos_) / es)
            return fail(str_printf("array of %llu %s elements exceeds the remaining %llu bytes",
                                   static_cast<unsigned long long>(count), gguf_type_name(v.elem_type),
                                   static_cast<unsigned long long>(n_ - pos_)));
          v.raw = d_ + pos_;
          if (v.elem_type == GgufType::BOOL)
            for (uint64_t i = 0; i < count; ++i)
              if (v.raw[i] > 1) { pos_ += i; return fail("bool array element is neither 0 nor 1"); }
          pos_ += count * es;
          return {};
        }
        // Strings need at least 8 bytes each, arrays at least 12: bound the count before reserving.
        const uint64_t min_elem = v.elem_type == GgufType::STRING ? 8 : 12;
        if (count > (n_ - pos_) / min_elem)
          return fail(str_printf("array count %llu exceeds what the remaining %llu bytes can hold",
                                 static_cast<unsigned long long>(count),
                                 static_cast<unsigned long long>(n_ - pos_)));
        if (v.elem_type == GgufType::STRING) {
          const size_t first = pos_;
          v.strs.base_ = d_ + first;
          v.strs.start_.reserve(count + 1);
          for (uint64_t i = 0; i < count; ++i) {
            v.strs.start_.push_back(static_cast<uint32_t>(pos_ - first));
            auto s = read_string("array string");
            if (!s) return s.error();
            if (pos_ - first > UINT32_MAX) return fail("a string array over 4 GiB is not supported");
          }
          v.strs.start_.push_back(static_cast<uint32_t>(pos_ - first));
        } else {
          v.items.resize(count);
          for (uint64_t i = 0; i < count; ++i) {
            // an array element of type ARRAY is (elem_type, count, elements), no tag of its own
            NT_TRY(read_value(GgufType::ARRAY, v.items[i], depth + 1));
          }
        }
        return {};
      }
    }
    return fail(str_printf("truncated %s value", gguf_type_name(type)));
  }

  Result<GgufFile> run() {
    GgufFile f;
    f.data_ = d_;
    f.size_ = n_;
    f.name_ = name_;
    uint32_t magic = 0;
    if (!read(magic)) return fail("file too small to be GGUF (no magic)");
    if (magic != kMagic) { pos_ = 0; return fail("bad magic (not a GGUF file)"); }
    if (!read(f.version_)) return fail("truncated version");
    if (f.version_ != 2 && f.version_ != 3) {
      pos_ -= 4;
      return fail(str_printf("unsupported GGUF version %u (supported: 2, 3)", f.version_));
    }
    uint64_t n_tensors = 0, n_kv = 0;
    if (!read(n_tensors)) return fail("truncated tensor count");
    if (!read(n_kv)) return fail("truncated metadata count");
    // Each KV needs >= 12 bytes (key length + type), each tensor >= 24: bound before reserving.
    if (n_kv > (n_ - pos_) / 12) { pos_ -= 8; return fail(str_printf("metadata count %llu is larger than the file can hold", static_cast<unsigned long long>(n_kv))); }
    f.kvs_.reserve(n_kv);
    for (uint64_t i = 0; i < n_kv; ++i) {
      uint64_t start = pos_;
      auto key = read_string("metadata key");
      if (!key) return key.error();
      uint32_t t = 0;
      if (!read(t)) return fail("truncated metadata value type");
      if (t > static_cast<uint32_t>(GgufType::FLOAT64)) { pos_ -= 4; return fail(str_printf("unknown metadata value type %u for key '%.*s'", t, static_cast<int>(key->size()), key->data())); }
      GgufKV kv;
      kv.key = std::string(*key);
      NT_TRY(read_value(static_cast<GgufType>(t), kv.value, 0));
      if (!f.kv_index_.emplace(kv.key, f.kvs_.size()).second) {
        pos_ = start;
        return fail("duplicate metadata key '" + kv.key + "'");
      }
      f.kvs_.push_back(std::move(kv));
    }
    if (const GgufValue* a = f.find("general.alignment")) {
      if (!a->is_integer() || a->u64 == 0 || a->u64 > (1u << 30) || (a->u64 & (a->u64 - 1)) != 0)
        return fail("general.alignment must be a power of two");
      f.alignment_ = a->u64;
    }
    if (n_tensors > (n_ - pos_) / 24) return fail(str_printf("tensor count %llu is larger than the file can hold", static_cast<unsigned long long>(n_tensors)));
    f.tensors_.reserve(n_tensors);
    for (uint64_t i = 0; i < n_tensors; ++i) {
      uint64_t start = pos_;
      GgufTensor t;
      auto name = read_string("tensor name");
      if (!name) return name.error();
      t.name = std::string(*name);
      if (!read(t.n_dims)) return fail("truncated tensor dimension count");
      if (t.n_dims == 0 || t.n_dims > kMaxDims) return fail(str_printf("tensor '%s' has %u dimensions (1 to 4 allowed)", t.name.c_str(), t.n_dims));
      uint64_t n_el = 1;
      for (uint32_t d = 0; d < t.n_dims; ++d) {
        if (!read(t.ne[d])) return fail("truncated tensor dimensions");
        if (t.ne[d] == 0 || t.ne[d] > (uint64_t(1) << 62) / n_el)
          return fail(str_printf("tensor '%s' dimension %u is %llu (zero or too large)", t.name.c_str(), d, static_cast<unsigned long long>(t.ne[d])));
        n_el *= t.ne[d];
      }
      uint32_t type = 0;
      if (!read(type)) return fail("truncated tensor type");
      auto info = dtype_info(type);
      if (!info) { pos_ -= 4; return fail(str_printf("tensor '%s' has unknown type %u", t.name.c_str(), type)); }
      t.type = info->type;
      if (t.ne[0] % info->block_size != 0)
        return fail(str_printf("tensor '%s': row length %llu is not a multiple of the %s block size %u", t.name.c_str(), static_cast<unsigned long long>(t.ne[0]), info->name, info->block_size));
      t.n_bytes = n_el / info->block_size * info->type_size;
      if (!read(t.offset)) return fail("truncated tensor offset");
      if (t.offset % f.alignment_ != 0) { pos_ -= 8; return fail(str_printf("tensor '%s' offset %llu is not aligned to %llu", t.name.c_str(), static_cast<unsigned long long>(t.offset), static_cast<unsigned long long>(f.alignment_))); }
      if (!f.tensor_index_.emplace(t.name, f.tensors_.size()).second) { pos_ = start; return fail("duplicate tensor name '" + t.name + "'"); }
      f.tensors_.push_back(std::move(t));
    }
    uint64_t data_off = (pos_ + f.alignment_ - 1) / f.alignment_ * f.alignment_;
    if (n_tensors > 0 && data_off > n_) return fail("file ends before the tensor data section");
    f.data_offset_ = data_off;
    const uint64_t data_size = n_ > data_off ? n_ - data_off : 0;
    for (auto& t : f.tensors_) {
      if (t.offset > data_size || t.n_bytes > data_size - t.offset) {
        pos_ = data_off;
        return fail(str_printf("tensor '%s' data [%llu, +%llu) lies beyond the end of the file (data section holds %llu bytes)",
                               t.name.c_str(), static_cast<unsigned long long>(t.offset), static_cast<unsigned long long>(t.n_bytes),
                               static_cast<unsigned long long>(data_size)));
      }
      t.data = d_ + data_off + t.offset;
    }
    return f;
  }

 private:
  const uint8_t* d_;
  size_t n_;
  std::string name_;
  uint64_t pos_ = 0;
};

Result<GgufFile> GgufFile::parse(const uint8_t* data, size_t size, const std::string& name) {
  GgufParser p(data, size, name);
  return p.run();
}

Result<GgufFile> GgufFile::open(const std::string& path) {
  auto m = MappedFile::open(path);
  if (!m) return m.error();
  auto map = std::make_shared<MappedFile>(std::move(*m));
  auto f = parse(map->data(), map->size(), path);
  if (!f) return f.error();
  f->map_ = std::move(map);
  return f;
}

void GgufFile::release_metadata_pages() const {
  if (map_) map_->release_pages(0, static_cast<size_t>(data_offset_));
}

}  // namespace nt

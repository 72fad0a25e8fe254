// gguf/gguf_writer.cpp — GGUF v3 serialization (see gguf_writer.h).
#include "gguf/gguf_writer.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/check.h"
#include "core/files.h"
#include "core/strings.h"
#include "gguf/gguf_internal.h"

namespace nt {

namespace {
constexpr uint32_t kVersion = 3;

template <class T>
void append(std::string& s, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  s.append(b, sizeof(T));
}
void append_str(std::string& s, std::string_view v) {
  append<uint64_t>(s, v.size());
  s.append(v.data(), v.size());
}
uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

// Serializes a value read from a file (payload only: no type tag for the top level).
void serialize(std::string& s, const GgufValue& v) {
  switch (v.type) {
    case GgufType::UINT8: append<uint8_t>(s, static_cast<uint8_t>(v.u64)); break;
    case GgufType::INT8: append<int8_t>(s, static_cast<int8_t>(v.i64)); break;
    case GgufType::UINT16: append<uint16_t>(s, static_cast<uint16_t>(v.u64)); break;
    case GgufType::INT16: append<int16_t>(s, static_cast<int16_t>(v.i64)); break;
    case GgufType::UINT32: append<uint32_t>(s, static_cast<uint32_t>(v.u64)); break;
    case GgufType::INT32: append<int32_t>(s, static_cast<int32_t>(v.i64)); break;
    case GgufType::UINT64: append<uint64_t>(s, v.u64); break;
    case GgufType::INT64: append<int64_t>(s, v.i64); break;
    case GgufType::FLOAT32: append<float>(s, static_cast<float>(v.f64)); break;
    case GgufType::FLOAT64: append<double>(s, v.f64); break;
    case GgufType::BOOL: append<uint8_t>(s, v.b ? 1 : 0); break;
    case GgufType::STRING: append_str(s, v.str); break;
    case GgufType::ARRAY:
      append<uint32_t>(s, static_cast<uint32_t>(v.elem_type));
      append<uint64_t>(s, v.n);
      if (size_t es = scalar_size(v.elem_type)) {
        if (v.n) s.append(reinterpret_cast<const char*>(v.raw), es * v.n);
      } else if (v.elem_type == GgufType::STRING) {
        for (auto str : v.strs) append_str(s, str);
      } else {
        for (const auto& item : v.items) serialize(s, item);
      }
      break;
  }
}
}  // namespace

// out_'s destructor removes an unfinished temporary file
GgufWriter::~GgufWriter() = default;

void GgufWriter::put_kv(std::string_view key, GgufType type, std::string payload) {
  for (auto& kv : kvs_)
    if (kv.key == key) {
      kv.type = type;
      kv.payload = std::move(payload);
      return;
    }
  kvs_.push_back({std::string(key), type, std::move(payload)});
}

#define NT_SCALAR_SETTER(fn, T, tag)                 \
  void GgufWriter::fn(std::string_view key, T v) { \
    std::string p;                                  \
    append<T>(p, v);                                \
    put_kv(key, GgufType::tag, std::move(p));       \
  }
NT_SCALAR_SETTER(set_u8, uint8_t, UINT8)
NT_SCALAR_SETTER(set_i8, int8_t, INT8)
NT_SCALAR_SETTER(set_u16, uint16_t, UINT16)
NT_SCALAR_SETTER(set_i16, int16_t, INT16)
NT_SCALAR_SETTER(set_u32, uint32_t, UINT32)
NT_SCALAR_SETTER(set_i32, int32_t, INT32)
NT_SCALAR_SETTER(set_u64, uint64_t, UINT64)
NT_SCALAR_SETTER(set_i64, int64_t, INT64)
NT_SCALAR_SETTER(set_f32, float, FLOAT32)
NT_SCALAR_SETTER(set_f64, double, FLOAT64)
#undef NT_SCALAR_SETTER

void GgufWriter::set_bool(std::string_view key, bool v) {
  std::string p;
  append<uint8_t>(p, v ? 1 : 0);
  put_kv(key, GgufType::BOOL, std::move(p));
}

void GgufWriter::set_str(std::string_view key, std::string_view v) {
  std::string p;
  append_str(p, v);
  put_kv(key, GgufType::STRING, std::move(p));
}

void GgufWriter::set_str_array(std::string_view key, const std::vector<std::string>& v) {
  std::string p;
  append<uint32_t>(p, static_cast<uint32_t>(GgufType::STRING));
  append<uint64_t>(p, v.size());
  for (const auto& s : v) append_str(p, s);
  put_kv(key, GgufType::ARRAY, std::move(p));
}

void GgufWriter::set_raw_array(std::string_view key, GgufType elem_type, const void* data, uint64_t n) {
  const size_t es = scalar_size(elem_type);
  NT_CHECK(es != 0);
  std::string p;
  append<uint32_t>(p, static_cast<uint32_t>(elem_type));
  append<uint64_t>(p, n);
  if (n) p.append(static_cast<const char*>(data), es * n);
  put_kv(key, GgufType::ARRAY, std::move(p));
}

void GgufWriter::set_f32_array(std::string_view key, const std::vector<float>& v) {
  set_raw_array(key, GgufType::FLOAT32, v.data(), v.size());
}
void GgufWriter::set_i32_array(std::string_view key, const std::vector<int32_t>& v) {
  set_raw_array(key, GgufType::INT32, v.data(), v.size());
}

void GgufWriter::set_value(std::string_view key, const GgufValue& v) {
  std::string p;
  serialize(p, v);
  put_kv(key, v.type, std::move(p));
}

bool GgufWriter::has_key(std::string_view key) const {
  for (const auto& kv : kvs_)
    if (kv.key == key) return true;
  return false;
}

void GgufWriter::remove_key(std::string_view key) {
  for (size_t i = 0; i < kvs_.size(); ++i)
    if (kvs_[i].key == key) {
      kvs_.erase(kvs_.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
}

size_t GgufWriter::add_tensor(std::string_view name, DType type, const std::vector<uint64_t>& ne) {
  NT_CHECK(f_ == nullptr);
  NT_CHECK(!ne.empty() && ne.size() <= 4);
  const DTypeInfo& info = dtype_info(type);
  NT_CHECK(ne[0] % info.block_size == 0);
  uint64_t n_el = 1;
  for (uint64_t d : ne) n_el *= d;
  Tensor t{std::string(name), type, ne, 0, n_el / info.block_size * info.type_size};
  tensors_.push_back(std::move(t));
  return tensors_.size() - 1;
}

uint64_t GgufWriter::alignment() const {
  for (const auto& kv : kvs_)
    if (kv.key == "general.alignment" && kv.payload.size() >= 4) {
      uint32_t a = 0;
      std::memcpy(&a, kv.payload.data(), 4);
      if (a != 0 && (a & (a - 1)) == 0) return a;
    }
  return 32;
}

std::string GgufWriter::header_bytes() const {
  std::string h;
  append<uint32_t>(h, kMagic);
  append<uint32_t>(h, kVersion);
  append<uint64_t>(h, tensors_.size());
  append<uint64_t>(h, kvs_.size());
  for (const auto& kv : kvs_) {
    append_str(h, kv.key);
    append<uint32_t>(h, static_cast<uint32_t>(kv.type));
    h += kv.payload;
  }
  const uint64_t a = alignment();
  uint64_t off = 0;
  for (const auto& t : tensors_) {
    append_str(h, t.name);
    append<uint32_t>(h, static_cast<uint32_t>(t.ne.size()));
    for (uint64_t d : t.ne) append<uint64_t>(h, d);
    append<uint32_t>(h, static_cast<uint32_t>(t.type));
    append<uint64_t>(h, off);
    off = align_up(off + t.n_bytes, a);
  }
  // the data section starts aligned; a file without tensors ends right after its metadata
  if (!tensors_.empty()) h.resize(align_up(h.size(), a), '\0');
  return h;
}

uint64_t GgufWriter::total_bytes() const {
  const uint64_t a = alignment();
  uint64_t off = 0;
  for (const auto& t : tensors_) off = align_up(off + t.n_bytes, a);
  // the last tensor is padded too, matching what finish() writes
  return header_bytes().size() + off;
}

Status GgufWriter::fail_io(const char* what) {
  int e = errno;
  return make_error("%s: %s: %s", out_.temp_path().c_str(), what, std::strerror(e));
}

Status GgufWriter::write_raw(const void* data, size_t n) {
  if (n && std::fwrite(data, 1, n, f_) != n) return fail_io("write failed");
  return {};
}

std::string GgufWriter::temp_path(const std::string& path) { return atomic_temp_path(path); }

Status GgufWriter::check_destination(const std::string& path, const std::vector<std::string>& inputs) {
  NT_TRY(check_output_path(path, inputs));
  // rename() would replace a device node or a FIFO, not write into it
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return make_error("%s: not a regular file", path.c_str());
  const std::string tmp = temp_path(path);
  for (const std::string& in : inputs)
    if (same_file(tmp, in))
      return make_error("%s is written first to %s, which is the same file as the input %s; choose another "
                        "output path",
                        path.c_str(), tmp.c_str(), in.c_str());
  return {};
}

Status GgufWriter::begin(const std::string& path, const std::vector<std::string>& inputs) {
  NT_CHECK(f_ == nullptr);
  NT_TRY(check_destination(path, inputs));
  NT_TRY(out_.open(path, inputs));
  f_ = out_.file();
  std::setvbuf(f_, nullptr, _IOFBF, 1 << 20);
  const uint64_t a = alignment();
  uint64_t off = 0;
  for (auto& t : tensors_) {
    t.offset = off;
    off = align_up(off + t.n_bytes, a);
  }
  std::string h = header_bytes();
  cur_tensor_ = 0;
  cur_written_ = 0;
  data_pos_ = 0;
  return write_raw(h.data(), h.size());
}

Status GgufWriter::write_tensor_chunk(const void* data, uint64_t n_bytes) {
  NT_CHECK(f_ != nullptr);
  NT_CHECK(cur_tensor_ < tensors_.size());
  const Tensor& t = tensors_[cur_tensor_];
  NT_CHECK(cur_written_ + n_bytes <= t.n_bytes);
  NT_TRY(write_raw(data, n_bytes));
  cur_written_ += n_bytes;
  data_pos_ += n_bytes;
  if (cur_written_ == t.n_bytes) {
    const uint64_t end = align_up(data_pos_, alignment());
    static const char zeros[256] = {};
    while (data_pos_ < end) {
      uint64_t k = std::min<uint64_t>(end - data_pos_, sizeof(zeros));
      NT_TRY(write_raw(zeros, k));
      data_pos_ += k;
    }
    ++cur_tensor_;
    cur_written_ = 0;
  }
  return {};
}

Status GgufWriter::write_tensor_data(const void* data, uint64_t n_bytes) {
  NT_CHECK(cur_tensor_ < tensors_.size() && cur_written_ == 0);
  NT_CHECK(n_bytes == tensors_[cur_tensor_].n_bytes);
  return write_tensor_chunk(data, n_bytes);
}

Status GgufWriter::finish() {
  NT_CHECK(f_ != nullptr);
  NT_CHECK(cur_tensor_ == tensors_.size());
  f_ = nullptr;
  // every failure removes the temporary file: a failed write leaves nothing behind
  return out_.commit();
}

}  // namespace nt

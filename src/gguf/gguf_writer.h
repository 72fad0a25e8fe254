// gguf/gguf_writer.h — writing GGUF (version 3) files: metadata of every value type (arrays
// included), the tensor directory with aligned offsets, and tensor data streamed to disk in order.
// Owns: the byte layout of what it writes and the atomic replacement of the output file.
// Must not know: architectures, tokenizers, how tensor data is produced.
//
// Use: set metadata and add_tensor(...) for every tensor, then begin(path) writes the header; then
// write_tensor_data(...) once per tensor in the order added (each may be given in several pieces via
// write_tensor_chunk); finish() pads, closes and renames the temporary file onto `path` (an
// AtomicFile: a writer killed at any moment leaves the old file or the complete new one).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "core/atomic_file.h"
#include "core/result.h"
#include "gguf/gguf.h"
#include "tensor/dtype.h"

namespace nt {

class GgufWriter {
 public:
  GgufWriter() = default;
  ~GgufWriter();
  GgufWriter(const GgufWriter&) = delete;
  GgufWriter& operator=(const GgufWriter&) = delete;

  // Metadata; setting an existing key replaces its value (position kept).
  void set_u8(std::string_view key, uint8_t v);
  void set_i8(std::string_view key, int8_t v);
  void set_u16(std::string_view key, uint16_t v);
  void set_i16(std::string_view key, int16_t v);
  void set_u32(std::string_view key, uint32_t v);
  void set_i32(std::string_view key, int32_t v);
  void set_u64(std::string_view key, uint64_t v);
  void set_i64(std::string_view key, int64_t v);
  void set_f32(std::string_view key, float v);
  void set_f64(std::string_view key, double v);
  void set_bool(std::string_view key, bool v);
  void set_str(std::string_view key, std::string_view v);
  void set_str_array(std::string_view key, const std::vector<std::string>& v);
  void set_f32_array(std::string_view key, const std::vector<float>& v);
  void set_i32_array(std::string_view key, const std::vector<int32_t>& v);
  // Numeric array of elem_type (a scalar type) from n raw little-endian elements.
  void set_raw_array(std::string_view key, GgufType elem_type, const void* data, uint64_t n);
  // Copies a value read by GgufReader (any type, nested arrays included).
  void set_value(std::string_view key, const GgufValue& v);
  bool has_key(std::string_view key) const;
  void remove_key(std::string_view key);
  size_t n_kv() const { return kvs_.size(); }

  // Declares a tensor (ne[0] = row length, must be a multiple of the type's block size).
  // Returns its index. Call before begin().
  size_t add_tensor(std::string_view name, DType type, const std::vector<uint64_t>& ne);
  size_t n_tensors() const { return tensors_.size(); }
  uint64_t tensor_bytes(size_t i) const { return tensors_[i].n_bytes; }
  // Total file size once written (header + aligned data).
  uint64_t total_bytes() const;

  // The temporary file begin(path) writes and finish() renames onto `path` (this process's
  // ".NAME.nexttok-tmp-PID" in path's folder; see core/atomic_file.h).
  static std::string temp_path(const std::string& path);
  // Checks, before any work, that `path` may be replaced: not a directory or other non-regular
  // file, and neither it nor temp_path(path) is the same file as one of `inputs` (which writing
  // would destroy; compared as files, so "./a.gguf", a symlink or a hard link to a.gguf count).
  static Status check_destination(const std::string& path, const std::vector<std::string>& inputs);

  // Writes the header and tensor directory to temp_path(path), after check_destination(path,
  // inputs) and removing the stale temporaries of earlier writers of `path` that were killed (never
  // one of `inputs`). Alignment: general.alignment if set.
  Status begin(const std::string& path, const std::vector<std::string>& inputs = {});
  // Appends the data of the next tensor in order; bytes must equal its size.
  Status write_tensor_data(const void* data, uint64_t n_bytes);
  // Appends part of the current tensor's data; the tensor ends when its size is reached.
  Status write_tensor_chunk(const void* data, uint64_t n_bytes);
  // Checks all tensors were written, flushes, and renames onto the final path. On failure the
  // temporary file is removed (as it is when the writer is destroyed before finish()).
  Status finish();

 private:
  struct Kv {
    std::string key;
    GgufType type;
    std::string payload;  // serialized value (without key and type tag)
  };
  struct Tensor {
    std::string name;
    DType type;
    std::vector<uint64_t> ne;
    uint64_t offset = 0;
    uint64_t n_bytes = 0;
  };
  void put_kv(std::string_view key, GgufType type, std::string payload);
  uint64_t alignment() const;
  std::string header_bytes() const;
  Status write_raw(const void* data, size_t n);
  Status fail_io(const char* what);

  std::vector<Kv> kvs_;
  std::vector<Tensor> tensors_;
  AtomicFile out_;
  FILE* f_ = nullptr;  // out_.file() between begin() and finish()
  size_t cur_tensor_ = 0;
  uint64_t cur_written_ = 0;
  uint64_t data_pos_ = 0;  // bytes written into the data section so far
};

}  // namespace nt

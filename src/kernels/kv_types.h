// kernels/kv_types.h — the one table of KV cache types: the storage types the attention kernels
// read cached K and V rows in. The -ctk / -ctv parser, the engine's validation and the kernels'
// own checks all go through it; their names are the lower-case dtype names.
// Must not know: the KV cache's bookkeeping, the CLI.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "core/result.h"
#include "tensor/dtype.h"

namespace nt {

// In the order help and errors list them. Each has a scalar and SIMD attention path. A block
// type (Q8_0) needs head_dim to be a multiple of its block size, so one KV head's slice of a
// cached row is whole blocks.
std::span<const DType> kv_cache_types();
bool is_kv_cache_type(DType t);
// "f16, bf16, f32, q8_0"
std::string kv_cache_type_names();
// Case-insensitive; the error names the input and lists kv_cache_type_names().
Result<DType> parse_kv_cache_type(std::string_view name);
// Ok when attention can read a cache of type t for heads of head_dim; otherwise why not.
Status check_kv_cache_type(DType t, int head_dim);

}  // namespace nt

#include "kernels/kv_types.h"

#include "core/strings.h"

namespace nt {

namespace {

constexpr DType kKvCacheTypes[] = {DType::F16, DType::BF16, DType::F32, DType::Q8_0};

std::string lower_name(DType t) { return to_lower(dtype_name(t)); }

}  // namespace

std::span<const DType> kv_cache_types() { return kKvCacheTypes; }

bool is_kv_cache_type(DType t) {
  for (DType k : kKvCacheTypes)
    if (k == t) return true;
  return false;
}

std::string kv_cache_type_names() {
  std::string s;
  for (DType t : kKvCacheTypes) s += (s.empty() ? "" : ", ") + lower_name(t);
  return s;
}

Result<DType> parse_kv_cache_type(std::string_view name) {
  const auto t = dtype_from_name(name);
  if (!t || !is_kv_cache_type(*t))
    return Error{"unsupported KV cache type '" + std::string(name) + "' (use one of: " + kv_cache_type_names() + ")"};
  return *t;
}

Status check_kv_cache_type(DType t, int head_dim) {
  if (!is_kv_cache_type(t))
    return make_error("KV cache type %s is not supported (use one of: %s)", lower_name(t).c_str(),
                      kv_cache_type_names().c_str());
  const uint32_t block = dtype_info(t).block_size;
  if (head_dim <= 0 || head_dim % static_cast<int>(block) != 0)
    return make_error("KV cache type %s needs head_dim (%d) to be a multiple of %u", lower_name(t).c_str(), head_dim,
                      block);
  return {};
}

}  // namespace nt

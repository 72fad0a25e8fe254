#include "model/weight_loader.h"

#include "core/strings.h"

namespace nt {

std::string layer_tensor(int il, const char* suffix) { return "blk." + std::to_string(il) + "." + suffix; }

Result<MatView> WeightLoader::matrix(const std::string& name, int64_t n_cols, int64_t n_rows) const {
  const GgufTensor* t = f_.find_tensor(name);
  if (!t) return make_error("%s: missing tensor '%s'", f_.path().c_str(), name.c_str());
  if (!dtype_supported(t->type))
    return make_error("%s: tensor '%s' has type %s, which this build cannot compute with", f_.path().c_str(),
                      name.c_str(), dtype_info(t->type).name);
  if (t->n_dims > 2 || int64_t(t->ne[0]) != n_cols || int64_t(t->ne[1]) != n_rows)
    return make_error("%s: tensor '%s' has shape [%llu, %llu], expected [%lld, %lld]", f_.path().c_str(), name.c_str(),
                      static_cast<unsigned long long>(t->ne[0]), static_cast<unsigned long long>(t->ne[1]),
                      static_cast<long long>(n_cols), static_cast<long long>(n_rows));
  MatView m;
  m.type = t->type;
  m.n_cols = n_cols;
  m.n_rows = n_rows;
  m.data = t->data;
  m.row_bytes = dtype_row_bytes(t->type, static_cast<uint64_t>(n_cols));
  return m;
}

Result<const float*> WeightLoader::vector(const std::string& name, int64_t n) const {
  const GgufTensor* t = f_.find_tensor(name);
  if (!t) return make_error("%s: missing tensor '%s'", f_.path().c_str(), name.c_str());
  if (int64_t(t->n_elements()) != n || t->ne[0] != uint64_t(n))
    return make_error("%s: tensor '%s' has %llu elements, expected %lld", f_.path().c_str(), name.c_str(),
                      static_cast<unsigned long long>(t->n_elements()), static_cast<long long>(n));
  if (t->type == DType::F32 && reinterpret_cast<uintptr_t>(t->data) % alignof(float) == 0)
    return reinterpret_cast<const float*>(t->data);
  if (!dtype_supported(t->type))
    return make_error("%s: tensor '%s' has unsupported type %s", f_.path().c_str(), name.c_str(), dtype_info(t->type).name);
  owned_.emplace_back(static_cast<size_t>(n));
  convert_row_to_f32(t->type, t->data, owned_.back().data(), n);
  return static_cast<const float*>(owned_.back().data());
}

}  // namespace nt

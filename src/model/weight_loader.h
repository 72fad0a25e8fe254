// model/weight_loader.h — finds tensors by name in a GGUF and checks type and shape, turning them
// into MatViews (zero-copy) or f32 vectors. Shared by every architecture file.
// Must not know: which architecture asks.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "gguf/gguf.h"
#include "kernels/kernels.h"

namespace nt {

class WeightLoader {
 public:
  WeightLoader(const GgufFile& f, std::vector<std::vector<float>>& owned) : f_(f), owned_(owned) {}

  // A matrix with n_cols elements per row and n_rows rows (ne = [n_cols, n_rows]).
  Result<MatView> matrix(const std::string& name, int64_t n_cols, int64_t n_rows) const;
  // A 1-D f32 vector of n elements (converted to f32 and owned if stored in another type).
  Result<const float*> vector(const std::string& name, int64_t n) const;
  // The same, stored into `out` (the loaders' per-layer form).
  Status matrix_into(const std::string& name, int64_t n_cols, int64_t n_rows, MatView& out) const {
    auto r = matrix(name, n_cols, n_rows);
    if (!r) return r.error();
    out = *r;
    return {};
  }
  Status vector_into(const std::string& name, int64_t n, const float*& out) const {
    auto r = vector(name, n);
    if (!r) return r.error();
    out = *r;
    return {};
  }
  bool has(const std::string& name) const { return f_.find_tensor(name) != nullptr; }
  // Keeps v with the model's weights (a converted copy); its data stays where it is.
  const float* own(std::vector<float> v) const {
    owned_.push_back(std::move(v));
    return owned_.back().data();
  }

 private:
  const GgufFile& f_;
  std::vector<std::vector<float>>& owned_;
};

// "blk.<il>.<suffix>"
std::string layer_tensor(int il, const char* suffix);

}  // namespace nt

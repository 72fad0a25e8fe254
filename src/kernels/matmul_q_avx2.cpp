#include "kernels/kernels_internal.h"
namespace nt::detail {
bool matmul_avx2(const MatView&, const float*, int64_t, float*, int64_t, int64_t, ThreadPool&) { return false; }
KvRowOps kv_row_ops_avx2() { return kv_row_ops_scalar(); }
}

#include "kernels/kernels_internal.h"
namespace nt::detail {
const MatmulKernel* matmul_kernel_avx2(DType) { return nullptr; }
KvRowOps kv_row_ops_avx2() { return kv_row_ops_scalar(); }
}

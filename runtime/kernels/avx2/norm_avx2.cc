// AVX2 layer norm: the generic kernel (generic/norm.h) with the AVX2 float operations
// (avx2/avx2_ops.h), bit-identical to the reference.
#include "avx2/avx2_ops.h"
#include "generic/norm.h"
#include "kernel_families.h"

namespace mtlite {
namespace kernels {

template <>
void AddNormKernels<IsaAvx2>(KernelTable& t) {
  t.layer_norm = generic::LayerNorm<avx2::F8>;
}

}  // namespace kernels
}  // namespace mtlite

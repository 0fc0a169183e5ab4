// NEON layer norm. aarch64: the generic kernels (generic/norm.h) with the NEON float operations
// (neon/neon_ops.h), bit-identical to the reference. armv7: the VFP scalar reference (NEON float
// arithmetic flushes denormals; see neon/neon_ops.h).
#if defined(__ARM_NEON) || defined(__ARM_NEON__)
#include "generic/norm.h"
#include "kernel_families.h"
#include "neon/neon_ops.h"

namespace mtlite {
namespace kernels {

template <>
void AddNormKernels<IsaNeon>(KernelTable& t) {
#if defined(__aarch64__)
  t.layer_norm = generic::LayerNorm<neon::F8>;
#else
  AddNormKernels<IsaReference>(t);
#endif
}

}  // namespace kernels
}  // namespace mtlite

#endif  // __ARM_NEON

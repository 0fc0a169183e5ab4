// NEON activations. aarch64: the generic kernels (generic/activation.h) with the NEON float
// operations (neon/neon_ops.h), bit-identical to the reference. armv7: the VFP scalar reference
// (NEON float arithmetic flushes denormals; see neon/neon_ops.h).
#if defined(__ARM_NEON) || defined(__ARM_NEON__)
#include "generic/activation.h"
#include "kernel_families.h"
#include "neon/neon_ops.h"

namespace mtlite {
namespace kernels {

template <>
void AddActivationKernels<IsaNeon>(KernelTable& t) {
#if defined(__aarch64__)
  t.activation = generic::Activation<neon::F8>;
#else
  AddActivationKernels<IsaReference>(t);
#endif
}

}  // namespace kernels
}  // namespace mtlite

#endif  // __ARM_NEON

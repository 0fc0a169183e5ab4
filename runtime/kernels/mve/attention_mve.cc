// Helium table, attention family (softmax_masked, dot_f32, attn_*): the scalar reference on the FPU. MVE float
// arithmetic flushes denormal inputs and results to zero (mve/mve_ops.h), which would change
// these kernels' sums, products and compares wherever one occurs (the contract covers them),
// and has no vector divide.
#if defined(__ARM_FEATURE_MVE)
#include "kernel_families.h"

namespace mtlite {
namespace kernels {

template <>
void AddAttentionKernels<IsaMve>(KernelTable& t) {
  AddAttentionKernels<IsaReference>(t);
}

}  // namespace kernels
}  // namespace mtlite

#endif  // __ARM_FEATURE_MVE

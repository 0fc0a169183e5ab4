// Helium table, search family (max_sum_exp, scan_gt, argmax): the scalar reference on the FPU. MVE float
// arithmetic flushes denormal inputs and results to zero (mve/mve_ops.h), which would change
// these kernels' sums, products and compares wherever one occurs (the contract covers them),
// and has no vector divide.
#if defined(__ARM_FEATURE_MVE)
#include "kernel_families.h"

namespace mtlite {
namespace kernels {

template <>
void AddSearchKernels<IsaMve>(KernelTable& t) {
  AddSearchKernels<IsaReference>(t);
}

}  // namespace kernels
}  // namespace mtlite

#endif  // __ARM_FEATURE_MVE

// NEON search kernels (max_sum_exp, scan_gt, argmax). aarch64: the generic kernels
// (generic/search.h) with the NEON float operations (neon/neon_ops.h), bit-identical to the
// reference. armv7: the VFP scalar reference (NEON float arithmetic flushes denormals; see
// neon/neon_ops.h).
#if defined(__ARM_NEON) || defined(__ARM_NEON__)
#include "generic/search.h"
#include "kernel_families.h"
#include "neon/neon_ops.h"

namespace mtlite {
namespace kernels {

template <>
void AddSearchKernels<IsaNeon>(KernelTable& t) {
#if defined(__aarch64__)
  generic::SetSearchEntries<neon::F8>(t);
#else
  AddSearchKernels<IsaReference>(t);
#endif
}

}  // namespace kernels
}  // namespace mtlite

#endif  // __ARM_NEON

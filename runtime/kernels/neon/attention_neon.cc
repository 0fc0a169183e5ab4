// NEON attention kernels (softmax, dot, scores, context). aarch64: the generic kernels
// (generic/attention.h) with the NEON float operations (neon/neon_ops.h), bit-identical to the
// reference. armv7: the VFP scalar reference (NEON float arithmetic flushes denormals; see
// neon/neon_ops.h).
#if defined(__ARM_NEON) || defined(__ARM_NEON__)
#include "generic/attention.h"
#include "kernel_families.h"
#include "neon/neon_ops.h"

namespace mtlite {
namespace kernels {

template <>
void AddAttentionKernels<IsaNeon>(KernelTable& t) {
#if defined(__aarch64__)
  generic::SetAttentionEntries<neon::F8>(t);
#else
  AddAttentionKernels<IsaReference>(t);
#endif
}

}  // namespace kernels
}  // namespace mtlite

#endif  // __ARM_NEON

// AVX2 attention kernels (softmax, dot, scores, context): the generic kernel
// (generic/attention.h) with the AVX2 float operations (avx2/avx2_ops.h), bit-identical to the
// reference.
#include "avx2/avx2_ops.h"
#include "generic/attention.h"
#include "kernel_families.h"

namespace mtlite {
namespace kernels {

template <>
void AddAttentionKernels<IsaAvx2>(KernelTable& t) {
  generic::SetAttentionEntries<avx2::F8>(t);
}

}  // namespace kernels
}  // namespace mtlite

// AVX-512 attention kernels (softmax, dot, scores, context): the generic kernels
// (generic/attention.h) with the 16-lane AVX-512 float operations (avx512/avx512_ops.h; the sums
// keep the contract's 8 lanes), bit-identical to the reference.
#include "avx512/avx512_ops.h"  // first: it sets diagnostics for <immintrin.h>
#include "generic/attention.h"
#include "kernel_families.h"

namespace mtlite {
namespace kernels {

template <>
void AddAttentionKernels<IsaAvx512>(KernelTable& t) {
  generic::SetAttentionEntries<avx512::F16>(t);
}

}  // namespace kernels
}  // namespace mtlite

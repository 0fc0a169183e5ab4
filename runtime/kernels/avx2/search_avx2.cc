// AVX2 search kernels (max_sum_exp, scan_gt, argmax): the generic kernel (generic/search.h) with
// the AVX2 float operations (avx2/avx2_ops.h), bit-identical to the reference.
#include "avx2/avx2_ops.h"
#include "generic/search.h"
#include "kernel_families.h"

namespace mtlite {
namespace kernels {

template <>
void AddSearchKernels<IsaAvx2>(KernelTable& t) {
  generic::SetSearchEntries<avx2::F8>(t);
}

}  // namespace kernels
}  // namespace mtlite

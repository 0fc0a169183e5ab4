// AVX-512 search kernels (max_sum_exp, scan_gt, argmax): the generic kernels (generic/search.h)
// with the 16-lane AVX-512 float operations (avx512/avx512_ops.h; the sums keep the contract's 8
// lanes), bit-identical to the reference.
#include "avx512/avx512_ops.h"  // first: it sets diagnostics for <immintrin.h>
#include "generic/search.h"
#include "kernel_families.h"

namespace mtlite {
namespace kernels {

template <>
void AddSearchKernels<IsaAvx512>(KernelTable& t) {
  generic::SetSearchEntries<avx512::F16>(t);
}

}  // namespace kernels
}  // namespace mtlite

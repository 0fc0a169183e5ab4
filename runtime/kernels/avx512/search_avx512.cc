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
  t.max_sum_exp = generic::MaxSumExp<avx512::F16>;
  t.scan_gt = generic::ScanGt<avx512::F16>;
  t.argmax = generic::Argmax<avx512::F16>;
}

}  // namespace kernels
}  // namespace mtlite

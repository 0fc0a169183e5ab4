// AVX-512 layer norm: the generic kernels (generic/norm.h) with the 16-lane AVX-512 float
// operations (avx512/avx512_ops.h; the sums keep the contract's 8 lanes), bit-identical to the
// reference.
#include "avx512/avx512_ops.h"  // first: it sets diagnostics for <immintrin.h>
#include "generic/norm.h"
#include "kernel_families.h"

namespace mtlite {
namespace kernels {

template <>
void AddNormKernels<IsaAvx512>(KernelTable& t) {
  t.layer_norm = generic::LayerNorm<avx512::F16>;
}

}  // namespace kernels
}  // namespace mtlite

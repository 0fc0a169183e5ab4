// AVX-512 activations: the generic kernels (generic/activation.h) with the 16-lane AVX-512 float
// operations (avx512/avx512_ops.h; the sums keep the contract's 8 lanes), bit-identical to the
// reference.
#include "avx512/avx512_ops.h"  // first: it sets diagnostics for <immintrin.h>
#include "generic/activation.h"
#include "kernel_families.h"

namespace mtlite {
namespace kernels {

template <>
void AddActivationKernels<IsaAvx512>(KernelTable& t) {
  t.activation = generic::Activation<avx512::F16>;
}

}  // namespace kernels
}  // namespace mtlite

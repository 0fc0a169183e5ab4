// AVX2 activations: the generic kernel (generic/activation.h) with the AVX2 float operations
// (avx2/avx2_ops.h), bit-identical to the reference.
#include "avx2/avx2_ops.h"
#include "generic/activation.h"
#include "kernel_families.h"

namespace mtlite {
namespace kernels {

template <>
void AddActivationKernels<IsaAvx2>(KernelTable& t) {
  t.activation = generic::Activation<avx2::F8>;
}

}  // namespace kernels
}  // namespace mtlite

// Helium activations: SiLU and sigmoid (the SSRU forget gate) with ExpRef in MVE vectors and
// the division on the scalar FPU, bit-identical to the reference (mve/mve_ops.h); GELU, the tanh
// GELU and ReLU are the scalar reference's.
#if defined(__ARM_FEATURE_MVE)
#include "kernel_families.h"
#include "mve/mve_ops.h"

namespace mtlite {
namespace kernels {

template <>
void AddActivationKernels<IsaMve>(KernelTable& t) {
#if (__ARM_FEATURE_MVE & 2)
  t.activation = mve::Activation;
#else
  AddActivationKernels<IsaReference>(t);  // integer-only MVE
#endif
}

}  // namespace kernels
}  // namespace mtlite

#endif  // __ARM_FEATURE_MVE

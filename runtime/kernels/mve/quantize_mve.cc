// Helium activation quantisation: the generic kernel (generic/quantize.h) with the MVE operations
// (mve/mve_ops.h), bit-identical to the reference. Only rows where flush-to-zero provably cannot
// change the result take the vector path (the others: the scalar reference).
#if defined(__ARM_FEATURE_MVE)
#include "generic/quantize.h"
#include "kernel_families.h"
#include "mve/mve_ops.h"

namespace mtlite {
namespace kernels {

template <>
void AddQuantizeKernels<IsaMve>(KernelTable& t) {
#if (__ARM_FEATURE_MVE & 2)
  t.quantize_rows_s8 = generic::QuantizeRowsS8<mve::Q4>;
#else
  AddQuantizeKernels<IsaReference>(t);  // integer-only MVE: no vector float multiply
#endif
}

}  // namespace kernels
}  // namespace mtlite

#endif  // __ARM_FEATURE_MVE

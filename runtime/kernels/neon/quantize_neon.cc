// NEON activation quantisation (armv7 and aarch64): the generic kernel (generic/quantize.h)
// with the NEON operations (neon/neon_ops.h), bit-identical to the reference. On armv7 only
// rows where flush-to-zero provably cannot change the result take the vector path.
#if defined(__ARM_NEON) || defined(__ARM_NEON__)
#include "generic/quantize.h"
#include "kernel_families.h"
#include "neon/neon_ops.h"

namespace mtlite {
namespace kernels {

template <>
void AddQuantizeKernels<IsaNeon>(KernelTable& t) {
  t.quantize_rows_s8 = generic::QuantizeRowsS8<neon::F8>;
}

}  // namespace kernels
}  // namespace mtlite

#endif  // __ARM_NEON

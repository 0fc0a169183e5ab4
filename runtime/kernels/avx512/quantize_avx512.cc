// AVX-512 activation quantisation: the generic kernels (generic/quantize.h) with the 16-lane
// AVX-512 float operations (avx512/avx512_ops.h; the sums keep the contract's 8 lanes), bit-
// identical to the reference.
#include "avx512/avx512_ops.h"  // first: it sets diagnostics for <immintrin.h>
#include "generic/quantize.h"
#include "kernel_families.h"

namespace mtlite {
namespace kernels {

template <>
void AddQuantizeKernels<IsaAvx512>(KernelTable& t) {
  t.quantize_rows_s8 = generic::QuantizeRowsS8<avx512::F16>;
}

}  // namespace kernels
}  // namespace mtlite

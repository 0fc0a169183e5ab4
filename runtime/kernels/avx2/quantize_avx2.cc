// AVX2 activation quantisation: the generic kernel (generic/quantize.h) with the AVX2 float
// operations (avx2/avx2_ops.h), bit-identical to the reference.
#include "avx2/avx2_ops.h"
#include "generic/quantize.h"
#include "kernel_families.h"

namespace mtlite {
namespace kernels {

template <>
void AddQuantizeKernels<IsaAvx2>(KernelTable& t) {
  t.quantize_rows_s8 = generic::QuantizeRowsS8<avx2::F8>;
}

}  // namespace kernels
}  // namespace mtlite

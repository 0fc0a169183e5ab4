// WebAssembly SIMD128 activation quantisation: the generic kernels (generic/quantize.h) with the SIMD128
// operations (wasm/wasm_ops.h), bit-identical to the reference.
#if defined(__wasm_simd128__)
#include "generic/quantize.h"
#include "kernel_families.h"
#include "wasm/wasm_ops.h"

namespace mtlite {
namespace kernels {

template <>
void AddQuantizeKernels<IsaWasm>(KernelTable& t) {
  t.quantize_rows_s8 = generic::QuantizeRowsS8<wasm::F8>;
}

}  // namespace kernels
}  // namespace mtlite

#endif  // __wasm_simd128__

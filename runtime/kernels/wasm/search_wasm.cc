// WebAssembly SIMD128 search kernels (max_sum_exp, scan_gt, argmax): the generic kernels (generic/search.h) with the SIMD128
// operations (wasm/wasm_ops.h), bit-identical to the reference.
#if defined(__wasm_simd128__)
#include "generic/search.h"
#include "kernel_families.h"
#include "wasm/wasm_ops.h"

namespace mtlite {
namespace kernels {

template <>
void AddSearchKernels<IsaWasm>(KernelTable& t) {
  generic::SetSearchEntries<wasm::F8>(t);
}

}  // namespace kernels
}  // namespace mtlite

#endif  // __wasm_simd128__

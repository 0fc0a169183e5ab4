// WebAssembly SIMD128 layer norm: the generic kernels (generic/norm.h) with the SIMD128
// operations (wasm/wasm_ops.h), bit-identical to the reference.
#if defined(__wasm_simd128__)
#include "generic/norm.h"
#include "kernel_families.h"
#include "wasm/wasm_ops.h"

namespace mtlite {
namespace kernels {

template <>
void AddNormKernels<IsaWasm>(KernelTable& t) {
  t.layer_norm = generic::LayerNorm<wasm::F8>;
}

}  // namespace kernels
}  // namespace mtlite

#endif  // __wasm_simd128__

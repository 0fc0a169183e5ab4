// WebAssembly SIMD128 activations: the generic kernels (generic/activation.h) with the SIMD128
// operations (wasm/wasm_ops.h), bit-identical to the reference.
#if defined(__wasm_simd128__)
#include "generic/activation.h"
#include "kernel_families.h"
#include "wasm/wasm_ops.h"

namespace mtlite {
namespace kernels {

template <>
void AddActivationKernels<IsaWasm>(KernelTable& t) {
  t.activation = generic::Activation<wasm::F8>;
}

}  // namespace kernels
}  // namespace mtlite

#endif  // __wasm_simd128__

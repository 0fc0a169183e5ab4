// WebAssembly SIMD128 attention kernels (softmax, dot, scores, context): the generic kernels (generic/attention.h) with the SIMD128
// operations (wasm/wasm_ops.h), bit-identical to the reference.
#if defined(__wasm_simd128__)
#include "generic/attention.h"
#include "kernel_families.h"
#include "wasm/wasm_ops.h"

namespace mtlite {
namespace kernels {

template <>
void AddAttentionKernels<IsaWasm>(KernelTable& t) {
  generic::SetAttentionEntries<wasm::F8>(t);
}

}  // namespace kernels
}  // namespace mtlite

#endif  // __wasm_simd128__

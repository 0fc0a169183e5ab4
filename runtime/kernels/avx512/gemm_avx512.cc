// int8 GEMM / GEMV with AVX-512 VNNI: the "avx512-vnni" table's entries (the micro-kernel and
// its measurements: avx512_gemm.h).
#include "avx512/avx512_gemm.h"  // first: avx512_ops.h sets diagnostics for <immintrin.h>

namespace mtlite {
namespace kernels {

template <>
void AddGemmKernels<IsaAvx512>(KernelTable& t) {
  generic::SetGemmEntries<avx512::GemmK>(t);
}

}  // namespace kernels
}  // namespace mtlite

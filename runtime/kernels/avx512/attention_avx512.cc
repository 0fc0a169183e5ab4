// AVX-512 attention kernels (softmax, dot, scores, context): the generic kernels
// (generic/attention.h) with the 16-lane AVX-512 float operations (avx512/avx512_ops.h; the sums
// keep the contract's 8 lanes), bit-identical to the reference.
#include "avx512/avx512_ops.h"  // first: it sets diagnostics for <immintrin.h>
#include "generic/attention.h"
#include "kernel_families.h"

namespace mtlite {
namespace kernels {
namespace avx512 {
namespace {

// Short rows: with 16 lanes they run wholly through the tail path (masked load, copied store),
// where the 8 lanes of the AVX2 operations are faster (attention_bench on Zen5, interleaved
// repetitions: softmax rows of 8 96 vs 129 us, dot of 64 3.4 vs 3.6 ns; from 16 on the 16 lanes
// win) and give the same bits (the same 8-lane sums).
void SoftmaxMasked(float* x, int n, const float* mask) {
  if (n <= 8)
    generic::SoftmaxMasked<avx2::F8>(x, n, mask);
  else
    generic::SoftmaxMasked<F16>(x, n, mask);
}
float Dot(const float* a, const float* b, int n) {
  return n <= 64 ? generic::Dot<avx2::F8>(a, b, n) : generic::Dot<F16>(a, b, n);
}

}  // namespace
}  // namespace avx512

template <>
void AddAttentionKernels<IsaAvx512>(KernelTable& t) {
  generic::SetAttentionEntries<avx512::F16>(t);
  t.softmax_masked = avx512::SoftmaxMasked;
  t.dot_f32 = avx512::Dot;
}

}  // namespace kernels
}  // namespace mtlite

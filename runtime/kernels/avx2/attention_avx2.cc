// AVX2 attention kernels (softmax, dot, scores, context): the generic kernel
// (generic/attention.h) with the AVX2 float operations (avx2/avx2_ops.h), bit-identical to the
// reference.
#include "avx2/avx2_ops.h"
#include "generic/attention.h"
#include "kernel_families.h"

namespace mtlite {
namespace kernels {

template <>
void AddAttentionKernels<IsaAvx2>(KernelTable& t) {
  t.softmax_masked = generic::SoftmaxMasked<avx2::F8>;
  t.dot_f32 = generic::Dot<avx2::F8>;
  t.attn_scores = generic::AttnScores<avx2::F8>;
  t.attn_context = generic::AttnContext<avx2::F8>;
}

}  // namespace kernels
}  // namespace mtlite

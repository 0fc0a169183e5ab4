// AVX2 kernel table and the entry points shared between the AVX2 translation units.
// Only dispatch.cc and the avx2/*.cc files include this; everything here is compiled with
// -mavx2 -mfma -mf16c and must only run after the CPU check in dispatch.cc.
#pragma once

#include "kernels.h"

namespace mtlite {
namespace kernels {

// Defined in avx2/elementwise_avx2.cc (only on x86-64 builds, MTLITE_HAVE_AVX2_KERNELS).
const KernelTable& Avx2Kernels();

namespace avx2 {
void GemmS8Blocked(int m, int n, int k, const int8_t* a, int lda, const float* a_scales,
                   const int8_t* w, const float* w_scales, const float* bias, const float* residual,
                   int ldr, float* c, int ldc, Act act);
void GemmS8BlockedAcc(int m, int n, int k, const int8_t* a, int lda, const int8_t* w, int32_t* acc,
                      int ldacc);
void Activation(float* x, int n, Act act);
}  // namespace avx2

}  // namespace kernels
}  // namespace mtlite

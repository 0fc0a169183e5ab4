// NEON kernel tables (armv7 and aarch64) and the entry points shared between the NEON
// translation units. Included by dispatch.cc and neon/*.cc only.
#pragma once

#include "kernels.h"

namespace mtlite {
namespace kernels {

// Defined in neon/elementwise_neon.cc ("neon": vmull/vmlal/vpadal int8 GEMM).
const KernelTable& NeonKernels();
// Defined in neon/gemm_s8_dotprod.cc ("neon-dotprod": sdot GEMM, the rest as "neon").
// nullptr when that file was compiled without the dotprod extension.
const KernelTable* NeonDotProdKernelsOrNull();

namespace neon {
void QuantizeRowsS8(const float* x, int m, int k, int ldx, int8_t* q, int ldq, float* scales);
void LayerNorm(const float* x, int m, int d, const float* gamma, const float* beta, float eps,
               float* y);
void SoftmaxMasked(float* x, int n, const float* mask);
float Dot(const float* a, const float* b, int n);
void Axpy(float alpha, const float* x, float* y, int n);
void Activation(float* x, int n, Act act);
void AttnScores(const float* q, const float* k, int ld, const int32_t* idx, int m, int n, float scale,
                float* out);
void AttnContext(const float* p, const float* v, int ld, const int32_t* idx, int m, int n, float* ctx);
float MaxSumExp(const float* x, int n, float* max_out);
int ScanGt(const float* x, int from, int n, float sub, float add, float thr, float* s_out);
int Argmax(const float* x, int n);
void GemmS8Blocked(int m, int n, int k, const int8_t* a, int lda, const float* a_scales,
                   const int8_t* w, const float* w_scales, const float* bias, const float* residual,
                   int ldr, float* c, int ldc, Act act);
void GemmS8BlockedAcc(int m, int n, int k, const int8_t* a, int lda, const int8_t* w, int32_t* acc,
                      int ldacc);
}  // namespace neon

}  // namespace kernels
}  // namespace mtlite

// Scalar reference kernels, exposed for SIMD tails and for tests.
#pragma once
#include "kernels.h"

namespace mtlite {
namespace kernels {
namespace ref {
float ActRef(float x, Act act);
float Sum8(const float* x, int n);
float DotRef(const float* a, const float* b, int n);
int8_t QuantizeOne(float v);
void QuantizeRowsS8(const float* x, int m, int k, int ldx, int8_t* q, int ldq, float* scales);
void GemmS8BlockedAcc(int m, int n, int k, const int8_t* a, int lda, const int8_t* w, int32_t* acc,
                      int ldacc);
void GemmS8Blocked(int m, int n, int k, const int8_t* a, int lda, const float* a_scales,
                   const int8_t* w, const float* w_scales, const float* bias, const float* residual,
                   int ldr, float* c, int ldc, Act act);
void LayerNorm(const float* x, int m, int d, const float* gamma, const float* beta, float eps,
               float* y);
void SoftmaxMasked(float* x, int n, const float* mask);
void Axpy(float alpha, const float* x, float* y, int n);
void Activation(float* x, int n, Act act);
void AttnScores(const float* q, const float* k, int ld, const int32_t* idx, int m, int n, float scale,
                float* out);
void AttnContext(const float* p, const float* v, int ld, const int32_t* idx, int m, int n, float* ctx);
float MaxSumExp(const float* x, int n, float* max_out);
int ScanGt(const float* x, int from, int n, float sub, float add, float thr, float* s_out);
int Argmax(const float* x, int n);
}  // namespace ref
}  // namespace kernels
}  // namespace mtlite

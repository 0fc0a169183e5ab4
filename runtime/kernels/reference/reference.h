// Scalar reference kernels: the numerics every SIMD kernel must match bit for bit. Exposed for
// SIMD tails / fallbacks and for tests. One file per family: reference/<family>_reference.cc.
#pragma once

#include "kernels.h"

namespace mtlite {
namespace kernels {
namespace ref {

// activation_reference.cc
float ActRef(float x, Act act);
void Activation(float* x, int n, Act act);
// quantize_reference.cc
int8_t QuantizeOne(float v);
void QuantizeRowsS8(const float* x, int m, int k, int ldx, int8_t* q, int ldq, float* scales);
// gemm_reference.cc
void GemmS8BlockedAcc(int m, int n, int k, const int8_t* a, int lda, const int8_t* w, int32_t* acc,
                      int ldacc);
void GemmS8Blocked(int m, int n, int k, const int8_t* a, int lda, const float* a_scales,
                   const int8_t* w, const float* w_scales, const float* bias, const float* residual,
                   int ldr, float* c, int ldc, Act act);
void GemmS8BlockedGather(int m, int n, int nblocks, const int32_t* block_idx, int k, const int8_t* a,
                         int lda, const float* a_scales, const int8_t* w, const float* w_scales,
                         const float* bias, float* c, int ldc);
// norm_reference.cc
void LayerNorm(const float* x, int m, int d, const float* gamma, const float* beta, float eps,
               float* y);
// attention_reference.cc: the 8-lane reduction of the contract (Tree8 of 8 lane sums) and the
// kernels built on it
float Tree8(const float* lane);
float Sum8(const float* x, int n);
float Dot(const float* a, const float* b, int n);
void SoftmaxMasked(float* x, int n, const float* mask);
void AttnScores(const float* q, const float* k, int ld, const int32_t* idx, int m, int n, float scale,
                float* out);
void AttnContext(const float* p, const float* v, int ld, const int32_t* idx, int m, int n, float* ctx);
// search_reference.cc
float MaxSumExp(const float* x, int n, float* max_out);
int ScanGt(const float* x, int from, int n, float sub, float add, float thr, float* s_out);
int Argmax(const float* x, int n);

}  // namespace ref
}  // namespace kernels
}  // namespace mtlite

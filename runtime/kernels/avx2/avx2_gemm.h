// What the x86 int8 GEMM micro-kernels (avx2/, avxvnni/, avx512/) share for the tile driver
// (generic/gemm_driver.h): the 8 exact int32 sums of one (row, block) as one __m256i, and their
// epilogues with the AVX2 float operations. Internal linkage only.
#pragma once

#include <immintrin.h>

#include "avx2/avx2_ops.h"
#include "generic/activation.h"
#include "generic/gemm_driver.h"

namespace mtlite {
namespace kernels {
namespace avx2 {
namespace {

struct GemmCommon {
  using Acc = __m256i;
  // SiLU / GELU are long dependency chains (exp, divide): run per 8 outputs inside the tile
  // loop they are latency-bound, so they run as a second pass over the rows just written (in
  // cache), where independent iterations overlap. Same operations, same results.
  static constexpr bool kActSecondPass = true;
  static void Epilogue(const Acc& acc, float as, const float* ws, const float* bias, const float* res,
                       float* out, int count, Act act) {
    generic::Epilogue8<F8>(acc, as, ws, bias, res, out, count, act);
  }
  static void StoreAcc(const Acc& acc, int32_t* out, int count) { generic::StoreAcc8<F8>(acc, out, count); }
  static void Activation(float* x, int n, Act act) { generic::Activation<F8>(x, n, act); }
};

}  // namespace
}  // namespace avx2
}  // namespace kernels
}  // namespace mtlite

// AVX2 versions of the reference scalar math (ExpRef, ErfRef, ActRef) and the 8-lane
// reduction. Every function performs the same IEEE operations in the same order as
// runtime/kernels/reference/kernels_reference.cc, lane by lane; branches become blends.
// Internal linkage only (anonymous namespace): this header is included by AVX2 translation
// units, and no AVX2 code may leak into a COMDAT symbol the linker could pick for non-AVX2 code.
#pragma once

#if defined(__AVX2__)
#include <immintrin.h>

#include <cstdint>

#include "kernels.h"

namespace mtlite {
namespace kernels {
namespace avx2 {
namespace {

inline __m256 Neg(__m256 x) { return _mm256_xor_ps(x, _mm256_set1_ps(-0.0f)); }

// ExpRef, lane-wise.
inline __m256 Exp(__m256 x) {
  // !(x > -87.33654f): -inf, underflow and NaN. NaN stays NaN (x), the others give 0.
  const __m256 low = _mm256_cmp_ps(x, _mm256_set1_ps(-87.33654f), _CMP_NGT_UQ);
  const __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  const __m256 high = _mm256_cmp_ps(x, _mm256_set1_ps(88.72283f), _CMP_GT_OQ);
  const __m256 magic = _mm256_set1_ps(12582912.0f);
  __m256 t = _mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f));
  t = _mm256_add_ps(t, magic);
  const __m256 n = _mm256_sub_ps(t, magic);
  __m256 r = _mm256_sub_ps(x, _mm256_mul_ps(n, _mm256_set1_ps(0.693359375f)));
  r = _mm256_sub_ps(r, _mm256_mul_ps(n, _mm256_set1_ps(-2.12194440e-4f)));
  __m256 p = _mm256_set1_ps(1.9875691500E-4f);
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.3981999507E-3f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(8.3334519073E-3f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(4.1665795894E-2f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.6666665459E-1f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(5.0000001201E-1f));
  const __m256 rr = _mm256_mul_ps(r, r);
  __m256 y = _mm256_mul_ps(p, rr);
  y = _mm256_add_ps(y, r);
  y = _mm256_add_ps(y, _mm256_set1_ps(1.0f));
  // 2^n = 2^n1 * 2^n2 with n1 = n >> 1 (arithmetic), n2 = n - n1.
  const __m256i ni = _mm256_cvttps_epi32(n);
  const __m256i n1 = _mm256_srai_epi32(ni, 1);
  const __m256i n2 = _mm256_sub_epi32(ni, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  __m256 res = _mm256_mul_ps(_mm256_mul_ps(y, s1), s2);
  res = _mm256_blendv_ps(res, _mm256_and_ps(x, nan), low);
  res = _mm256_blendv_ps(res, _mm256_set1_ps(__builtin_inff()), high);
  return res;
}

inline __m256 Erf(__m256 x) {
  const __m256 neg = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
  const __m256 ax = _mm256_blendv_ps(x, Neg(x), neg);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 t =
      _mm256_div_ps(one, _mm256_add_ps(one, _mm256_mul_ps(_mm256_set1_ps(0.3275911f), ax)));
  __m256 p = _mm256_set1_ps(1.061405429f);
  p = _mm256_add_ps(_mm256_mul_ps(p, t), _mm256_set1_ps(-1.453152027f));
  p = _mm256_add_ps(_mm256_mul_ps(p, t), _mm256_set1_ps(1.421413741f));
  p = _mm256_add_ps(_mm256_mul_ps(p, t), _mm256_set1_ps(-0.284496736f));
  p = _mm256_add_ps(_mm256_mul_ps(p, t), _mm256_set1_ps(0.254829592f));
  p = _mm256_mul_ps(p, t);
  const __m256 y = _mm256_sub_ps(one, _mm256_mul_ps(p, Exp(Neg(_mm256_mul_ps(ax, ax)))));
  return _mm256_blendv_ps(y, Neg(y), neg);
}

inline __m256 SiLU(__m256 x) {
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), Exp(Neg(x))));
}
// x > 0 ? x : 0 (MAXPS returns the second operand unless the first is greater: NaN -> 0).
inline __m256 ReLU(__m256 x) { return _mm256_max_ps(x, _mm256_setzero_ps()); }
inline __m256 GELU(__m256 x) {
  const __m256 e = Erf(_mm256_mul_ps(x, _mm256_set1_ps(0.70710678118654752f)));
  return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}
inline __m256 GELUTanh(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 cube = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.044715f), x), _mm256_mul_ps(x, x));
  const __m256 u = _mm256_mul_ps(_mm256_set1_ps(0.7978845608028654f), _mm256_add_ps(x, cube));
  const __m256 e = Exp(_mm256_mul_ps(_mm256_set1_ps(2.0f), u));
  const __m256 th = _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, one)));
  return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x), _mm256_add_ps(one, th));
}

// Out of line: keeps the unrolled GEMM tiles small (the call costs nothing next to a K loop).
[[maybe_unused]] __attribute__((noinline)) __m256 ActivateOutOfLine(__m256 x, Act act) {
  switch (act) {
    case Act::kNone: return x;
    case Act::kSiLU: return SiLU(x);
    case Act::kReLU: return ReLU(x);
    case Act::kGELU: return GELU(x);
    case Act::kGELUTanh: return GELUTanh(x);
  }
  return x;
}
inline __m256 Activate(__m256 x, Act act) {
  if (act == Act::kNone) return x;
  if (act == Act::kReLU) return ReLU(x);
  return ActivateOutOfLine(x, act);
}

// ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7))
inline float Reduce8(__m256 v) {
  const __m128 q = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  // q = (l0+l4, l1+l5, l2+l6, l3+l7)
  const __m128 h = _mm_add_ps(q, _mm_movehl_ps(q, q));  // (q0+q2, q1+q3, ..)
  return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}

// Lane mask for the first `count` (0..8) lanes, for maskload/maskstore.
inline __m256i TailMask(int count) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), idx);
}

}  // namespace
}  // namespace avx2
}  // namespace kernels
}  // namespace mtlite

#endif  // __AVX2__

// AVX-512 float operations for the generic kernels (generic/vec_math.h lists what they are):
// 16 lanes of one __m512, tails by masked loads and copied stores (AVX-512 F/BW/DQ/VL: only included by
// avx512/*.cc, which run after dispatch.cc's CPU and OS checks). Internal linkage only.
//
// The 8-lane reduction of the contract stays 8 lanes: the accumulator A is one __m256 and
// AccAdd(acc, v) adds the low 8 lanes of v (elements i..i+7), then the high 8 (i+8..i+15), so
// every lane j still sums the elements i = j mod 8 in increasing i, exactly as AVX2 and the
// reference do; a partial tail vector has +0 in its missing lanes (padding-invariant).
#pragma once

// GCC 12's AVX-512 intrinsics pass _mm*_undefined_*() as merge sources, which
// -W(maybe-)uninitialized reports wherever they are inlined (GCC bug 105593, fixed in GCC 13);
// this header sets it for the avx512/ files, which include it first.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
#include <immintrin.h>

#include <cstdint>

#include "avx2/avx2_ops.h"

namespace mtlite {
namespace kernels {
namespace avx512 {
namespace {

inline __mmask16 FirstLanes(int count) { return __mmask16((1u << count) - 1u); }  // count 0..16

struct F16 {
  static constexpr int kW = 16;
  using V = __m512;
  using M = __mmask16;
  using I = __m512i;
  using A = __m256;

  static V Set(float f) { return _mm512_set1_ps(f); }
  static V Load(const float* p) { return _mm512_loadu_ps(p); }
  static void Store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V LoadPartial(const float* p, int count) { return _mm512_maskz_loadu_ps(FirstLanes(count), p); }
  // Not a masked store: slow on AMD (see avx2::F8::StorePartial); masked loads are fine.
  static void StorePartial(float* p, int count, V v) {
    alignas(64) float t[16];
    _mm512_store_ps(t, v);
    for (int i = 0; i < count; ++i) p[i] = t[i];
  }
  static V KeepFirst(V v, int count) { return _mm512_maskz_mov_ps(FirstLanes(count), v); }
  static V FirstOr(V v, int count, float f) { return _mm512_mask_mov_ps(_mm512_set1_ps(f), FirstLanes(count), v); }

  static V Add(V a, V b) { return _mm512_add_ps(a, b); }
  static V Sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V Mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V Div(V a, V b) { return _mm512_div_ps(a, b); }
  static V Neg(V a) { return _mm512_xor_ps(a, _mm512_set1_ps(-0.0f)); }
  // VMAXPS returns the second operand unless the first is greater: a > b ? a : b.
  static V MaxGt(V a, V b) { return _mm512_max_ps(a, b); }

  static M Gt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
  static M NotGt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_NGT_UQ); }
  static M Eq(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
  static M IsNaN(V a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
  static M OrMask(M a, M b) { return M(a | b); }
  static bool AnyTrue(M m) { return m != 0; }
  static int FirstTrue(M m) { return m ? __builtin_ctz(unsigned(m)) : -1; }
  static V Select(M m, V a, V b) { return _mm512_mask_blend_ps(m, b, a); }
  static V KeepWhere(V v, M m) { return _mm512_maskz_mov_ps(m, v); }
  static float HMax(V v) {  // no NaN lanes here; max is exact in any order
    return avx2::F8::HMax(_mm256_max_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1)));
  }

  static I TruncToInt(V v) { return _mm512_cvttps_epi32(v); }
  static I ShiftRightArith1(I i) { return _mm512_srai_epi32(i, 1); }
  static I SubInt(I a, I b) { return _mm512_sub_epi32(a, b); }
  static constexpr bool kScalePow2 = true;  // generic/vec_math.h, Exp
  static V ScalePow2(V y, V n) { return _mm512_scalef_ps(y, n); }
  static V Pow2(I n) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n, _mm512_set1_epi32(127)), 23));
  }

  static A AccZero() { return _mm256_setzero_ps(); }
  static A AccAdd(A acc, V v) {
    acc = _mm256_add_ps(acc, _mm512_castps512_ps256(v));
    return _mm256_add_ps(acc, _mm512_extractf32x8_ps(v, 1));
  }
  static float Reduce8(A v) { return avx2::F8::Reduce8(v); }

  // quantisation (generic/quantize.h)
  using QI = __m512i;
  static QI QZero() { return _mm512_setzero_si512(); }
  static QI QMaxAbsBits(QI acc, V v) {  // bit patterns of |v| < 2^31: signed max is unsigned max
    return _mm512_max_epi32(acc, _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7fffffff)));
  }
  static uint32_t QHMax(QI v) {
    return avx2::F8::QHMax(_mm256_max_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1)));
  }
  static bool QuantizeRowVectorOk(uint32_t) { return true; }
  // v -> int32 per the contract: NaN -> 0, clamp to [-127, 127], round half to even (MXCSR)
  static __m512i QuantizeLanes(V v) {
    v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v);
    v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-127.0f)), _mm512_set1_ps(127.0f));
    return _mm512_cvtps_epi32(v);
  }
  static constexpr int kQ = 16;
  static void QuantizeW(const float* x, V inv, int8_t* q) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q),
                     _mm512_cvtepi32_epi8(QuantizeLanes(_mm512_mul_ps(_mm512_loadu_ps(x), inv))));
  }
  static void Quantize(const float* x, V inv, int8_t* q) { QuantizeW(x, inv, q); }
};

}  // namespace
}  // namespace avx512
}  // namespace kernels
}  // namespace mtlite

#endif  // AVX-512

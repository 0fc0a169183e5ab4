// AVX2 float operations for the generic kernels (generic/vec_math.h lists what they are): the
// 8 lanes of one __m256, tails by masked loads (vmaskmovps) and copied stores. Included only by
// avx2/*.cc (compiled with -mavx2 -mfma -mf16c; FMA is never used: kernels.h contract) and by
// the other x86 ISA directories that reuse them. Internal linkage only (anonymous namespace):
// no AVX2 code may leak into a COMDAT symbol the linker could pick for code of another ISA.
// (x86 SSE/AVX scalar and vector arithmetic share MXCSR, so rounding mode and denormal handling
// are the same for the scalar reference and these kernels.)
#pragma once

#if defined(__AVX2__)
#include <immintrin.h>

#include <cstdint>

namespace mtlite {
namespace kernels {
namespace avx2 {
namespace {

// Lane mask for the first `count` (0..8) lanes, for maskload.
inline __m256i TailMask(int count) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), idx);
}

// v -> int32 per the contract: NaN -> 0 (only 0 * inf makes one), clamp to [-127, 127]
// (commutes with rounding since the bounds are integers), then round half to even
// (vcvtps2dq uses MXCSR rounding: nearest-even, as std::nearbyint in the reference).
inline __m256i QuantizeLanes(__m256 v) {
  v = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));
  v = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f));
  return _mm256_cvtps_epi32(v);
}

struct F8 {
  static constexpr int kW = 8;
  using V = __m256;
  using M = __m256;
  using I = __m256i;
  using A = __m256;

  static V Set(float f) { return _mm256_set1_ps(f); }
  static V Load(const float* p) { return _mm256_loadu_ps(p); }
  static void Store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V LoadPartial(const float* p, int count) { return _mm256_maskload_ps(p, TailMask(count)); }
  // Not vmaskmovps: masked stores are slow on AMD (Zen5: a softmax row of 9 took 40 ns with
  // one, 17.5 ns with this copy; attention_bench). Masked loads are fine.
  static void StorePartial(float* p, int count, V v) {
    alignas(32) float t[8];
    _mm256_store_ps(t, v);
    for (int i = 0; i < count; ++i) p[i] = t[i];
  }
  static V KeepFirst(V v, int count) { return _mm256_and_ps(v, _mm256_castsi256_ps(TailMask(count))); }
  static V FirstOr(V v, int count, float f) {
    return _mm256_blendv_ps(_mm256_set1_ps(f), v, _mm256_castsi256_ps(TailMask(count)));
  }

  static V Add(V a, V b) { return _mm256_add_ps(a, b); }
  static V Sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V Mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V Div(V a, V b) { return _mm256_div_ps(a, b); }
  static V Neg(V a) { return _mm256_xor_ps(a, _mm256_set1_ps(-0.0f)); }
  // MAXPS returns the second operand unless the first is greater: a > b ? a : b.
  static V MaxGt(V a, V b) { return _mm256_max_ps(a, b); }

  static M Gt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  static M NotGt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_NGT_UQ); }
  static M Eq(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
  static M IsNaN(V a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
  static M OrMask(M a, M b) { return _mm256_or_ps(a, b); }
  static bool AnyTrue(M m) { return _mm256_movemask_ps(m) != 0; }
  static int FirstTrue(M m) {
    const int bits = _mm256_movemask_ps(m);
    return bits ? __builtin_ctz(unsigned(bits)) : -1;
  }
  static V Select(M m, V a, V b) { return _mm256_blendv_ps(b, a, m); }
  static V KeepWhere(V v, M m) { return _mm256_and_ps(v, m); }
  static float HMax(V v) {  // no NaN lanes here; max is exact in any order
    __m128 q = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    q = _mm_max_ps(q, _mm_movehl_ps(q, q));
    q = _mm_max_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q);
  }

  static I TruncToInt(V v) { return _mm256_cvttps_epi32(v); }
  static I ShiftRightArith1(I i) { return _mm256_srai_epi32(i, 1); }
  static I SubInt(I a, I b) { return _mm256_sub_epi32(a, b); }
  static V Pow2(I n) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23));
  }
  static V CvtInt(I i) { return _mm256_cvtepi32_ps(i); }
  static void StoreInt(int32_t* p, I v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
  static void StoreIntPartial(int32_t* p, int count, I v) {  // no masked store, as StorePartial
    alignas(32) int32_t t[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(t), v);
    for (int i = 0; i < count; ++i) p[i] = t[i];
  }

  static A AccZero() { return _mm256_setzero_ps(); }
  static A AccAdd(A acc, V v) { return _mm256_add_ps(acc, v); }
  // ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7))
  static float Reduce8(A v) {
    const __m128 q = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    // q = (l0+l4, l1+l5, l2+l6, l3+l7)
    const __m128 h = _mm_add_ps(q, _mm_movehl_ps(q, q));  // (q0+q2, q1+q3, ..)
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
  }

  // quantisation (generic/quantize.h)
  using QI = __m256i;
  static QI QZero() { return _mm256_setzero_si256(); }
  static QI QMaxAbsBits(QI acc, V v) {  // bit patterns of |v| < 2^31: signed max is unsigned max
    return _mm256_max_epi32(acc, _mm256_and_si256(_mm256_castps_si256(v), _mm256_set1_epi32(0x7fffffff)));
  }
  static uint32_t QHMax(QI v) {
    __m128i q = _mm_max_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    q = _mm_max_epi32(q, _mm_shuffle_epi32(q, _MM_SHUFFLE(1, 0, 3, 2)));
    q = _mm_max_epi32(q, _mm_shuffle_epi32(q, _MM_SHUFFLE(2, 3, 0, 1)));
    return uint32_t(_mm_cvtsi128_si32(q));
  }
  static bool QuantizeRowVectorOk(uint32_t) { return true; }
  static constexpr int kQ = 32;
  static void Quantize(const float* x, V inv, int8_t* q) {
    const __m256i q0 = QuantizeLanes(_mm256_mul_ps(_mm256_loadu_ps(x), inv));
    const __m256i q1 = QuantizeLanes(_mm256_mul_ps(_mm256_loadu_ps(x + 8), inv));
    const __m256i q2 = QuantizeLanes(_mm256_mul_ps(_mm256_loadu_ps(x + 16), inv));
    const __m256i q3 = QuantizeLanes(_mm256_mul_ps(_mm256_loadu_ps(x + 24), inv));
    // packs work per 128-bit lane: bytes come out as dword groups 0,2,4,6,1,3,5,7 -> permute.
    const __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(q0, q1), _mm256_packs_epi32(q2, q3));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q),
                        _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
  }
  static void QuantizeW(const float* x, V inv, int8_t* q) {
    const __m256i q0 = QuantizeLanes(_mm256_mul_ps(_mm256_loadu_ps(x), inv));
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(q0), _mm256_extracti128_si256(q0, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q), _mm_packs_epi16(w, w));
  }
};

}  // namespace
}  // namespace avx2
}  // namespace kernels
}  // namespace mtlite

#endif  // __AVX2__

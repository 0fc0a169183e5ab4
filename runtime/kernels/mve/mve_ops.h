// Helium (M-profile Vector Extension, Armv8.1-M: Cortex-M55, M85) operations shared by the mve
// translation units (mve/). Internal linkage only.
//
// MVE floating-point instructions always run with the "standard FPSCR value": denormal inputs
// and results are flushed to zero whatever FPSCR.FZ says (the scalar FPU keeps them: IEEE, as
// the reference), and there is no vector divide or square root. As with armv7's Advanced SIMD
// (neon/neon_ops.h), vector float arithmetic therefore cannot reproduce the reference bit for
// bit in general. The mve table uses MVE for integer work (the GEMM's exact int32 accumulation,
// the maxabs and rounding of activation quantisation, under a proven-safe guard) and for the one
// float computation shown to be unaffected by flushing, ExpRef (SiLU and sigmoid, below); the
// rest of the float math is the reference's on the scalar FPU (the GEMM epilogue, layer norm,
// softmax and attention, the search kernels).
#pragma once

#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>

#include <cstdint>

#include "generic/vec_math.h"
#include "kernels.h"
#include "math_coeffs.h"
#include "reference/reference.h"

namespace mtlite {
namespace kernels {
namespace mve {
namespace {

#if (__ARM_FEATURE_MVE & 2)  // MVE with floating point (Cortex-M55 without +nomve.fp)
// Activation quantisation (generic/quantize.h): 4 float lanes (one q register).
struct Q4 {
  static constexpr int kW = 4;
  using V = float32x4_t;
  static V Set(float f) { return vdupq_n_f32(f); }
  static V Load(const float* p) { return vld1q_f32(p); }

  using QI = uint32x4_t;
  static QI QZero() { return vdupq_n_u32(0); }
  // integer max on the bit patterns of |v|: exact (no float arithmetic)
  static QI QMaxAbsBits(QI acc, V v) {
    return vmaxq_u32(acc, vandq_u32(vreinterpretq_u32_f32(v), vdupq_n_u32(0x7fffffffu)));
  }
  static uint32_t QHMax(QI v) { return vmaxvq_u32(0, v); }
  // Flush-to-zero cannot change a row whose maxabs >= 2^-118: a denormal x then gives
  // |x * inv| < 2^-126 * 127 * 2^118 < 0.5 (-> 0 either way), a product below 2^-126 rounds to
  // 0 either way, and inv = 127 / maxabs stays finite (so x * inv is never NaN). Tinier rows
  // take the scalar reference.
  static bool QuantizeRowVectorOk(uint32_t maxabs_bits) { return maxabs_bits >= 0x04800000u; }
  // 4 floats (already x * inv, finite) -> the contract's int8: clamp to [-127, 127], round half
  // to even (VCVTN), stored as the low bytes of the 4 int32 lanes (VSTRB.32).
  static void QuantizeLanes(float32x4_t v, int8_t* q) {
    v = vminnmq_f32(vmaxnmq_f32(v, vdupq_n_f32(-127.0f)), vdupq_n_f32(127.0f));
    vstrbq_s32(q, vcvtnq_s32_f32(v));
  }
  static constexpr int kQ = 4;
  static void Quantize(const float* x, V inv, int8_t* q) { QuantizeLanes(vmulq_f32(vld1q_f32(x), inv), q); }
  static void QuantizeW(const float* x, V inv, int8_t* q) { Quantize(x, inv, q); }
};

// ExpRef on 4 lanes (generic::Exp over these operations: the reference's operations in its
// order). With flush-to-zero it still gives ExpRef's bits for every input: a denormal x reads
// as 0 and gives 1, as ExpRef(x) does
// (x vanishes next to 1 in y = y + 1); a product that flushes (p0 * r, p * r, r * r, p * rr for
// tiny r) is added to a term whose unit in the last place is far larger (a coefficient, r, or
// 1), so the sum is the same; r = x - n * ln2 is 0, x or at least 2^-83 (a difference of
// floats whose units in the last place are at least that); y * 2^n1 is normal
// (y in [0.7, 1.5], n1 >= -64); and the result is normal: ExpRef(x) >= 1.17551e-38 > 2^-126
// for every x > kExpLow (all 175 183 floats of (kExpLow, -86) checked; from there on it grows),
// 0 or +inf outside (the selects).
struct E4 {
  using V = float32x4_t;
  using M = uint32x4_t;  // all-ones lanes (predicate arithmetic trips GCC 12)
  using I = int32x4_t;
  static V Set(float f) { return vdupq_n_f32(f); }
  static V Add(V a, V b) { return vaddq_f32(a, b); }
  static V Sub(V a, V b) { return vsubq_f32(a, b); }
  static V Mul(V a, V b) { return vmulq_f32(a, b); }
  static M Mask(mve_pred16_t p) { return vpselq_u32(vdupq_n_u32(~0u), vdupq_n_u32(0), p); }
  static M Gt(V a, V b) { return Mask(vcmpgtq_f32(a, b)); }
  static M NotGt(V a, V b) { return vmvnq_u32(Gt(a, b)); }  // true for NaN
  static M IsNaN(V a) { return vmvnq_u32(Mask(vcmpeqq_f32(a, a))); }
  static V Select(M m, V a, V b) {
    const uint32x4_t ua = vreinterpretq_u32_f32(a), ub = vreinterpretq_u32_f32(b);
    return vreinterpretq_f32_u32(vorrq_u32(vandq_u32(ua, m), vbicq_u32(ub, m)));
  }
  static V KeepWhere(V v, M m) { return vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(v), m)); }
  static I TruncToInt(V v) { return vcvtq_s32_f32(v); }  // n is integral: exact
  static I ShiftRightArith1(I i) { return vshrq_n_s32(i, 1); }
  static I SubInt(I a, I b) { return vsubq_s32(a, b); }
  static V Pow2(I n) { return vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n, vdupq_n_s32(127)), 23)); }
};

// SiLU x / (1 + ExpRef(-x)) and sigmoid 1 / (1 + ExpRef(-x)) (the SSRU forget gate) in place,
// bit for bit the reference's: ExpRef(-x) in vectors (E4), 1 + e in a vector (>= 1: nothing to
// flush), the division on the scalar FPU (MVE has none) with the original x.
inline void ActivationSigmoidFamily(float* x, int n, Act act) {
  const bool silu = act == Act::kSiLU;
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    const uint32x4_t bits = vreinterpretq_u32_f32(vld1q_f32(x + i));
    const float32x4_t neg = vreinterpretq_f32_u32(veorq_u32(bits, vdupq_n_u32(0x80000000u)));  // exact -x
    const float32x4_t e = generic::Exp<E4>(neg);
    float d[4];
    vst1q_f32(d, vaddq_f32(vdupq_n_f32(1.0f), e));
    for (int j = 0; j < 4; ++j) x[i + j] = (silu ? x[i + j] : 1.0f) / d[j];
  }
  for (; i < n; ++i) x[i] = ref::ActRef(x[i], act);
}

// The activation kernel: SiLU and sigmoid as above, the others the reference's (GELU's erf has
// its own division and flushing products; ReLU is a compare the scalar code does as fast).
inline void Activation(float* x, int n, Act act) {
  if (act == Act::kSiLU || act == Act::kSigmoid)
    ActivationSigmoidFamily(x, n, act);
  else
    ref::Activation(x, n, act);
}
#endif

}  // namespace
}  // namespace mve
}  // namespace kernels
}  // namespace mtlite

#endif  // __ARM_FEATURE_MVE

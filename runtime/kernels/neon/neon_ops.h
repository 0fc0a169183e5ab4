// NEON operations for the generic kernels (generic/vec_math.h lists what they are) and the
// epilogues of the GEMM micro-kernels, shared by the NEON translation units (neon/,
// neon_dotprod/). Internal linkage only.
//
// aarch64: the 8 lanes of the contract are two float32x4_t {0..3}, {4..7}; the same IEEE
// operations as the reference lane by lane (AdvSIMD on AArch64 honours FPCR like scalar code:
// round to nearest, no flush-to-zero by default).
//
// armv7 (AArch32): Advanced SIMD float arithmetic always flushes denormals to zero and has no
// IEEE division or square root, so it cannot reproduce the reference bit for bit. armv7 uses
// NEON for integer work only (GEMM accumulation, quantisation with a proven-safe guard) and
// the VFP scalar code (the reference) for float math, including the GEMM epilogue.
#pragma once

#if defined(__ARM_NEON) || defined(__ARM_NEON__)
#include <arm_neon.h>

#include <cstdint>
#include <cstring>

#include "bits.h"
#include "generic/activation.h"
#include "generic/gemm_driver.h"
#include "kernels.h"
#include "reference/reference.h"

namespace mtlite {
namespace kernels {
namespace neon {
namespace {

struct F8 {
  static constexpr int kW = 8;
  struct V {
    float32x4_t lo, hi;
  };
  struct M {
    uint32x4_t lo, hi;
  };
  struct I {
    int32x4_t lo, hi;
  };
  using A = V;

  static V Set(float f) { return {vdupq_n_f32(f), vdupq_n_f32(f)}; }
  static V Load(const float* p) { return {vld1q_f32(p), vld1q_f32(p + 4)}; }
  static void Store(float* p, V v) {
    vst1q_f32(p, v.lo);
    vst1q_f32(p + 4, v.hi);
  }
  static V LoadPartial(const float* p, int count) {
    float t[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    std::memcpy(t, p, sizeof(float) * size_t(count));
    return Load(t);
  }
  static void StorePartial(float* p, int count, V v) {
    float t[8];
    Store(t, v);
    std::memcpy(p, t, sizeof(float) * size_t(count));
  }
  static M FirstLanes(int count) {
    const int32x4_t c = vdupq_n_s32(count);
    const int32_t idx[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    return {vcgtq_s32(c, vld1q_s32(idx)), vcgtq_s32(c, vld1q_s32(idx + 4))};
  }
  static V KeepWhere(V v, M m) {
    return {vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(v.lo), m.lo)),
            vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(v.hi), m.hi))};
  }
  static V KeepFirst(V v, int count) { return KeepWhere(v, FirstLanes(count)); }
#if defined(__aarch64__)
  static V FirstOr(V v, int count, float f) {
    const M m = FirstLanes(count);
    return {vbslq_f32(m.lo, v.lo, vdupq_n_f32(f)), vbslq_f32(m.hi, v.hi, vdupq_n_f32(f))};
  }
#endif

  static V Mul(V a, V b) { return {vmulq_f32(a.lo, b.lo), vmulq_f32(a.hi, b.hi)}; }

  // quantisation (generic/quantize.h), armv7 included
  using QI = uint32x4_t;
  static QI QZero() { return vdupq_n_u32(0); }
  static QI QMaxAbsBits(QI acc, V v) {
    const uint32x4_t abs_mask = vdupq_n_u32(0x7fffffffu);
    acc = vmaxq_u32(acc, vandq_u32(vreinterpretq_u32_f32(v.lo), abs_mask));
    return vmaxq_u32(acc, vandq_u32(vreinterpretq_u32_f32(v.hi), abs_mask));
  }
  static uint32_t QHMax(QI v) {
#if defined(__aarch64__)
    return vmaxvq_u32(v);
#else
    uint32x2_t h = vpmax_u32(vget_low_u32(v), vget_high_u32(v));
    h = vpmax_u32(h, h);
    return vget_lane_u32(h, 0);
#endif
  }
  static bool QuantizeRowVectorOk(uint32_t maxabs_bits) {
#if defined(__aarch64__)
    (void)maxabs_bits;
    return true;
#else
    // Flush-to-zero is harmless when maxabs >= 2^-118: a denormal x then gives
    // |x * inv| < 2^-126 * 127 * 2^118 < 0.5 (-> 0 either way), a denormal product rounds to
    // 0 either way, and 127 / maxabs stays finite. Tinier rows take the scalar path.
    return maxabs_bits >= 0x04800000u;
#endif
  }
  // 4 floats (already x * inv) -> 4 int32 per the contract (round half to even, [-127, 127]).
  static int32x4_t QuantizeLanes(float32x4_t v) {
#if defined(__aarch64__)
    // NaN (0 * inf when 127 / maxabs overflows) -> 0; then clamp and round half to even.
    v = vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(v), vceqq_f32(v, v)));
    v = vminq_f32(vmaxq_f32(v, vdupq_n_f32(-127.0f)), vdupq_n_f32(127.0f));
    return vcvtnq_s32_f32(v);
#else
    // No round-to-nearest convert on armv7: add 1.5 * 2^23 (exact round half to even for
    // |v| <= 2^22, done by the adder in its only rounding mode), then read the integer from the
    // low mantissa bits. No NaN here (QuantizeRowVectorOk: 127 / maxabs is finite).
    v = vminq_f32(vmaxq_f32(v, vdupq_n_f32(-127.0f)), vdupq_n_f32(127.0f));
    const float32x4_t magic = vdupq_n_f32(12582912.0f);
    return vsubq_s32(vreinterpretq_s32_f32(vaddq_f32(v, magic)), vreinterpretq_s32_f32(magic));
#endif
  }
  static constexpr int kQ = 8;
  static void QuantizeW(const float* x, V inv, int8_t* q) {
    const int32x4_t q0 = QuantizeLanes(vmulq_f32(vld1q_f32(x), inv.lo));
    const int32x4_t q1 = QuantizeLanes(vmulq_f32(vld1q_f32(x + 4), inv.hi));
    vst1_s8(q, vqmovn_s16(vcombine_s16(vqmovn_s32(q0), vqmovn_s32(q1))));
  }
  static void Quantize(const float* x, V inv, int8_t* q) { QuantizeW(x, inv, q); }

  static void StoreInt(int32_t* p, I v) {
    vst1q_s32(p, v.lo);
    vst1q_s32(p + 4, v.hi);
  }
  static void StoreIntPartial(int32_t* p, int count, I v) {
    int32_t t[8];
    StoreInt(t, v);
    std::memcpy(p, t, sizeof(int32_t) * size_t(count));
  }

#if defined(__aarch64__)
  static V Add(V a, V b) { return {vaddq_f32(a.lo, b.lo), vaddq_f32(a.hi, b.hi)}; }
  static V Sub(V a, V b) { return {vsubq_f32(a.lo, b.lo), vsubq_f32(a.hi, b.hi)}; }
  static V Div(V a, V b) { return {vdivq_f32(a.lo, b.lo), vdivq_f32(a.hi, b.hi)}; }
  static V Neg(V a) { return {vnegq_f32(a.lo), vnegq_f32(a.hi)}; }
  static M Gt(V a, V b) { return {vcgtq_f32(a.lo, b.lo), vcgtq_f32(a.hi, b.hi)}; }
  static M NotGt(V a, V b) { return {vmvnq_u32(vcgtq_f32(a.lo, b.lo)), vmvnq_u32(vcgtq_f32(a.hi, b.hi))}; }
  static M Eq(V a, V b) { return {vceqq_f32(a.lo, b.lo), vceqq_f32(a.hi, b.hi)}; }
  static M IsNaN(V a) { return {vmvnq_u32(vceqq_f32(a.lo, a.lo)), vmvnq_u32(vceqq_f32(a.hi, a.hi))}; }
  static M OrMask(M a, M b) { return {vorrq_u32(a.lo, b.lo), vorrq_u32(a.hi, b.hi)}; }
  static bool AnyTrue(M m) { return vmaxvq_u32(vorrq_u32(m.lo, m.hi)) != 0; }
  static int FirstTrue(M m) {
    if (!AnyTrue(m)) return -1;
    uint32_t t[8];
    vst1q_u32(t, m.lo);
    vst1q_u32(t + 4, m.hi);
    int j = 0;
    while (t[j] == 0) ++j;
    return j;
  }
  static V Select(M m, V a, V b) { return {vbslq_f32(m.lo, a.lo, b.lo), vbslq_f32(m.hi, a.hi, b.hi)}; }
  // a > b ? a : b (vmaxq_f32 would propagate NaN)
  static V MaxGt(V a, V b) { return Select(Gt(a, b), a, b); }
  static float HMax(V v) { return vmaxvq_f32(vmaxq_f32(v.lo, v.hi)); }  // no NaN lanes: exact

  static I TruncToInt(V v) { return {vcvtq_s32_f32(v.lo), vcvtq_s32_f32(v.hi)}; }
  static I ShiftRightArith1(I i) { return {vshrq_n_s32(i.lo, 1), vshrq_n_s32(i.hi, 1)}; }
  static I SubInt(I a, I b) { return {vsubq_s32(a.lo, b.lo), vsubq_s32(a.hi, b.hi)}; }
  static V Pow2(I n) {
    const int32x4_t bias = vdupq_n_s32(127);
    return {vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n.lo, bias), 23)),
            vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n.hi, bias), 23))};
  }
  static V CvtInt(I i) { return {vcvtq_f32_s32(i.lo), vcvtq_f32_s32(i.hi)}; }

  static A AccZero() { return Set(0.0f); }
  static A AccAdd(A acc, V v) { return Add(acc, v); }
  // lanes 0..3 in lo, 4..7 in hi: ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7))
  static float Reduce8(A v) {
    const float32x4_t q = vaddq_f32(v.lo, v.hi);
    const float32x2_t h = vadd_f32(vget_low_f32(q), vget_high_f32(q));
    return vget_lane_f32(h, 0) + vget_lane_f32(h, 1);
  }
#endif  // __aarch64__
};

// What the NEON int8 GEMM micro-kernels (neon/gemm_neon.cc, neon_dotprod/) share for the tile
// driver (generic/gemm_driver.h): the accumulators of one (row, block) as two int32x4_t (rows
// 0-3, 4-7) and their epilogues.
struct GemmCommon {
  using Acc = F8::I;
#if defined(__aarch64__)
  // SiLU / GELU: a second pass over the rows just written, where independent iterations
  // overlap (inside the tile loop they are latency-bound). Same operations, same results.
  static constexpr bool kActSecondPass = true;
  static void Epilogue(const Acc& acc, float as, const float* ws, const float* bias, const float* res,
                       float* out, int count, Act act) {
    generic::Epilogue8<F8>(acc, as, ws, bias, res, out, count, act);
  }
  static void Activation(float* x, int n, Act act) { generic::Activation<F8>(x, n, act); }
#else
  // armv7: VFP scalar, exactly the reference expression (see neon/neon_ops.h).
  static constexpr bool kActSecondPass = false;
  static void Epilogue(const Acc& acc, float as, const float* ws, const float* bias, const float* res,
                       float* out, int count, Act act) {
    int32_t s[8];
    F8::StoreInt(s, acc);
    for (int j = 0; j < count; ++j) {
      float y = float(s[j]) * (as * ws[j]);
      if (bias) y = y + bias[j];
      if (res) y = y + res[j];
      out[j] = ref::ActRef(y, act);
    }
  }
  static void Activation(float* x, int n, Act act) { ref::Activation(x, n, act); }
#endif
  static void StoreAcc(const Acc& acc, int32_t* out, int count) {
    generic::StoreAcc8<F8>(acc, out, count);
  }
};

}  // namespace
}  // namespace neon
}  // namespace kernels
}  // namespace mtlite

#endif  // __ARM_NEON

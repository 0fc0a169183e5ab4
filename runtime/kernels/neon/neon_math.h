// NEON helpers shared by the NEON translation units (internal linkage only).
//
// aarch64: vector versions of the reference scalar math (ExpRef, ErfRef, ActRef) and of the
// 8-lane reduction, with the same IEEE operations in the same order lane by lane (AdvSIMD on
// AArch64 honours FPCR like scalar code: round to nearest, no flush-to-zero by default).
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

#include "kernels.h"
#include "reference/kernels_reference.h"

namespace mtlite {
namespace kernels {
namespace neon {
namespace {

#if defined(__aarch64__)

inline float32x4_t Exp(float32x4_t x) {
  // !(x > -87.33654f): -inf, underflow and NaN; NaN stays NaN (x), the others give 0.
  const uint32x4_t low = vmvnq_u32(vcgtq_f32(x, vdupq_n_f32(-87.33654f)));
  const uint32x4_t nan = vmvnq_u32(vceqq_f32(x, x));
  const uint32x4_t high = vcgtq_f32(x, vdupq_n_f32(88.72283f));
  const float32x4_t magic = vdupq_n_f32(12582912.0f);
  float32x4_t t = vmulq_f32(x, vdupq_n_f32(1.44269504088896341f));
  t = vaddq_f32(t, magic);
  const float32x4_t n = vsubq_f32(t, magic);
  float32x4_t r = vsubq_f32(x, vmulq_f32(n, vdupq_n_f32(0.693359375f)));
  r = vsubq_f32(r, vmulq_f32(n, vdupq_n_f32(-2.12194440e-4f)));
  float32x4_t p = vdupq_n_f32(1.9875691500E-4f);
  p = vaddq_f32(vmulq_f32(p, r), vdupq_n_f32(1.3981999507E-3f));
  p = vaddq_f32(vmulq_f32(p, r), vdupq_n_f32(8.3334519073E-3f));
  p = vaddq_f32(vmulq_f32(p, r), vdupq_n_f32(4.1665795894E-2f));
  p = vaddq_f32(vmulq_f32(p, r), vdupq_n_f32(1.6666665459E-1f));
  p = vaddq_f32(vmulq_f32(p, r), vdupq_n_f32(5.0000001201E-1f));
  const float32x4_t rr = vmulq_f32(r, r);
  float32x4_t y = vmulq_f32(p, rr);
  y = vaddq_f32(y, r);
  y = vaddq_f32(y, vdupq_n_f32(1.0f));
  const int32x4_t ni = vcvtq_s32_f32(n);  // n is integral: truncation is exact
  const int32x4_t n1 = vshrq_n_s32(ni, 1);
  const int32x4_t n2 = vsubq_s32(ni, n1);
  const int32x4_t bias = vdupq_n_s32(127);
  const float32x4_t s1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n1, bias), 23));
  const float32x4_t s2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n2, bias), 23));
  float32x4_t res = vmulq_f32(vmulq_f32(y, s1), s2);
  const float32x4_t low_val = vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(x), nan));
  res = vbslq_f32(low, low_val, res);
  res = vbslq_f32(high, vdupq_n_f32(__builtin_inff()), res);
  return res;
}

inline float32x4_t Erf(float32x4_t x) {
  const uint32x4_t neg = vcltq_f32(x, vdupq_n_f32(0.0f));
  const float32x4_t ax = vbslq_f32(neg, vnegq_f32(x), x);
  const float32x4_t one = vdupq_n_f32(1.0f);
  const float32x4_t t = vdivq_f32(one, vaddq_f32(one, vmulq_f32(vdupq_n_f32(0.3275911f), ax)));
  float32x4_t p = vdupq_n_f32(1.061405429f);
  p = vaddq_f32(vmulq_f32(p, t), vdupq_n_f32(-1.453152027f));
  p = vaddq_f32(vmulq_f32(p, t), vdupq_n_f32(1.421413741f));
  p = vaddq_f32(vmulq_f32(p, t), vdupq_n_f32(-0.284496736f));
  p = vaddq_f32(vmulq_f32(p, t), vdupq_n_f32(0.254829592f));
  p = vmulq_f32(p, t);
  const float32x4_t y = vsubq_f32(one, vmulq_f32(p, Exp(vnegq_f32(vmulq_f32(ax, ax)))));
  return vbslq_f32(neg, vnegq_f32(y), y);
}

inline float32x4_t SiLU(float32x4_t x) {
  return vdivq_f32(x, vaddq_f32(vdupq_n_f32(1.0f), Exp(vnegq_f32(x))));
}
// x > 0 ? x : 0 (NaN -> 0, -0 -> +0); vmaxq_f32 would propagate NaN.
inline float32x4_t ReLU(float32x4_t x) {
  return vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(x), vcgtq_f32(x, vdupq_n_f32(0.0f))));
}
inline float32x4_t GELU(float32x4_t x) {
  const float32x4_t e = Erf(vmulq_f32(x, vdupq_n_f32(0.70710678118654752f)));
  return vmulq_f32(vmulq_f32(vdupq_n_f32(0.5f), x), vaddq_f32(vdupq_n_f32(1.0f), e));
}
inline float32x4_t GELUTanh(float32x4_t x) {
  const float32x4_t one = vdupq_n_f32(1.0f);
  const float32x4_t cube = vmulq_f32(vmulq_f32(vdupq_n_f32(0.044715f), x), vmulq_f32(x, x));
  const float32x4_t u = vmulq_f32(vdupq_n_f32(0.7978845608028654f), vaddq_f32(x, cube));
  const float32x4_t e = Exp(vmulq_f32(vdupq_n_f32(2.0f), u));
  const float32x4_t th = vsubq_f32(one, vdivq_f32(vdupq_n_f32(2.0f), vaddq_f32(e, one)));
  return vmulq_f32(vmulq_f32(vdupq_n_f32(0.5f), x), vaddq_f32(one, th));
}

[[maybe_unused]] __attribute__((noinline)) float32x4_t ActivateOutOfLine(float32x4_t x, Act act) {
  switch (act) {
    case Act::kNone: return x;
    case Act::kSiLU: return SiLU(x);
    case Act::kReLU: return ReLU(x);
    case Act::kGELU: return GELU(x);
    case Act::kGELUTanh: return GELUTanh(x);
  }
  return x;
}
inline float32x4_t Activate(float32x4_t x, Act act) {
  if (act == Act::kNone) return x;
  if (act == Act::kReLU) return ReLU(x);
  return ActivateOutOfLine(x, act);
}

// lanes 0..3 in lo, 4..7 in hi: ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7))
inline float Reduce8(float32x4_t lo, float32x4_t hi) {
  const float32x4_t q = vaddq_f32(lo, hi);
  const float32x2_t h = vadd_f32(vget_low_f32(q), vget_high_f32(q));
  return vget_lane_f32(h, 0) + vget_lane_f32(h, 1);
}

#endif  // __aarch64__

// ---- int8 GEMM epilogues: 8 int32 accumulators of one (row, 8-column block) ---------------

struct FloatEpilogue {
  int n;
  const float* a_scales;
  const float* w_scales;
  const float* bias;
  const float* residual;
  int ldr;
  float* c;
  int ldc;
  Act act;

  inline void operator()(int row, int col, int32x4_t lo, int32x4_t hi) const {
    const int count = n - col < 8 ? n - col : 8;
    float* out = c + size_t(row) * ldc + col;
    const float* res = residual ? residual + size_t(row) * ldr + col : nullptr;
#if defined(__aarch64__)
    const float32x4_t zero = vdupq_n_f32(0.0f);
    float32x4_t ws0, ws1, b0 = zero, b1 = zero, r0 = zero, r1 = zero;
    if (count == 8) {
      ws0 = vld1q_f32(w_scales + col), ws1 = vld1q_f32(w_scales + col + 4);
      if (bias) b0 = vld1q_f32(bias + col), b1 = vld1q_f32(bias + col + 4);
      if (res) r0 = vld1q_f32(res), r1 = vld1q_f32(res + 4);
    } else {
      float t[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      std::memcpy(t, w_scales + col, sizeof(float) * count);
      ws0 = vld1q_f32(t), ws1 = vld1q_f32(t + 4);
      if (bias) {
        std::memcpy(t, bias + col, sizeof(float) * count);
        b0 = vld1q_f32(t), b1 = vld1q_f32(t + 4);
      }
      if (res) {
        std::memcpy(t, res, sizeof(float) * count);
        r0 = vld1q_f32(t), r1 = vld1q_f32(t + 4);
      }
    }
    const float32x4_t as = vdupq_n_f32(a_scales[row]);
    float32x4_t y0 = vmulq_f32(vcvtq_f32_s32(lo), vmulq_f32(as, ws0));
    float32x4_t y1 = vmulq_f32(vcvtq_f32_s32(hi), vmulq_f32(as, ws1));
    if (bias) y0 = vaddq_f32(y0, b0), y1 = vaddq_f32(y1, b1);
    if (res) y0 = vaddq_f32(y0, r0), y1 = vaddq_f32(y1, r1);
    y0 = Activate(y0, act);
    y1 = Activate(y1, act);
    if (count == 8) {
      vst1q_f32(out, y0);
      vst1q_f32(out + 4, y1);
    } else {
      float t[8];
      vst1q_f32(t, y0);
      vst1q_f32(t + 4, y1);
      std::memcpy(out, t, sizeof(float) * count);
    }
#else
    // armv7: VFP scalar, exactly the reference expression.
    int32_t s[8];
    vst1q_s32(s, lo);
    vst1q_s32(s + 4, hi);
    const float as = a_scales[row];
    for (int j = 0; j < count; ++j) {
      float y = float(s[j]) * (as * w_scales[col + j]);
      if (bias) y = y + bias[col + j];
      if (res) y = y + res[j];
      out[j] = ref::ActRef(y, act);
    }
#endif
  }
};

struct AccEpilogue {
  int n;
  int32_t* acc;
  int ldacc;
  inline void operator()(int row, int col, int32x4_t lo, int32x4_t hi) const {
    int32_t* out = acc + size_t(row) * ldacc + col;
    if (n - col >= 8) {
      vst1q_s32(out, lo);
      vst1q_s32(out + 4, hi);
    } else {
      int32_t t[8];
      vst1q_s32(t, lo);
      vst1q_s32(t + 4, hi);
      std::memcpy(out, t, sizeof(int32_t) * size_t(n - col));
    }
  }
};

inline int32_t Load4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

}  // namespace
}  // namespace neon
}  // namespace kernels
}  // namespace mtlite

#endif  // __ARM_NEON

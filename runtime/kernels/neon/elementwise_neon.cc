// NEON quantisation, layer norm, softmax, dot, axpy and activations, plus the "neon" table.
//
// aarch64: vectorised, bit-identical to the reference (same operations per element, the
// 8-lane reduction as two float32x4 accumulators {0..3},{4..7}; the tail enters its lanes as
// a zero-filled partial vector, as the contract specifies).
// armv7: Advanced SIMD float arithmetic flushes denormals to zero (always, whatever FPSCR
// says) and has no IEEE divide/sqrt, so the float kernels are the VFP scalar reference; only
// quantize_rows_s8 uses NEON, on rows where flush-to-zero provably cannot change the result.
#include "neon/neon_kernels.h"

#if defined(__ARM_NEON) || defined(__ARM_NEON__)
#include <arm_neon.h>

#include <cstring>

#include "neon/neon_math.h"
#include "reference/kernels_reference.h"

namespace mtlite {
namespace kernels {
namespace neon {
namespace {

inline uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint32_t HMaxU32(uint32x4_t v) {
#if defined(__aarch64__)
  return vmaxvq_u32(v);
#else
  uint32x2_t h = vpmax_u32(vget_low_u32(v), vget_high_u32(v));
  h = vpmax_u32(h, h);
  return vget_lane_u32(h, 0);
#endif
}

// 4 floats (already x * inv) -> 4 int32 per the contract (round half to even, [-127, 127]).
inline int32x4_t QuantizeLanes(float32x4_t v) {
#if defined(__aarch64__)
  // NaN (0 * inf when 127 / maxabs overflows) -> 0; then clamp and round half to even.
  v = vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(v), vceqq_f32(v, v)));
  v = vminq_f32(vmaxq_f32(v, vdupq_n_f32(-127.0f)), vdupq_n_f32(127.0f));
  return vcvtnq_s32_f32(v);
#else
  // No round-to-nearest convert on armv7: add 1.5 * 2^23 (exact round half to even for
  // |v| <= 2^22, done by the adder in its only rounding mode), then read the integer from the
  // low mantissa bits. The caller guarantees no NaN here.
  v = vminq_f32(vmaxq_f32(v, vdupq_n_f32(-127.0f)), vdupq_n_f32(127.0f));
  const float32x4_t magic = vdupq_n_f32(12582912.0f);
  return vsubq_s32(vreinterpretq_s32_f32(vaddq_f32(v, magic)), vreinterpretq_s32_f32(magic));
#endif
}

}  // namespace

void QuantizeRowsS8(const float* x, int m, int k, int ldx, int8_t* q, int ldq, float* scales) {
  const int kp = (k + 3) & ~3;
  const uint32x4_t abs_mask = vdupq_n_u32(0x7fffffffu);
  for (int i = 0; i < m; ++i) {
    const float* xr = x + size_t(i) * ldx;
    int8_t* qr = q + size_t(i) * ldq;
    // maxabs on the bit patterns (integer order of |x| = float order; non-finite >= 0x7f800000).
    uint32x4_t mv = vdupq_n_u32(0);
    int j = 0;
    for (; j + 4 <= k; j += 4)
      mv = vmaxq_u32(mv, vandq_u32(vreinterpretq_u32_f32(vld1q_f32(xr + j)), abs_mask));
    uint32_t mb = HMaxU32(mv);
    for (; j < k; ++j) {
      const uint32_t b = FloatBits(xr[j]) & 0x7fffffffu;
      mb = b > mb ? b : mb;
    }
    if (mb == 0 || mb >= 0x7f800000u) {
      std::memset(qr, 0, size_t(kp));
      scales[i] = 0.0f;
      continue;
    }
#if !defined(__aarch64__)
    // Flush-to-zero is harmless when maxabs >= 2^-118: a denormal x then gives
    // |x * inv| < 2^-126 * 127 * 2^118 < 0.5 (-> 0 either way), a denormal product rounds to
    // 0 either way, and 127 / maxabs stays finite. Tinier rows take the scalar path.
    if (mb < 0x04800000u) {
      ref::QuantizeRowsS8(xr, 1, k, ldx, qr, ldq, scales + i);
      continue;
    }
#endif
    const float maxabs = BitsFloat(mb);
    const float inv = 127.0f / maxabs;
    scales[i] = maxabs / 127.0f;
    const float32x4_t vinv = vdupq_n_f32(inv);
    j = 0;
    for (; j + 8 <= k; j += 8) {
      const int32x4_t q0 = QuantizeLanes(vmulq_f32(vld1q_f32(xr + j), vinv));
      const int32x4_t q1 = QuantizeLanes(vmulq_f32(vld1q_f32(xr + j + 4), vinv));
      const int16x8_t h = vcombine_s16(vqmovn_s32(q0), vqmovn_s32(q1));
      vst1_s8(qr + j, vqmovn_s16(h));
    }
    for (; j < k; ++j) qr[j] = ref::QuantizeOne(xr[j] * inv);
    for (; j < kp; ++j) qr[j] = 0;
  }
}

#if defined(__aarch64__)

namespace {
// lo/hi += the zero-filled partial vector t[0..8)
inline void AddPartial(float32x4_t& lo, float32x4_t& hi, const float* t) {
  lo = vaddq_f32(lo, vld1q_f32(t));
  hi = vaddq_f32(hi, vld1q_f32(t + 4));
}
}  // namespace

void LayerNorm(const float* x, int m, int d, const float* gamma, const float* beta, float eps,
               float* y) {
  const int d8 = d & ~7;
  for (int i = 0; i < m; ++i) {
    const float* xr = x + size_t(i) * d;
    float* yr = y + size_t(i) * d;
    float32x4_t lo = vdupq_n_f32(0.0f), hi = lo;
    for (int j = 0; j < d8; j += 8) {
      lo = vaddq_f32(lo, vld1q_f32(xr + j));
      hi = vaddq_f32(hi, vld1q_f32(xr + j + 4));
    }
    if (d8 < d) {
      float t[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      for (int j = d8; j < d; ++j) t[j - d8] = xr[j];
      AddPartial(lo, hi, t);
    }
    const float mean = Reduce8(lo, hi) / float(d);
    const float32x4_t vmean = vdupq_n_f32(mean);
    lo = hi = vdupq_n_f32(0.0f);
    for (int j = 0; j < d8; j += 8) {
      const float32x4_t t0 = vsubq_f32(vld1q_f32(xr + j), vmean);
      const float32x4_t t1 = vsubq_f32(vld1q_f32(xr + j + 4), vmean);
      lo = vaddq_f32(lo, vmulq_f32(t0, t0));
      hi = vaddq_f32(hi, vmulq_f32(t1, t1));
    }
    if (d8 < d) {
      float t[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      for (int j = d8; j < d; ++j) {
        const float u = xr[j] - mean;
        t[j - d8] = u * u;
      }
      AddPartial(lo, hi, t);
    }
    const float var = Reduce8(lo, hi) / float(d);
    const float inv = 1.0f / __builtin_sqrtf(var + eps);
    const float32x4_t vinv = vdupq_n_f32(inv);
    int j = 0;
    for (; j + 4 <= d; j += 4) {
      const float32x4_t t = vmulq_f32(vsubq_f32(vld1q_f32(xr + j), vmean), vinv);
      vst1q_f32(yr + j, vaddq_f32(vmulq_f32(t, vld1q_f32(gamma + j)), vld1q_f32(beta + j)));
    }
    for (; j < d; ++j) yr[j] = ((xr[j] - mean) * inv) * gamma[j] + beta[j];
  }
}

void SoftmaxMasked(float* x, int n, const float* mask) {
  const float ninf = -__builtin_inff();
  const int n8 = n & ~7;
  // max that skips NaN like the reference: keep m unless s > m
  float32x4_t mlo = vdupq_n_f32(ninf), mhi = mlo;
  for (int j = 0; j < n8; j += 8) {
    float32x4_t s0 = vld1q_f32(x + j), s1 = vld1q_f32(x + j + 4);
    if (mask) {
      s0 = vaddq_f32(s0, vld1q_f32(mask + j));
      s1 = vaddq_f32(s1, vld1q_f32(mask + j + 4));
      vst1q_f32(x + j, s0);
      vst1q_f32(x + j + 4, s1);
    }
    mlo = vbslq_f32(vcgtq_f32(s0, mlo), s0, mlo);
    mhi = vbslq_f32(vcgtq_f32(s1, mhi), s1, mhi);
  }
  float mx = vmaxvq_f32(vmaxq_f32(mlo, mhi));  // no NaN lanes: exact
  for (int j = n8; j < n; ++j) {
    const float s = mask ? x[j] + mask[j] : x[j];
    x[j] = s;
    mx = s > mx ? s : mx;
  }
  if (mx == ninf) {
    std::memset(x, 0, sizeof(float) * size_t(n));
    return;
  }
  const float32x4_t vmx = vdupq_n_f32(mx);
  float32x4_t lo = vdupq_n_f32(0.0f), hi = lo;
  for (int j = 0; j < n8; j += 8) {
    const float32x4_t e0 = Exp(vsubq_f32(vld1q_f32(x + j), vmx));
    const float32x4_t e1 = Exp(vsubq_f32(vld1q_f32(x + j + 4), vmx));
    vst1q_f32(x + j, e0);
    vst1q_f32(x + j + 4, e1);
    lo = vaddq_f32(lo, e0);
    hi = vaddq_f32(hi, e1);
  }
  if (n8 < n) {
    float t[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int j = n8; j < n; ++j) t[j - n8] = x[j] = ExpRef(x[j] - mx);
    AddPartial(lo, hi, t);
  }
  const float inv = 1.0f / Reduce8(lo, hi);
  const float32x4_t vinv = vdupq_n_f32(inv);
  int j = 0;
  for (; j + 4 <= n; j += 4) vst1q_f32(x + j, vmulq_f32(vld1q_f32(x + j), vinv));
  for (; j < n; ++j) x[j] = x[j] * inv;
}

void AttnScores(const float* q, const float* k, int ld, const int32_t* idx, int m, int n, float scale,
                float* out) {
  const int n8 = n & ~7;
  auto row = [&](int j) { return k + size_t(idx ? idx[j] : j) * size_t(ld); };
  int j = 0;
  for (; j + 2 <= m; j += 2) {  // two keys share the query loads; lanes as in Dot
    const float *k0 = row(j), *k1 = row(j + 1);
    float32x4_t l0 = vdupq_n_f32(0.0f), h0 = l0, l1 = l0, h1 = l0;
    for (int i = 0; i < n8; i += 8) {
      const float32x4_t ql = vld1q_f32(q + i), qh = vld1q_f32(q + i + 4);
      l0 = vaddq_f32(l0, vmulq_f32(ql, vld1q_f32(k0 + i)));
      h0 = vaddq_f32(h0, vmulq_f32(qh, vld1q_f32(k0 + i + 4)));
      l1 = vaddq_f32(l1, vmulq_f32(ql, vld1q_f32(k1 + i)));
      h1 = vaddq_f32(h1, vmulq_f32(qh, vld1q_f32(k1 + i + 4)));
    }
    if (n8 < n) {
      float t0[8] = {0, 0, 0, 0, 0, 0, 0, 0}, t1[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      for (int i = n8; i < n; ++i) t0[i - n8] = q[i] * k0[i], t1[i - n8] = q[i] * k1[i];
      AddPartial(l0, h0, t0);
      AddPartial(l1, h1, t1);
    }
    out[j] = Reduce8(l0, h0) * scale;
    out[j + 1] = Reduce8(l1, h1) * scale;
  }
  for (; j < m; ++j) out[j] = Dot(q, row(j), n) * scale;
}

void AttnContext(const float* p, const float* v, int ld, const int32_t* idx, int m, int n, float* ctx) {
  for (int c = 0; c < n; c += 4) {
    const int cnt = n - c < 4 ? n - c : 4;
    float32x4_t acc = vdupq_n_f32(0.0f);
    for (int j = 0; j < m; ++j) {
      if (p[j] == 0.0f) continue;
      const float* vr = v + size_t(idx ? idx[j] : j) * size_t(ld) + c;
      float32x4_t x;
      if (cnt == 4) {
        x = vld1q_f32(vr);
      } else {
        float t[4] = {0, 0, 0, 0};
        for (int i = 0; i < cnt; ++i) t[i] = vr[i];
        x = vld1q_f32(t);
      }
      acc = vaddq_f32(acc, vmulq_f32(vdupq_n_f32(p[j]), x));
    }
    if (cnt == 4) {
      vst1q_f32(ctx + c, acc);
    } else {
      float t[4];
      vst1q_f32(t, acc);
      for (int i = 0; i < cnt; ++i) ctx[c + i] = t[i];
    }
  }
}

float MaxSumExp(const float* x, int n, float* max_out) {
  const float ninf = -__builtin_inff();
  const int n8 = n & ~7;
  float32x4_t mlo = vdupq_n_f32(ninf), mhi = mlo;  // keep m unless v > m: skips NaN
  for (int j = 0; j < n8; j += 8) {
    const float32x4_t v0 = vld1q_f32(x + j), v1 = vld1q_f32(x + j + 4);
    mlo = vbslq_f32(vcgtq_f32(v0, mlo), v0, mlo);
    mhi = vbslq_f32(vcgtq_f32(v1, mhi), v1, mhi);
  }
  float mx = vmaxvq_f32(vmaxq_f32(mlo, mhi));  // no NaN lanes: exact
  for (int j = n8; j < n; ++j) mx = x[j] > mx ? x[j] : mx;
  *max_out = mx;
  if (mx == ninf) return 0.0f;
  const float32x4_t vmx = vdupq_n_f32(mx);
  float32x4_t lo = vdupq_n_f32(0.0f), hi = lo;
  for (int j = 0; j < n8; j += 8) {
    lo = vaddq_f32(lo, Exp(vsubq_f32(vld1q_f32(x + j), vmx)));
    hi = vaddq_f32(hi, Exp(vsubq_f32(vld1q_f32(x + j + 4), vmx)));
  }
  if (n8 < n) {
    float t[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int j = n8; j < n; ++j) t[j - n8] = ExpRef(x[j] - mx);
    AddPartial(lo, hi, t);
  }
  return Reduce8(lo, hi);
}

int ScanGt(const float* x, int from, int n, float sub, float add, float thr, float* s_out) {
  int j = from < 0 ? 0 : from;
  const float32x4_t vsub = vdupq_n_f32(sub), vadd = vdupq_n_f32(add), vthr = vdupq_n_f32(thr);
  for (; j + 8 <= n; j += 8) {
    const float32x4_t s0 = vaddq_f32(vsubq_f32(vld1q_f32(x + j), vsub), vadd);
    const float32x4_t s1 = vaddq_f32(vsubq_f32(vld1q_f32(x + j + 4), vsub), vadd);
    if (vmaxvq_u32(vorrq_u32(vcgtq_f32(s0, vthr), vcgtq_f32(s1, vthr))) != 0) break;  // a hit in these 8
  }
  return ref::ScanGt(x, j, n, sub, add, thr, s_out);  // the hit's block, or the tail
}

int Argmax(const float* x, int n) {
  const int n8 = n & ~7;
  float32x4_t mlo = vdupq_n_f32(-__builtin_inff()), mhi = mlo;
  uint32x4_t ord = vdupq_n_u32(~0u);  // all lanes ordered so far
  for (int j = 0; j < n8; j += 8) {
    const float32x4_t v0 = vld1q_f32(x + j), v1 = vld1q_f32(x + j + 4);
    ord = vandq_u32(ord, vandq_u32(vceqq_f32(v0, v0), vceqq_f32(v1, v1)));
    mlo = vmaxq_f32(mlo, v0);
    mhi = vmaxq_f32(mhi, v1);
  }
  bool any_nan = vminvq_u32(ord) == 0;
  float mx = any_nan ? 0.0f : vmaxvq_f32(vmaxq_f32(mlo, mhi));
  for (int j = n8; j < n; ++j) {
    any_nan |= x[j] != x[j];
    mx = x[j] > mx ? x[j] : mx;
  }
  if (any_nan) return ref::Argmax(x, n);
  const float32x4_t vmx = vdupq_n_f32(mx);
  int j = 0;
  for (; j + 4 <= n; j += 4)  // first block holding the maximum, then its first lane
    if (vmaxvq_u32(vceqq_f32(vld1q_f32(x + j), vmx)) != 0) break;
  for (; j < n; ++j)
    if (x[j] == mx) return j;
  return 0;
}

float Dot(const float* a, const float* b, int n) {
  const int n8 = n & ~7;
  float32x4_t lo = vdupq_n_f32(0.0f), hi = lo;
  for (int i = 0; i < n8; i += 8) {
    lo = vaddq_f32(lo, vmulq_f32(vld1q_f32(a + i), vld1q_f32(b + i)));
    hi = vaddq_f32(hi, vmulq_f32(vld1q_f32(a + i + 4), vld1q_f32(b + i + 4)));
  }
  if (n8 < n) {
    float t[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int i = n8; i < n; ++i) t[i - n8] = a[i] * b[i];
    AddPartial(lo, hi, t);
  }
  return Reduce8(lo, hi);
}

void Axpy(float alpha, const float* x, float* y, int n) {
  const float32x4_t va = vdupq_n_f32(alpha);
  int i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vaddq_f32(vld1q_f32(y + i), vmulq_f32(va, vld1q_f32(x + i))));
  for (; i < n; ++i) y[i] = y[i] + alpha * x[i];
}

namespace {
template <class F>
inline void ApplyLanes(float* x, int n, F f) {
  int i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(x + i, f(vld1q_f32(x + i)));
  if (i < n) {
    float t[4] = {0, 0, 0, 0};
    std::memcpy(t, x + i, sizeof(float) * size_t(n - i));
    vst1q_f32(t, f(vld1q_f32(t)));
    std::memcpy(x + i, t, sizeof(float) * size_t(n - i));
  }
}
}  // namespace

void Activation(float* x, int n, Act act) {
  switch (act) {
    case Act::kNone: return;
    case Act::kSiLU: ApplyLanes(x, n, [](float32x4_t v) { return SiLU(v); }); return;
    case Act::kReLU: ApplyLanes(x, n, [](float32x4_t v) { return ReLU(v); }); return;
    case Act::kGELU: ApplyLanes(x, n, [](float32x4_t v) { return GELU(v); }); return;
    case Act::kGELUTanh: ApplyLanes(x, n, [](float32x4_t v) { return GELUTanh(v); }); return;
  }
  ref::Activation(x, n, act);
}

#else  // armv7: VFP scalar reference for float math (see the top of this file)

void LayerNorm(const float* x, int m, int d, const float* gamma, const float* beta, float eps,
               float* y) {
  ref::LayerNorm(x, m, d, gamma, beta, eps, y);
}
void SoftmaxMasked(float* x, int n, const float* mask) { ref::SoftmaxMasked(x, n, mask); }
float Dot(const float* a, const float* b, int n) { return ref::DotRef(a, b, n); }
void Axpy(float alpha, const float* x, float* y, int n) { ref::Axpy(alpha, x, y, n); }
void Activation(float* x, int n, Act act) { ref::Activation(x, n, act); }
void AttnScores(const float* q, const float* k, int ld, const int32_t* idx, int m, int n, float scale,
                float* out) {
  ref::AttnScores(q, k, ld, idx, m, n, scale, out);
}
void AttnContext(const float* p, const float* v, int ld, const int32_t* idx, int m, int n, float* ctx) {
  ref::AttnContext(p, v, ld, idx, m, n, ctx);
}
float MaxSumExp(const float* x, int n, float* max_out) { return ref::MaxSumExp(x, n, max_out); }
int ScanGt(const float* x, int from, int n, float sub, float add, float thr, float* s_out) {
  return ref::ScanGt(x, from, n, sub, add, thr, s_out);
}
int Argmax(const float* x, int n) { return ref::Argmax(x, n); }

#endif

}  // namespace neon

const KernelTable& NeonKernels() {
  static const KernelTable table = {
      "neon",
      neon::QuantizeRowsS8,
      neon::GemmS8Blocked,
      neon::GemmS8BlockedAcc,
      neon::LayerNorm,
      neon::SoftmaxMasked,
      neon::Dot,
      neon::Axpy,
      neon::Activation,
      neon::AttnScores,
      neon::AttnContext,
      neon::MaxSumExp,
      neon::ScanGt,
      neon::Argmax,
  };
  return table;
}

}  // namespace kernels
}  // namespace mtlite

#endif  // __ARM_NEON

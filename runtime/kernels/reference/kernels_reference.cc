// Scalar reference kernels: the numerics every SIMD kernel must match bit for bit.
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels.h"
#include "reference/kernels_reference.h"

namespace mtlite {
namespace kernels {

void PackBlockedN8K4(const int8_t* w, int n, int k, int8_t* out) {
  const int kp = RoundUp(k, 4), np = RoundUp(n, 8);
  std::memset(out, 0, size_t(np) * size_t(kp));
  for (int r = 0; r < n; ++r) {
    int8_t* block = out + size_t(r / 8) * size_t(kp) * 8;
    for (int c = 0; c < k; ++c) block[(c / 4) * 32 + (r % 8) * 4 + (c % 4)] = w[size_t(r) * k + c];
  }
}

void UnpackBlockedRow(const int8_t* packed, int n, int k, int row, int8_t* out) {
  (void)n;
  const int kp = RoundUp(k, 4);
  const int8_t* block = packed + size_t(row / 8) * size_t(kp) * 8 + (row % 8) * 4;
  for (int g = 0; g < kp / 4; ++g) {
    for (int j = 0; j < 4 && g * 4 + j < k; ++j) out[g * 4 + j] = block[g * 32 + j];
  }
}

float ExpRef(float x) {
  // Range reduction x = n*ln2 + r, |r| <= ln2/2; exp(r) by Cephes' expf polynomial
  // (coefficients from Cephes, S. Moshier). Rounding of n by the 1.5*2^23 trick.
  if (!(x > -87.33654f)) return x != x ? x : 0.0f;  // NaN stays NaN, -inf and underflow -> 0
  if (x > 88.72283f) return std::numeric_limits<float>::infinity();
  const float kMagic = 12582912.0f;  // 1.5 * 2^23
  float t = x * 1.44269504088896341f;
  t = t + kMagic;
  float n = t - kMagic;
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500E-4f;
  p = p * r + 1.3981999507E-3f;
  p = p * r + 8.3334519073E-3f;
  p = p * r + 4.1665795894E-2f;
  p = p * r + 1.6666665459E-1f;
  p = p * r + 5.0000001201E-1f;
  float rr = r * r;
  float y = p * rr;
  y = y + r;
  y = y + 1.0f;
  // 2^n for n in [-126, 127]; n can reach -127 near the lower bound: split the scale.
  int ni = static_cast<int>(n);
  int n1 = ni >> 1, n2 = ni - n1;  // arithmetic shift (floor), as SIMD does
  uint32_t b1 = uint32_t(n1 + 127) << 23, b2 = uint32_t(n2 + 127) << 23;
  float s1, s2;
  std::memcpy(&s1, &b1, 4);
  std::memcpy(&s2, &b2, 4);
  return (y * s1) * s2;
}

namespace ref {

static float ErfRef(float x) {
  // Abramowitz & Stegun 7.1.26 (max abs error 1.5e-7), odd symmetry.
  float ax = x < 0 ? -x : x;
  float t = 1.0f / (1.0f + 0.3275911f * ax);
  float p = 1.061405429f;
  p = p * t + -1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t + -0.284496736f;
  p = p * t + 0.254829592f;
  p = p * t;
  float y = 1.0f - p * ExpRef(-(ax * ax));
  return x < 0 ? -y : y;
}

float ActRef(float x, Act act) {
  switch (act) {
    case Act::kNone: return x;
    case Act::kSiLU: return x / (1.0f + ExpRef(-x));
    case Act::kReLU: return x > 0.0f ? x : 0.0f;
    case Act::kGELU: return (0.5f * x) * (1.0f + ErfRef(x * 0.70710678118654752f));
    case Act::kGELUTanh: {
      float u = 0.7978845608028654f * (x + (0.044715f * x) * (x * x));
      // tanh(u) = 1 - 2 / (exp(2u) + 1)
      float th = 1.0f - 2.0f / (ExpRef(2.0f * u) + 1.0f);
      return (0.5f * x) * (1.0f + th);
    }
  }
  return x;
}

// The 8-lane reduction of the contract: every element, tail included, goes into lane i % 8
// (so trailing zeros never change the result: padding-invariant).
static float Tree8(const float* lane) {
  return ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
}

float Sum8(const float* x, int n) {
  float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < n; ++i) lane[i & 7] = lane[i & 7] + x[i];
  return Tree8(lane);
}

float DotRef(const float* a, const float* b, int n) {
  float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < n; ++i) lane[i & 7] = lane[i & 7] + a[i] * b[i];
  return Tree8(lane);
}

int8_t QuantizeOne(float v) {
  // round half to even, then clamp to [-127, 127]. NaN -> 0: it arises only as 0 * inf when a
  // row's maxabs is so tiny (< ~4e-37) that 127 / maxabs overflows (converting NaN to int8 is UB).
  if (v != v) return 0;
  float r = std::nearbyint(v);
  if (r > 127.0f) r = 127.0f;
  if (r < -127.0f) r = -127.0f;
  return static_cast<int8_t>(r);
}

void QuantizeRowsS8(const float* x, int m, int k, int ldx, int8_t* q, int ldq, float* scales) {
  const int kp = RoundUp(k, 4);
  for (int i = 0; i < m; ++i) {
    const float* xr = x + size_t(i) * ldx;
    int8_t* qr = q + size_t(i) * ldq;
    float maxabs = 0.0f;
    for (int j = 0; j < k; ++j) {
      float a = std::fabs(xr[j]);
      // a NaN anywhere makes maxabs NaN (and the row zero, below); `a > maxabs` alone skips NaN.
      maxabs = (a > maxabs || a != a) ? a : maxabs;
    }
    if (!(maxabs > 0.0f) || !std::isfinite(maxabs)) {
      // zeros (or non-finite input, which upstream code never produces): quantise to zero
      std::memset(qr, 0, size_t(kp));
      scales[i] = 0.0f;
      continue;
    }
    const float inv = 127.0f / maxabs;
    scales[i] = maxabs / 127.0f;
    for (int j = 0; j < k; ++j) qr[j] = QuantizeOne(xr[j] * inv);
    for (int j = k; j < kp; ++j) qr[j] = 0;
  }
}

void GemmS8BlockedAcc(int m, int n, int k, const int8_t* a, int lda, const int8_t* w, int32_t* acc,
                      int ldacc) {
  const int kp = RoundUp(k, 4);
  for (int i = 0; i < m; ++i) {
    const int8_t* ar = a + size_t(i) * lda;
    for (int r = 0; r < n; ++r) {
      const int8_t* block = w + size_t(r / 8) * size_t(kp) * 8 + (r % 8) * 4;
      int32_t s = 0;
      for (int g = 0; g < kp / 4; ++g)
        for (int j = 0; j < 4; ++j) s += int32_t(ar[g * 4 + j]) * int32_t(block[g * 32 + j]);
      acc[size_t(i) * ldacc + r] = s;
    }
  }
}

void GemmS8Blocked(int m, int n, int k, const int8_t* a, int lda, const float* a_scales,
                   const int8_t* w, const float* w_scales, const float* bias, const float* residual,
                   int ldr, float* c, int ldc, Act act) {
  const int kp = RoundUp(k, 4);
  for (int i = 0; i < m; ++i) {
    const int8_t* ar = a + size_t(i) * lda;
    for (int r = 0; r < n; ++r) {
      const int8_t* block = w + size_t(r / 8) * size_t(kp) * 8 + (r % 8) * 4;
      int32_t s = 0;
      for (int g = 0; g < kp / 4; ++g)
        for (int j = 0; j < 4; ++j) s += int32_t(ar[g * 4 + j]) * int32_t(block[g * 32 + j]);
      float y = float(s) * (a_scales[i] * w_scales[r]);
      if (bias) y = y + bias[r];
      if (residual) y = y + residual[size_t(i) * ldr + r];
      c[size_t(i) * ldc + r] = ActRef(y, act);
    }
  }
}

void LayerNorm(const float* x, int m, int d, const float* gamma, const float* beta, float eps,
               float* y) {
  for (int i = 0; i < m; ++i) {
    const float* xr = x + size_t(i) * d;
    float* yr = y + size_t(i) * d;
    const float mean = Sum8(xr, d) / float(d);
    float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int j = 0; j < d; ++j) {
      float t = xr[j] - mean;
      lane[j & 7] = lane[j & 7] + t * t;
    }
    float var = Tree8(lane) / float(d);
    const float inv = 1.0f / std::sqrt(var + eps);
    for (int j = 0; j < d; ++j) yr[j] = ((xr[j] - mean) * inv) * gamma[j] + beta[j];
  }
}

void SoftmaxMasked(float* x, int n, const float* mask) {
  float mx = -std::numeric_limits<float>::infinity();
  for (int j = 0; j < n; ++j) {
    float s = mask ? x[j] + mask[j] : x[j];
    x[j] = s;
    mx = s > mx ? s : mx;
  }
  if (mx == -std::numeric_limits<float>::infinity()) {
    for (int j = 0; j < n; ++j) x[j] = 0.0f;
    return;
  }
  for (int j = 0; j < n; ++j) x[j] = ExpRef(x[j] - mx);
  const float inv = 1.0f / Sum8(x, n);
  for (int j = 0; j < n; ++j) x[j] = x[j] * inv;
}

void Axpy(float alpha, const float* x, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] = y[i] + alpha * x[i];
}

void Activation(float* x, int n, Act act) {
  if (act == Act::kNone) return;
  for (int i = 0; i < n; ++i) x[i] = ActRef(x[i], act);
}

void AttnScores(const float* q, const float* k, int ld, const int32_t* idx, int m, int n, float scale,
                float* out) {
  for (int j = 0; j < m; ++j) out[j] = DotRef(q, k + size_t(idx ? idx[j] : j) * size_t(ld), n) * scale;
}

void AttnContext(const float* p, const float* v, int ld, const int32_t* idx, int m, int n, float* ctx) {
  for (int i = 0; i < n; ++i) ctx[i] = 0.0f;
  for (int j = 0; j < m; ++j) {
    if (p[j] == 0.0f) continue;
    const float* vr = v + size_t(idx ? idx[j] : j) * size_t(ld);
    for (int i = 0; i < n; ++i) ctx[i] = ctx[i] + p[j] * vr[i];
  }
}

float MaxSumExp(const float* x, int n, float* max_out) {
  const float ninf = -std::numeric_limits<float>::infinity();
  float mx = ninf;
  for (int j = 0; j < n; ++j) mx = x[j] > mx ? x[j] : mx;
  *max_out = mx;
  if (mx == ninf) return 0.0f;
  float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int j = 0; j < n; ++j) lane[j & 7] = lane[j & 7] + ExpRef(x[j] - mx);
  return Tree8(lane);
}

int ScanGt(const float* x, int from, int n, float sub, float add, float thr, float* s_out) {
  for (int j = from < 0 ? 0 : from; j < n; ++j) {
    const float s = (x[j] - sub) + add;
    if (s > thr) {
      *s_out = s;
      return j;
    }
  }
  return n;
}

int Argmax(const float* x, int n) {
  int best = 0;
  for (int j = 1; j < n; ++j)
    if (x[j] > x[best]) best = j;
  return best;
}

}  // namespace ref

const KernelTable& ReferenceKernels() {
  static const KernelTable table = {
      "reference",       ref::QuantizeRowsS8, ref::GemmS8Blocked, ref::GemmS8BlockedAcc,
      ref::LayerNorm,    ref::SoftmaxMasked,  ref::DotRef,        ref::Axpy,
      ref::Activation,   ref::AttnScores,     ref::AttnContext,   ref::MaxSumExp,
      ref::ScanGt,       ref::Argmax,
  };
  return table;
}

}  // namespace kernels
}  // namespace mtlite

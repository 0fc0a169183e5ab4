// Reference exp, erf and activations (kernels.h contract; coefficients in math_coeffs.h).
#include <cstring>
#include <limits>

#include "kernel_families.h"
#include "kernels.h"
#include "math_coeffs.h"
#include "reference/reference.h"

namespace mtlite {
namespace kernels {

float ExpRef(float x) {
  // Range reduction x = n*ln2 + r, |r| <= ln2/2; exp(r) by Cephes' expf polynomial.
  // Rounding of n by the 1.5*2^23 trick.
  if (!(x > coeff::kExpLow)) return x != x ? x : 0.0f;  // NaN stays NaN, -inf and underflow -> 0
  if (x > coeff::kExpHigh) return std::numeric_limits<float>::infinity();
  float t = x * coeff::kLog2e;
  t = t + coeff::kExpMagic;
  float n = t - coeff::kExpMagic;
  float r = x - n * coeff::kLn2Hi;
  r = r - n * coeff::kLn2Lo;
  float p = coeff::kExpP0;
  p = p * r + coeff::kExpP1;
  p = p * r + coeff::kExpP2;
  p = p * r + coeff::kExpP3;
  p = p * r + coeff::kExpP4;
  p = p * r + coeff::kExpP5;
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
namespace {

float ErfRef(float x) {
  // Abramowitz & Stegun 7.1.26 (max abs error 1.5e-7), odd symmetry.
  float ax = x < 0 ? -x : x;
  float t = 1.0f / (1.0f + coeff::kErfP * ax);
  float p = coeff::kErfA5;
  p = p * t + coeff::kErfA4;
  p = p * t + coeff::kErfA3;
  p = p * t + coeff::kErfA2;
  p = p * t + coeff::kErfA1;
  p = p * t;
  float y = 1.0f - p * ExpRef(-(ax * ax));
  return x < 0 ? -y : y;
}

}  // namespace

float ActRef(float x, Act act) {
  switch (act) {
    case Act::kNone: return x;
    case Act::kSiLU: return x / (1.0f + ExpRef(-x));
    case Act::kSigmoid: return 1.0f / (1.0f + ExpRef(-x));
    case Act::kReLU: return x > 0.0f ? x : 0.0f;
    case Act::kGELU: return (0.5f * x) * (1.0f + ErfRef(x * coeff::kSqrtHalf));
    case Act::kGELUTanh: {
      float u = coeff::kSqrt2OverPi * (x + (coeff::kGeluCubic * x) * (x * x));
      // tanh(u) = 1 - 2 / (exp(2u) + 1)
      float th = 1.0f - 2.0f / (ExpRef(2.0f * u) + 1.0f);
      return (0.5f * x) * (1.0f + th);
    }
  }
  return x;
}

void Activation(float* x, int n, Act act) {
  if (act == Act::kNone) return;
  for (int i = 0; i < n; ++i) x[i] = ActRef(x[i], act);
}

}  // namespace ref

template <>
void AddActivationKernels<IsaReference>(KernelTable& t) {
  t.activation = ref::Activation;
}

}  // namespace kernels
}  // namespace mtlite

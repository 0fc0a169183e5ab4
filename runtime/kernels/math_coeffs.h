// The constants of the specified float math (kernels.h contract): exp, erf and the activations.
// One copy, used by the scalar reference (reference/activation_reference.cc) and by the vector
// versions of every ISA (generic/vec_math.h), so that a coefficient can never differ between them.
// constexpr floats only: no code, nothing for the linker to merge across ISA flags.
#pragma once

namespace mtlite {
namespace kernels {
namespace coeff {

// ExpRef: x = n*ln2 + r with n = round(x * log2(e)) by the 1.5 * 2^23 trick, ln2 split in a
// part exact in float (hi) and the rest (lo); exp(r) by Cephes' expf polynomial (coefficients
// from Cephes, S. Moshier): p = P0; p = p*r + P1 ... P5; exp(r) = (p * r*r + r) + 1.
constexpr float kExpLow = -87.33654f;   // !(x > kExpLow): 0 (NaN stays NaN)
constexpr float kExpHigh = 88.72283f;   // x > kExpHigh: +inf
constexpr float kExpMagic = 12582912.0f;  // 1.5 * 2^23
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kExpP0 = 1.9875691500E-4f;
constexpr float kExpP1 = 1.3981999507E-3f;
constexpr float kExpP2 = 8.3334519073E-3f;
constexpr float kExpP3 = 4.1665795894E-2f;
constexpr float kExpP4 = 1.6666665459E-1f;
constexpr float kExpP5 = 5.0000001201E-1f;

// erf by Abramowitz & Stegun 7.1.26 (max abs error 1.5e-7), odd symmetry:
// t = 1 / (1 + kErfP * |x|); p = ((((A5 t + A4) t + A3) t + A2) t + A1) t;
// erf(|x|) = 1 - p * exp(-x^2).
constexpr float kErfP = 0.3275911f;
constexpr float kErfA1 = 0.254829592f;
constexpr float kErfA2 = -0.284496736f;
constexpr float kErfA3 = 1.421413741f;
constexpr float kErfA4 = -1.453152027f;
constexpr float kErfA5 = 1.061405429f;

// GELU (erf form): 0.5 x (1 + erf(x / sqrt 2)).
constexpr float kSqrtHalf = 0.70710678118654752f;
// GELU (tanh form): u = sqrt(2/pi) (x + 0.044715 x^3), tanh(u) = 1 - 2 / (exp(2u) + 1).
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

}  // namespace coeff
}  // namespace kernels
}  // namespace mtlite

// IEEE binary16 and bfloat16 <-> binary32 conversions (bit exact, round to nearest even).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace mtlite {
namespace converter {

inline float BitsToF32(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint32_t F32ToBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

inline float F16ToF32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
  if (exp == 0x1F) return BitsToF32(sign | 0x7F800000u | (mant << 13));  // inf / NaN
  if (exp == 0) {                                                        // zero / subnormal
    const float v = float(mant) * (1.0f / 16777216.0f);                  // mant * 2^-24, exact
    return sign ? -v : v;
  }
  return BitsToF32(sign | ((exp + 112u) << 23) | (mant << 13));
}

inline uint16_t F32ToF16(float f) {
  const uint32_t x = F32ToBits(f);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) return uint16_t(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u : 0u));
  if (abs >= 0x477FF000u) return uint16_t(sign | 0x7C00u);  // >= 65520 rounds to infinity
  if (abs < 0x38800000u) {                                   // below 2^-14: subnormal or zero
    // |f| * 2^24 is exact; nearbyint rounds half to even (default rounding mode).
    return uint16_t(sign | uint16_t(std::nearbyint(BitsToF32(abs) * 16777216.0f)));
  }
  // Rebias the exponent (127 -> 15) and round the mantissa to 10 bits, half to even.
  const uint32_t rounded = abs + 0xC8000FFFu + ((abs >> 13) & 1u);
  return uint16_t(sign | (rounded >> 13));
}

inline float Bf16ToF32(uint16_t b) { return BitsToF32(uint32_t(b) << 16); }

}  // namespace converter
}  // namespace mtlite

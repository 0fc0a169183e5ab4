// Bit-level helpers for kernels of every ISA: float <-> bit pattern, a 4-byte int8 group as one
// int32. Internal linkage (anonymous namespace): this header is included by translation units
// compiled with different ISA flags, and an inline function with external linkage could be
// merged by the linker into one ISA's copy.
#pragma once

#include <cstdint>
#include <cstring>

namespace mtlite {
namespace kernels {
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
// The 4 int8 values of one k group (BlockedN8K4 / activation rows), as one (unaligned) load.
inline int32_t Load4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

}  // namespace
}  // namespace kernels
}  // namespace mtlite

#include "ticks.h"

#include <cstring>

#include "platform.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace mtlite {
namespace kernels {

bool TicksUsable() {
  const char* clock = platform::GetEnv("MTLITE_PROFILE_CLOCK");
  if (clock != nullptr && std::strcmp(clock, "steady") == 0) return false;
#if defined(__x86_64__) || defined(__i386__)
  // Intel SDM vol. 3 "Invariant TSC" / AMD APM vol. 3 CPUID Fn8000_0007 EDX[8] (TscInvariant).
  if (__get_cpuid_max(0x80000000u, nullptr) < 0x80000007u) return false;
  unsigned a, b, c, d;
  if (!__get_cpuid(0x80000007u, &a, &b, &c, &d)) return false;
  return (d & (1u << 8)) != 0;
#elif defined(__aarch64__)
  return true;
#else
  return false;
#endif
}

}  // namespace kernels
}  // namespace mtlite

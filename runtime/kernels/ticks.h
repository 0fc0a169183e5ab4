// A cheap monotonic tick counter for the profiler's spans, behind the kernels' ISA layer:
//   x86-64 / i386 : the time-stamp counter (rdtsc, ~11 ns where steady_clock::now() costs ~26 ns
//                   under kvm-clock);
//   aarch64       : the generic timer's virtual count (mrs cntvct_el0; Linux lets user space
//                   read it, its vDSO clock does the same) at a fixed frequency (CNTFRQ_EL0),
//                   commonly tens of MHz, 1 GHz from Armv8.6 on: one tick is 1 to ~50 ns;
//   elsewhere     : (armv7, Cortex-M, others) the platform's monotonic clock in ns
//                   (runtime/platform/platform.h: steady_clock, or the board's clock).
// Ticks have no fixed unit: a caller converts a difference with a scale measured against the
// steady clock over the same interval (the profiler does it once per profiled call).
//
// ReadTicks() touches no vector state, so its inline copies in translation units built with
// different ISA flags are identical and may be merged by the linker.
#pragma once

#include <cstdint>

#include "platform.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace mtlite {
namespace kernels {

// The steady (monotonic) clock in ns.
inline uint64_t SteadyNs() { return platform::MonotonicNs(); }

inline uint64_t ReadTicks() {
#if defined(__x86_64__) || defined(__i386__)
  return uint64_t(__rdtsc());
#elif defined(__aarch64__)
  uint64_t v;
  __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
  return v;
#else
  return SteadyNs();
#endif
}

// Whether ReadTicks() is a counter worth using instead of SteadyNs(): it advances at a constant
// rate on every core, whatever the power state.
//   x86: the invariant TSC (CPUID 0x80000007 EDX bit 8); aarch64: always (the generic timer);
//   elsewhere: false (ReadTicks() is the steady clock itself).
// MTLITE_PROFILE_CLOCK=steady in the environment makes it false everywhere.
// Not cached: it runs CPUID and reads the environment on each call.
bool TicksUsable();

}  // namespace kernels
}  // namespace mtlite

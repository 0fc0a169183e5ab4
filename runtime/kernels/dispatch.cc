// Run-time choice of the kernel table. Tables are listed slowest first; BestKernels() takes
// the last one the CPU can run (or the one named by MTLITE_KERNELS).
//
//   x86-64  : "avx2"         if the CPU has AVX2 and FMA (the kernels are built with
//                            -mavx2 -mfma -mf16c; FMA instructions are never used: contract).
//   aarch64 : "neon"         always (Advanced SIMD is part of the base ISA),
//             "neon-dotprod" if AT_HWCAP has HWCAP_ASIMDDP (sdot/udot).
//   armv7   : "neon"         if AT_HWCAP has HWCAP_NEON,
//             "neon-dotprod" if AT_HWCAP has HWCAP_ASIMDDP (bit 24, Linux >= 6.2 for 32-bit
//                            processes; an AArch32 process on older kernels or under qemu-arm
//                            is not told). MTLITE_ASSUME_DOTPROD=1 in the environment adds the
//                            table without the HWCAP bit (testing under emulators only: the
//                            instructions fault on a CPU without them).
#include <cstdlib>
#include <cstring>

#include "kernel_families.h"
#include "kernels.h"

#if defined(MTLITE_HAVE_AVX2_KERNELS) && (defined(__x86_64__) || defined(__i386__))
#define MTLITE_DISPATCH_AVX2 1
#endif

#if defined(MTLITE_HAVE_NEON_KERNELS) && (defined(__aarch64__) || defined(__arm__))
#include <sys/auxv.h>
#define MTLITE_DISPATCH_NEON 1
#endif

namespace mtlite {
namespace kernels {

namespace {

#if defined(MTLITE_DISPATCH_AVX2)
bool CpuHasAvx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

#if defined(MTLITE_DISPATCH_NEON)
[[maybe_unused]] bool EnvIs(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, value) == 0;
}
#if defined(__aarch64__)
bool CpuHasNeon() { return true; }
bool CpuHasDotProd() {
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
  return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
}
#else
bool CpuHasNeon() {
#ifndef HWCAP_NEON
#define HWCAP_NEON (1 << 12)
#endif
  return (getauxval(AT_HWCAP) & HWCAP_NEON) != 0;
}
bool CpuHasDotProd() {
  // arch/arm/include/uapi/asm/hwcap.h: HWCAP_ASIMDDP (1 << 24); older headers lack the name.
  return (getauxval(AT_HWCAP) & (1ul << 24)) != 0 || EnvIs("MTLITE_ASSUME_DOTPROD", "1");
}
#endif
#endif

}  // namespace

const KernelTable& ReferenceKernels() {
  static const KernelTable table = AllFamilies<IsaReference>("reference");
  return table;
}

int AvailableKernels(const KernelTable** out, int max) {
  int n = 0;
  if (n < max) out[n++] = &ReferenceKernels();
#if defined(MTLITE_DISPATCH_AVX2)
  static const bool avx2 = CpuHasAvx2();
  if (avx2) {
    static const KernelTable table = AllFamilies<IsaAvx2>("avx2");
    if (n < max) out[n++] = &table;
  }
#endif
#if defined(MTLITE_DISPATCH_NEON)
  static const bool neon = CpuHasNeon();
  static const bool dotprod = neon && CpuHasDotProd();
  if (neon) {
    static const KernelTable table = AllFamilies<IsaNeon>("neon");
    if (n < max) out[n++] = &table;
  }
  if (dotprod) {
    static const KernelTable table = [] {
      KernelTable t = AllFamilies<IsaNeon>("neon-dotprod");
      AddGemmKernels<IsaNeonDotProd>(t);  // sdot GEMM, the rest as "neon"
      return t;
    }();
    if (n < max) out[n++] = &table;
  }
#endif
  return n;
}

const KernelTable& BestKernels() {
  static const KernelTable* best = [] {
    const KernelTable* tables[8];
    int n = AvailableKernels(tables, 8);
    const KernelTable* pick = tables[n - 1];
    if (const char* want = std::getenv("MTLITE_KERNELS")) {
      for (int i = 0; i < n; ++i)
        if (std::strcmp(tables[i]->name, want) == 0) pick = tables[i];
    }
    return pick;
  }();
  return *best;
}

}  // namespace kernels
}  // namespace mtlite

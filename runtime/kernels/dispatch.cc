// Run-time choice of the kernel table. Tables are listed slowest first; BestKernels() takes
// the last one the CPU can run (or the one named by MTLITE_KERNELS; another name is reported on
// stderr and the default kept).
//
//   x86-64  : "avx2"         if the CPU has AVX2, FMA and F16C (the kernels are built with
//                            -mavx2 -mfma -mf16c; FMA instructions are never used: contract)
//                            and the OS saves the YMM state (XGETBV: XCR0 bits 1, 2);
//             "avx-vnni"     "avx2" with the AVX-VNNI GEMM (VEX vpdpbusd ymm: CPUID.(7,1).EAX[4]);
//             "avx512-vnni"  the AVX-512 VNNI GEMM and 16-lane AVX-512 float kernels (all
//                            families: attention_bench measured 1.1-1.9x over avx2; rows of
//                            <= 8 / dots of <= 64 take the 8-lane code): AVX-512 F, DQ, BW, VL and VNNI, and the
//                            OS saves the opmask and ZMM state (XCR0 bits 5, 6, 7);
//             "avx512-amx"   "avx512-vnni" with the AMX GEMM (amx/gemm_amx.cc): AMX-TILE and
//                            AMX-INT8 (CPUID.(7,0).EDX[24, 25]), the OS saves the tile state
//                            (XCR0 bits 17, 18) and Linux grants this process the tile data
//                            (arch_prctl ARCH_REQ_XCOMP_PERM, asked once, here).
//   aarch64 : "neon"         always (Advanced SIMD is part of the base ISA),
//             "neon-dotprod" if AT_HWCAP has HWCAP_ASIMDDP (sdot/udot).
//   armv7   : "neon"         if AT_HWCAP has HWCAP_NEON,
//             "neon-dotprod" if AT_HWCAP has HWCAP_ASIMDDP (bit 24, Linux >= 6.2 for 32-bit
//                            processes; an AArch32 process on older kernels or under qemu-arm
//                            is not told). MTLITE_ASSUME_DOTPROD=1 in the environment adds the
//                            table without the HWCAP bit (testing under emulators only: the
//                            instructions fault on a CPU without them).
//   wasm32  : "wasm-simd128" in a module built with SIMD128 (cmake/wasm.cmake): an engine without
//                            SIMD128 rejects the whole module, so the check is the loader's (it
//                            loads the module built without SIMD128 instead; web/mtlite.js).
//   Armv8.1-M: "mve"         in a build for a core with Helium (MVE, e.g. -mcpu=cortex-m55) that
//                            compiles runtime/kernels/mve/ (MTLITE_HAVE_MVE_KERNELS): firmware is
//                            built for one core, so the choice is the build's.
#include <cstring>

#include "kernel_families.h"
#include "kernels.h"
#include "platform.h"

#if defined(MTLITE_HAVE_AVX2_KERNELS) && (defined(__x86_64__) || defined(__i386__))
#include <cpuid.h>
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#define MTLITE_DISPATCH_AVX2 1
#endif

#if defined(MTLITE_HAVE_NEON_KERNELS) && (defined(__aarch64__) || defined(__arm__))
#define MTLITE_DISPATCH_NEON 1
#endif

namespace mtlite {
namespace kernels {

namespace {

#if defined(MTLITE_DISPATCH_AVX2)
struct X86Isas {
  bool avx2 = false, avx_vnni = false, avx512_vnni = false, amx_int8 = false;
};

// Linux (>= 5.16) enables a process's AMX tile data on request; without the grant the first tile
// instruction raises SIGILL. Other systems: no AMX table.
bool OsGrantsTileData() {
#if defined(__linux__) && defined(__x86_64__) && defined(SYS_arch_prctl)
  constexpr int kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

// CPUID says what the CPU implements; XGETBV(0) says which register state the OS saves on a
// context switch (without it the instructions fault, or registers get corrupted).
X86Isas DetectX86() {
  X86Isas isa;
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return isa;
  const bool fma = c & (1u << 12), osxsave = c & (1u << 27), avx = c & (1u << 28), f16c = c & (1u << 29);
  if (!osxsave || !avx || __get_cpuid_max(0, nullptr) < 7) return isa;
  uint32_t xcr0_lo, xcr0_hi;
  __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  const bool os_ymm = (xcr0_lo & 0x6u) == 0x6u;             // XMM (bit 1) and YMM (bit 2)
  const bool os_zmm = os_ymm && (xcr0_lo & 0xe0u) == 0xe0u;  // opmask, ZMM_Hi256, Hi16_ZMM
  __cpuid_count(7, 0, a, b, c, d);
  const unsigned max_subleaf = a;
  const bool avx2 = b & (1u << 5), avx512f = b & (1u << 16), avx512dq = b & (1u << 17);
  const bool avx512bw = b & (1u << 30), avx512vl = b & (1u << 31), avx512vnni = c & (1u << 11);
  const bool amx_tile = d & (1u << 24), amx_int8 = d & (1u << 25);
  const bool os_tiles = (xcr0_lo & 0x60000u) == 0x60000u;  // XTILECFG (bit 17), XTILEDATA (bit 18)
  bool avxvnni = false;
  if (max_subleaf >= 1) {
    __cpuid_count(7, 1, a, b, c, d);
    avxvnni = a & (1u << 4);
  }
  isa.avx2 = os_ymm && avx2 && fma && f16c;
  isa.avx_vnni = isa.avx2 && avxvnni;
  isa.avx512_vnni = isa.avx2 && os_zmm && avx512f && avx512dq && avx512bw && avx512vl && avx512vnni;
  isa.amx_int8 = isa.avx512_vnni && amx_tile && amx_int8 && os_tiles && OsGrantsTileData();
  return isa;
}
#endif

#if defined(MTLITE_DISPATCH_NEON)
[[maybe_unused]] bool EnvIs(const char* name, const char* value) {
  const char* v = platform::GetEnv(name);
  return v != nullptr && std::strcmp(v, value) == 0;
}
#if defined(__aarch64__)
bool CpuHasNeon() { return true; }
bool CpuHasDotProd() {
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
  return (platform::CpuHwcap() & HWCAP_ASIMDDP) != 0;
}
#else
bool CpuHasNeon() {
#ifndef HWCAP_NEON
#define HWCAP_NEON (1 << 12)
#endif
  return (platform::CpuHwcap() & HWCAP_NEON) != 0;
}
bool CpuHasDotProd() {
  // arch/arm/include/uapi/asm/hwcap.h: HWCAP_ASIMDDP (1 << 24); older headers lack the name.
  return (platform::CpuHwcap() & (1ul << 24)) != 0 || EnvIs("MTLITE_ASSUME_DOTPROD", "1");
}
#endif
#endif

}  // namespace

// Every family of Base, with the GEMM entries of Gemm instead (e.g. "avx-vnni": avx2 + its GEMM).
template <class Base, class Gemm>
[[maybe_unused]] KernelTable WithGemmOf(const char* name) {
  KernelTable t = AllFamilies<Base>(name);
  AddGemmKernels<Gemm>(t);
  return t;
}

const KernelTable& ReferenceKernels() {
  static const KernelTable table = AllFamilies<IsaReference>("reference");
  return table;
}

int AvailableKernels(const KernelTable** out, int max) {
  int n = 0;
  if (n < max) out[n++] = &ReferenceKernels();
#if defined(MTLITE_DISPATCH_AVX2)
  static const X86Isas isa = DetectX86();
  if (isa.avx2) {
    static const KernelTable table = AllFamilies<IsaAvx2>("avx2");
    if (n < max) out[n++] = &table;
  }
  if (isa.avx_vnni) {
    static const KernelTable table = WithGemmOf<IsaAvx2, IsaAvxVnni>("avx-vnni");
    if (n < max) out[n++] = &table;
  }
  if (isa.avx512_vnni) {
    static const KernelTable table = AllFamilies<IsaAvx512>("avx512-vnni");
    if (n < max) out[n++] = &table;
  }
  if (isa.amx_int8) {
    static const KernelTable table = WithGemmOf<IsaAvx512, IsaAmx>("avx512-amx");
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
    static const KernelTable table = WithGemmOf<IsaNeon, IsaNeonDotProd>("neon-dotprod");  // sdot GEMM
    if (n < max) out[n++] = &table;
  }
#endif
#if defined(MTLITE_HAVE_WASM_KERNELS)
  {
    static const KernelTable table = AllFamilies<IsaWasm>("wasm-simd128");
    if (n < max) out[n++] = &table;
  }
#endif
#if defined(MTLITE_HAVE_MVE_KERNELS) && defined(__ARM_FEATURE_MVE)
  {
    static const KernelTable table = AllFamilies<IsaMve>("mve");
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
    if (const char* want = platform::GetEnv("MTLITE_KERNELS")) {
      bool found = false;
      for (int i = 0; i < n; ++i)
        if (std::strcmp(tables[i]->name, want) == 0) pick = tables[i], found = true;
      if (!found && want[0] != '\0') {
        // A misspelt name, or a table this CPU cannot run: said once, on stderr, rather than
        // silently testing or measuring another table.
        platform::WriteDiagnostic("mtlite: MTLITE_KERNELS=");
        platform::WriteDiagnostic(want);
        platform::WriteDiagnostic(" is not a kernel table this CPU can run (it can run:");
        for (int i = 0; i < n; ++i) {
          platform::WriteDiagnostic(" ");
          platform::WriteDiagnostic(tables[i]->name);
        }
        platform::WriteDiagnostic("); using ");
        platform::WriteDiagnostic(pick->name);
        platform::WriteDiagnostic("\n");
      }
    }
    return pick;
  }();
  return *best;
}

}  // namespace kernels
}  // namespace mtlite

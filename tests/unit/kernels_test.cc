// Kernel tables: dispatch (which tables this CPU gets, all entries present) and the BlockedN8K4
// packing. Each kernel family has its own test binary, tests/unit/kernels_<family>_test.cc,
// built on tests/unit/kernel_tester.h; every one checks every table AvailableKernels() lists
// against the scalar reference, bit for bit. Only depends on kernels.h / reference.h, so these
// also build standalone for ARM (runtime/kernels/neon/cross_test.sh): keep them fast.
#include <gtest/gtest.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <sys/syscall.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernel_tester.h"
#include "kernels.h"

namespace mtlite {
namespace kernels {
namespace test {
namespace {

TEST(KernelDispatch, ReferenceFirstAndBestListed) {
  auto tables = Tables();
  ASSERT_GE(tables.size(), 1u);
  EXPECT_STREQ(tables[0]->name, "reference");
  EXPECT_EQ(tables[0], &ReferenceKernels());
  bool found = false;
  for (auto* t : tables) found |= (t == &BestKernels());
  EXPECT_TRUE(found);
  for (auto* t : tables) {
    EXPECT_NE(t->name, nullptr);
    EXPECT_NE(t->quantize_rows_s8, nullptr) << t->name;
    EXPECT_NE(t->gemm_s8_blocked, nullptr) << t->name;
    EXPECT_NE(t->gemm_s8_blocked_acc, nullptr) << t->name;
    EXPECT_NE(t->layer_norm, nullptr) << t->name;
    EXPECT_NE(t->softmax_masked, nullptr) << t->name;
    EXPECT_NE(t->dot_f32, nullptr) << t->name;
    EXPECT_NE(t->activation, nullptr) << t->name;
    EXPECT_NE(t->attn_scores, nullptr) << t->name;
    EXPECT_NE(t->attn_context, nullptr) << t->name;
    EXPECT_NE(t->attn_scores_heads, nullptr) << t->name;
    EXPECT_NE(t->attn_context_heads, nullptr) << t->name;
    EXPECT_NE(t->max_sum_exp, nullptr) << t->name;
    EXPECT_NE(t->scan_gt, nullptr) << t->name;
    EXPECT_NE(t->argmax, nullptr) << t->name;
    EXPECT_NE(t->gemm_s8_blocked_gather, nullptr) << t->name;
    EXPECT_NE(t->gemm_s8_blocked_scatter, nullptr) << t->name;
    // the GEMM's row panel (the runtime's column split): 16 rows per AMX tile operation, the
    // vector tables' tile rows (1..4), 1 in the reference
    const bool amx = std::string(t->name) == "avx512-amx";
    EXPECT_GE(t->gemm_panel_rows, amx ? 16 : 1) << t->name;
    EXPECT_LE(t->gemm_panel_rows, amx ? 16 : 4) << t->name;
  }
  EXPECT_EQ(tables[0]->gemm_panel_rows, 1);
  for (size_t i = 0; i < tables.size(); ++i)
    for (size_t j = i + 1; j < tables.size(); ++j) EXPECT_STRNE(tables[i]->name, tables[j]->name);
}

// The SIMD tables must actually be here (and so be tested) on the CPUs that have them.
TEST(KernelDispatch, SimdTablePresent) {
  std::string names;
  for (auto* t : Tables()) names += std::string(t->name) + " ";
#if defined(MTLITE_HAVE_AVX2_KERNELS) && defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    EXPECT_NE(names.find("avx2 "), std::string::npos) << names;
  }
#endif
#if defined(MTLITE_HAVE_NEON_KERNELS) && defined(__aarch64__)
  EXPECT_NE(names.find("neon "), std::string::npos) << names;
#endif
#if defined(MTLITE_HAVE_WASM_KERNELS)
  EXPECT_NE(names.find("wasm-simd128 "), std::string::npos) << names;
#endif
#if defined(MTLITE_HAVE_MVE_KERNELS) && defined(__ARM_FEATURE_MVE)
  EXPECT_NE(names.find("mve "), std::string::npos) << names;
#endif
  std::printf("kernel tables: %s(best: %s)\n", names.c_str(), BestKernels().name);
}

#if defined(MTLITE_HAVE_AVX2_KERNELS) && defined(__x86_64__)
// The x86 VNNI tables run (and so are tested by every kernel family test) where the CPU has the
// ISA; elsewhere these tests skip, saying so. The CPU check here is independent of dispatch.cc
// (libgcc's, which also checks the OS state).
bool Listed(const char* name) {
  for (auto* t : Tables())
    if (std::strcmp(t->name, name) == 0) return true;
  return false;
}

TEST(KernelDispatch, AvxVnniTable) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avxvnni") || !__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
    GTEST_SKIP() << "this CPU (or OS) has no AVX-VNNI: the avx-vnni kernels are not tested here";
  EXPECT_TRUE(Listed("avx-vnni"));
}

TEST(KernelDispatch, Avx512VnniTable) {
  __builtin_cpu_init();
  const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                   __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                   __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx2") &&
                   __builtin_cpu_supports("fma");
  if (!has) GTEST_SKIP() << "this CPU (or OS) has no AVX-512 F/DQ/BW/VL/VNNI: the avx512-vnni kernels are not tested here";
  EXPECT_TRUE(Listed("avx512-vnni"));
}

// AMX: the CPU's AMX-TILE / AMX-INT8 (CPUID), the OS's tile state (XCR0 bits 17, 18) and Linux's
// support for granting it (arch_prctl ARCH_GET_XCOMP_SUPP lists XTILEDATA), read here directly.
TEST(KernelDispatch, AmxTable) {
  __builtin_cpu_init();
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_max(0, nullptr) >= 7) __cpuid_count(7, 0, a, b, c, d);
  const bool cpu = (d >> 24 & 3u) == 3u;
  if (!cpu || !__builtin_cpu_supports("avx512vnni") || !__builtin_cpu_supports("avx512bw"))
    GTEST_SKIP() << "this CPU has no AMX-TILE / AMX-INT8 (or no AVX-512 VNNI): the avx512-amx GEMM is not tested here";
  uint32_t xcr0 = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0), "=d"(hi) : "c"(0));
  unsigned long supported = 0;
  const bool os = (xcr0 & 0x60000u) == 0x60000u && syscall(SYS_arch_prctl, 0x1021, &supported) == 0 &&
                  (supported >> 18 & 1u) != 0;
  if (!os) GTEST_SKIP() << "the OS does not enable AMX tile data for processes: the avx512-amx GEMM is not tested here";
  EXPECT_TRUE(Listed("avx512-amx"));
}

// MTLITE_KERNELS=<name> picks that table (when the CPU has it): checked in a child process.
TEST(KernelDispatch, EnvironmentForcesTable) {
  char self[4096];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(len, 0);
  self[len] = 0;
  const std::string test_binary = self;
  for (auto* t : Tables()) {
    const std::string cmd = std::string("MTLITE_KERNELS=") + t->name + " " + test_binary +
                            " --gtest_filter=KernelDispatch.SimdTablePresent 2>&1 | grep -q 'best: " +
                            t->name + ")'";
    EXPECT_EQ(0, std::system(cmd.c_str())) << t->name;
  }
}
#endif

TEST(KernelPacking, RoundTripAndLayout) {
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> d(-128, 127);
  for (int n : {1, 7, 8, 9, 17, 64}) {
    for (int k : {1, 3, 4, 5, 33, 64}) {
      std::vector<int8_t> w(size_t(n) * k);
      for (auto& v : w) v = int8_t(d(rng));
      const size_t bytes = BlockedN8K4Bytes(n, k);
      EXPECT_EQ(bytes, size_t((n + 7) / 8 * 8) * size_t((k + 3) / 4 * 4));
      std::vector<int8_t> p(bytes, 0x55);
      PackBlockedN8K4(w.data(), n, k, p.data());
      const int kp = (k + 3) / 4 * 4;
      // Independent layout formula: block r/8, group c/4, 32-byte groups of 8 rows x 4 k.
      for (int r = 0; r < (n + 7) / 8 * 8; ++r)
        for (int c = 0; c < kp; ++c) {
          const int8_t want = (r < n && c < k) ? w[size_t(r) * k + c] : 0;
          const size_t at = size_t(r / 8) * kp * 8 + (c / 4) * 32 + (r % 8) * 4 + c % 4;
          ASSERT_EQ(p[at], want) << "n=" << n << " k=" << k << " r=" << r << " c=" << c;
        }
      std::vector<int8_t> row(k);
      for (int r = 0; r < n; ++r) {
        UnpackBlockedRow(p.data(), n, k, r, row.data());
        ASSERT_EQ(0, std::memcmp(row.data(), w.data() + size_t(r) * k, size_t(k))) << n << "x" << k;
      }
    }
  }
}

}  // namespace
}  // namespace test
}  // namespace kernels
}  // namespace mtlite

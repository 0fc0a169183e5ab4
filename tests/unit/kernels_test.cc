// Kernel tables vs the scalar reference (bit-exact), and the reference vs independent checks
// (exact int32 GEMM from row-major weights, std::exp, closed forms).
//
// Every table from AvailableKernels() is checked. Floats compare by bit pattern, except that
// any NaN equals any NaN (NaN payloads are not part of the contract).
// Only depends on kernels.h / kernels_reference.h, so it also builds standalone for ARM
// (qemu): keep it fast (a few seconds natively).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels.h"
#include "reference/kernels_reference.h"

namespace mtlite {
namespace kernels {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kDenorm = 1e-40f;  // subnormal

std::vector<const KernelTable*> Tables() {
  const KernelTable* t[16];
  const int n = AvailableKernels(t, 16);
  return std::vector<const KernelTable*>(t, t + n);
}

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

bool SameFloat(float a, float b) { return (a != a && b != b) || Bits(a) == Bits(b); }

// Bit-exact comparison (NaN == NaN); reports the first few mismatches.
::testing::AssertionResult SameFloats(const float* want, const float* got, size_t n) {
  size_t bad = 0, first = n;
  for (size_t i = 0; i < n; ++i)
    if (!SameFloat(want[i], got[i])) {
      if (first == n) first = i;
      ++bad;
    }
  if (bad == 0) return ::testing::AssertionSuccess();
  char buf[200];
  std::snprintf(buf, sizeof buf, "%zu of %zu differ; first at %zu: want %.9g (0x%08x) got %.9g (0x%08x)",
                bad, n, first, double(want[first]), Bits(want[first]), double(got[first]),
                Bits(got[first]));
  return ::testing::AssertionFailure() << buf;
}

template <class T>
::testing::AssertionResult SameInts(const T* want, const T* got, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (want[i] != got[i])
      return ::testing::AssertionFailure() << "first difference at " << i << ": want "
                                           << int64_t(want[i]) << " got " << int64_t(got[i]);
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------------------------------------
// Dispatch

TEST(KernelDispatch, ReferenceFirstAndBestListed) {
  auto tables = Tables();
  ASSERT_GE(tables.size(), 1u);
  EXPECT_STREQ(tables[0]->name, "reference");
  bool found = false;
  for (auto* t : tables) found |= (t == &BestKernels());
  EXPECT_TRUE(found);
  for (auto* t : tables) {
    EXPECT_NE(t->quantize_rows_s8, nullptr) << t->name;
    EXPECT_NE(t->gemm_s8_blocked, nullptr) << t->name;
    EXPECT_NE(t->gemm_s8_blocked_acc, nullptr) << t->name;
    EXPECT_NE(t->layer_norm, nullptr) << t->name;
    EXPECT_NE(t->softmax_masked, nullptr) << t->name;
    EXPECT_NE(t->dot_f32, nullptr) << t->name;
    EXPECT_NE(t->axpy_f32, nullptr) << t->name;
    EXPECT_NE(t->activation, nullptr) << t->name;
    EXPECT_NE(t->attn_scores, nullptr) << t->name;
    EXPECT_NE(t->attn_context, nullptr) << t->name;
    EXPECT_NE(t->max_sum_exp, nullptr) << t->name;
    EXPECT_NE(t->scan_gt, nullptr) << t->name;
    EXPECT_NE(t->argmax, nullptr) << t->name;
  }
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
  std::printf("kernel tables: %s(best: %s)\n", names.c_str(), BestKernels().name);
}

// ---------------------------------------------------------------------------------------------
// Packing

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

// ---------------------------------------------------------------------------------------------
// int8 GEMM

struct GemmCase {
  int m, n, k;
  bool bias = false, residual = false, alias = false;  // alias: c == residual
  Act act = Act::kNone;
  int lda_pad = 0, ldc_pad = 0;  // extra stride
};

std::string Describe(const GemmCase& g) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "m=%d n=%d k=%d bias=%d residual=%d alias=%d act=%d lda+%d ldc+%d",
                g.m, g.n, g.k, g.bias, g.residual, g.alias, int(g.act), g.lda_pad, g.ldc_pad);
  return buf;
}

constexpr int kGuard = 16;

struct GemmData {
  int m, n, k, kp, lda, ldc;
  std::vector<int8_t> w;       // row-major [n][k]
  std::vector<int8_t> packed;  // BlockedN8K4
  std::vector<int8_t> a;       // [m][lda]
  std::vector<float> a_scales, w_scales, bias, residual;
  std::vector<int64_t> exact;  // [m][n], independent of every kernel
};

void FillExact(GemmData& d) {
  d.exact.assign(size_t(d.m) * d.n, 0);
  for (int i = 0; i < d.m; ++i)
    for (int r = 0; r < d.n; ++r) {
      int64_t s = 0;
      const int8_t* ar = d.a.data() + size_t(i) * d.lda;
      const int8_t* wr = d.w.data() + size_t(r) * d.k;
      for (int c = 0; c < d.k; ++c) s += int64_t(ar[c]) * int64_t(wr[c]);
      d.exact[size_t(i) * d.n + r] = s;
    }
}

GemmData MakeGemm(const GemmCase& g, std::mt19937& rng) {
  GemmData d;
  d.m = g.m, d.n = g.n, d.k = g.k;
  d.kp = (g.k + 3) / 4 * 4;
  d.lda = d.kp + g.lda_pad;
  d.ldc = g.n + g.ldc_pad;
  std::uniform_int_distribution<int> wd(-128, 127), ad(-127, 127);
  std::uniform_real_distribution<float> sd(1e-4f, 2e-2f), fd(-4.0f, 4.0f);
  d.w.resize(size_t(g.n) * g.k);
  for (auto& v : d.w) v = int8_t(wd(rng));
  d.packed.resize(BlockedN8K4Bytes(g.n, g.k));
  PackBlockedN8K4(d.w.data(), g.n, g.k, d.packed.data());
  d.a.assign(size_t(g.m) * d.lda, 0);
  for (int i = 0; i < g.m; ++i)
    for (int c = 0; c < g.k; ++c) d.a[size_t(i) * d.lda + c] = int8_t(ad(rng));
  // bytes past kp (stride padding) are junk the kernel must ignore
  for (int i = 0; i < g.m; ++i)
    for (int c = d.kp; c < d.lda; ++c) d.a[size_t(i) * d.lda + c] = int8_t(wd(rng));
  d.a_scales.resize(g.m);
  for (auto& v : d.a_scales) v = sd(rng);
  d.w_scales.resize(g.n);
  for (auto& v : d.w_scales) v = sd(rng);
  if (g.bias) {
    d.bias.resize(g.n);
    for (auto& v : d.bias) v = fd(rng);
  }
  if (g.residual || g.alias) {
    d.residual.assign(size_t(g.m) * d.ldc, kNaN);
    for (int i = 0; i < g.m; ++i)
      for (int r = 0; r < g.n; ++r) d.residual[size_t(i) * d.ldc + r] = fd(rng);
  }
  return d;
}

// Runs one table; c starts as a sentinel so that writes outside [m][n] are caught.
std::vector<float> RunGemm(const KernelTable& t, const GemmCase& g, const GemmData& d) {
  const float sentinel = FromBits(0x7fc0dead);
  std::vector<float> c;
  const float* res = nullptr;
  if (g.alias) {
    c = d.residual;
  } else {
    c.assign(size_t(g.m) * d.ldc, sentinel);
  }
  c.resize(c.size() + kGuard, sentinel);  // trailing guard: stores past the end show up
  if (g.alias) res = c.data();
  else if (g.residual) res = d.residual.data();
  t.gemm_s8_blocked(g.m, g.n, g.k, d.a.data(), d.lda, d.a_scales.data(), d.packed.data(),
                    d.w_scales.data(), g.bias ? d.bias.data() : nullptr, res, d.ldc, c.data(),
                    d.ldc, g.act);
  return c;
}

void CheckGemm(const GemmCase& g, std::mt19937& rng, bool check_exact = true) {
  SCOPED_TRACE(Describe(g));
  const GemmData d = MakeGemm(g, rng);
  if (check_exact) {
    GemmData& dm = const_cast<GemmData&>(d);
    FillExact(dm);
  }
  const auto tables = Tables();
  const std::vector<float> want = RunGemm(*tables[0], g, d);
  for (int i = 0; i < kGuard; ++i) ASSERT_EQ(Bits(want[want.size() - 1 - i]), 0x7fc0deadu);
  // Padding columns of c (ldc > n) keep their previous content.
  if (!g.alias) {
    for (int i = 0; i < g.m; ++i)
      for (int r = g.n; r < d.ldc; ++r) ASSERT_EQ(Bits(want[size_t(i) * d.ldc + r]), 0x7fc0deadu);
  }
  for (auto* t : tables) {
    SCOPED_TRACE(t->name);
    std::vector<int32_t> acc(size_t(g.m) * d.ldc + kGuard, 0x12345678);
    t->gemm_s8_blocked_acc(g.m, g.n, g.k, d.a.data(), d.lda, d.packed.data(), acc.data(), d.ldc);
    if (check_exact) {
      for (int i = 0; i < g.m; ++i)
        for (int r = 0; r < g.n; ++r)
          ASSERT_EQ(int64_t(acc[size_t(i) * d.ldc + r]), d.exact[size_t(i) * g.n + r])
              << "acc row " << i << " col " << r;
    }
    for (int i = 0; i < g.m; ++i)
      for (int r = g.n; r < d.ldc; ++r) ASSERT_EQ(acc[size_t(i) * d.ldc + r], 0x12345678);
    for (int i = 0; i < kGuard; ++i) ASSERT_EQ(acc[acc.size() - 1 - i], 0x12345678);
    if (t == tables[0]) continue;
    const std::vector<float> got = RunGemm(*t, g, d);
    ASSERT_TRUE(SameFloats(want.data(), got.data(), want.size()));
  }
}

// The shape grid of the task, sampled: every combination up to a work budget, and a
// deterministic subset of the larger ones.
TEST(KernelGemm, ShapeGrid) {
  const int ms[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33};
  const int ns[] = {1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 255, 256, 257, 8001};
  const int ks[] = {1, 3, 4, 5, 31, 32, 33, 64, 255, 256, 257, 1024, 4096};
  const Act acts[] = {Act::kNone, Act::kSiLU, Act::kReLU, Act::kGELU, Act::kGELUTanh};
  std::mt19937 rng(42);
  int idx = 0, run = 0;
  double macs = 0;
  for (int mi = 0; mi < 11; ++mi)
    for (int ni = 0; ni < 14; ++ni)
      for (int ki = 0; ki < 13; ++ki, ++idx) {
        const double work = double(ms[mi]) * ns[ni] * ks[ki];
        const bool small = work <= 200e3;
        const bool sampled = work <= 12e6 && (mi * 7 + ni * 3 + ki * 5) % 9 == 0;
        if (!small && !sampled) continue;
        GemmCase g{ms[mi], ns[ni], ks[ki]};
        const uint32_t h = uint32_t(idx) * 2654435761u;
        g.bias = (h >> 3) & 1;
        g.residual = (h >> 5) & 1;
        g.alias = g.residual && ((h >> 7) & 1);
        g.act = acts[(h >> 9) % 5];
        g.lda_pad = ((h >> 13) & 3) == 0 ? 4 + int((h >> 15) & 7) : 0;
        g.ldc_pad = (!g.alias && ((h >> 18) & 3) == 0) ? 3 : 0;
        if (g.alias) g.ldc_pad = ((h >> 18) & 3) == 0 ? 5 : 0;
        CheckGemm(g, rng);
        if (HasFatalFailure()) return;
        ++run;
        macs += work;
      }
  std::printf("gemm grid: %d shapes, %.0f M MAC per table\n", run, macs / 1e6);
  EXPECT_GT(run, 500);
}

// Every epilogue combination (bias x residual x alias x activation) on tile-edge shapes.
TEST(KernelGemm, EpilogueCombinations) {
  std::mt19937 rng(7);
  const Act acts[] = {Act::kNone, Act::kSiLU, Act::kReLU, Act::kGELU, Act::kGELUTanh};
  for (auto shape : {std::array<int, 3>{1, 8001, 33}, {5, 17, 64}, {9, 65, 255}, {16, 64, 256}})
    for (int bias = 0; bias < 2; ++bias)
      for (int res = 0; res < 3; ++res)
        for (Act act : acts) {
          GemmCase g{shape[0], shape[1], shape[2]};
          g.bias = bias;
          g.residual = res >= 1;
          g.alias = res == 2;
          g.act = act;
          CheckGemm(g, rng, /*check_exact=*/false);
          if (HasFatalFailure()) return;
        }
}

// Decoder / encoder shapes of the demo model (and d_model 512), exact int32 for all of them.
TEST(KernelGemm, ModelShapes) {
  std::mt19937 rng(11);
  for (auto s : {std::array<int, 3>{1, 256, 256}, {1, 1024, 256}, {1, 256, 1024}, {1, 8001, 256},
                 {1, 512, 512}, {1, 2048, 512}, {16, 256, 256}, {12, 1024, 256}, {16, 256, 1024}}) {
    GemmCase g{s[0], s[1], s[2]};
    g.bias = true;
    g.residual = s[1] == 256;
    g.act = s[1] == 1024 ? Act::kSiLU : Act::kNone;
    CheckGemm(g, rng);
    if (HasFatalFailure()) return;
  }
}

// Worst cases for int16 pair saturation and int32 range: weights and activations at +-127
// (and weights at -128, which the schema never produces but the kernels handle), sign
// patterns that maximise every pair sum, K up to 4096; exact int32 from row-major weights.
TEST(KernelGemm, WorstCaseExactness) {
  const int n = 24, m = 8;
  for (int k : {4096, 4093, 1024, 255, 8}) {
    SCOPED_TRACE("k=" + std::to_string(k));
    GemmData d;
    d.m = m, d.n = n, d.k = k, d.kp = (k + 3) / 4 * 4, d.lda = d.kp, d.ldc = n;
    d.w.resize(size_t(n) * k);
    d.a.assign(size_t(m) * d.lda, 0);
    // weight row patterns
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < k; ++c) {
        int8_t v;
        switch (r % 8) {
          case 0: v = 127; break;
          case 1: v = -127; break;
          case 2: v = -128; break;
          case 3: v = (c & 1) ? -127 : 127; break;
          case 4: v = (c & 1) ? 127 : -127; break;
          case 5: v = (c & 1) ? -128 : 127; break;
          case 6: v = ((c >> 1) & 1) ? -128 : -127; break;
          default: v = (c % 3 == 0) ? 127 : -128; break;
        }
        d.w[size_t(r) * k + c] = v;
      }
    for (int i = 0; i < m; ++i)
      for (int c = 0; c < k; ++c) {
        int8_t v;
        switch (i) {
          case 0: v = 127; break;
          case 1: v = -127; break;
          case 2: v = (c & 1) ? -127 : 127; break;
          case 3: v = (c & 1) ? 127 : -127; break;
          case 4: v = ((c >> 1) & 1) ? -127 : 127; break;
          case 5: v = (c % 3 == 0) ? -127 : 127; break;
          case 6: v = (c & 2) ? 127 : -127; break;
          default: v = (c % 5 == 0) ? 0 : -127; break;
        }
        d.a[size_t(i) * d.lda + c] = v;
      }
    d.packed.resize(BlockedN8K4Bytes(n, k));
    PackBlockedN8K4(d.w.data(), n, k, d.packed.data());
    FillExact(d);
    // sanity: the patterns reach the extremes
    int64_t hi = 0, lo = 0;
    for (auto v : d.exact) hi = std::max(hi, v), lo = std::min(lo, v);
    EXPECT_EQ(hi, int64_t(127) * 128 * k);
    EXPECT_EQ(lo, -int64_t(127) * 128 * k);
    d.a_scales.assign(m, 1.0f / 127);
    d.w_scales.assign(n, 1.0f / 127);
    for (auto* t : Tables()) {
      SCOPED_TRACE(t->name);
      for (int mm : {1, 2, 3, 5, 8}) {
        std::vector<int32_t> acc(size_t(mm) * n);
        t->gemm_s8_blocked_acc(mm, n, k, d.a.data(), d.lda, d.packed.data(), acc.data(), n);
        for (int i = 0; i < mm; ++i)
          for (int r = 0; r < n; ++r)
            ASSERT_EQ(int64_t(acc[size_t(i) * n + r]), d.exact[size_t(i) * n + r])
                << "m=" << mm << " row " << i << " col " << r;
        std::vector<float> c(size_t(mm) * n);
        t->gemm_s8_blocked(mm, n, k, d.a.data(), d.lda, d.a_scales.data(), d.packed.data(),
                           d.w_scales.data(), nullptr, nullptr, 0, c.data(), n, Act::kNone);
        for (int i = 0; i < mm; ++i)
          for (int r = 0; r < n; ++r) {
            const float want = float(d.exact[size_t(i) * n + r]) * ((1.0f / 127) * (1.0f / 127));
            ASSERT_TRUE(SameFloat(want, c[size_t(i) * n + r])) << "row " << i << " col " << r;
          }
      }
    }
  }
}

// m = 0 / n = 0 write nothing; k = 0 gives the epilogue of zero accumulators.
TEST(KernelGemm, EmptyShapes) {
  std::vector<int8_t> a(64, 1), w(BlockedN8K4Bytes(8, 64), 1);
  std::vector<float> s(16, 1.0f), c(64, 5.0f);
  std::vector<int32_t> acc(64, 5);
  for (auto* t : Tables()) {
    t->gemm_s8_blocked(0, 8, 64, a.data(), 64, s.data(), w.data(), s.data(), nullptr, nullptr, 0,
                       c.data(), 8, Act::kNone);
    t->gemm_s8_blocked(1, 0, 64, a.data(), 64, s.data(), w.data(), s.data(), nullptr, nullptr, 0,
                       c.data(), 8, Act::kNone);
    t->gemm_s8_blocked_acc(0, 8, 64, a.data(), 64, w.data(), acc.data(), 8);
    for (float v : c) EXPECT_EQ(v, 5.0f) << t->name;
    for (int v : acc) EXPECT_EQ(v, 5) << t->name;
    // k == 0: acc = 0, so c = 0 * scale + bias (+ residual), then the activation
    std::vector<float> bias = {1.5f, -2.0f, 0.25f, -0.0f, 3.0f, -1.0f, 0.5f, 2.0f, 9.0f};
    std::vector<float> ck(9, 7.0f), want(9, 7.0f);
    ReferenceKernels().gemm_s8_blocked(1, 9, 0, a.data(), 4, s.data(), w.data(), s.data(), bias.data(),
                                       nullptr, 0, want.data(), 9, Act::kSiLU);
    t->gemm_s8_blocked(1, 9, 0, a.data(), 4, s.data(), w.data(), s.data(), bias.data(), nullptr, 0,
                       ck.data(), 9, Act::kSiLU);
    EXPECT_TRUE(SameFloats(want.data(), ck.data(), 9)) << t->name;
    std::vector<int32_t> acck(9, 5);
    t->gemm_s8_blocked_acc(1, 9, 0, a.data(), 4, w.data(), acck.data(), 9);
    for (int v : acck) EXPECT_EQ(v, 0) << t->name;
  }
}

// ---------------------------------------------------------------------------------------------
// Quantisation

void CheckQuantize(const std::vector<float>& x, int m, int k, int ldx, const char* what) {
  SCOPED_TRACE(std::string(what) + " m=" + std::to_string(m) + " k=" + std::to_string(k));
  const int kp = (k + 3) / 4 * 4, ldq = kp + 5;
  const auto tables = Tables();
  std::vector<int8_t> want(size_t(m) * ldq, 0x5a);
  std::vector<float> want_s(m, -1.0f);
  tables[0]->quantize_rows_s8(x.data(), m, k, ldx, want.data(), ldq, want_s.data());
  for (int i = 0; i < m; ++i) {
    for (int j = k; j < kp; ++j) ASSERT_EQ(want[size_t(i) * ldq + j], 0) << "pad";
    for (int j = kp; j < ldq; ++j) ASSERT_EQ(want[size_t(i) * ldq + j], 0x5a) << "beyond kp";
    for (int j = 0; j < k; ++j) {
      const int v = want[size_t(i) * ldq + j];
      ASSERT_TRUE(v >= -127 && v <= 127);
    }
  }
  for (auto* t : tables) {
    if (t == tables[0]) continue;
    SCOPED_TRACE(t->name);
    std::vector<int8_t> q(size_t(m) * ldq, 0x5a);
    std::vector<float> s(m, -1.0f);
    t->quantize_rows_s8(x.data(), m, k, ldx, q.data(), ldq, s.data());
    ASSERT_TRUE(SameInts(want.data(), q.data(), q.size()));
    ASSERT_TRUE(SameFloats(want_s.data(), s.data(), size_t(m)));
  }
}

TEST(KernelQuantize, RoundHalfEvenExactValues) {
  // maxabs 127 -> inv = 1 exactly, so q = round_half_even(x).
  std::vector<float> x = {127.0f, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 126.5f, -126.5f, 3.4999998f,
                          0.49999997f, -0.0f, 0.0f, 1e-30f, kDenorm, 64.5f, -64.5f, 65.5f, 100.0f};
  const int8_t expect[] = {127, 0, 2, 2, 0, -2, -2, 126, -126, 3, 0, 0, 0, 0, 0, 64, -64, 66, 100};
  const int k = int(x.size());
  for (auto* t : Tables()) {
    SCOPED_TRACE(t->name);
    std::vector<int8_t> q(size_t((k + 3) / 4 * 4), 0x5a);
    float s = 0;
    t->quantize_rows_s8(x.data(), 1, k, k, q.data(), int(q.size()), &s);
    EXPECT_EQ(s, 1.0f);
    for (int j = 0; j < k; ++j) EXPECT_EQ(q[j], expect[j]) << "x=" << x[j];
    for (size_t j = k; j < q.size(); ++j) EXPECT_EQ(q[j], 0);
  }
}

TEST(KernelQuantize, EdgeRows) {
  const int ks[] = {1, 3, 4, 5, 7, 8, 9, 31, 32, 33, 63, 64, 65, 256, 257};
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int k : ks) {
    const int m = 12, ldx = k + 3;
    std::vector<float> x(size_t(m) * ldx, 1e30f);  // stride padding: must not count in maxabs
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < k; ++j) {
        float v = u(rng);
        switch (i) {
          case 0: v = 0.0f; break;                                  // zeros -> scale 0
          case 1: v = (j % 2) ? -0.0f : 0.0f; break;                // signed zeros
          case 2: v = v * 3e38f; break;                             // huge
          case 3: v = (j % 3 == 1) ? 0.0f : v * 1e-39f; break;     // denormals (and zeros) only
          case 4: v = (j == k / 2) ? 1e-3f : v * 1e-40f; break;     // one normal + denormals
          case 5: v = (j == k - 1) ? kInf : v; break;               // inf -> zero row
          case 6: v = (j == 0) ? kNaN : v; break;                   // NaN -> zero row
          case 7: v = (j == k - 1) ? -kInf : v; break;
          case 8: v = float(int(v * 8)) + 0.5f; break;              // ties after scaling?
          case 9: v = (j == 0) ? 3.0f : std::ldexp(1.0f, -130 + int(j % 4)); break;  // tiny
          case 10: v = (j == 0) ? 1e-37f : (j % 3 == 1) ? 0.0f : v * 1e-38f; break;  // 127/maxabs = inf
          default: v = v * 100.0f; break;
        }
        x[size_t(i) * ldx + j] = v;
      }
    CheckQuantize(x, m, k, ldx, "edge");
    if (HasFatalFailure()) return;
  }
  // Ties: maxabs 127 -> inv 1, every value an exact .5
  for (int k : ks) {
    std::vector<float> x(k);
    for (int j = 0; j < k; ++j) x[j] = (j == 0) ? -127.0f : float((j * 37) % 254 - 127) + 0.5f;
    CheckQuantize(x, 1, k, k, "ties");
    if (HasFatalFailure()) return;
  }
}

TEST(KernelQuantize, Random) {
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 3.0f);
  for (int k : {1, 2, 5, 16, 31, 40, 256, 1000, 1024}) {
    const int m = 7;
    std::vector<float> x(size_t(m) * k);
    for (auto& v : x) v = nd(rng);
    CheckQuantize(x, m, k, k, "random");
    if (HasFatalFailure()) return;
  }
}

// Independent check: the reference's q matches round-half-even of x * (127 / maxabs).
TEST(KernelQuantize, ReferenceFormula) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-10.0f, 10.0f);
  std::vector<float> x(300);
  for (auto& v : x) v = u(rng);
  float maxabs = 0;
  for (float v : x) maxabs = std::max(maxabs, std::fabs(v));
  std::vector<int8_t> q(300);
  float s;
  ReferenceKernels().quantize_rows_s8(x.data(), 1, 300, 300, q.data(), 300, &s);
  EXPECT_EQ(s, maxabs / 127.0f);
  const float inv = 127.0f / maxabs;
  for (int j = 0; j < 300; ++j) {
    const float v = x[j] * inv;
    float r = std::floor(v);
    const float frac = v - r;
    if (frac > 0.5f || (frac == 0.5f && std::fmod(r, 2.0f) != 0.0f)) r += 1.0f;
    EXPECT_EQ(int(q[j]), int(std::max(-127.0f, std::min(127.0f, r)))) << v;
  }
}

// ---------------------------------------------------------------------------------------------
// Float kernels

std::vector<float> RandomVec(std::mt19937& rng, int n, float scale) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = nd(rng) * scale;
  return v;
}

// Edge values sprinkled into random data.
std::vector<float> EdgeVec(std::mt19937& rng, int n, bool allow_nonfinite = true) {
  static const float kEdges[] = {0.0f,      -0.0f,     kDenorm,   -kDenorm,   1e-38f,    -1e-38f,
                                 1e30f,     -1e30f,    3e38f,     -3e38f,     87.0f,     -87.0f,
                                 88.72283f, -87.33654f, 88.8f,    -87.4f,     100.0f,    -100.0f,
                                 1e-7f,     -1e-7f,    0.5f,      -0.5f,      9.5f,      -9.5f,
                                 kInf,      -kInf,     kNaN};
  std::vector<float> v = RandomVec(rng, n, 5.0f);
  for (int i = 0; i < n; ++i)
    if (rng() % 3 == 0) v[i] = kEdges[rng() % (sizeof kEdges / sizeof kEdges[0] - (allow_nonfinite ? 0 : 3))];
  return v;
}

const int kLens[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 255, 256, 257, 512, 1024};

TEST(KernelFloat, LayerNorm) {
  std::mt19937 rng(21);
  for (int d : kLens) {
    for (int kind = 0; kind < 5; ++kind) {
      SCOPED_TRACE("d=" + std::to_string(d) + " kind=" + std::to_string(kind));
      const int m = 3;
      std::vector<float> x;
      switch (kind) {
        case 0: x = RandomVec(rng, m * d, 1.0f); break;
        case 1: x = RandomVec(rng, m * d, 1e3f); for (auto& v : x) v += 50.0f; break;
        case 2: x.assign(size_t(m) * d, 0.25f); break;  // var 0
        case 3: x = RandomVec(rng, m * d, 1e20f); break;  // var overflows -> inf
        default: x = EdgeVec(rng, m * d); break;
      }
      const std::vector<float> gamma = RandomVec(rng, d, 1.0f), beta = RandomVec(rng, d, 0.1f);
      std::vector<float> want(x.size());
      ReferenceKernels().layer_norm(x.data(), m, d, gamma.data(), beta.data(), 1e-5f, want.data());
      for (auto* t : Tables()) {
        SCOPED_TRACE(t->name);
        std::vector<float> y(x.size());
        t->layer_norm(x.data(), m, d, gamma.data(), beta.data(), 1e-5f, y.data());
        ASSERT_TRUE(SameFloats(want.data(), y.data(), y.size()));
        std::vector<float> inplace = x;
        t->layer_norm(inplace.data(), m, d, gamma.data(), beta.data(), 1e-5f, inplace.data());
        ASSERT_TRUE(SameFloats(want.data(), inplace.data(), y.size())) << "in place";
      }
    }
  }
}

TEST(KernelFloat, LayerNormIndependent) {
  std::mt19937 rng(22);
  const int d = 257;
  std::vector<float> x = RandomVec(rng, d, 2.0f), g(d, 1.0f), b(d, 0.0f), y(d);
  ReferenceKernels().layer_norm(x.data(), 1, d, g.data(), b.data(), 1e-5f, y.data());
  double mean = 0, var = 0;
  for (float v : x) mean += v;
  mean /= d;
  for (float v : x) var += (v - mean) * (v - mean);
  var /= d;
  for (int j = 0; j < d; ++j) EXPECT_NEAR(y[j], (x[j] - mean) / std::sqrt(var + 1e-5), 1e-5);
}

TEST(KernelFloat, Softmax) {
  std::mt19937 rng(31);
  const float ninf = -kInf;
  for (int n : kLens) {
    for (int kind = 0; kind < 10; ++kind) {
      SCOPED_TRACE("n=" + std::to_string(n) + " kind=" + std::to_string(kind));
      std::vector<float> x = RandomVec(rng, n, 3.0f), mask;
      switch (kind) {
        case 0: break;                                   // no mask
        case 1: mask.assign(n, 0.0f); for (int j = 0; j < n; ++j) if (rng() % 3 == 0) mask[j] = ninf; break;
        case 2: mask.assign(n, ninf); break;             // every key masked -> zeros
        case 3: mask.assign(n, ninf); mask[n - 1] = 0.0f; break;  // only the tail key
        case 4: x = RandomVec(rng, n, 1e4f); break;      // most exps underflow
        case 5: for (int j = 0; j < n; ++j) if (rng() % 4 == 0) x[j] = ninf; break;  // -inf scores
        case 6: x = EdgeVec(rng, n, false); break;
        case 9: x = EdgeVec(rng, n, true); break;  // +-inf, NaN
        case 7: mask = RandomVec(rng, n, 2.0f); break;   // additive non-inf mask
        case 8: x.assign(n, ninf); break;                // all -inf scores, no mask -> zeros
      }
      std::vector<float> want = x;
      ReferenceKernels().softmax_masked(want.data(), n, mask.empty() ? nullptr : mask.data());
      if (kind == 2 || kind == 8) {
        for (float v : want) ASSERT_EQ(Bits(v), 0u);
      }
      bool any_key = false;  // some unmasked, finite score
      for (int j = 0; j < n; ++j)
        any_key |= std::isfinite(x[j]) && (mask.empty() || std::isfinite(mask[j]));
      if (any_key && kind != 6 && kind != 9) {  // rows with a finite key sum to 1 (independent sanity)
        double s = 0;
        for (float v : want) s += v;
        ASSERT_NEAR(s, 1.0, 1e-5);
      }
      for (auto* t : Tables()) {
        SCOPED_TRACE(t->name);
        std::vector<float> got = x;
        t->softmax_masked(got.data(), n, mask.empty() ? nullptr : mask.data());
        ASSERT_TRUE(SameFloats(want.data(), got.data(), size_t(n)));
      }
    }
  }
}

TEST(KernelFloat, DotAndAxpy) {
  std::mt19937 rng(41);
  for (int n : kLens) {
    for (int kind = 0; kind < 3; ++kind) {
      SCOPED_TRACE("n=" + std::to_string(n) + " kind=" + std::to_string(kind));
      std::vector<float> a, b;
      if (kind == 0) a = RandomVec(rng, n, 1.0f), b = RandomVec(rng, n, 1.0f);
      if (kind == 1) a = RandomVec(rng, n, 1e19f), b = RandomVec(rng, n, 1e-30f);
      if (kind == 2) a = EdgeVec(rng, n), b = EdgeVec(rng, n);
      const float want_dot = ReferenceKernels().dot_f32(a.data(), b.data(), n);
      if (kind == 0) {
        double s = 0;
        for (int i = 0; i < n; ++i) s += double(a[i]) * b[i];
        EXPECT_NEAR(want_dot, s, 1e-5 * (1 + std::sqrt(double(n))));
      }
      for (float alpha : {0.37f, -2.5f, 0.0f, 1e-39f}) {
        std::vector<float> want_y = b;
        ReferenceKernels().axpy_f32(alpha, a.data(), want_y.data(), n);
        for (auto* t : Tables()) {
          SCOPED_TRACE(t->name);
          std::vector<float> y = b;
          t->axpy_f32(alpha, a.data(), y.data(), n);
          ASSERT_TRUE(SameFloats(want_y.data(), y.data(), size_t(n))) << "axpy alpha=" << alpha;
        }
      }
      for (auto* t : Tables()) {
        SCOPED_TRACE(t->name);
        const float d = t->dot_f32(a.data(), b.data(), n);
        ASSERT_TRUE(SameFloat(want_dot, d)) << want_dot << " vs " << d;
      }
    }
  }
}

// Contract: the tail enters its lanes, so trailing zeros (dot) or masked padding (softmax)
// never change a result: a padded batch is bit-identical to one sentence at a time.
TEST(KernelFloat, PaddingInvariance) {
  std::mt19937 rng(51);
  for (int n : kLens) {
    for (int pad : {1, 3, 7, 8, 13}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " pad=" + std::to_string(pad));
      std::vector<float> a = RandomVec(rng, n, 1.0f), b = RandomVec(rng, n, 1.0f);
      std::vector<float> ap = a, bp = b;
      ap.resize(n + pad, 0.0f);
      bp.resize(n + pad, 0.0f);
      std::vector<float> x = RandomVec(rng, n, 3.0f), mask(n, 0.0f);
      for (int j = 0; j < n; ++j)
        if (rng() % 4 == 0 && j != n / 2) mask[j] = -kInf;
      std::vector<float> xp = x, maskp = mask;
      for (int j = 0; j < pad; ++j) xp.push_back(float(j) * 7.0f), maskp.push_back(-kInf);
      for (auto* t : Tables()) {
        SCOPED_TRACE(t->name);
        ASSERT_TRUE(SameFloat(t->dot_f32(a.data(), b.data(), n), t->dot_f32(ap.data(), bp.data(), n + pad)));
        std::vector<float> s = x, sp = xp;
        t->softmax_masked(s.data(), n, mask.data());
        t->softmax_masked(sp.data(), n + pad, maskp.data());
        ASSERT_TRUE(SameFloats(s.data(), sp.data(), size_t(n)));
        for (int j = n; j < n + pad; ++j) ASSERT_EQ(Bits(sp[j]), 0u);
      }
    }
  }
}


// Attention over gathered rows: attn_scores == dot_f32 * scale per row (same lanes), and
// attn_context == the ordered axpy sum; contiguous rows (idx null) and gathered rows (idx, as
// the beam KV cache uses), head widths around the 8-lane tile, masked (zero) probabilities.
TEST(KernelAttention, ScoresAndContext) {
  std::mt19937 rng(71);
  for (int n : {1, 3, 7, 8, 9, 15, 16, 17, 32, 63, 64, 65, 100, 128}) {
    for (int m : {0, 1, 2, 3, 4, 5, 7, 9, 33}) {
      for (int kind = 0; kind < 4; ++kind) {
        SCOPED_TRACE("n=" + std::to_string(n) + " m=" + std::to_string(m) + " kind=" + std::to_string(kind));
        const int ld = n + int(rng() % 3) * 8 + (kind & 1);  // rows wider than the head slice
        const int rows = m + 5;
        std::vector<float> kv = kind == 3 ? EdgeVec(rng, rows * ld, true) : RandomVec(rng, rows * ld, 1.0f);
        std::vector<float> q = kind == 3 ? EdgeVec(rng, n, true) : RandomVec(rng, n, 1.0f);
        std::vector<int32_t> idx(m);
        for (int j = 0; j < m; ++j) idx[j] = int32_t(rng() % rows);
        const int32_t* ip = (kind & 2) ? idx.data() : nullptr;
        std::vector<float> p(m);
        for (int j = 0; j < m; ++j) p[j] = (rng() % 4 == 0) ? 0.0f : float(rng() % 1000) / 1000.0f;
        const float scale = 0.125f;
        std::vector<float> want(m + 1, -7.0f), ctx_want(n + 1, -7.0f);
        ReferenceKernels().attn_scores(q.data(), kv.data(), ld, ip, m, n, scale, want.data());
        ReferenceKernels().attn_context(p.data(), kv.data(), ld, ip, m, n, ctx_want.data());
        ASSERT_EQ(want[m], -7.0f);       // writes exactly m scores
        ASSERT_EQ(ctx_want[n], -7.0f);   // and exactly n context values
        // independent: per-row dot_f32, and the ordered axpy sequence over unmasked rows
        for (int j = 0; j < m; ++j) {
          const float* kr = kv.data() + size_t(ip ? ip[j] : j) * ld;
          ASSERT_TRUE(SameFloat(want[j], ReferenceKernels().dot_f32(q.data(), kr, n) * scale));
        }
        std::vector<float> ctx_axpy(n, 0.0f);
        for (int j = 0; j < m; ++j)
          if (p[j] != 0.0f) ReferenceKernels().axpy_f32(p[j], kv.data() + size_t(ip ? ip[j] : j) * ld, ctx_axpy.data(), n);
        ASSERT_TRUE(SameFloats(ctx_axpy.data(), ctx_want.data(), size_t(n)));
        for (auto* t : Tables()) {
          SCOPED_TRACE(t->name);
          std::vector<float> got(m + 1, -7.0f), ctx(n + 1, -7.0f);
          t->attn_scores(q.data(), kv.data(), ld, ip, m, n, scale, got.data());
          t->attn_context(p.data(), kv.data(), ld, ip, m, n, ctx.data());
          ASSERT_TRUE(SameFloats(want.data(), got.data(), size_t(m) + 1));
          ASSERT_TRUE(SameFloats(ctx_want.data(), ctx.data(), size_t(n) + 1));
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Search kernels over the logits: max_sum_exp (log-softmax statistics), scan_gt, argmax.

std::vector<int> SearchLens() {
  std::vector<int> v(std::begin(kLens), std::end(kLens));
  v.push_back(8001);  // a vocabulary-sized row
  return v;
}

TEST(KernelSearch, MaxSumExp) {
  std::mt19937 rng(61);
  const float ninf = -kInf;
  for (int n : SearchLens()) {
    for (int kind = 0; kind < 8; ++kind) {
      SCOPED_TRACE("n=" + std::to_string(n) + " kind=" + std::to_string(kind));
      std::vector<float> x = RandomVec(rng, n, 4.0f);
      switch (kind) {
        case 0: break;
        case 1: for (int j = 0; j < n; ++j) if (rng() % 3 == 0) x[j] = ninf; break;  // -inf logits (pad, bad words)
        case 2: x.assign(n, ninf); break;                 // all -inf -> sum 0
        case 3: x = RandomVec(rng, n, 1e4f); break;       // most exps underflow
        case 4: x[n - 1] = 50.0f; break;                  // the max in the tail
        case 5: x = EdgeVec(rng, n, false); break;
        case 6: x = EdgeVec(rng, n, true); break;         // +-inf, NaN
        case 7: x[rng() % n] = kNaN; break;               // one NaN among finite values
      }
      float want_max = 0;
      const float want = ReferenceKernels().max_sum_exp(x.data(), n, &want_max);
      if (kind == 2) {
        ASSERT_EQ(want_max, ninf);
        ASSERT_EQ(Bits(want), 0u);
      }
      if (kind <= 4) {  // independent check: double-precision max and sum of exp
        double mx = -INFINITY, sum = 0;
        for (float v : x) mx = std::max(mx, double(v));
        ASSERT_EQ(double(want_max), mx);
        if (mx != -INFINITY) {
          for (float v : x) sum += std::exp(double(v) - mx);
          ASSERT_NEAR(want, sum, 1e-5 * sum);
        }
      }
      for (auto* t : Tables()) {
        SCOPED_TRACE(t->name);
        float mx = 0;
        const float got = t->max_sum_exp(x.data(), n, &mx);
        ASSERT_TRUE(SameFloat(want_max, mx)) << want_max << " vs " << mx;
        ASSERT_TRUE(SameFloat(want, got)) << want << " vs " << got;
      }
    }
  }
}

TEST(KernelSearch, ScanGt) {
  std::mt19937 rng(62);
  for (int n : SearchLens()) {
    for (int kind = 0; kind < 4; ++kind) {
      SCOPED_TRACE("n=" + std::to_string(n) + " kind=" + std::to_string(kind));
      std::vector<float> x = kind == 3 ? EdgeVec(rng, n, true) : RandomVec(rng, n, 3.0f);
      if (kind == 1)
        for (int j = 0; j < n; ++j)
          if (rng() % 5 == 0) x[j] = -kInf;
      if (kind == 2)  // equal values: the threshold is strict
        for (int j = 0; j < n; ++j) x[j] = float(int(x[j]));
      std::vector<float> sorted = x;
      std::sort(sorted.begin(), sorted.end(), [](float a, float b) { return a > b; });
      const float sub = kind == 2 ? 0.0f : 2.75f, add = kind == 2 ? 0.0f : -13.5f;
      // thresholds: below everything, at the top values (few hits, ties), above everything
      std::vector<float> thrs = {-kInf, (sorted[n / 2] - sub) + add, (sorted[0] - sub) + add,
                                 (sorted[std::min(n - 1, 3)] - sub) + add, kInf, kNaN};
      for (float thr : thrs) {
        for (int from : {0, 1, 7, 8, 9, n / 2, n - 1, n}) {
          if (from > n) continue;
          // independent: every j in [from, result) fails, the result passes with the right value
          float want_s = -1;
          const int want = ReferenceKernels().scan_gt(x.data(), from, n, sub, add, thr, &want_s);
          for (int j = from; j < want; ++j) ASSERT_FALSE((x[j] - sub) + add > thr) << j;
          if (want < n) {
            ASSERT_TRUE(SameFloat(want_s, (x[want] - sub) + add));
          }
          for (auto* t : Tables()) {
            SCOPED_TRACE(t->name);
            float s = -1;
            const int got = t->scan_gt(x.data(), from, n, sub, add, thr, &s);
            ASSERT_EQ(want, got) << "from=" << from << " thr=" << thr;
            if (want < n) {
              ASSERT_TRUE(SameFloat(want_s, s));
            }
          }
          // walking the whole row hit by hit visits the same positions in every table
          for (auto* t : Tables()) {
            SCOPED_TRACE(t->name);
            int a = from, b = from;
            float sa, sb;
            for (int guard = 0; guard <= n; ++guard) {
              a = ReferenceKernels().scan_gt(x.data(), a, n, sub, add, thr, &sa);
              b = t->scan_gt(x.data(), b, n, sub, add, thr, &sb);
              ASSERT_EQ(a, b);
              if (a >= n) break;
              ++a, ++b;
            }
          }
        }
      }
    }
  }
}

TEST(KernelSearch, Argmax) {
  std::mt19937 rng(63);
  for (int n : SearchLens()) {
    for (int kind = 0; kind < 8; ++kind) {
      SCOPED_TRACE("n=" + std::to_string(n) + " kind=" + std::to_string(kind));
      std::vector<float> x = RandomVec(rng, n, 3.0f);
      switch (kind) {
        case 0: break;
        case 1: { const float m = 100.0f; x[rng() % n] = m; x[rng() % n] = m; x[n - 1] = m; } break;  // ties
        case 2: x.assign(n, -kInf); break;
        case 3: x[rng() % n] = kInf; break;
        case 4: x[n - 1] = 1e6f; break;  // tail
        case 5: x[0] = kNaN; break;      // NaN first: the reference keeps index 0
        case 6: x[rng() % n] = kNaN; break;
        case 7: x = EdgeVec(rng, n, true); break;
      }
      const int want = ReferenceKernels().argmax(x.data(), n);
      bool has_nan = false;
      for (float v : x) has_nan |= v != v;
      if (!has_nan) {  // independent: std::max_element returns the first maximum
        ASSERT_EQ(want, int(std::max_element(x.begin(), x.end()) - x.begin()));
      }
      for (auto* t : Tables()) {
        SCOPED_TRACE(t->name);
        ASSERT_EQ(want, t->argmax(x.data(), n));
      }
    }
  }
}

std::vector<float> ActivationInputs() {
  std::vector<float> x;
  for (int i = -4000; i <= 4000; ++i) x.push_back(i * 0.0125f);  // [-50, 50]
  for (int i = -300; i <= 300; ++i) x.push_back(i * 0.37f);       // [-111, 111]
  const float special[] = {0.0f, -0.0f, kInf, -kInf, kNaN, -kNaN, kDenorm, -kDenorm, 1e-38f, -1e-38f,
                           std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                           87.33654f, -87.33654f, 88.72283f, -88.72283f, 43.6f, -43.6f, 44.4f, -44.4f,
                           9.0f, -9.0f, 1e-8f, -1e-8f, 1e10f, -1e10f, 123.25f, -123.25f};
  for (float s : special) {
    x.push_back(s);
    x.push_back(std::nextafter(s, kInf));
    x.push_back(std::nextafter(s, -kInf));
  }
  // around the ExpRef clamps for every input scaling used by the activations
  for (float base : {87.33654f, 88.72283f, 87.33654f / 2, 88.72283f / 2, 9.34f, 61.756f, 62.73f})
    for (int s = -1; s <= 1; s += 2) {
      float v = base * s;
      for (int i = 0; i < 40; ++i) {
        x.push_back(v);
        v = std::nextafter(v, kInf);
      }
    }
  return x;
}

TEST(KernelFloat, Activations) {
  const std::vector<float> x = ActivationInputs();
  for (Act act : {Act::kNone, Act::kSiLU, Act::kReLU, Act::kGELU, Act::kGELUTanh}) {
    for (int n : {int(x.size()), 1, 3, 7, 9, 15, 17}) {
      SCOPED_TRACE("act=" + std::to_string(int(act)) + " n=" + std::to_string(n));
      // offset windows so that specials land in tails too
      for (size_t off = 0; off + n <= x.size(); off += (n == int(x.size()) ? 1 : 211)) {
        std::vector<float> want(x.begin() + off, x.begin() + off + n);
        ReferenceKernels().activation(want.data(), n, act);
        for (auto* t : Tables()) {
          SCOPED_TRACE(t->name);
          std::vector<float> got(x.begin() + off, x.begin() + off + n);
          t->activation(got.data(), n, act);
          ASSERT_TRUE(SameFloats(want.data(), got.data(), size_t(n))) << "offset " << off;
        }
        if (n == int(x.size())) break;
      }
    }
  }
}

// The reference formulas against double precision closed forms.
TEST(KernelFloat, ActivationAccuracy) {
  for (int i = -2000; i <= 2000; ++i) {
    const float x = i * 0.01f;
    const double xd = x;
    const double silu = xd / (1 + std::exp(-xd));
    const double gelu = 0.5 * xd * (1 + std::erf(xd / std::sqrt(2.0)));
    const double u = std::sqrt(2 / 3.14159265358979323846) * (xd + 0.044715 * xd * xd * xd);
    const double gelut = 0.5 * xd * (1 + std::tanh(u));
    EXPECT_NEAR(ref::ActRef(x, Act::kSiLU), silu, 2e-6 * (1 + std::fabs(xd))) << x;
    EXPECT_NEAR(ref::ActRef(x, Act::kGELU), gelu, 2e-6 * (1 + std::fabs(xd))) << x;
    EXPECT_NEAR(ref::ActRef(x, Act::kGELUTanh), gelut, 2e-6 * (1 + std::fabs(xd))) << x;
    EXPECT_EQ(ref::ActRef(x, Act::kReLU), x > 0 ? x : 0.0f);
    EXPECT_EQ(ref::ActRef(x, Act::kNone), x);
  }
}

TEST(KernelExp, AccuracyVsStdExp) {
  double worst = 0, worst_x = 0;
  int count = 0;
  for (float x = -87.0f; x <= 88.0f; x += 0.00173f, ++count) {
    const double want = std::exp(double(x));
    const double rel = std::fabs(double(ExpRef(x)) - want) / want;
    if (rel > worst) worst = rel, worst_x = x;
  }
  for (int i = -2000; i <= 2000; ++i) {  // fine grid near 0
    const float x = i * 1e-4f;
    const double rel = std::fabs(double(ExpRef(x)) - std::exp(double(x))) / std::exp(double(x));
    if (rel > worst) worst = rel, worst_x = x;
  }
  std::printf("ExpRef: worst relative error %.3g at x=%.7g over %d points\n", worst, worst_x, count);
  EXPECT_LE(worst, 3e-7) << "at x=" << worst_x;
}

TEST(KernelExp, EdgeCases) {
  EXPECT_EQ(ExpRef(0.0f), 1.0f);
  EXPECT_EQ(ExpRef(-0.0f), 1.0f);
  EXPECT_EQ(Bits(ExpRef(-kInf)), 0u);
  EXPECT_EQ(ExpRef(kInf), kInf);
  EXPECT_TRUE(std::isnan(ExpRef(kNaN)));
  EXPECT_EQ(Bits(ExpRef(-87.34f)), 0u);
  EXPECT_EQ(Bits(ExpRef(-1000.0f)), 0u);
  EXPECT_EQ(ExpRef(88.73f), kInf);
  EXPECT_EQ(ExpRef(1000.0f), kInf);
  EXPECT_EQ(ExpRef(std::numeric_limits<float>::max()), kInf);
  // just inside the clamps: finite, positive, close to exp
  const float lo = std::nextafter(-87.33654f, 0.0f), hi = 88.72283f;
  EXPECT_GT(ExpRef(lo), 0.0f);
  EXPECT_NEAR(ExpRef(lo) / std::exp(double(lo)), 1.0, 1e-6);
  EXPECT_TRUE(std::isfinite(ExpRef(hi)));
  EXPECT_NEAR(ExpRef(hi) / std::exp(double(hi)), 1.0, 1e-6);
  EXPECT_NEAR(ExpRef(1.0f), 2.718281828, 1e-6);
  EXPECT_NEAR(ExpRef(-1.0f), 0.3678794412, 1e-7);
  // monotone on a sweep (no glitches at the range-reduction seams)
  float prev = 0.0f;
  for (float x = -87.3f; x < 88.7f; x += 0.0371f) {
    const float e = ExpRef(x);
    EXPECT_GE(e, prev) << x;
    prev = e;
  }
}

}  // namespace
}  // namespace kernels
}  // namespace mtlite

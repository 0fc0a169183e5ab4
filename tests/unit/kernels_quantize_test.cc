// Activation quantisation family (quantize_rows_s8): every table against the reference bit for
// bit (tests/unit/kernel_tester.h), and the reference against the contract's formula.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernel_tester.h"
#include "kernels.h"

namespace mtlite {
namespace kernels {
namespace test {
namespace {

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
    EXPECT_EQ("", QuantizeTester().rows(x, m, k, ldx).Test()) << "edge k=" << k;
  }
  // Ties: maxabs 127 -> inv 1, every value an exact .5
  for (int k : ks) {
    std::vector<float> x(k);
    for (int j = 0; j < k; ++j) x[j] = (j == 0) ? -127.0f : float((j * 37) % 254 - 127) + 0.5f;
    EXPECT_EQ("", QuantizeTester().rows(x, 1, k, k).ldq_pad(0).Test()) << "ties k=" << k;
  }
}

TEST(KernelQuantize, Random) {
  std::mt19937 rng(5);
  for (int k : {1, 2, 5, 16, 31, 40, 256, 1000, 1024}) {
    const int m = 7;
    std::vector<float> x = RandomVec(rng, m * k, 3.0f);
    EXPECT_EQ("", QuantizeTester().rows(x, m, k, k).Test()) << "k=" << k;
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

}  // namespace
}  // namespace test
}  // namespace kernels
}  // namespace mtlite

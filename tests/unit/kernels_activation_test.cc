// Activation family (activation) and the specified exp: every table against the reference bit
// for bit over the whole input range, clamps and specials; the reference against std::exp and
// the closed forms in double precision.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kernel_tester.h"
#include "kernels.h"
#include "reference/reference.h"

namespace mtlite {
namespace kernels {
namespace test {
namespace {

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
  for (Act act : {Act::kNone, Act::kSiLU, Act::kReLU, Act::kGELU, Act::kGELUTanh, Act::kSigmoid}) {
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
          ASSERT_EQ("", DiffFloats(want.data(), got.data(), size_t(n))) << "offset " << off;
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
    EXPECT_NEAR(ref::ActRef(x, Act::kSigmoid), 1 / (1 + std::exp(-xd)), 2e-7) << x;
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
  EXPECT_EQ(FloatBits(ExpRef(-kInf)), 0u);
  EXPECT_EQ(ExpRef(kInf), kInf);
  EXPECT_TRUE(std::isnan(ExpRef(kNaN)));
  EXPECT_EQ(FloatBits(ExpRef(-87.34f)), 0u);
  EXPECT_EQ(FloatBits(ExpRef(-1000.0f)), 0u);
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
}  // namespace test
}  // namespace kernels
}  // namespace mtlite

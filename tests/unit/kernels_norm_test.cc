// Layer norm family (layer_norm): every table against the reference bit for bit, in place
// too, and the reference against a double-precision layer norm.
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
        ASSERT_EQ("", DiffFloats(want.data(), y.data(), y.size()));
        std::vector<float> inplace = x;
        t->layer_norm(inplace.data(), m, d, gamma.data(), beta.data(), 1e-5f, inplace.data());
        ASSERT_EQ("", DiffFloats(want.data(), inplace.data(), y.size())) << "in place";
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

}  // namespace
}  // namespace test
}  // namespace kernels
}  // namespace mtlite

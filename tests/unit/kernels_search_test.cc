// Search family over the logits (max_sum_exp, scan_gt, argmax): every table against the
// reference bit for bit (ties, NaN, -inf, tails), and the reference against independent checks.
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
        ASSERT_EQ(FloatBits(want), 0u);
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

}  // namespace
}  // namespace test
}  // namespace kernels
}  // namespace mtlite

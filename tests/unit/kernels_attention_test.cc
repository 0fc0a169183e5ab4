// Attention family (softmax_masked, dot_f32, attn_scores, attn_context): every table against the
// reference bit for bit over tails, masks and edge values, the contract's padding invariance,
// and the reference against independent computations.
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
        for (float v : want) ASSERT_EQ(FloatBits(v), 0u);
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
        ASSERT_EQ("", DiffFloats(want.data(), got.data(), size_t(n)));
      }
    }
  }
}

TEST(KernelFloat, Dot) {
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
        ASSERT_EQ("", DiffFloats(s.data(), sp.data(), size_t(n)));
        for (int j = n; j < n + pad; ++j) ASSERT_EQ(FloatBits(sp[j]), 0u);
      }
    }
  }
}


// Attention over gathered rows: attn_scores == dot_f32 * scale per row (same lanes), and
// attn_context == the ordered sum of p[j] * v_j; contiguous rows (idx null) and gathered rows (idx, as
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
        // independent: per-row dot_f32, and the ordered y = y + p * v sequence over unmasked rows
        for (int j = 0; j < m; ++j) {
          const float* kr = kv.data() + size_t(ip ? ip[j] : j) * ld;
          ASSERT_TRUE(SameFloat(want[j], ReferenceKernels().dot_f32(q.data(), kr, n) * scale));
        }
        std::vector<float> ctx_seq(n, 0.0f);
        for (int j = 0; j < m; ++j) {
          if (p[j] == 0.0f) continue;
          const float* vr = kv.data() + size_t(ip ? ip[j] : j) * ld;
          for (int i = 0; i < n; ++i) ctx_seq[i] = ctx_seq[i] + p[j] * vr[i];
        }
        ASSERT_EQ("", DiffFloats(ctx_seq.data(), ctx_want.data(), size_t(n)));
        for (auto* t : Tables()) {
          SCOPED_TRACE(t->name);
          std::vector<float> got(m + 1, -7.0f), ctx(n + 1, -7.0f);
          t->attn_scores(q.data(), kv.data(), ld, ip, m, n, scale, got.data());
          t->attn_context(p.data(), kv.data(), ld, ip, m, n, ctx.data());
          ASSERT_EQ("", DiffFloats(want.data(), got.data(), size_t(m) + 1));
          ASSERT_EQ("", DiffFloats(ctx_want.data(), ctx.data(), size_t(n) + 1));
        }
      }
    }
  }
}

// The multi-head entries == one call per head of the reference (attn_scores / attn_context),
// bit for bit: head widths around the vector widths and the 4-vector column groups, head counts
// around the head groups (2 to 16 heads summed in registers), rows wider than the heads, gathered
// rows, masked probabilities, padded output strides.
TEST(KernelAttention, HeadsEqualOneCallPerHead) {
  std::mt19937 rng(73);
  for (int n : {1, 3, 8, 9, 16, 17, 32, 63, 64, 65, 128, 129}) {
    for (int heads : {1, 2, 3, 4, 5, 8, 9, 16, 17}) {
      for (int m : {0, 1, 2, 5, 33}) {
        for (int kind = 0; kind < 4; ++kind) {
          SCOPED_TRACE("n=" + std::to_string(n) + " heads=" + std::to_string(heads) + " m=" + std::to_string(m) +
                       " kind=" + std::to_string(kind));
          const int ld = heads * n + int(rng() % 3) * 4 + (kind & 1);
          const int rows = m + 4, ldo = m + 3;
          std::vector<float> kv = kind == 3 ? EdgeVec(rng, size_t(rows) * ld, true) : RandomVec(rng, size_t(rows) * ld, 1.0f);
          std::vector<float> q = kind == 3 ? EdgeVec(rng, size_t(heads) * n, true) : RandomVec(rng, size_t(heads) * n, 1.0f);
          std::vector<int32_t> idx(static_cast<size_t>(m));
          for (auto& i : idx) i = int32_t(rng() % rows);
          const int32_t* ip = (kind & 2) ? idx.data() : nullptr;
          std::vector<float> p(size_t(heads) * ldo, 0.5f);
          for (auto& x : p) x = (rng() % 4 == 0) ? 0.0f : float(rng() % 1000) / 1000.0f;
          const float scale = 0.125f;
          std::vector<float> want(size_t(heads) * ldo, -7.0f), ctx_want(size_t(heads) * n + 1, -7.0f);
          for (int h = 0; h < heads; ++h) {
            ReferenceKernels().attn_scores(q.data() + size_t(h) * n, kv.data() + size_t(h) * n, ld, ip, m, n, scale,
                                           want.data() + size_t(h) * ldo);
            ReferenceKernels().attn_context(p.data() + size_t(h) * ldo, kv.data() + size_t(h) * n, ld, ip, m, n,
                                            ctx_want.data() + size_t(h) * n);
          }
          for (auto* t : Tables()) {
            SCOPED_TRACE(t->name);
            std::vector<float> got(size_t(heads) * ldo, -7.0f), ctx(size_t(heads) * n + 1, -7.0f);
            t->attn_scores_heads(q.data(), kv.data(), ld, ip, m, n, heads, scale, got.data(), ldo);
            t->attn_context_heads(p.data(), ldo, kv.data(), ld, ip, m, n, heads, ctx.data());
            ASSERT_EQ("", DiffFloats(want.data(), got.data(), want.size()));  // and nothing past m per head
            ASSERT_EQ("", DiffFloats(ctx_want.data(), ctx.data(), ctx.size()));
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace test
}  // namespace kernels
}  // namespace mtlite

// int8 GEMM family (gemm_s8_blocked, _acc, _gather, _scatter): every table against the reference
// bit for bit and against exact int64 sums from row-major weights (tests/unit/kernel_tester.h),
// over tile edges (m around the row tiles, n around 8-row blocks and block pairs, k around the
// 4-group and unrolled steps), strides, residual aliasing and every epilogue.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>
#include <cstdio>
#include <string>
#include <vector>

#include "kernel_tester.h"
#include "kernels.h"

namespace mtlite {
namespace kernels {
namespace test {
namespace {

const Act kActs[] = {Act::kNone, Act::kSiLU, Act::kReLU, Act::kGELU, Act::kGELUTanh};

// The shape grid, sampled: every combination up to a work budget, and a deterministic subset
// of the larger ones.
TEST(KernelGemm, ShapeGrid) {
  const int ms[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33};
  const int ns[] = {1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 255, 256, 257, 8001};
  const int ks[] = {1, 3, 4, 5, 31, 32, 33, 64, 255, 256, 257, 1024, 4096};
  int idx = 0, run = 0;
  double macs = 0;
  for (int mi = 0; mi < 11; ++mi)
    for (int ni = 0; ni < 14; ++ni)
      for (int ki = 0; ki < 13; ++ki, ++idx) {
        const double work = double(ms[mi]) * ns[ni] * ks[ki];
        const bool small = work <= 200e3;
        const bool sampled = work <= 12e6 && (mi * 7 + ni * 3 + ki * 5) % 9 == 0;
        if (!small && !sampled) continue;
        const uint32_t h = uint32_t(idx) * 2654435761u;
        const bool residual = (h >> 5) & 1, alias = residual && ((h >> 7) & 1);
        GemmTester g;
        g.m(ms[mi]).n(ns[ni]).k(ks[ki]).seed(uint32_t(idx));
        g.bias((h >> 3) & 1).residual(residual).alias(alias).act(kActs[(h >> 9) % 5]);
        g.lda_pad(((h >> 13) & 3) == 0 ? 4 + int((h >> 15) & 7) : 0);
        g.ldc_pad(((h >> 18) & 3) == 0 ? (alias ? 5 : 3) : 0);
        ASSERT_EQ("", g.Test()) << g.Describe();
        ++run;
        macs += work;
      }
  std::printf("gemm grid: %d shapes, %.0f M MAC per table\n", run, macs / 1e6);
  EXPECT_GT(run, 500);
}

// Every epilogue combination (bias x residual x alias x activation) on tile-edge shapes.
TEST(KernelGemm, EpilogueCombinations) {
  uint32_t seed = 7;
  for (auto shape : {std::array<int, 3>{1, 8001, 33}, {5, 17, 64}, {9, 65, 255}, {16, 64, 256}})
    for (int bias = 0; bias < 2; ++bias)
      for (int res = 0; res < 3; ++res)
        for (Act act : kActs) {
          GemmTester g;
          g.m(shape[0]).n(shape[1]).k(shape[2]).seed(++seed).check_exact(false);
          g.bias(bias).residual(res >= 1).alias(res == 2).act(act);
          ASSERT_EQ("", g.Test()) << g.Describe();
        }
}

// Decoder / encoder shapes of the demo model (and d_model 512), exact int32 for all of them;
// on x86-64, weights of 8.3 MB at m <= 4 take the VNNI kernels' streaming path (one block at a
// time; no ARM kernel has one, and these shapes would take minutes under qemu).
TEST(KernelGemm, ModelShapes) {
  uint32_t seed = 11;
  std::vector<std::array<int, 3>> shapes = {{1, 256, 256},  {1, 1024, 256}, {1, 256, 1024}, {1, 8001, 256},
                                            {1, 512, 512},  {1, 2048, 512}, {4, 2048, 512}, {16, 256, 256},
                                            {12, 1024, 256}, {16, 256, 1024},
                                            // tiles over >= 256 KiB: the first row panel of each chunk
                                            // prefetches the next tile (x86), a partial last panel and block
                                            {21, 2050, 516},
                                            // m 2..4 tiles (AVX-VNNI below its stream threshold) that
                                            // prefetch the next tile, odd k and a partial last block
                                            {3, 700, 513}, {2, 1030, 260},
                                            // m 5..16 over >= 256 KiB: one or two 8-row panels
                                            // block by block (AVX-512 VNNI; AVX-VNNI from 1 MiB)
                                            {13, 2050, 516}, {9, 1031, 257}, {16, 520, 1024}};
#if defined(__x86_64__)
  // m 5..8 over >= 1 MiB: the AVX-512 / AVX-VNNI kernels' two row panels block by block
  for (auto s : {std::array<int, 3>{1, 17000, 512}, {2, 17000, 511}, {3, 17003, 512}, {4, 17000, 512},
                 {5, 17000, 512}, {6, 2050, 513}, {7, 2049, 516}, {8, 2048, 512}})
    shapes.push_back(s);
#endif
  for (auto s : shapes) {
    GemmTester g;
    g.m(s[0]).n(s[1]).k(s[2]).seed(++seed).bias(true).residual(s[1] == 256);
    g.act(s[1] == 1024 ? Act::kSiLU : Act::kNone);
    ASSERT_EQ("", g.Test()) << g.Describe();
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
    d.Pack();
    d.FillExact();
    // sanity: the patterns reach the extremes
    int64_t hi = 0, lo = 0;
    for (auto v : d.exact) hi = std::max(hi, v), lo = std::min(lo, v);
    EXPECT_EQ(hi, int64_t(127) * 128 * k);
    EXPECT_EQ(lo, -int64_t(127) * 128 * k);
    d.a_scales.assign(m, 1.0f / 127);
    d.w_scales.assign(n, 1.0f / 127);
    for (auto* t : Tables()) {
      SCOPED_TRACE(t->name);
      for (int mm : {1, 2, 3, 4, 5, 8}) {
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

// m = 0 / n = 0 write nothing; k = 0 gives the epilogue of zero accumulators (for the GEMV and
// the tiled paths).
TEST(KernelGemm, EmptyShapes) {
  std::vector<int8_t> a(256, 1), w(BlockedN8K4Bytes(8, 64), 1);
  std::vector<float> s(16, 1.0f), c(64, 5.0f);
  std::vector<int32_t> acc(64, 5);
  for (auto* t : Tables()) {
    SCOPED_TRACE(t->name);
    t->gemm_s8_blocked(0, 8, 64, a.data(), 64, s.data(), w.data(), s.data(), nullptr, nullptr, 0,
                       c.data(), 8, Act::kNone);
    t->gemm_s8_blocked(1, 0, 64, a.data(), 64, s.data(), w.data(), s.data(), nullptr, nullptr, 0,
                       c.data(), 8, Act::kNone);
    t->gemm_s8_blocked_acc(0, 8, 64, a.data(), 64, w.data(), acc.data(), 8);
    for (float v : c) EXPECT_EQ(v, 5.0f);
    for (int v : acc) EXPECT_EQ(v, 5);
    // k == 0: acc = 0, so c = 0 * scale + bias (+ residual), then the activation
    const std::vector<float> bias = {1.5f, -2.0f, 0.25f, -0.0f, 3.0f, -1.0f, 0.5f, 2.0f, 9.0f};
    for (int m : {1, 3, 6}) {
      std::vector<float> ck(size_t(m) * 9, 7.0f), want(size_t(m) * 9, 7.0f);
      ReferenceKernels().gemm_s8_blocked(m, 9, 0, a.data(), 4, s.data(), w.data(), s.data(), bias.data(),
                                         nullptr, 0, want.data(), 9, Act::kSiLU);
      t->gemm_s8_blocked(m, 9, 0, a.data(), 4, s.data(), w.data(), s.data(), bias.data(), nullptr, 0,
                         ck.data(), 9, Act::kSiLU);
      EXPECT_EQ("", DiffFloats(want.data(), ck.data(), want.size())) << "m=" << m;
      std::vector<int32_t> acck(size_t(m) * 9, 5);
      t->gemm_s8_blocked_acc(m, 9, 0, a.data(), 4, w.data(), acck.data(), 9);
      for (int v : acck) EXPECT_EQ(v, 0) << "m=" << m;
    }
  }
}

// Weights at any byte address (a caller's buffer, a model placed at an odd offset): the same
// sums as from aligned weights, for 1..3 bytes past an aligned address, every row-tile edge and
// the K tails.
TEST(KernelGemm, UnalignedWeights) {
  for (int m : {1, 2, 3}) {
    for (int n : {8, 13}) {
      for (int k : {4, 12, 16, 20, 36, 64, 67}) {
        const GemmData d = GemmTester().m(m).n(n).k(k).seed(uint32_t(m * 1000 + n * 100 + k)).Make();
        std::vector<int32_t> want(size_t(m) * n, -1);
        ReferenceKernels().gemm_s8_blocked_acc(m, n, k, d.a.data(), d.lda, d.packed.data(), want.data(), n);
        std::vector<int8_t> buf(d.packed.size() + 8);
        for (int off = 1; off < 4; ++off) {
          int8_t* w = buf.data() + ((4 - reinterpret_cast<uintptr_t>(buf.data()) % 4) % 4) + off;
          std::memcpy(w, d.packed.data(), d.packed.size());
          for (const KernelTable* t : Tables()) {
            std::vector<int32_t> got(size_t(m) * n, -1);
            t->gemm_s8_blocked_acc(m, n, k, d.a.data(), d.lda, w, got.data(), n);
            EXPECT_EQ("", DiffInts(want.data(), got.data(), want.size()))
                << t->name << " m=" << m << " n=" << n << " k=" << k << " offset " << off;
          }
        }
      }
    }
  }
}

// The shortlist GEMM over a list of blocks: orders, repeats, the partial last block (its padding
// rows give 0), single blocks and long lists, every row-tile edge; exact sums checked too.
TEST(KernelGemm, GatherBlocks) {
  std::mt19937 rng(13);
  uint32_t seed = 100;
  for (int n : {8, 13, 64, 257, 8001}) {
    const int nb = (n + 7) / 8;
    for (int k : {4, 33, 256, 512}) {
      for (int m : {1, 2, 3, 4, 5, 8, 17}) {
        if (n > 1000 && m != 1 && m != 4) continue;  // the row tiles are covered at smaller n
        std::vector<std::vector<int32_t>> lists = {{0}, {nb - 1}};
        std::vector<int32_t> all(nb), rnd;
        for (int b = 0; b < nb; ++b) all[b] = b;
        std::reverse(all.begin(), all.end());
        lists.push_back(all);  // every block, backwards
        for (int i = 0; i < 1 + nb / 3 && i < 50; ++i) rnd.push_back(int32_t(rng() % nb));
        rnd.push_back(rnd.front());  // a repeat
        lists.push_back(rnd);
        for (const auto& blocks : lists) {
          // (the exact sums cover all n rows: keep the whole test a fraction of a second)
          if (double(m) * double(blocks.size()) * 8 * k > 4e6 || double(m) * n * k > 4e6) continue;
          GemmTester g;
          ++seed;
          g.m(m).n(n).k(k).seed(seed).bias(seed % 3 != 0).blocks(blocks);
          g.lda_pad(seed % 4 == 0 ? 4 : 0).ldc_pad(seed % 5 == 0 ? 3 : 0);
          ASSERT_EQ("", g.Test()) << g.Describe();
        }
      }
    }
  }
#if defined(__x86_64__)
  // a long list over large weights (the streaming paths at m <= 4 and m 5..8)
  std::vector<int32_t> many;
  for (int b = 0; b < 2200; ++b) many.push_back(int32_t((b * 7919) % 2126));
  for (int m : {1, 4, 6, 8, 11, 16}) {
    GemmTester g;
    g.m(m).n(17003).k(512).seed(uint32_t(m)).bias(true).blocks(many).check_exact(false);
    ASSERT_EQ("", g.Test()) << g.Describe();
  }
#endif
  // no blocks: nothing written
  for (auto* t : Tables()) {
    std::vector<float> c(8, 5.0f);
    std::vector<int8_t> a(8, 1), w(BlockedN8K4Bytes(8, 8), 1);
    std::vector<float> s(8, 1.0f);
    t->gemm_s8_blocked_gather(1, 8, 0, nullptr, 8, a.data(), 8, s.data(), w.data(), s.data(), nullptr, c.data(), 8);
    for (float v : c) EXPECT_EQ(v, 5.0f) << t->name;
  }
}

// gemm_s8_blocked_scatter == gemm_s8_blocked of the reference (no residual, no activation) with
// row r's outputs moved to column col[r], bit for bit, on every table: a reversed and a random
// permutation, n around the 8-row blocks, m through the GEMV, stream and tile paths, k around
// the 4-groups; columns past n (ldc > n) are not written.
TEST(KernelGemm, ScatterColumns) {
  std::mt19937 rng(29);
  for (int n : {1, 7, 8, 13, 64, 257, 2050}) {
    for (int k : {4, 33, 256}) {
      for (int m : {1, 2, 4, 5, 8, 17}) {
        if (double(m) * n * k > 4e6) continue;
        const int kp = RoundUp(k, 4), ldc = n + (m % 3);
        std::vector<int8_t> a(size_t(m) * kp, 0), wr(size_t(n) * k), w(BlockedN8K4Bytes(n, k));
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < k; ++j) a[size_t(i) * kp + j] = int8_t(int(rng() % 255) - 127);
        for (auto& x : wr) x = int8_t(int(rng() % 255) - 127);
        PackBlockedN8K4(wr.data(), n, k, w.data());
        std::vector<float> as(static_cast<size_t>(m)), ws(static_cast<size_t>(n)), bias(static_cast<size_t>(n));
        for (auto& x : as) x = 0.001f + float(rng() % 1000) / 1e5f;
        for (auto& x : ws) x = 0.001f + float(rng() % 1000) / 1e5f;
        for (auto& x : bias) x = float(int(rng() % 2001) - 1000) / 100.0f;
        std::vector<float> plain(size_t(m) * n);
        for (int with_bias = 0; with_bias < 2; ++with_bias) {
          const float* b = with_bias ? bias.data() : nullptr;
          ReferenceKernels().gemm_s8_blocked(m, n, k, a.data(), kp, as.data(), w.data(), ws.data(), b, nullptr, 0,
                                             plain.data(), n, Act::kNone);
          for (int order = 0; order < 2; ++order) {
            std::vector<int32_t> col(static_cast<size_t>(n));
            for (int r = 0; r < n; ++r) col[size_t(r)] = n - 1 - r;
            if (order == 1) std::shuffle(col.begin(), col.end(), rng);
            std::vector<float> want(size_t(m) * ldc, -9.0f);
            for (int i = 0; i < m; ++i)
              for (int r = 0; r < n; ++r) want[size_t(i) * ldc + col[size_t(r)]] = plain[size_t(i) * n + r];
            for (auto* t : Tables()) {
              SCOPED_TRACE(std::string(t->name) + " m=" + std::to_string(m) + " n=" + std::to_string(n) +
                           " k=" + std::to_string(k) + " bias=" + std::to_string(with_bias) +
                           " order=" + std::to_string(order));
              std::vector<float> got(size_t(m) * ldc, -9.0f);
              t->gemm_s8_blocked_scatter(m, n, k, a.data(), kp, as.data(), w.data(), ws.data(), b, col.data(),
                                         got.data(), ldc);
              ASSERT_EQ("", DiffFloats(want.data(), got.data(), want.size()));
            }
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

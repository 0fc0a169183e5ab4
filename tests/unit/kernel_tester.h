// Reusable kernel testers (in the manner of XNNPACK's GemmMicrokernelTester): configure a case
// builder-style, then Test() runs it on every kernel table this CPU has (AvailableKernels) and
// compares each one to the scalar reference bit for bit, and the reference to an independent
// computation where there is one. Test() returns "" on success, else a description of the first
// difference, so the same testers serve the unit tests (EXPECT_EQ("", ...)) and the benchmarks
// (which check a table before timing it).
//
//   GemmTester().m(4).n(17).k(33).lda_pad(5).ldc_pad(3).bias(true).residual(true).alias(true)
//       .act(Act::kSiLU).Test();
//
// Floats compare by bit pattern, except that any NaN equals any NaN (NaN payloads are not part
// of the contract). Depends only on kernels.h / reference.h (builds for ARM under qemu too).
#pragma once

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "bits.h"
#include "kernels.h"
#include "reference/reference.h"

namespace mtlite {
namespace kernels {
namespace test {
// Internal linkage: each test binary (or a binary linking several test files) has its own copy.
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kDenorm = 1e-40f;  // subnormal

// The tables this CPU can run, reference first (fixed for the process).
inline const std::vector<const KernelTable*>& Tables() {
  static const std::vector<const KernelTable*> tables = [] {
    const KernelTable* t[16];
    const int n = AvailableKernels(t, 16);
    return std::vector<const KernelTable*>(t, t + n);
  }();
  return tables;
}

inline bool SameFloat(float a, float b) { return (a != a && b != b) || FloatBits(a) == FloatBits(b); }

// "" when want[0..n) and got[0..n) are the same floats (NaN == NaN), else the first difference.
inline std::string DiffFloats(const float* want, const float* got, size_t n) {
  size_t bad = 0, first = n;
  for (size_t i = 0; i < n; ++i)
    if (!SameFloat(want[i], got[i])) {
      if (first == n) first = i;
      ++bad;
    }
  if (bad == 0) return "";
  char buf[200];
  std::snprintf(buf, sizeof buf, "%zu of %zu differ; first at %zu: want %.9g (0x%08x) got %.9g (0x%08x)",
                bad, n, first, double(want[first]), FloatBits(want[first]), double(got[first]),
                FloatBits(got[first]));
  return buf;
}

template <class T>
std::string DiffInts(const T* want, const T* got, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (want[i] != got[i]) {
      char buf[120];
      std::snprintf(buf, sizeof buf, "first difference at %zu: want %" PRId64 " got %" PRId64, i,
                    int64_t(want[i]), int64_t(got[i]));
      return buf;
    }
  return "";
}

// Vector lengths around the 8-lane tiles (and the 16-lane ones), up to a model width.
inline constexpr int kLens[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 255, 256, 257, 512, 1024};

// Normal random floats.
inline std::vector<float> RandomVec(std::mt19937& rng, int n, float scale) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = nd(rng) * scale;
  return v;
}

// Edge values sprinkled into random data (the last three are +-inf and NaN).
inline std::vector<float> EdgeVec(std::mt19937& rng, int n, bool allow_nonfinite = true) {
  static const float kEdges[] = {0.0f,      -0.0f,      kDenorm, -kDenorm, 1e-38f,  -1e-38f, 1e30f,
                                 -1e30f,    3e38f,      -3e38f,  87.0f,    -87.0f,  88.72283f,
                                 -87.33654f, 88.8f,     -87.4f,  100.0f,   -100.0f, 1e-7f,
                                 -1e-7f,    0.5f,       -0.5f,   9.5f,     -9.5f,   kInf,
                                 -kInf,     kNaN};
  constexpr int kCount = sizeof kEdges / sizeof kEdges[0];
  std::vector<float> v = RandomVec(rng, n, 5.0f);
  for (int i = 0; i < n; ++i)
    if (rng() % 3 == 0) v[i] = kEdges[rng() % (kCount - (allow_nonfinite ? 0 : 3))];
  return v;
}

// ---- int8 GEMM ------------------------------------------------------------------------------

// The operands of one int8 GEMM case, with the exact int64 result computed from the row-major
// weights (independent of every kernel and of the packing).
struct GemmData {
  int m = 0, n = 0, k = 0, kp = 0, lda = 0, ldc = 0;
  std::vector<int8_t> w;       // row-major [n][k]
  std::vector<int8_t> packed;  // BlockedN8K4
  std::vector<int8_t> a;       // [m][lda]: k values, zero pad to kp, junk in the stride padding
  std::vector<float> a_scales, w_scales, bias, residual;  // residual [m][ldc]
  std::vector<int64_t> exact;  // [m][n]

  void FillExact() {
    exact.assign(size_t(m) * n, 0);
    for (int i = 0; i < m; ++i)
      for (int r = 0; r < n; ++r) {
        int64_t s = 0;
        const int8_t* ar = a.data() + size_t(i) * lda;
        const int8_t* wr = w.data() + size_t(r) * k;
        for (int c = 0; c < k; ++c) s += int64_t(ar[c]) * int64_t(wr[c]);
        exact[size_t(i) * n + r] = s;
      }
  }
  void Pack() {
    packed.assign(BlockedN8K4Bytes(n, k), 0);
    PackBlockedN8K4(w.data(), n, k, packed.data());
  }
};

class GemmTester {
 public:
  GemmTester& m(int v) { m_ = v; return *this; }
  GemmTester& n(int v) { n_ = v; return *this; }
  GemmTester& k(int v) { k_ = v; return *this; }
  GemmTester& lda_pad(int v) { lda_pad_ = v; return *this; }  // extra bytes per A row
  GemmTester& ldc_pad(int v) { ldc_pad_ = v; return *this; }  // extra floats per C row
  GemmTester& bias(bool v) { bias_ = v; return *this; }
  GemmTester& residual(bool v) { residual_ = v; return *this; }
  GemmTester& alias(bool v) { alias_ = v; return *this; }  // c == residual (implies residual)
  GemmTester& act(Act v) { act_ = v; return *this; }
  GemmTester& seed(uint32_t v) { seed_ = v; return *this; }
  // Check the int32 accumulators against the exact int64 result (costs one scalar GEMM).
  GemmTester& check_exact(bool v) { check_exact_ = v; return *this; }
  // gemm_s8_blocked_gather over these block indices (output slot s = block blocks[s]) instead
  // of gemm_s8_blocked; bias is used, residual / alias / act are not.
  GemmTester& blocks(std::vector<int32_t> v) { blocks_ = std::move(v); gather_ = true; return *this; }

  std::string Describe() const {
    char buf[200];
    std::snprintf(buf, sizeof buf, "m=%d n=%d k=%d bias=%d residual=%d alias=%d act=%d lda+%d ldc+%d%s", m_,
                  n_, k_, bias_, residual_ || alias_, alias_, int(act_), lda_pad_, ldc_pad_,
                  gather_ ? (" gather of " + std::to_string(blocks_.size()) + " blocks").c_str() : "");
    return buf;
  }

  // Random operands: weights in [-128, 127] (-128 never comes from the converter, but the
  // kernels must be exact for it), activations in [-127, 127], junk in A's stride padding.
  GemmData Make() const {
    std::mt19937 rng(seed_);
    GemmData d;
    d.m = m_, d.n = n_, d.k = k_;
    d.kp = RoundUp(k_, 4);
    d.lda = d.kp + lda_pad_;
    d.ldc = OutCols() + ldc_pad_;
    std::uniform_int_distribution<int> wd(-128, 127), ad(-127, 127);
    std::uniform_real_distribution<float> sd(1e-4f, 2e-2f), fd(-4.0f, 4.0f);
    d.w.resize(size_t(n_) * k_);
    for (auto& v : d.w) v = int8_t(wd(rng));
    d.Pack();
    d.a.assign(size_t(m_) * d.lda, 0);
    for (int i = 0; i < m_; ++i) {
      for (int c = 0; c < k_; ++c) d.a[size_t(i) * d.lda + c] = int8_t(ad(rng));
      for (int c = d.kp; c < d.lda; ++c) d.a[size_t(i) * d.lda + c] = int8_t(wd(rng));
    }
    d.a_scales.resize(m_);
    for (auto& v : d.a_scales) v = sd(rng);
    d.w_scales.resize(n_);
    for (auto& v : d.w_scales) v = sd(rng);
    if (bias_) {
      d.bias.resize(n_);
      for (auto& v : d.bias) v = fd(rng);
    }
    if (!gather_ && (residual_ || alias_)) {
      d.residual.assign(size_t(m_) * d.ldc, kNaN);
      for (int i = 0; i < m_; ++i)
        for (int r = 0; r < OutCols(); ++r) d.residual[size_t(i) * d.ldc + r] = fd(rng);
    }
    return d;
  }

  // Every available table against the reference (and the reference against exact sums).
  std::string Test() const {
    GemmData d = Make();
    if (check_exact_) d.FillExact();
    const std::vector<float> want = Run(ReferenceKernels(), d);
    std::string err = CheckReference(d, want);
    for (const KernelTable* t : Tables()) {
      if (!err.empty()) break;
      err = CheckTable(*t, d, want);
    }
    return err;
  }
  // One table against the reference.
  std::string Test(const KernelTable& t) const {
    GemmData d = Make();
    if (check_exact_) d.FillExact();
    const std::vector<float> want = Run(ReferenceKernels(), d);
    std::string err = CheckReference(d, want);
    return err.empty() ? CheckTable(t, d, want) : err;
  }

 private:
  static constexpr int kGuard = 16;
  static constexpr uint32_t kSentinel = 0x7fc0dead;  // a NaN no kernel produces

  int OutCols() const { return gather_ ? 8 * int(blocks_.size()) : n_; }

  // C from one table; c starts as a sentinel (or the residual when aliased) with a trailing
  // guard, so that writes outside [m][out cols] show.
  std::vector<float> Run(const KernelTable& t, const GemmData& d) const {
    std::vector<float> c;
    if (alias_ && !gather_)
      c = d.residual;
    else
      c.assign(size_t(m_) * d.ldc, BitsFloat(kSentinel));
    c.resize(c.size() + kGuard, BitsFloat(kSentinel));
    if (gather_) {
      if (t.gemm_s8_blocked_gather)
        t.gemm_s8_blocked_gather(m_, n_, int(blocks_.size()), blocks_.data(), k_, d.a.data(), d.lda,
                                 d.a_scales.data(), d.packed.data(), d.w_scales.data(),
                                 bias_ ? d.bias.data() : nullptr, c.data(), d.ldc);
      return c;
    }
    const float* res = alias_ ? c.data() : residual_ ? d.residual.data() : nullptr;
    t.gemm_s8_blocked(m_, n_, k_, d.a.data(), d.lda, d.a_scales.data(), d.packed.data(),
                      d.w_scales.data(), bias_ ? d.bias.data() : nullptr, res, d.ldc, c.data(), d.ldc,
                      act_);
    return c;
  }

  std::string CheckReference(const GemmData& d, const std::vector<float>& want) const {
    for (int i = 0; i < kGuard; ++i)
      if (FloatBits(want[want.size() - 1 - i]) != kSentinel) return "reference wrote past the end of c";
    if (!alias_)
      for (int i = 0; i < m_; ++i)
        for (int r = OutCols(); r < d.ldc; ++r)
          if (FloatBits(want[size_t(i) * d.ldc + r]) != kSentinel) return "reference wrote into c's stride padding";
    if (gather_ && check_exact_) {
      // independent: slot s, lane j of row i is exact(i, r = 8 blocks[s] + j) dequantised, or 0
      // for r >= n
      for (int i = 0; i < m_; ++i)
        for (size_t s = 0; s < blocks_.size(); ++s)
          for (int j = 0; j < 8; ++j) {
            const int r = 8 * blocks_[s] + j;
            float y = 0.0f;
            if (r < n_) {
              y = float(d.exact[size_t(i) * n_ + r]) * (d.a_scales[i] * d.w_scales[r]);
              if (bias_) y = y + d.bias[r];
            }
            const float got = want[size_t(i) * d.ldc + 8 * s + j];
            if (!SameFloat(y, got)) {
              char buf[160];
              std::snprintf(buf, sizeof buf, "reference gather row %d slot %zu lane %d: want %.9g got %.9g", i,
                            s, j, double(y), double(got));
              return buf;
            }
          }
    }
    return "";
  }

  std::string CheckTable(const KernelTable& t, const GemmData& d, const std::vector<float>& want) const {
    const std::string name = std::string(t.name) + ": ";
    if (gather_) {
      if (t.gemm_s8_blocked_gather == nullptr) return name + "no gemm_s8_blocked_gather";
    } else {
      std::vector<int32_t> acc(size_t(m_) * d.ldc + kGuard, 0x12345678);
      t.gemm_s8_blocked_acc(m_, n_, k_, d.a.data(), d.lda, d.packed.data(), acc.data(), d.ldc);
      for (int i = 0; i < m_; ++i) {
        if (check_exact_)
          for (int r = 0; r < n_; ++r)
            if (int64_t(acc[size_t(i) * d.ldc + r]) != d.exact[size_t(i) * n_ + r]) {
              char buf[160];
              std::snprintf(buf, sizeof buf, "acc row %d col %d: want %" PRId64 " got %d", i, r,
                            d.exact[size_t(i) * n_ + r], acc[size_t(i) * d.ldc + r]);
              return name + buf;
            }
        for (int r = n_; r < d.ldc; ++r)
          if (acc[size_t(i) * d.ldc + r] != 0x12345678) return name + "acc written into the stride padding";
      }
      for (int i = 0; i < kGuard; ++i)
        if (acc[acc.size() - 1 - i] != 0x12345678) return name + "acc written past the end";
    }
    if (&t == &ReferenceKernels()) return "";
    const std::vector<float> got = Run(t, d);
    const std::string diff = DiffFloats(want.data(), got.data(), want.size());
    return diff.empty() ? "" : name + diff;
  }

  int m_ = 1, n_ = 1, k_ = 1, lda_pad_ = 0, ldc_pad_ = 0;
  bool bias_ = false, residual_ = false, alias_ = false, check_exact_ = true, gather_ = false;
  Act act_ = Act::kNone;
  uint32_t seed_ = 1;
  std::vector<int32_t> blocks_;
};

// ---- activation quantisation ----------------------------------------------------------------

// quantize_rows_s8 on given rows (m rows of k floats, stride ldx): every table against the
// reference (q bytes, pad bytes zero, bytes past kp untouched, scales), and the reference's
// range.
class QuantizeTester {
 public:
  QuantizeTester& rows(std::vector<float> x, int m, int k, int ldx) {
    x_ = std::move(x), m_ = m, k_ = k, ldx_ = ldx;
    return *this;
  }
  QuantizeTester& ldq_pad(int v) { ldq_pad_ = v; return *this; }

  std::string Test() const {
    const int kp = RoundUp(k_, 4), ldq = kp + ldq_pad_;
    std::vector<int8_t> want(size_t(m_) * ldq, 0x5a);
    std::vector<float> want_s(m_, -1.0f);
    ReferenceKernels().quantize_rows_s8(x_.data(), m_, k_, ldx_, want.data(), ldq, want_s.data());
    for (int i = 0; i < m_; ++i) {
      const int8_t* q = want.data() + size_t(i) * ldq;
      for (int j = 0; j < k_; ++j)
        if (q[j] < -127) return "reference produced -128";
      for (int j = k_; j < kp; ++j)
        if (q[j] != 0) return "reference: pad byte not zero";
      for (int j = kp; j < ldq; ++j)
        if (q[j] != 0x5a) return "reference wrote past kp";
    }
    for (const KernelTable* t : Tables()) {
      std::vector<int8_t> q(size_t(m_) * ldq, 0x5a);
      std::vector<float> s(m_, -1.0f);
      t->quantize_rows_s8(x_.data(), m_, k_, ldx_, q.data(), ldq, s.data());
      std::string err = DiffInts(want.data(), q.data(), q.size());
      if (err.empty()) err = DiffFloats(want_s.data(), s.data(), size_t(m_));
      if (!err.empty()) return std::string(t->name) + ": " + err;
    }
    return "";
  }

 private:
  std::vector<float> x_;
  int m_ = 0, k_ = 0, ldx_ = 0, ldq_pad_ = 5;
};

// ---- float kernels --------------------------------------------------------------------------

// Runs f(table, out) for the reference and for every table and compares the float outputs bit
// for bit; f fills `out` (any size) from its inputs. For kernels whose output is a vector.
template <class F>
std::string CompareTables(F f) {
  std::vector<float> want;
  f(ReferenceKernels(), want);
  for (const KernelTable* t : Tables()) {
    std::vector<float> got;
    f(*t, got);
    if (got.size() != want.size()) return std::string(t->name) + ": output size differs";
    const std::string diff = DiffFloats(want.data(), got.data(), want.size());
    if (!diff.empty()) return std::string(t->name) + ": " + diff;
  }
  return "";
}

}  // namespace
}  // namespace test
}  // namespace kernels
}  // namespace mtlite

// Search kernels over the logits (kernels.h contract): max_sum_exp, scan_gt, argmax, written
// once over an ISA's operations D (generic/vec_math.h).
#pragma once

#include "generic/vec_math.h"
#include "kernels.h"
#include "reference/reference.h"

namespace mtlite {
namespace kernels {
namespace generic {

template <class D>
float MaxSumExp(const float* x, int n, float* max_out) {
  constexpr int W = D::kW;
  const float ninf = -__builtin_inff();
  const int nw = n - n % W, rest = n - nw;
  auto mv = D::Set(ninf);
  for (int j = 0; j < nw; j += W) mv = D::MaxGt(D::Load(x + j), mv);  // skips NaN in x
  if (rest) mv = D::MaxGt(D::FirstOr(D::LoadPartial(x + nw, rest), rest, ninf), mv);
  const float mx = D::HMax(mv);
  *max_out = mx;
  if (mx == ninf) return 0.0f;
  const auto vmx = D::Set(mx), vlow = D::Set(coeff::kExpLow);
  auto acc = D::AccZero();
  // x - mx <= 0 (mx is finite here or +inf): a vector with no lane at or below kExpLow (nor NaN)
  // needs none of Exp's special cases; the rest take Exp (the same bits either way).
  for (int j = 0; j < nw; j += W) {
    const auto r = D::Sub(D::Load(x + j), vmx);
    acc = D::AccAdd(acc, D::AnyTrue(D::NotGt(r, vlow)) ? Exp<D>(r) : ExpInRange<D>(r));
  }
  if (rest)
    acc = D::AccAdd(acc, D::KeepFirst(Exp<D>(D::Sub(D::LoadPartial(x + nw, rest), vmx)), rest));
  return D::Reduce8(acc);
}

template <class D>
int ScanGt(const float* x, int from, int n, float sub, float add, float thr, float* s_out) {
  constexpr int W = D::kW;
  int j = from < 0 ? 0 : from;
  const auto vsub = D::Set(sub), vadd = D::Set(add), vthr = D::Set(thr);
  for (; j + W <= n; j += W) {
    const auto s = D::Add(D::Sub(D::Load(x + j), vsub), vadd);
    if (D::AnyTrue(D::Gt(s, vthr))) break;  // a hit in these kW
  }
  return ref::ScanGt(x, j, n, sub, add, thr, s_out);  // the hit's block, or the tail
}

template <class D>
int Argmax(const float* x, int n) {
  // Pass 1: the maximum, and whether any NaN is present (then the reference's order-dependent
  // answer is used). Pass 2: the first index holding the maximum.
  constexpr int W = D::kW;
  const int nw = n - n % W;
  auto mv = D::Set(-__builtin_inff());
  auto nan = D::IsNaN(mv);
  for (int j = 0; j < nw; j += W) {
    const auto v = D::Load(x + j);
    mv = D::MaxGt(v, mv);
    nan = D::OrMask(nan, D::IsNaN(v));
  }
  bool any_nan = D::AnyTrue(nan);
  float mx = D::HMax(mv);
  for (int j = nw; j < n; ++j) {
    any_nan |= x[j] != x[j];
    mx = x[j] > mx ? x[j] : mx;
  }
  if (any_nan) return ref::Argmax(x, n);
  const auto vmx = D::Set(mx);
  int j = 0;
  for (; j + W <= n; j += W) {
    const int lane = D::FirstTrue(D::Eq(D::Load(x + j), vmx));
    if (lane >= 0) return j + lane;
  }
  for (; j < n; ++j)
    if (x[j] == mx) return j;
  return 0;  // n <= 0
}

// The search entries of a table, for float operations D.
template <class D>
void SetSearchEntries(KernelTable& t) {
  t.max_sum_exp = MaxSumExp<D>;
  t.scan_gt = ScanGt<D>;
  t.argmax = Argmax<D>;
}

}  // namespace generic
}  // namespace kernels
}  // namespace mtlite

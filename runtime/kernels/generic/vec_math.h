// The reference scalar math (ExpRef, erf, the activations of ActRef) written once for every
// SIMD ISA, over an ISA's vector operations D. Every function performs the same IEEE operations
// in the same order as runtime/kernels/reference/activation_reference.cc, lane by lane;
// branches become selects.
//
// D, the float operations of one ISA (a struct of static functions; e.g. avx2/avx2_ops.h):
//   V (kW float lanes), M (a lane mask), I (kW int32 lanes), A (an 8-lane sum accumulator);
//   Set(f), Load(p), Store(p, v), LoadPartial(p, count) (lanes >= count are +0; reads only
//   p[0..count)), StorePartial(p, count, v), KeepFirst(v, count) (lanes >= count -> +0),
//   FirstOr(v, count, f) (lanes >= count -> f);
//   Add, Sub, Mul, Div, Neg; MaxGt(a, b) = a > b ? a : b (per lane, so NaN in a is skipped);
//   Gt(a, b), NotGt(a, b) (true for NaN), Eq(a, b), IsNaN(a) -> M; OrMask(m, m), AnyTrue(m),
//   FirstTrue(m) (index of the first true lane, -1 if none); Select(m, a, b) = m ? a : b;
//   KeepWhere(v, m) = m ? v : +0; HMax(v) (no NaN lanes); TruncToInt(v), ShiftRightArith1(i),
//   SubInt(i, j), Pow2(i) (2^i as float, i in [-126, 127]);
//   AccZero(), AccAdd(acc, v) (the kW lanes of v into the 8-lane accumulator: lane j of v
//   goes to lane j % 8, lower lanes first, which keeps the contract's per-lane order),
//   Reduce8(acc) ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7)).
// Optional: kScalePow2 = true and ScalePow2(y, n) = y * 2^n rounded once (n integral, in [-126, 128]; AVX-512's
//   vscalefps), which Exp then uses instead of its two exact-then-rounded multiplies.
//
// Linkage: every template here depends on D, and each ISA defines its D in an anonymous
// namespace, so every instantiation has internal linkage: code compiled with one ISA's flags
// can never be merged by the linker into another ISA's (or the baseline) code.
#pragma once

#include <type_traits>

#include "kernels.h"
#include "math_coeffs.h"

namespace mtlite {
namespace kernels {
namespace generic {

template <class D, class = void>
struct HasScalePow2 : std::false_type {};
template <class D>
struct HasScalePow2<D, std::void_t<decltype(D::kScalePow2)>> : std::integral_constant<bool, D::kScalePow2> {};

// ExpRef, lane-wise, for lanes in (kExpLow, kExpHigh] only (no NaN): ExpRef's arithmetic without
// its special cases. Exp below is this plus the special cases, so both give the same bits there.
template <class D>
inline typename D::V ExpInRange(typename D::V x) {
  using V = typename D::V;
  const V magic = D::Set(coeff::kExpMagic);
  V t = D::Mul(x, D::Set(coeff::kLog2e));
  t = D::Add(t, magic);
  const V n = D::Sub(t, magic);
  V r = D::Sub(x, D::Mul(n, D::Set(coeff::kLn2Hi)));
  r = D::Sub(r, D::Mul(n, D::Set(coeff::kLn2Lo)));
  V p = D::Set(coeff::kExpP0);
  p = D::Add(D::Mul(p, r), D::Set(coeff::kExpP1));
  p = D::Add(D::Mul(p, r), D::Set(coeff::kExpP2));
  p = D::Add(D::Mul(p, r), D::Set(coeff::kExpP3));
  p = D::Add(D::Mul(p, r), D::Set(coeff::kExpP4));
  p = D::Add(D::Mul(p, r), D::Set(coeff::kExpP5));
  const V rr = D::Mul(r, r);
  V y = D::Mul(p, rr);
  y = D::Add(y, r);
  y = D::Add(y, D::Set(1.0f));
  if constexpr (HasScalePow2<D>::value) {
    // y * 2^n rounded once. The same value as below: y * 2^n1 is exact (y is in [0.7, 1.5] and
    // n1 >= -63, so the product is normal), and the second multiply rounds the exact y * 2^n
    // once, as vscalefps does (a result below 2^-126 included).
    return D::ScalePow2(y, n);
  } else {
    // 2^n = 2^n1 * 2^n2 with n1 = n >> 1 (arithmetic), n2 = n - n1 (n is integral: truncation
    // is exact).
    const auto ni = D::TruncToInt(n);
    const auto n1 = D::ShiftRightArith1(ni);
    const auto n2 = D::SubInt(ni, n1);
    return D::Mul(D::Mul(y, D::Pow2(n1)), D::Pow2(n2));
  }
}

// ExpRef, lane-wise.
template <class D>
inline typename D::V Exp(typename D::V x) {
  // !(x > kExpLow): -inf, underflow and NaN. NaN stays NaN (x), the others give +0.
  const auto low = D::NotGt(x, D::Set(coeff::kExpLow));
  const auto nan = D::IsNaN(x);
  const auto high = D::Gt(x, D::Set(coeff::kExpHigh));
  const typename D::V res = D::Select(low, D::KeepWhere(x, nan), ExpInRange<D>(x));
  return D::Select(high, D::Set(__builtin_inff()), res);
}

template <class D>
inline typename D::V Erf(typename D::V x) {
  using V = typename D::V;
  const auto neg = D::Gt(D::Set(0.0f), x);
  const V ax = D::Select(neg, D::Neg(x), x);
  const V one = D::Set(1.0f);
  const V t = D::Div(one, D::Add(one, D::Mul(D::Set(coeff::kErfP), ax)));
  V p = D::Set(coeff::kErfA5);
  p = D::Add(D::Mul(p, t), D::Set(coeff::kErfA4));
  p = D::Add(D::Mul(p, t), D::Set(coeff::kErfA3));
  p = D::Add(D::Mul(p, t), D::Set(coeff::kErfA2));
  p = D::Add(D::Mul(p, t), D::Set(coeff::kErfA1));
  p = D::Mul(p, t);
  const V y = D::Sub(one, D::Mul(p, Exp<D>(D::Neg(D::Mul(ax, ax)))));
  return D::Select(neg, D::Neg(y), y);
}

template <class D>
inline typename D::V SiLU(typename D::V x) {
  return D::Div(x, D::Add(D::Set(1.0f), Exp<D>(D::Neg(x))));
}
template <class D>
inline typename D::V Sigmoid(typename D::V x) {
  const typename D::V one = D::Set(1.0f);
  return D::Div(one, D::Add(one, Exp<D>(D::Neg(x))));
}
// x > 0 ? x : 0 (NaN -> 0, -0 -> +0).
template <class D>
inline typename D::V ReLU(typename D::V x) {
  return D::MaxGt(x, D::Set(0.0f));
}
template <class D>
inline typename D::V GELU(typename D::V x) {
  const auto e = Erf<D>(D::Mul(x, D::Set(coeff::kSqrtHalf)));
  return D::Mul(D::Mul(D::Set(0.5f), x), D::Add(D::Set(1.0f), e));
}
template <class D>
inline typename D::V GELUTanh(typename D::V x) {
  using V = typename D::V;
  const V one = D::Set(1.0f);
  const V cube = D::Mul(D::Mul(D::Set(coeff::kGeluCubic), x), D::Mul(x, x));
  const V u = D::Mul(D::Set(coeff::kSqrt2OverPi), D::Add(x, cube));
  const V e = Exp<D>(D::Mul(D::Set(2.0f), u));
  const V th = D::Sub(one, D::Div(D::Set(2.0f), D::Add(e, one)));
  return D::Mul(D::Mul(D::Set(0.5f), x), D::Add(one, th));
}

// Out of line: keeps unrolled GEMM tiles small (the call costs nothing next to a K loop).
template <class D>
__attribute__((noinline)) typename D::V ActivateOutOfLine(typename D::V x, Act act) {
  switch (act) {
    case Act::kNone: return x;
    case Act::kSiLU: return SiLU<D>(x);
    case Act::kSigmoid: return Sigmoid<D>(x);
    case Act::kReLU: return ReLU<D>(x);
    case Act::kGELU: return GELU<D>(x);
    case Act::kGELUTanh: return GELUTanh<D>(x);
  }
  return x;
}
template <class D>
inline typename D::V Activate(typename D::V x, Act act) {
  if (act == Act::kNone) return x;
  if (act == Act::kReLU) return ReLU<D>(x);
  return ActivateOutOfLine<D>(x, act);
}

}  // namespace generic
}  // namespace kernels
}  // namespace mtlite

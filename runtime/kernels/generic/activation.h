// In-place activation (kernels.h contract), written once over an ISA's operations D
// (generic/vec_math.h).
#pragma once

#include "generic/vec_math.h"
#include "kernels.h"
#include "reference/reference.h"

namespace mtlite {
namespace kernels {
namespace generic {

template <class D, class F>
inline void ApplyLanes(float* x, int n, F f) {
  constexpr int W = D::kW;
  int i = 0;
  for (; i + W <= n; i += W) D::Store(x + i, f(D::Load(x + i)));
  if (i < n) D::StorePartial(x + i, n - i, f(D::LoadPartial(x + i, n - i)));
}

template <class D>
void Activation(float* x, int n, Act act) {
  using V = typename D::V;
  switch (act) {
    case Act::kNone: return;
    case Act::kSiLU: ApplyLanes<D>(x, n, [](V v) { return SiLU<D>(v); }); return;
    case Act::kSigmoid: ApplyLanes<D>(x, n, [](V v) { return Sigmoid<D>(v); }); return;
    case Act::kReLU: ApplyLanes<D>(x, n, [](V v) { return ReLU<D>(v); }); return;
    case Act::kGELU: ApplyLanes<D>(x, n, [](V v) { return GELU<D>(v); }); return;
    case Act::kGELUTanh: ApplyLanes<D>(x, n, [](V v) { return GELUTanh<D>(v); }); return;
  }
  ref::Activation(x, n, act);  // unknown enum value: whatever the reference does
}

}  // namespace generic
}  // namespace kernels
}  // namespace mtlite

// Layer norm (kernels.h contract), written once over an ISA's operations D (generic/vec_math.h).
#pragma once

#include "kernels.h"

namespace mtlite {
namespace kernels {
namespace generic {

template <class D>
void LayerNorm(const float* x, int m, int d, const float* gamma, const float* beta, float eps,
               float* y) {
  constexpr int W = D::kW;
  const int dw = d - d % W, rest = d - dw;
  for (int i = 0; i < m; ++i) {
    const float* xr = x + size_t(i) * d;
    float* yr = y + size_t(i) * d;
    auto acc = D::AccZero();
    for (int j = 0; j < dw; j += W) acc = D::AccAdd(acc, D::Load(xr + j));
    if (rest) acc = D::AccAdd(acc, D::LoadPartial(xr + dw, rest));
    const float mean = D::Reduce8(acc) / float(d);
    const auto vmean = D::Set(mean);
    acc = D::AccZero();
    for (int j = 0; j < dw; j += W) {
      const auto t = D::Sub(D::Load(xr + j), vmean);
      acc = D::AccAdd(acc, D::Mul(t, t));
    }
    if (rest) {
      const auto t = D::Sub(D::LoadPartial(xr + dw, rest), vmean);
      acc = D::AccAdd(acc, D::KeepFirst(D::Mul(t, t), rest));
    }
    const float var = D::Reduce8(acc) / float(d);
    const float inv = 1.0f / __builtin_sqrtf(var + eps);
    const auto vinv = D::Set(inv);
    // y may alias x: each element is read before it is written, at the same index
    for (int j = 0; j < dw; j += W) {
      const auto t = D::Mul(D::Sub(D::Load(xr + j), vmean), vinv);
      D::Store(yr + j, D::Add(D::Mul(t, D::Load(gamma + j)), D::Load(beta + j)));
    }
    if (rest) {
      const auto t = D::Mul(D::Sub(D::LoadPartial(xr + dw, rest), vmean), vinv);
      D::StorePartial(yr + dw, rest,
                      D::Add(D::Mul(t, D::LoadPartial(gamma + dw, rest)), D::LoadPartial(beta + dw, rest)));
    }
  }
}

}  // namespace generic
}  // namespace kernels
}  // namespace mtlite

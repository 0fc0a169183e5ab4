// Reference layer norm (kernels.h contract).
#include <cmath>

#include "kernel_families.h"
#include "kernels.h"
#include "reference/reference.h"

namespace mtlite {
namespace kernels {
namespace ref {

void LayerNorm(const float* x, int m, int d, const float* gamma, const float* beta, float eps,
               float* y) {
  for (int i = 0; i < m; ++i) {
    const float* xr = x + size_t(i) * d;
    float* yr = y + size_t(i) * d;
    const float mean = Sum8(xr, d) / float(d);
    float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int j = 0; j < d; ++j) {
      float t = xr[j] - mean;
      lane[j & 7] = lane[j & 7] + t * t;
    }
    float var = Tree8(lane) / float(d);
    const float inv = 1.0f / std::sqrt(var + eps);
    for (int j = 0; j < d; ++j) yr[j] = ((xr[j] - mean) * inv) * gamma[j] + beta[j];
  }
}

}  // namespace ref

template <>
void AddNormKernels<IsaReference>(KernelTable& t) {
  t.layer_norm = ref::LayerNorm;
}

}  // namespace kernels
}  // namespace mtlite

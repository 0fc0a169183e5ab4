// Reference activation quantisation (kernels.h contract).
#include <cmath>
#include <cstring>

#include "kernel_families.h"
#include "kernels.h"
#include "reference/reference.h"

namespace mtlite {
namespace kernels {
namespace ref {

int8_t QuantizeOne(float v) {
  // round half to even, then clamp to [-127, 127]. NaN -> 0: it arises only as 0 * inf when a
  // row's maxabs is so tiny (< ~4e-37) that 127 / maxabs overflows (converting NaN to int8 is UB).
  if (v != v) return 0;
  float r = std::nearbyint(v);
  if (r > 127.0f) r = 127.0f;
  if (r < -127.0f) r = -127.0f;
  return static_cast<int8_t>(r);
}

void QuantizeRowsS8(const float* x, int m, int k, int ldx, int8_t* q, int ldq, float* scales) {
  const int kp = RoundUp(k, 4);
  for (int i = 0; i < m; ++i) {
    const float* xr = x + size_t(i) * ldx;
    int8_t* qr = q + size_t(i) * ldq;
    float maxabs = 0.0f;
    for (int j = 0; j < k; ++j) {
      float a = std::fabs(xr[j]);
      // a NaN anywhere makes maxabs NaN (and the row zero, below); `a > maxabs` alone skips NaN.
      maxabs = (a > maxabs || a != a) ? a : maxabs;
    }
    if (!(maxabs > 0.0f) || !std::isfinite(maxabs)) {
      // zeros (or non-finite input, which upstream code never produces): quantise to zero
      std::memset(qr, 0, size_t(kp));
      scales[i] = 0.0f;
      continue;
    }
    const float inv = 127.0f / maxabs;
    scales[i] = maxabs / 127.0f;
    for (int j = 0; j < k; ++j) qr[j] = QuantizeOne(xr[j] * inv);
    for (int j = k; j < kp; ++j) qr[j] = 0;
  }
}

}  // namespace ref

template <>
void AddQuantizeKernels<IsaReference>(KernelTable& t) {
  t.quantize_rows_s8 = ref::QuantizeRowsS8;
}

}  // namespace kernels
}  // namespace mtlite

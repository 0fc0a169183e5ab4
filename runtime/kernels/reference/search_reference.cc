// Reference search kernels over the logits (kernels.h contract).
#include <limits>

#include "kernel_families.h"
#include "kernels.h"
#include "reference/reference.h"

namespace mtlite {
namespace kernels {
namespace ref {

float MaxSumExp(const float* x, int n, float* max_out) {
  const float ninf = -std::numeric_limits<float>::infinity();
  float mx = ninf;
  for (int j = 0; j < n; ++j) mx = x[j] > mx ? x[j] : mx;
  *max_out = mx;
  if (mx == ninf) return 0.0f;
  float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int j = 0; j < n; ++j) lane[j & 7] = lane[j & 7] + ExpRef(x[j] - mx);
  return Tree8(lane);
}

int ScanGt(const float* x, int from, int n, float sub, float add, float thr, float* s_out) {
  for (int j = from < 0 ? 0 : from; j < n; ++j) {
    const float s = (x[j] - sub) + add;
    if (s > thr) {
      *s_out = s;
      return j;
    }
  }
  return n;
}

int Argmax(const float* x, int n) {
  int best = 0;
  for (int j = 1; j < n; ++j)
    if (x[j] > x[best]) best = j;
  return best;
}

}  // namespace ref

template <>
void AddSearchKernels<IsaReference>(KernelTable& t) {
  t.max_sum_exp = ref::MaxSumExp;
  t.scan_gt = ref::ScanGt;
  t.argmax = ref::Argmax;
}

}  // namespace kernels
}  // namespace mtlite

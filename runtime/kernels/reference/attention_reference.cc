// Reference attention kernels (kernels.h contract): the 8-lane reduction, dot, masked softmax,
// scores and context over gathered key / value rows.
#include <limits>

#include "kernel_families.h"
#include "kernels.h"
#include "reference/reference.h"

namespace mtlite {
namespace kernels {
namespace ref {

// The 8-lane reduction of the contract: every element, tail included, goes into lane i % 8
// (so trailing zeros never change the result: padding-invariant).
float Tree8(const float* lane) {
  return ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
}

float Sum8(const float* x, int n) {
  float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < n; ++i) lane[i & 7] = lane[i & 7] + x[i];
  return Tree8(lane);
}

float Dot(const float* a, const float* b, int n) {
  float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < n; ++i) lane[i & 7] = lane[i & 7] + a[i] * b[i];
  return Tree8(lane);
}

void SoftmaxMasked(float* x, int n, const float* mask) {
  float mx = -std::numeric_limits<float>::infinity();
  for (int j = 0; j < n; ++j) {
    float s = mask ? x[j] + mask[j] : x[j];
    x[j] = s;
    mx = s > mx ? s : mx;
  }
  if (mx == -std::numeric_limits<float>::infinity()) {
    for (int j = 0; j < n; ++j) x[j] = 0.0f;
    return;
  }
  for (int j = 0; j < n; ++j) x[j] = ExpRef(x[j] - mx);
  const float inv = 1.0f / Sum8(x, n);
  for (int j = 0; j < n; ++j) x[j] = x[j] * inv;
}

void AttnScores(const float* q, const float* k, int ld, const int32_t* idx, int m, int n, float scale,
                float* out) {
  for (int j = 0; j < m; ++j) out[j] = Dot(q, k + size_t(idx ? idx[j] : j) * size_t(ld), n) * scale;
}

void AttnContext(const float* p, const float* v, int ld, const int32_t* idx, int m, int n, float* ctx) {
  for (int i = 0; i < n; ++i) ctx[i] = 0.0f;
  for (int j = 0; j < m; ++j) {
    if (p[j] == 0.0f) continue;
    const float* vr = v + size_t(idx ? idx[j] : j) * size_t(ld);
    for (int i = 0; i < n; ++i) ctx[i] = ctx[i] + p[j] * vr[i];
  }
}

void AttnScoresHeads(const float* q, const float* k, int ld, const int32_t* idx, int m, int n, int heads, float scale,
                     float* out, int ldo) {
  for (int h = 0; h < heads; ++h)
    AttnScores(q + size_t(h) * n, k + size_t(h) * n, ld, idx, m, n, scale, out + size_t(h) * ldo);
}

void AttnContextHeads(const float* p, int ldp, const float* v, int ld, const int32_t* idx, int m, int n, int heads,
                      float* ctx) {
  for (int h = 0; h < heads; ++h)
    AttnContext(p + size_t(h) * ldp, v + size_t(h) * n, ld, idx, m, n, ctx + size_t(h) * n);
}

}  // namespace ref

template <>
void AddAttentionKernels<IsaReference>(KernelTable& t) {
  t.softmax_masked = ref::SoftmaxMasked;
  t.dot_f32 = ref::Dot;
  t.attn_scores = ref::AttnScores;
  t.attn_context = ref::AttnContext;
  t.attn_scores_heads = ref::AttnScoresHeads;
  t.attn_context_heads = ref::AttnContextHeads;
}

}  // namespace kernels
}  // namespace mtlite

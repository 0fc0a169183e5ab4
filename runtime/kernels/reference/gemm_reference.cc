// Reference int8 GEMM on the BlockedN8K4 layout, and the layout's packing (kernels.h).
#include <cstring>

#include "kernel_families.h"
#include "kernels.h"
#include "reference/reference.h"

namespace mtlite {
namespace kernels {

void PackBlockedN8K4(const int8_t* w, int n, int k, int8_t* out) {
  const int kp = RoundUp(k, 4), np = RoundUp(n, 8);
  std::memset(out, 0, size_t(np) * size_t(kp));
  for (int r = 0; r < n; ++r) {
    int8_t* block = out + size_t(r / 8) * size_t(kp) * 8;
    for (int c = 0; c < k; ++c) block[(c / 4) * 32 + (r % 8) * 4 + (c % 4)] = w[size_t(r) * k + c];
  }
}

void UnpackBlockedRow(const int8_t* packed, int n, int k, int row, int8_t* out) {
  (void)n;
  const int kp = RoundUp(k, 4);
  const int8_t* block = packed + size_t(row / 8) * size_t(kp) * 8 + (row % 8) * 4;
  for (int g = 0; g < kp / 4; ++g) {
    for (int j = 0; j < 4 && g * 4 + j < k; ++j) out[g * 4 + j] = block[g * 32 + j];
  }
}

namespace ref {
namespace {

// Exact int32 dot product of one A row with weight row r.
int32_t DotRow(const int8_t* ar, const int8_t* w, int kp, int r) {
  const int8_t* block = w + size_t(r / 8) * size_t(kp) * 8 + (r % 8) * 4;
  int32_t s = 0;
  for (int g = 0; g < kp / 4; ++g)
    for (int j = 0; j < 4; ++j) s += int32_t(ar[g * 4 + j]) * int32_t(block[g * 32 + j]);
  return s;
}

}  // namespace

void GemmS8BlockedAcc(int m, int n, int k, const int8_t* a, int lda, const int8_t* w, int32_t* acc,
                      int ldacc) {
  const int kp = RoundUp(k, 4);
  for (int i = 0; i < m; ++i)
    for (int r = 0; r < n; ++r) acc[size_t(i) * ldacc + r] = DotRow(a + size_t(i) * lda, w, kp, r);
}

void GemmS8Blocked(int m, int n, int k, const int8_t* a, int lda, const float* a_scales,
                   const int8_t* w, const float* w_scales, const float* bias, const float* residual,
                   int ldr, float* c, int ldc, Act act) {
  const int kp = RoundUp(k, 4);
  for (int i = 0; i < m; ++i) {
    for (int r = 0; r < n; ++r) {
      float y = float(DotRow(a + size_t(i) * lda, w, kp, r)) * (a_scales[i] * w_scales[r]);
      if (bias) y = y + bias[r];
      if (residual) y = y + residual[size_t(i) * ldr + r];
      c[size_t(i) * ldc + r] = ActRef(y, act);
    }
  }
}

void GemmS8BlockedGather(int m, int n, int nblocks, const int32_t* block_idx, int k, const int8_t* a,
                         int lda, const float* a_scales, const int8_t* w, const float* w_scales,
                         const float* bias, float* c, int ldc) {
  const int kp = RoundUp(k, 4);
  for (int i = 0; i < m; ++i) {
    for (int s = 0; s < nblocks; ++s) {
      for (int j = 0; j < 8; ++j) {
        const int r = 8 * block_idx[s] + j;
        float y = 0.0f;
        if (r < n) {
          y = float(DotRow(a + size_t(i) * lda, w, kp, r)) * (a_scales[i] * w_scales[r]);
          if (bias) y = y + bias[r];
        }
        c[size_t(i) * ldc + 8 * s + j] = y;
      }
    }
  }
}

void GemmS8BlockedScatter(int m, int n, int k, const int8_t* a, int lda, const float* a_scales, const int8_t* w,
                          const float* w_scales, const float* bias, const int32_t* col, float* c, int ldc) {
  const int kp = RoundUp(k, 4);
  for (int i = 0; i < m; ++i) {
    for (int r = 0; r < n; ++r) {
      float y = float(DotRow(a + size_t(i) * lda, w, kp, r)) * (a_scales[i] * w_scales[r]);
      if (bias) y = y + bias[r];
      c[size_t(i) * ldc + col[r]] = y;
    }
  }
}

}  // namespace ref

template <>
void AddGemmKernels<IsaReference>(KernelTable& t) {
  t.gemm_s8_blocked = ref::GemmS8Blocked;
  t.gemm_s8_blocked_acc = ref::GemmS8BlockedAcc;
  t.gemm_s8_blocked_gather = ref::GemmS8BlockedGather;
  t.gemm_s8_blocked_scatter = ref::GemmS8BlockedScatter;
  t.gemm_panel_rows = 1;
}

}  // namespace kernels
}  // namespace mtlite

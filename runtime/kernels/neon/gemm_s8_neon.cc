// int8 GEMM / GEMV on the BlockedN8K4 layout with baseline NEON (armv7 and aarch64).
//
// A 32-byte weight group is 8 rows x 4 k: bytes 0..15 are rows 0-3, 16..31 rows 4-7. The 4
// activations of the group, duplicated into an int8x8 (a0 a1 a2 a3 a0 a1 a2 a3), line up with
// each 8-byte half (two rows x 4 k): vmull_s8 gives 8 int16 products, vmlal_s8 adds the
// products of the next group into the same lanes (|a| <= 127, |w| <= 128: two products sum
// to at most 2 * 127 * 128 = 32512, no int16 overflow), vpadalq_s16 folds pairs into int32.
// Per row pair the int32 lanes are (r k01, r k23, r' k01, r' k23); a final pairwise add
// gives one int32 per row. All exact.
#include "neon/neon_kernels.h"

#if defined(__ARM_NEON) || defined(__ARM_NEON__)
#include <arm_neon.h>

#include "neon/neon_math.h"

namespace mtlite {
namespace kernels {
namespace neon {
namespace {

inline int8x8_t Dup4(const int8_t* p) { return vreinterpret_s8_s32(vdup_n_s32(Load4(p))); }

inline int32x4_t PairSum(int32x4_t x, int32x4_t y) {  // (x0+x1, x2+x3, y0+y1, y2+y3)
#if defined(__aarch64__)
  return vpaddq_s32(x, y);
#else
  return vcombine_s32(vpadd_s32(vget_low_s32(x), vget_high_s32(x)),
                      vpadd_s32(vget_low_s32(y), vget_high_s32(y)));
#endif
}

// Accumulators of one row against one 8-row block.
struct RowAcc {
  int32x4_t r01, r23, r45, r67;
};

inline void Two(RowAcc& acc, int8x16_t w0a, int8x16_t w1a, int8x16_t w0b, int8x16_t w1b,
                int8x8_t aa, int8x8_t ab) {
  int16x8_t p01 = vmull_s8(vget_low_s8(w0a), aa);
  int16x8_t p23 = vmull_s8(vget_high_s8(w0a), aa);
  int16x8_t p45 = vmull_s8(vget_low_s8(w1a), aa);
  int16x8_t p67 = vmull_s8(vget_high_s8(w1a), aa);
  p01 = vmlal_s8(p01, vget_low_s8(w0b), ab);
  p23 = vmlal_s8(p23, vget_high_s8(w0b), ab);
  p45 = vmlal_s8(p45, vget_low_s8(w1b), ab);
  p67 = vmlal_s8(p67, vget_high_s8(w1b), ab);
  acc.r01 = vpadalq_s16(acc.r01, p01);
  acc.r23 = vpadalq_s16(acc.r23, p23);
  acc.r45 = vpadalq_s16(acc.r45, p45);
  acc.r67 = vpadalq_s16(acc.r67, p67);
}

inline void One(RowAcc& acc, int8x16_t w0, int8x16_t w1, int8x8_t a) {
  acc.r01 = vpadalq_s16(acc.r01, vmull_s8(vget_low_s8(w0), a));
  acc.r23 = vpadalq_s16(acc.r23, vmull_s8(vget_high_s8(w0), a));
  acc.r45 = vpadalq_s16(acc.r45, vmull_s8(vget_low_s8(w1), a));
  acc.r67 = vpadalq_s16(acc.r67, vmull_s8(vget_high_s8(w1), a));
}

// MR rows of A against one block, full K.
template <int MR, class Epi>
inline void Tile(int kg, const int8_t* a, int lda, const int8_t* wb, int row0, int col,
                 const Epi& epi) {
  RowAcc acc[MR];
  for (int i = 0; i < MR; ++i) acc[i].r01 = acc[i].r23 = acc[i].r45 = acc[i].r67 = vdupq_n_s32(0);
  int g = 0;
  for (; g + 2 <= kg; g += 2) {
    const int8_t* wg = wb + size_t(g) * 32;
    const int8x16_t w0a = vld1q_s8(wg), w1a = vld1q_s8(wg + 16);
    const int8x16_t w0b = vld1q_s8(wg + 32), w1b = vld1q_s8(wg + 48);
#pragma GCC unroll 4
    for (int i = 0; i < MR; ++i) {
      const int8_t* ai = a + size_t(i) * lda + g * 4;
      Two(acc[i], w0a, w1a, w0b, w1b, Dup4(ai), Dup4(ai + 4));
    }
  }
  if (g < kg) {
    const int8_t* wg = wb + size_t(g) * 32;
    const int8x16_t w0 = vld1q_s8(wg), w1 = vld1q_s8(wg + 16);
#pragma GCC unroll 4
    for (int i = 0; i < MR; ++i) One(acc[i], w0, w1, Dup4(a + size_t(i) * lda + g * 4));
  }
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i)
    epi(row0 + i, col, PairSum(acc[i].r01, acc[i].r23), PairSum(acc[i].r45, acc[i].r67));
}

// Rows per tile, the most whose inner loop GCC 12 compiles without spilling q registers:
// aarch64 (32 q regs): 3 rows = 12 accumulators + 4 weight + 4 product registers per row;
// armv7 (16 q regs): 1 row (2 rows spill 3 registers per iteration).
#if defined(__aarch64__)
constexpr int kMR = 3;
#else
constexpr int kMR = 1;
#endif

template <class Epi>
void Gemm(int m, int n, int k, const int8_t* a, int lda, const int8_t* w, const Epi& epi) {
  if (m <= 0 || n <= 0) return;
  const int kg = (k + 3) / 4;
  const size_t bs = size_t(kg) * 32;
  const int nb = (n + 7) / 8;
  for (int b = 0; b < nb; ++b) {
    const int8_t* wb = w + size_t(b) * bs;
    int i0 = 0;
    for (; i0 + kMR <= m; i0 += kMR) Tile<kMR>(kg, a + size_t(i0) * lda, lda, wb, i0, b * 8, epi);
#if defined(__aarch64__)
    const int8_t* ai = a + size_t(i0) * lda;
    switch (m - i0) {  // 0 .. kMR-1 rows left
      case 2: Tile<2>(kg, ai, lda, wb, i0, b * 8, epi); break;
      case 1: Tile<1>(kg, ai, lda, wb, i0, b * 8, epi); break;
      default: break;
    }
#endif
  }
}

}  // namespace

void GemmS8Blocked(int m, int n, int k, const int8_t* a, int lda, const float* a_scales,
                   const int8_t* w, const float* w_scales, const float* bias, const float* residual,
                   int ldr, float* c, int ldc, Act act) {
#if defined(__aarch64__)
  // SiLU / GELU: a second pass over the rows just written, where independent iterations
  // overlap (inside the tile loop they are latency-bound). Same operations, same results.
  const bool fused = act == Act::kNone || act == Act::kReLU;
#else
  const bool fused = true;  // armv7: the epilogue is scalar anyway
#endif
  const FloatEpilogue epi{n, a_scales, w_scales, bias, residual, ldr, c, ldc, fused ? act : Act::kNone};
  Gemm(m, n, k, a, lda, w, epi);
  if (!fused && n > 0)
    for (int i = 0; i < m; ++i) neon::Activation(c + size_t(i) * ldc, n, act);
}

void GemmS8BlockedAcc(int m, int n, int k, const int8_t* a, int lda, const int8_t* w, int32_t* acc,
                      int ldacc) {
  const AccEpilogue epi{n, acc, ldacc};
  Gemm(m, n, k, a, lda, w, epi);
}

}  // namespace neon
}  // namespace kernels
}  // namespace mtlite

#endif  // __ARM_NEON

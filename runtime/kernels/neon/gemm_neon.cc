// int8 GEMM / GEMV on the BlockedN8K4 layout with baseline NEON (armv7 and aarch64): the
// micro-kernel of the shared tile driver (generic/gemm_driver.h).
//
// A 32-byte weight group is 8 rows x 4 k: bytes 0..15 are rows 0-3, 16..31 rows 4-7. The 4
// activations of the group, duplicated into an int8x8 (a0 a1 a2 a3 a0 a1 a2 a3), line up with
// each 8-byte half (two rows x 4 k): vmull_s8 gives 8 int16 products, vmlal_s8 adds the
// products of the next group into the same lanes (|a| <= 127, |w| <= 128: two products sum
// to at most 2 * 127 * 128 = 32512, no int16 overflow), vpadalq_s16 folds pairs into int32.
// Per row pair the int32 lanes are (r k01, r k23, r' k01, r' k23); a final pairwise add
// gives one int32 per row. All exact.
#if defined(__ARM_NEON) || defined(__ARM_NEON__)
#include <arm_neon.h>

#include "generic/gemm_driver.h"
#include "kernel_families.h"
#include "neon/neon_ops.h"

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
template <int MR>
inline void TileOneBlock(int kg, const int8_t* a, int lda, const int8_t* wb, F8::I (&out)[MR][1]) {
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
    out[i][0] = {PairSum(acc[i].r01, acc[i].r23), PairSum(acc[i].r45, acc[i].r67)};
}

// Rows per tile, the most whose inner loop GCC 12 compiles without spilling q registers:
// aarch64 (32 q regs): 3 rows = 12 accumulators + 4 weight + 4 product registers per row;
// armv7 (16 q regs): 1 row (2 rows spill 3 registers per iteration).
struct GemmK : GemmCommon, generic::NoPanelState {
#if defined(__aarch64__)
  static constexpr int kMR = 3;
#else
  static constexpr int kMR = 1;
#endif
  // one block at a time, every row panel of A over it (its weights stay in L1)
  static constexpr int kNR = 1;
  static constexpr size_t kChunkBytes = 0;
  static constexpr int kGemvNR = 0;
  static constexpr size_t kStreamBytes = 0, kStreamRowsBytes = 0;
  static constexpr int kStreamMR = kMR;
  static constexpr size_t kStreamPanelsBytes = 0;
  static bool Prefetch(int, int, size_t) { return false; }
  template <int MR, int NR>
  static void Tile(int kg, const int8_t* a, int lda, const int8_t* const* w, const int8_t* const*,
                   const PanelState&, Acc (&acc)[MR][NR]) {
    static_assert(NR == 1, "one block per tile");
    TileOneBlock<MR>(kg, a, lda, w[0], acc);
  }
};

}  // namespace
}  // namespace neon

template <>
void AddGemmKernels<IsaNeon>(KernelTable& t) {
  generic::SetGemmEntries<neon::GemmK>(t);
}

}  // namespace kernels
}  // namespace mtlite

#endif  // __ARM_NEON

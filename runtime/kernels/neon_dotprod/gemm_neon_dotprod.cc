// int8 GEMM / GEMV with the Armv8.2 dot-product instructions (sdot), aarch64 and AArch32: the
// micro-kernel of the shared tile driver (generic/gemm_driver.h). Compiled alone with
// -march=armv8.2-a+dotprod; dispatch.cc only uses it when the CPU reports the extension
// (HWCAP_ASIMDDP). The "neon-dotprod" table is "neon" with this GEMM.
//
// The BlockedN8K4 group (8 rows x 4 k, rows 0-3 in bytes 0..15, rows 4-7 in 16..31) is
// exactly sdot's layout: vdotq_lane(acc, w, a, l) adds, for each of the 4 int32 lanes (rows),
// the dot product of that row's 4 weights with activation group l. int32 accumulation of
// int8 products: exact.
#if !(defined(__ARM_NEON) || defined(__ARM_NEON__)) || !defined(__ARM_FEATURE_DOTPROD)
#error "neon_dotprod/ must be compiled with the dot-product extension (-march=armv8.2-a+dotprod)"
#endif
#include <arm_neon.h>

#include "generic/gemm_driver.h"
#include "kernel_families.h"
#include "neon/neon_ops.h"

namespace mtlite {
namespace kernels {
namespace neon_dotprod {
namespace {

using neon::F8;

// 4 activation groups (16 bytes) of one row; the tail (< 4 groups) is assembled without
// reading past the row's kp bytes.
inline int8x16_t LoadA16(const int8_t* p, int groups) {
  if (groups >= 4) return vld1q_s8(p);
  int32_t t[4] = {0, 0, 0, 0};
  for (int i = 0; i < groups; ++i) t[i] = Load4(p + 4 * i);
  return vreinterpretq_s8_s32(vld1q_s32(t));
}

#if defined(__aarch64__)
#define MTLITE_SDOT(acc, w, a16, lane) vdotq_laneq_s32(acc, w, a16, lane)
#else
// AArch32 has only the 64-bit-lane form: groups 0,1 in the low half, 2,3 in the high half.
#define MTLITE_SDOT(acc, w, a16, lane)                                                   \
  ((lane) < 2 ? vdotq_lane_s32(acc, w, vget_low_s8(a16), (lane)&1)                       \
              : vdotq_lane_s32(acc, w, vget_high_s8(a16), (lane)&1))
#endif

// One activation group (lane L of the 16-byte activation registers) for MR rows x NR blocks.
template <int L, int MR, int NR>
inline void LaneStep(F8::I (&acc)[MR][NR], const int8x16_t (&av)[MR], const int8_t* const* w, int g) {
#pragma GCC unroll 8
  for (int j = 0; j < NR; ++j) {
    const int8_t* wg = w[j] + size_t(g + L) * 32;
    const int8x16_t w0 = vld1q_s8(wg), w1 = vld1q_s8(wg + 16);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      acc[i][j].lo = MTLITE_SDOT(acc[i][j].lo, w0, av[i], L);
      acc[i][j].hi = MTLITE_SDOT(acc[i][j].hi, w1, av[i], L);
    }
  }
}

// MR rows x NR blocks, full K. acc[i][j].lo: rows 0-3 of block j, .hi: rows 4-7.
template <int MR, int NR>
inline void TileSdot(int kg, const int8_t* a, int lda, const int8_t* const* w, F8::I (&acc)[MR][NR]) {
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) acc[i][j].lo = acc[i][j].hi = vdupq_n_s32(0);
  const int kg4 = kg & ~3;
  for (int g = 0; g < kg4; g += 4) {
    int8x16_t av[MR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) av[i] = vld1q_s8(a + size_t(i) * lda + g * 4);
    LaneStep<0>(acc, av, w, g);
    LaneStep<1>(acc, av, w, g);
    LaneStep<2>(acc, av, w, g);
    LaneStep<3>(acc, av, w, g);
  }
  if (kg4 < kg) {
    // 1..3 groups left: activations assembled without reading past the row's kp bytes, and
    // weights only for the groups that exist (not past the block)
    const int groups = kg - kg4;
    int8x16_t av[MR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) av[i] = LoadA16(a + size_t(i) * lda + kg4 * 4, groups);
    LaneStep<0>(acc, av, w, kg4);
    if (groups > 1) LaneStep<1>(acc, av, w, kg4);
    if (groups > 2) LaneStep<2>(acc, av, w, kg4);
  }
}

// m == 1: one block, the four groups of a 16-byte activation load in four independent
// accumulator pairs (sdot latency), weights read sequentially.
inline F8::I GemvBlock(int kg, const int8_t* a, const int8_t* wb) {
  const int kg4 = kg & ~3;
  int32x4_t l0 = vdupq_n_s32(0), h0 = l0, l1 = l0, h1 = l0, l2 = l0, h2 = l0, l3 = l0, h3 = l0;
  for (int g = 0; g < kg4; g += 4) {
    const int8x16_t av = vld1q_s8(a + g * 4);
    const int8_t* wg = wb + size_t(g) * 32;
    l0 = MTLITE_SDOT(l0, vld1q_s8(wg), av, 0);
    h0 = MTLITE_SDOT(h0, vld1q_s8(wg + 16), av, 0);
    l1 = MTLITE_SDOT(l1, vld1q_s8(wg + 32), av, 1);
    h1 = MTLITE_SDOT(h1, vld1q_s8(wg + 48), av, 1);
    l2 = MTLITE_SDOT(l2, vld1q_s8(wg + 64), av, 2);
    h2 = MTLITE_SDOT(h2, vld1q_s8(wg + 80), av, 2);
    l3 = MTLITE_SDOT(l3, vld1q_s8(wg + 96), av, 3);
    h3 = MTLITE_SDOT(h3, vld1q_s8(wg + 112), av, 3);
  }
  for (int g = kg4; g < kg; ++g) {
    const int8x16_t av = vreinterpretq_s8_s32(vdupq_n_s32(Load4(a + g * 4)));
    const int8_t* wg = wb + size_t(g) * 32;
    l0 = MTLITE_SDOT(l0, vld1q_s8(wg), av, 0);
    h0 = MTLITE_SDOT(h0, vld1q_s8(wg + 16), av, 0);
  }
  return {vaddq_s32(vaddq_s32(l0, l1), vaddq_s32(l2, l3)), vaddq_s32(vaddq_s32(h0, h1), vaddq_s32(h2, h3))};
}

struct GemmK : neon::GemmCommon, generic::NoPanelState {
#if defined(__aarch64__)
  static constexpr int kMR = 4, kNR = 2;  // 16 accumulators + 4 weights + 4 activations (32 q regs)
#else
  static constexpr int kMR = 2, kNR = 2;  // 8 accumulators + 4 weights + 2 activations (16 q regs)
#endif
  // two blocks at a time, every row panel of A over them (their weights stay in L1)
  static constexpr size_t kChunkBytes = 0;
  static constexpr int kGemvNR = 1;
  static constexpr size_t kStreamBytes = 0, kStreamRowsBytes = 0;
  static constexpr int kStreamMR = kMR;
  static constexpr size_t kStreamPanelsBytes = 0;
  static bool Prefetch(int, int, size_t) { return false; }
  template <int MR, int NR>
  static void Tile(int kg, const int8_t* a, int lda, const int8_t* const* w, const int8_t* const*,
                   const PanelState&, Acc (&acc)[MR][NR]) {
    TileSdot<MR, NR>(kg, a, lda, w, acc);
  }
  template <int G>
  static void Gemv(int kg, const int8_t* a, const int8_t* const* w, const int8_t* const*, bool,
                   Acc (&acc)[G]) {
    static_assert(G == 1, "one block at a time");
    acc[0] = GemvBlock(kg, a, w[0]);
  }
};

}  // namespace
}  // namespace neon_dotprod

template <>
void AddGemmKernels<IsaNeonDotProd>(KernelTable& t) {
  generic::SetGemmEntries<neon_dotprod::GemmK>(t);
}

}  // namespace kernels
}  // namespace mtlite

// int8 GEMM / GEMV with the Armv8.2 dot-product instructions (sdot), aarch64 and AArch32.
// Compiled alone with -march=armv8.2-a+dotprod; dispatch.cc only uses it when the CPU reports
// the extension (HWCAP_ASIMDDP).
//
// The BlockedN8K4 group (8 rows x 4 k, rows 0-3 in bytes 0..15, rows 4-7 in 16..31) is
// exactly sdot's layout: vdotq_lane(acc, w, a, l) adds, for each of the 4 int32 lanes (rows),
// the dot product of that row's 4 weights with activation group l. int32 accumulation of
// int8 products: exact.
#include "neon/neon_kernels.h"

#if (defined(__ARM_NEON) || defined(__ARM_NEON__)) && defined(__ARM_FEATURE_DOTPROD)
#include <arm_neon.h>

#include "neon/neon_math.h"

namespace mtlite {
namespace kernels {
namespace neon_dotprod {
namespace {

using neon::AccEpilogue;
using neon::FloatEpilogue;
using neon::Load4;

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
inline void LaneStep(int32x4_t (&acc)[MR][NR][2], const int8x16_t (&av)[MR], const int8_t* w,
                     size_t bs, int g) {
#pragma GCC unroll 8
  for (int j = 0; j < NR; ++j) {
    const int8_t* wg = w + j * bs + size_t(g + L) * 32;
    const int8x16_t w0 = vld1q_s8(wg), w1 = vld1q_s8(wg + 16);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      acc[i][j][0] = MTLITE_SDOT(acc[i][j][0], w0, av[i], L);
      acc[i][j][1] = MTLITE_SDOT(acc[i][j][1], w1, av[i], L);
    }
  }
}

// MR rows x NR blocks, full K. acc[i][j][0]: rows 0-3 of block j, [1]: rows 4-7.
template <int MR, int NR, class Epi>
inline void Tile(int kg, const int8_t* a, int lda, const int8_t* w, size_t bs, int row0, int b0,
                 const Epi& epi) {
  int32x4_t acc[MR][NR][2];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) acc[i][j][0] = acc[i][j][1] = vdupq_n_s32(0);
  const int kg4 = kg & ~3;
  for (int g = 0; g < kg4; g += 4) {
    int8x16_t av[MR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) av[i] = vld1q_s8(a + size_t(i) * lda + g * 4);
    LaneStep<0>(acc, av, w, bs, g);
    LaneStep<1>(acc, av, w, bs, g);
    LaneStep<2>(acc, av, w, bs, g);
    LaneStep<3>(acc, av, w, bs, g);
  }
  if (kg4 < kg) {
    // 1..3 groups left: activations assembled without reading past the row's kp bytes, and
    // weights only for the groups that exist (not past the block)
    const int groups = kg - kg4;
    int8x16_t av[MR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) av[i] = LoadA16(a + size_t(i) * lda + kg4 * 4, groups);
    LaneStep<0>(acc, av, w, bs, kg4);
    if (groups > 1) LaneStep<1>(acc, av, w, bs, kg4);
    if (groups > 2) LaneStep<2>(acc, av, w, bs, kg4);
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) epi(row0 + i, (b0 + j) * 8, acc[i][j][0], acc[i][j][1]);
}

// m == 1: one block at a time, the four groups of a 16-byte activation load in four
// independent accumulator pairs (sdot latency), weights read sequentially.
template <class Epi>
void Gemv(int n, int kg, const int8_t* a, const int8_t* w, const Epi& epi) {
  const size_t bs = size_t(kg) * 32;
  const int nb = (n + 7) / 8;
  const int kg4 = kg & ~3;
  for (int b = 0; b < nb; ++b) {
    const int8_t* wb = w + size_t(b) * bs;
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
    epi(0, b * 8, vaddq_s32(vaddq_s32(l0, l1), vaddq_s32(l2, l3)),
        vaddq_s32(vaddq_s32(h0, h1), vaddq_s32(h2, h3)));
  }
}

#if defined(__aarch64__)
constexpr int kMR = 4, kNR = 2;  // 16 accumulators + 4 weights + 4 activations (32 q regs)
#else
constexpr int kMR = 2, kNR = 2;  // 8 accumulators + 4 weights + 2 activations (16 q regs)
#endif

template <int NR, class Epi>
inline void TileRows(int mr, int kg, const int8_t* a, int lda, const int8_t* w, size_t bs,
                     int row0, int b0, const Epi& epi) {
  switch (mr) {
#if defined(__aarch64__)
    case 4: Tile<4, NR>(kg, a, lda, w, bs, row0, b0, epi); break;
    case 3: Tile<3, NR>(kg, a, lda, w, bs, row0, b0, epi); break;
#endif
    case 2: Tile<2, NR>(kg, a, lda, w, bs, row0, b0, epi); break;
    default: Tile<1, NR>(kg, a, lda, w, bs, row0, b0, epi); break;
  }
}

template <class Epi>
void Gemm(int m, int n, int k, const int8_t* a, int lda, const int8_t* w, const Epi& epi) {
  if (m <= 0 || n <= 0) return;
  const int kg = (k + 3) / 4;
  if (m == 1) {
    Gemv(n, kg, a, w, epi);
    return;
  }
  const size_t bs = size_t(kg) * 32;
  const int nb = (n + 7) / 8;
  for (int b0 = 0; b0 < nb; b0 += kNR) {
    const int8_t* wb = w + size_t(b0) * bs;
    const bool full = b0 + kNR <= nb;
    for (int i0 = 0; i0 < m; i0 += kMR) {
      const int mr = m - i0 < kMR ? m - i0 : kMR;
      const int8_t* ai = a + size_t(i0) * lda;
      if (full)
        TileRows<kNR>(mr, kg, ai, lda, wb, bs, i0, b0, epi);
      else
        TileRows<1>(mr, kg, ai, lda, wb, bs, i0, b0, epi);
    }
  }
}

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

}  // namespace
}  // namespace neon_dotprod

const KernelTable* NeonDotProdKernelsOrNull() {
  static const KernelTable table = {
      "neon-dotprod",
      neon::QuantizeRowsS8,
      neon_dotprod::GemmS8Blocked,
      neon_dotprod::GemmS8BlockedAcc,
      neon::LayerNorm,
      neon::SoftmaxMasked,
      neon::Dot,
      neon::Axpy,
      neon::Activation,
      neon::AttnScores,
      neon::AttnContext,
      neon::MaxSumExp,
      neon::ScanGt,
      neon::Argmax,
  };
  return &table;
}

}  // namespace kernels
}  // namespace mtlite

#elif defined(__ARM_NEON) || defined(__ARM_NEON__)

namespace mtlite {
namespace kernels {
const KernelTable* NeonDotProdKernelsOrNull() { return nullptr; }
}  // namespace kernels
}  // namespace mtlite

#endif

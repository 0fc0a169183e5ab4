// int8 GEMM / GEMV on the BlockedN8K4 layout with Helium (MVE): the micro-kernel of the shared
// tile driver (generic/gemm_driver.h), reading the weights in place.
//
// A 32-byte weight group is 8 rows x 4 k, row r's 4 values at bytes 4r..4r+3. Four consecutive
// groups hold 16 consecutive k of every row, row r's as the words at 4r, 4r + 32, 4r + 64,
// 4r + 96: one gather load of 4 words (VLDRW.U32 from an address vector, with the immediate
// 4r) puts them in one q register in k order, next to 16 consecutive activations (one
// VLDRB.U8), and VMLADAVA.S8 adds the 16 products to a row's int32 accumulator (a
// general-purpose register). Products and sums are exact (|a| <= 127, |w| <= 128, k < 2^17).
// A last 1..3 groups load under a tail predicate (VCTP), which zeroes the lanes beyond K and
// reads no memory for them.
//
// Tiles of up to 3 rows of A, each over the block in passes of 4 block rows (1 or 2 rows of A)
// or 2 block rows (3 rows of A): every gathered weight vector serves all the tile's rows, with
// 4, 8 or 6 accumulators in general-purpose registers (VMLADAVA writes only even ones; the
// measured choice: PassRows). The tile's activations, the address vector and the gathered
// weights fit Cortex-M55's 8 q registers.
//
// Weights at an address that is not a multiple of 4 take byte gathers (VLDRB.U8 with 16
// offsets) instead of the word gathers, with the same sums.
//
// The epilogue is the scalar reference expression on the FPU (mve/mve_ops.h: MVE float
// arithmetic flushes denormals); SiLU and sigmoid run as a second pass of mve::Activation.
#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>

#include <cstdint>
#include <utility>

#include "generic/gemm_driver.h"
#include "kernel_families.h"
#include "mve/mve_ops.h"
#include "reference/reference.h"

namespace mtlite {
namespace kernels {
namespace mve {
namespace {

struct Acc8 {
  int32_t v[8];
};

// f(std::integral_constant<int, I>) for I = 0..N-1, unrolled at compile time (the gathers'
// immediates must be constants).
#define MTLITE_MVE_INLINE __attribute__((always_inline))
template <class F, int... I>
MTLITE_MVE_INLINE inline void EachImpl(F&& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F>
MTLITE_MVE_INLINE inline void Each(F&& f) {
  EachImpl(f, std::make_integer_sequence<int, N>{});
}

// acc[i][rr] = row i of A . weight row R0 + rr of block wb, for MR rows of A and NW block rows,
// wb 4-byte aligned. One address vector {g, g + 32, g + 64, g + 96} (g: the block's group at
// 4 * (the current k)) serves every row: row r is the gather VLDRW.U32 [addr, #4r].
template <int MR, int R0, int NW>
inline void WordRows(int kg, const int8_t* a, int lda, const int8_t* wb, int32_t (&acc)[MR][NW]) {
  int32_t s[MR][NW] = {};
  uint32x4_t addr = vaddq_n_u32(vmulq_n_u32(vidupq_n_u32(0, 1), 32), uint32_t(reinterpret_cast<uintptr_t>(wb)));
  const int8_t* ap = a;
  int g = 0;
  for (; g + 4 <= kg; g += 4, ap += 16) {
    int8x16_t av[MR];
    Each<MR>([&](auto i) MTLITE_MVE_INLINE { av[i] = vld1q_s8(ap + size_t(i) * lda); });
    Each<NW>([&](auto rr) MTLITE_MVE_INLINE {
      const int8x16_t wv = vreinterpretq_s8_s32(vldrwq_gather_base_s32(addr, 4 * (R0 + decltype(rr)::value)));
      Each<MR>([&](auto i) MTLITE_MVE_INLINE { s[i][rr] = vmladavaq_s8(s[i][rr], wv, av[i]); });
    });
    addr = vaddq_n_u32(addr, 128);
  }
  if (g < kg) {  // 1..3 groups: the lanes beyond K are zero and not read
    const mve_pred16_t p8 = vctp8q(4 * (kg - g)), p32 = vctp32q(kg - g);
    int8x16_t av[MR];
    Each<MR>([&](auto i) MTLITE_MVE_INLINE { av[i] = vldrbq_z_s8(ap + size_t(i) * lda, p8); });
    Each<NW>([&](auto rr) MTLITE_MVE_INLINE {
      const int8x16_t wv =
          vreinterpretq_s8_s32(vldrwq_gather_base_z_s32(addr, 4 * (R0 + decltype(rr)::value), p32));
      Each<MR>([&](auto i) MTLITE_MVE_INLINE { s[i][rr] = vmladavaq_s8(s[i][rr], wv, av[i]); });
    });
  }
  Each<MR>([&](auto i) MTLITE_MVE_INLINE { Each<NW>([&](auto rr) MTLITE_MVE_INLINE { acc[i][rr] = s[i][rr]; }); });
}

// The same sums for weights at any address: byte gathers (VLDRB.U8 with the offsets
// (j / 4) * 32 + j % 4 of lane j from row r's first byte).
template <int MR, int R0, int NW>
inline void ByteRows(int kg, const int8_t* a, int lda, const int8_t* wb, int32_t (&acc)[MR][NW]) {
  int32_t s[MR][NW] = {};
  const uint8x16_t j = vidupq_n_u8(0, 1);
  const uint8x16_t off = vaddq_u8(vmulq_n_u8(vshrq_n_u8(j, 2), 32), vandq_u8(j, vdupq_n_u8(3)));
  int g = 0;
  for (; g < kg; g += 4) {
    const mve_pred16_t p8 = vctp8q(4 * (kg - g));  // all lanes while 4 or more groups are left
    const int8_t* wg = wb + size_t(g) * 32;
    int8x16_t av[MR];
    Each<MR>([&](auto i) MTLITE_MVE_INLINE { av[i] = vldrbq_z_s8(a + size_t(i) * lda + 4 * g, p8); });
    Each<NW>([&](auto rr) MTLITE_MVE_INLINE {
      const int8x16_t wv = vldrbq_gather_offset_z_s8(wg + 4 * (R0 + decltype(rr)::value), off, p8);
      Each<MR>([&](auto i) MTLITE_MVE_INLINE { s[i][rr] = vmladavaq_s8(s[i][rr], wv, av[i]); });
    });
  }
  Each<MR>([&](auto i) MTLITE_MVE_INLINE { Each<NW>([&](auto rr) MTLITE_MVE_INLINE { acc[i][rr] = s[i][rr]; }); });
}

template <int MR, int R0, int NW>
inline void Rows(int kg, const int8_t* a, int lda, const int8_t* wb, int32_t (&acc)[MR][NW]) {
  if ((reinterpret_cast<uintptr_t>(wb) & 3) == 0)
    WordRows<MR, R0, NW>(kg, a, lda, wb, acc);
  else
    ByteRows<MR, R0, NW>(kg, a, lda, wb, acc);
}

// Block rows per pass over K for MR rows of A: the accumulators (MR x NW) live in the even
// general-purpose registers r0-r12 (VMLADAVA accumulates only into an even register), the
// pointers in the odd ones.
// bench/baremetal_icount.sh, demo shape, instructions per decoder step / per source token:
// (rows of A: block rows per pass) 1:4 2:4 3:2 1 753 000 / 2 308 686; 1:8 (one accumulator
// spilled) 1 803 072 / 2 312 756; tiles of at most 2 rows (2:4) +3.6 % / +1.4 %.
template <int MR>
constexpr int PassRows() {
  return MR == 3 ? 2 : 4;
}

template <int MR>
inline void TileOneBlock(int kg, const int8_t* a, int lda, const int8_t* wb, Acc8 (&out)[MR][1]) {
  constexpr int NW = PassRows<MR>();
  static_assert(8 % NW == 0, "passes cover the block");
  Each<8 / NW>([&](auto pass) MTLITE_MVE_INLINE {
    constexpr int r0 = NW * decltype(pass)::value;
    int32_t s[MR][NW];
    Rows<MR, r0, NW>(kg, a, lda, wb, s);
    for (int i = 0; i < MR; ++i)
      for (int r = 0; r < NW; ++r) out[i][0].v[r0 + r] = s[i][r];
  });
}

struct GemmK : generic::NoPanelState {
  using Acc = Acc8;
  static constexpr int kMR = 3;
  static constexpr int kNR = 1;  // one block at a time, every row panel of A over it
  static constexpr size_t kChunkBytes = 0;
  static constexpr int kGemvNR = 0;
  static constexpr size_t kStreamBytes = 0, kStreamRowsBytes = 0;
  static constexpr int kStreamMR = kMR;
  static constexpr size_t kStreamPanelsBytes = 0;
#if (__ARM_FEATURE_MVE & 2)
  // SiLU / sigmoid (and GELU): a second pass over the finished rows (mve::Activation); ReLU in
  // the epilogue. Same operations, same results.
  static constexpr bool kActSecondPass = true;
  static void Activation(float* x, int n, Act act) { mve::Activation(x, n, act); }
#else
  static constexpr bool kActSecondPass = false;
  static void Activation(float* x, int n, Act act) { ref::Activation(x, n, act); }
#endif
  static bool Prefetch(int, int, size_t) { return false; }
  template <int MR, int NR>
  static void Tile(int kg, const int8_t* a, int lda, const int8_t* const* w, const int8_t* const*,
                   const PanelState&, Acc (&acc)[MR][NR]) {
    static_assert(NR == 1, "one block per tile");
    TileOneBlock<MR>(kg, a, lda, w[0], acc);
  }
  // The reference's expression, on the scalar FPU.
  static void Epilogue(const Acc& acc, float as, const float* ws, const float* bias, const float* res,
                       float* out, int count, Act act) {
    if (act == Act::kNone && count == 8) {  // the common case without calls or tests per output
      float y[8];
      for (int j = 0; j < 8; ++j) y[j] = float(acc.v[j]) * (as * ws[j]);
      if (bias)
        for (int j = 0; j < 8; ++j) y[j] = y[j] + bias[j];
      if (res)
        for (int j = 0; j < 8; ++j) y[j] = y[j] + res[j];
      for (int j = 0; j < 8; ++j) out[j] = y[j];
      return;
    }
    for (int j = 0; j < count; ++j) {
      float y = float(acc.v[j]) * (as * ws[j]);
      if (bias) y = y + bias[j];
      if (res) y = y + res[j];
      out[j] = ref::ActRef(y, act);
    }
  }
  static void StoreAcc(const Acc& acc, int32_t* out, int count) {
    for (int j = 0; j < count; ++j) out[j] = acc.v[j];
  }
};

}  // namespace
}  // namespace mve

template <>
void AddGemmKernels<IsaMve>(KernelTable& t) {
  generic::SetGemmEntries<mve::GemmK>(t);
}

}  // namespace kernels
}  // namespace mtlite

#endif  // __ARM_FEATURE_MVE

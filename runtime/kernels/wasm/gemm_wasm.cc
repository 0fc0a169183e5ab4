// int8 GEMM / GEMV on the BlockedN8K4 layout with WebAssembly SIMD128: the micro-kernel of the
// shared tile driver (generic/gemm_driver.h), reading the weights in place.
//
// A 32-byte weight group is 8 rows x 4 k: bytes 0..15 are rows 0-3, 16..31 rows 4-7. Each
// quarter, loaded widened to int16 (i16x8.load8x8_s), holds two rows x 4 k; the group's 4
// activations, loaded as one 32-bit splat and widened (a0 a1 a2 a3 a0 a1 a2 a3), line up with it.
// i32x4.dot_i16x8_s multiplies lane by lane and adds adjacent pairs exactly into int32:
// (r k01, r k23, r' k01, r' k23), accumulated with i32x4.add over the groups; a final pairwise
// add gives one int32 per row. Products and sums are exact (|a| <= 127, |w| <= 128).
//
// The widening loads are one instruction each on x86-64 (vpmovsxbw from memory), where a 16-byte
// load widened by i16x8.extend_{low,high}_i8x16_s takes three vector operations per half and
// the vector units bound the loop: -10 % CPU time per GEMV in cache (m = 1, k 256, n 1024, node).
// Two groups summed in int16 (i16x8.extmul_{low,high}_i8x16_s, i16x8.add, then
// i32x4.extadd_pairwise_i16x8_s) is exact too, but slower there (+35 %): each extended multiply
// sign-extends both operands before vpmullw, 3 operations (low) or 5 (high).
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include "generic/gemm_driver.h"
#include "kernel_families.h"
#include "wasm/wasm_ops.h"

namespace mtlite {
namespace kernels {
namespace wasm {
namespace {

// Accumulators of one row against one 8-row block.
struct RowAcc {
  v128_t r01, r23, r45, r67;
};

// (x0+x1, x2+x3, y0+y1, y2+y3)
inline v128_t PairSum(v128_t x, v128_t y) {
  return wasm_i32x4_add(wasm_i32x4_shuffle(x, y, 0, 2, 4, 6), wasm_i32x4_shuffle(x, y, 1, 3, 5, 7));
}

// MR rows of A against one block, full K.
template <int MR>
inline void TileOneBlock(int kg, const int8_t* a, int lda, const int8_t* wb, F8::I (&out)[MR][1]) {
  RowAcc acc[MR];
  for (int i = 0; i < MR; ++i) acc[i].r01 = acc[i].r23 = acc[i].r45 = acc[i].r67 = wasm_i32x4_splat(0);
  for (int g = 0; g < kg; ++g) {
    const int8_t* wg = wb + size_t(g) * 32;
    const v128_t w01 = wasm_i16x8_load8x8(wg), w23 = wasm_i16x8_load8x8(wg + 8);
    const v128_t w45 = wasm_i16x8_load8x8(wg + 16), w67 = wasm_i16x8_load8x8(wg + 24);
#pragma GCC unroll 4
    for (int i = 0; i < MR; ++i) {
      const v128_t av = wasm_i16x8_extend_low_i8x16(wasm_v128_load32_splat(a + size_t(i) * lda + g * 4));
      acc[i].r01 = wasm_i32x4_add(acc[i].r01, wasm_i32x4_dot_i16x8(w01, av));
      acc[i].r23 = wasm_i32x4_add(acc[i].r23, wasm_i32x4_dot_i16x8(w23, av));
      acc[i].r45 = wasm_i32x4_add(acc[i].r45, wasm_i32x4_dot_i16x8(w45, av));
      acc[i].r67 = wasm_i32x4_add(acc[i].r67, wasm_i32x4_dot_i16x8(w67, av));
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i)
    out[i][0] = {PairSum(acc[i].r01, acc[i].r23), PairSum(acc[i].r45, acc[i].r67)};
}

// Rows per tile: 2 rows = 8 accumulators + 4 widened weights + the activations, within the 16
// vector registers an engine has on x86-64.
struct GemmK : GemmCommon, generic::NoPanelState {
  static constexpr int kMR = 2;
  // one block at a time, every row panel of A over it (its weights stay in cache)
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
}  // namespace wasm

template <>
void AddGemmKernels<IsaWasm>(KernelTable& t) {
  generic::SetGemmEntries<wasm::GemmK>(t);
}

}  // namespace kernels
}  // namespace mtlite

#endif  // __wasm_simd128__

// int8 GEMM / GEMV on the BlockedN8K4 layout with AVX-VNNI (the VEX-encoded 256-bit vpdpbusd of
// CPUs without AVX-512, e.g. Alder Lake; Zen5 has both): the micro-kernel of the shared tile
// driver (generic/gemm_driver.h), built on avxvnni/vnni_ymm.h (which also explains the
// exactness: activations as a + 128, minus 128 * sum_k w per row).
// Tiles: up to 4 rows x 2 blocks with the sign trick (in cache ~230 GOPS at m >= 4 on Zen5,
// offset trick ~190); over weights of 256 KiB and more the first row panel of each chunk
// prefetches the next tile's blocks, as the AVX2 tiles do (avx2/avx2_gemm.h, kTilePrefetchBytes).
// m == 1: one block at a time, four accumulator chains; m <= 4 over large weights (8 MiB:
// streamed from DRAM): one block at a time (one sequential stream), offset trick. Below that,
// m 2..4 runs the tiles: on Zen5 the one-block stream was 13-18 % slower there with weights
// from L3 (demo and tiny32k at beam 4), and with the prefetch the tiles are as fast as it over
// OPUS-MT base's layers, which a step reads from DRAM.
#include <immintrin.h>

#include <cstddef>

#include "avx2/avx2_gemm.h"
#include "avxvnni/vnni_ymm.h"
#include "kernel_families.h"

namespace mtlite {
namespace kernels {
namespace avxvnni {
namespace {

struct VexDot {
  // in place: with the intrinsic, GCC 12 copied every accumulator once per loop iteration
  static __m256i Dot(__m256i acc, __m256i u, __m256i s) {
    asm("%{vex%} vpdpbusd %2, %1, %0" : "+x"(acc) : "x"(u), "x"(s));
    return acc;
  }
};
using Ymm = VnniYmm<VexDot>;

struct GemmK : avx2::GemmCommon {
  static constexpr int kMR = 4, kNR = 2, kGemvNR = 1;
  static constexpr size_t kChunkBytes = size_t(128) << 10;
  static constexpr size_t kStreamBytes = size_t(8) << 20, kStreamRowsBytes = kStreamBytes;
  static constexpr int kStreamMR = kMR;
  static constexpr size_t kStreamPanelsBytes = size_t(1) << 20;  // more than L2 holds
  static bool Prefetch(int, int nb, size_t bs) { return size_t(nb) * bs >= avx2::kTilePrefetchBytes; }
  template <int MR, int NR>
  static void Tile(int kg, const int8_t* a, int lda, const int8_t* const* w, const int8_t* const* next,
                   const PanelState&, Acc (&acc)[MR][NR]) {
    if (next)
      avx2::TileSign<VexDot, MR, NR, true>(kg, a, lda, w, acc, next);
    else
      avx2::TileSign<VexDot, MR, NR>(kg, a, lda, w, acc);
  }
  template <int MR>
  static void StreamTile(int kg, const int8_t* a, int lda, const int8_t* w, const int8_t* next, const StreamState&,
                         Acc (&acc)[MR]) {
    Acc t[MR][1];
    if (!next)  // contiguous blocks: the stream ahead
      Ymm::Tile<MR, 1, true>(kg, a, lda, &w, t);
    else  // a gathered selection: prefetch a block further on
      Ymm::Tile<MR, 1, false, true>(kg, a, lda, &w, t, next);
#pragma GCC unroll 4
    for (int i = 0; i < MR; ++i) acc[i] = t[i][0];
  }
  template <int G>
  static void Gemv(int kg, const int8_t* a, const int8_t* const* w, const int8_t* const* next, bool,
                   Acc (&acc)[G]) {
    static_assert(G == 1, "one block at a time");
    // contiguous blocks: the stream ahead; a gathered selection: a block further on
    acc[0] = next ? Ymm::GemvBlock<false, true>(kg, a, w[0], next[0]) : Ymm::GemvBlock<true>(kg, a, w[0]);
  }
};

}  // namespace
}  // namespace avxvnni

template <>
void AddGemmKernels<IsaAvxVnni>(KernelTable& t) {
  generic::SetGemmEntries<avxvnni::GemmK>(t);
}

}  // namespace kernels
}  // namespace mtlite

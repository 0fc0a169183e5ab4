// int8 GEMM / GEMV on the BlockedN8K4 layout with AVX-VNNI (the VEX-encoded 256-bit vpdpbusd of
// CPUs without AVX-512, e.g. Alder Lake; Zen5 has both): the micro-kernel of the shared tile
// driver (generic/gemm_driver.h), built on avxvnni/vnni_ymm.h (which also explains the
// exactness: activations as a + 128, minus 128 * sum_k w per row).
// Tiles: up to 4 rows x 2 blocks with the sign trick (in cache ~230 GOPS at m >= 4 on Zen5,
// offset trick ~190); m == 1: one block at a time, four accumulator chains; m <= 4 over large
// weights (streamed from DRAM): one block at a time (one sequential stream), offset trick.
#include <immintrin.h>

#include <cstddef>

#include "avx2/avx2_ops.h"
#include "avxvnni/vnni_ymm.h"
#include "generic/activation.h"
#include "generic/gemm_driver.h"
#include "kernel_families.h"

namespace mtlite {
namespace kernels {
namespace avxvnni {
namespace {

using avx2::F8;

struct VexDot {
  static __m256i Dot(__m256i acc, __m256i u, __m256i s) { return _mm256_dpbusd_avx_epi32(acc, u, s); }
};
using Ymm = VnniYmm<VexDot>;

struct GemmK {
  using Acc = __m256i;
  static constexpr int kMR = 4, kNR = 2, kGemvNR = 1;
  static constexpr size_t kChunkBytes = size_t(128) << 10;
  static constexpr size_t kStreamBytes = size_t(8) << 20;
  static constexpr bool kActSecondPass = true;
  static bool Prefetch(int, int, size_t) { return false; }
  template <int MR, int NR>
  static void Tile(int kg, const int8_t* a, int lda, const int8_t* const* w, const int8_t* const*,
                   Acc (&acc)[MR][NR]) {
    Ymm::TileSign<MR, NR>(kg, a, lda, w, acc);
  }
  template <int MR>
  static void StreamTile(int kg, const int8_t* a, int lda, const int8_t* w, Acc (&acc)[MR]) {
    Acc t[MR][1];
    Ymm::Tile<MR, 1>(kg, a, lda, &w, t);
#pragma GCC unroll 4
    for (int i = 0; i < MR; ++i) acc[i] = t[i][0];
  }
  template <int G>
  static void Gemv(int kg, const int8_t* a, const int8_t* const* w, const int8_t* const*, bool,
                   Acc (&acc)[G]) {
    static_assert(G == 1, "one block at a time");
    acc[0] = Ymm::GemvBlock(kg, a, w[0]);
  }
  static void Epilogue(const Acc& acc, float as, const float* ws, const float* bias, const float* res,
                       float* out, int count, Act act) {
    generic::Epilogue8<F8>(acc, as, ws, bias, res, out, count, act);
  }
  static void StoreAcc(const Acc& acc, int32_t* out, int count) { generic::StoreAcc8<F8>(acc, out, count); }
  static void Activation(float* x, int n, Act act) { generic::Activation<F8>(x, n, act); }
};

}  // namespace
}  // namespace avxvnni

template <>
void AddGemmKernels<IsaAvxVnni>(KernelTable& t) {
  t.gemm_s8_blocked = generic::GemmS8Blocked<avxvnni::GemmK>;
  t.gemm_s8_blocked_acc = generic::GemmS8BlockedAcc<avxvnni::GemmK>;
  t.gemm_s8_blocked_gather = generic::GemmS8BlockedGather<avxvnni::GemmK>;
}

}  // namespace kernels
}  // namespace mtlite

// int8 GEMM / GEMV on the BlockedN8K4 weight layout, AVX2 without VNNI: the micro-kernel of
// the shared tile driver (generic/gemm_driver.h: tiles, tails, epilogues, table entries).
//
// One 32-byte weight group holds 8 output rows x 4 k values (row-major 4-byte pieces), so a
// 4-byte activation group broadcast to all 8 dwords lines up with it: 8 rows x 4 k per step,
// no horizontal reductions.
//
// Exactness (kernels.h contract: |a| <= 127; weights may be any int8, -128 included):
//   vpmaddubsw multiplies unsigned by signed bytes and adds pairs with int16 saturation.
//   We feed it u = |w| (as u8, 0..128) and s = a * sign(w) (vpsignb; |a| <= 127, so no
//   overflow), so u * s = a * w and a pair sum is at most 2 * 128 * 127 = 32512 < 32767:
//   never saturates. vpmaddwd with ones widens pairs to int32. Accumulation is exact int32.
// Kernels: GemvBlock for m == 1; for m >= 2, tiles of up to 4 rows x 2 blocks of 8 outputs over
// all of K, in GCC inline assembly on x86-64 (KernelX2Asm: no accumulator spills and a
// stage-by-stage instruction order; +5-11% over the intrinsics version at m = 4..64 in
// gemm_bench on Zen3), with the intrinsics tile as the fallback and for a last odd block. Both
// run exactly the instruction sequence above. Dequantisation: generic::Epilogue8 with the AVX2
// float operations.
#include <immintrin.h>

#include <cstddef>

#include "avx2/avx2_gemm.h"
#include "bits.h"
#include "kernel_families.h"

namespace mtlite {
namespace kernels {
namespace avx2 {
namespace {

// acc += (8 rows x 4 k of w) . (broadcast 4 activations a4)
inline __m256i Step(__m256i acc, __m256i w, __m256i w_abs, __m256i a4) {
  return MaddDot::Dot(acc, w_abs, _mm256_sign_epi8(a4, w));  // |w| * (a * sign(w))
}

// m == 1: one 8-row block over all of K, four independent accumulators over the k groups. The
// driver calls it block after block: the weights are read strictly sequentially (one stream
// for the prefetchers).
// Ahead: prefetch the contiguous stream ahead; Next: the block at nb (one further on in a
// gathered selection), line for line.
template <bool Ahead, bool Next = false>
inline __m256i GemvBlock(int kg, const int8_t* a, const int8_t* wb, const int8_t* nb = nullptr) {
  __m256i acc0 = _mm256_setzero_si256(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  int g = 0;
  for (; g + 4 <= kg; g += 4) {
    if (Ahead) PrefetchAhead(wb + g * 32), PrefetchAhead(wb + g * 32 + 64);
    if (Next) PrefetchLine(nb + g * 32), PrefetchLine(nb + g * 32 + 64);
    const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + g * 32));
    const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + g * 32 + 32));
    const __m256i w2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + g * 32 + 64));
    const __m256i w3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + g * 32 + 96));
    acc0 = Step(acc0, w0, _mm256_abs_epi8(w0), _mm256_set1_epi32(Load4(a + g * 4)));
    acc1 = Step(acc1, w1, _mm256_abs_epi8(w1), _mm256_set1_epi32(Load4(a + g * 4 + 4)));
    acc2 = Step(acc2, w2, _mm256_abs_epi8(w2), _mm256_set1_epi32(Load4(a + g * 4 + 8)));
    acc3 = Step(acc3, w3, _mm256_abs_epi8(w3), _mm256_set1_epi32(Load4(a + g * 4 + 12)));
  }
  for (; g < kg; ++g) {
    const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + g * 32));
    acc0 = Step(acc0, w0, _mm256_abs_epi8(w0), _mm256_set1_epi32(Load4(a + g * 4)));
  }
  return _mm256_add_epi32(_mm256_add_epi32(acc0, acc1), _mm256_add_epi32(acc2, acc3));
}

#if defined(__GNUC__) && defined(__x86_64__)
#define MTLITE_GEMM_ASM 1
// GCC inline assembly for the MR-row x 2-block tiles (MR = 1..4; MR = 4 is the decoder's
// beam-4 case and every full 4-row panel). From intrinsics GCC 12 spills 3-4 of the 8
// accumulators of the 4x2 tile to the stack inside the k loop (it issues all 8 vpsignb first,
// then all vpmaddubsw, ...). Here the registers are fixed and nothing spills:
//   ymm0-7   accumulators, ymm(2*row + block)    ymm8, ymm9    weights of blocks 0, 1
//   ymm10-11 |weights|                           ymm12         broadcast activations of a row
//   ymm13-14 temporaries (one per block)         ymm15         int16 ones
// Each row runs its two row-steps interleaved stage by stage (sign, sign, maddubs, maddubs,
// ...): measured on Zen3 this order issues best of those tried (one chain at a time, whole
// stages of 4 rows, xor/sub instead of vpsignb, 8x1 tiles). Same instructions, hence the same
// exactness argument, as Step(). AT&T operand order: "op src2, src1, dst".
//
// Row-steps of one row against both blocks:
// acc[2r] += madd(maddubs(|w0|, sign(a, w0)), 1), acc[2r+1] likewise with w1.
#define MTLITE_ROW2(ACC0, ACC1)                                              \
  "vpsignb %%ymm8, %%ymm12, %%ymm13\n\t"     /* t = a * sign(w)       */     \
  "vpsignb %%ymm9, %%ymm12, %%ymm14\n\t"                                     \
  "vpmaddubsw %%ymm13, %%ymm10, %%ymm13\n\t" /* |w| * t, pairs -> i16 */     \
  "vpmaddubsw %%ymm14, %%ymm11, %%ymm14\n\t"                                 \
  "vpmaddwd %%ymm15, %%ymm13, %%ymm13\n\t"   /* pairs -> i32          */     \
  "vpmaddwd %%ymm15, %%ymm14, %%ymm14\n\t"                                   \
  "vpaddd %%ymm13, %%ymm" #ACC0 ", %%ymm" #ACC0 "\n\t"                       \
  "vpaddd %%ymm14, %%ymm" #ACC1 ", %%ymm" #ACC1 "\n\t"
// One k group (4 k values) at byte offset WO in the two weight blocks and AO in the A rows,
// for 1, 2, 3 or 4 rows (row r of A at a + r * lda; lda3 = 3 * lda).
#define MTLITE_W2(WO)                                                        \
  "vmovdqu " #WO "(%[w]), %%ymm8\n\t"                                        \
  "vmovdqu " #WO "(%[w],%[bs],1), %%ymm9\n\t"                                \
  "vpabsb %%ymm8, %%ymm10\n\t"                                               \
  "vpabsb %%ymm9, %%ymm11\n\t"
#define MTLITE_G1(WO, AO) MTLITE_W2(WO)                                      \
  "vpbroadcastd " #AO "(%[a]), %%ymm12\n\t" MTLITE_ROW2(0, 1)
#define MTLITE_G2(WO, AO) MTLITE_G1(WO, AO)                                  \
  "vpbroadcastd " #AO "(%[a],%[lda],1), %%ymm12\n\t" MTLITE_ROW2(2, 3)
#define MTLITE_G3(WO, AO) MTLITE_G2(WO, AO)                                  \
  "vpbroadcastd " #AO "(%[a],%[lda],2), %%ymm12\n\t" MTLITE_ROW2(4, 5)
#define MTLITE_G4(WO, AO) MTLITE_G3(WO, AO)                                  \
  "vpbroadcastd " #AO "(%[a],%[lda3],1), %%ymm12\n\t" MTLITE_ROW2(6, 7)
// The whole tile: zero the accumulators, two k groups per iteration (plus two prefetches, which
// never fault; with pf = 0 they touch lines already in L1), an odd last group, then store
// ymm0-7 to acc[0..7] (those of absent rows stay zero and are not used).
#define MTLITE_TILE_ASM(G)                                                   \
  asm volatile(                                                              \
      "vpxor %%xmm0, %%xmm0, %%xmm0\n\t"                                     \
      "vpxor %%xmm1, %%xmm1, %%xmm1\n\t"                                     \
      "vpxor %%xmm2, %%xmm2, %%xmm2\n\t"                                     \
      "vpxor %%xmm3, %%xmm3, %%xmm3\n\t"                                     \
      "vpxor %%xmm4, %%xmm4, %%xmm4\n\t"                                     \
      "vpxor %%xmm5, %%xmm5, %%xmm5\n\t"                                     \
      "vpxor %%xmm6, %%xmm6, %%xmm6\n\t"                                     \
      "vpxor %%xmm7, %%xmm7, %%xmm7\n\t"                                     \
      "vpcmpeqw %%ymm15, %%ymm15, %%ymm15\n\t"                               \
      "vpsrlw $15, %%ymm15, %%ymm15\n\t" /* int16 ones */                    \
      "test %[n], %[n]\n\t"                                                  \
      "jz 2f\n\t"                                                            \
      ".p2align 5\n"                                                         \
      "1:\n\t"                                                               \
      "prefetcht0 (%[w],%[pf0],1)\n\t"                                      \
      "prefetcht0 (%[w],%[pf1],1)\n\t"                                      \
      G(0, 0) G(32, 4)                                                       \
      "add $64, %[w]\n\t"                                                    \
      "add $8, %[a]\n\t"                                                     \
      "dec %[n]\n\t"                                                         \
      "jnz 1b\n"                                                             \
      "2:\n\t"                                                               \
      "test %[odd], %[odd]\n\t"                                              \
      "jz 3f\n\t"                                                            \
      G(0, 0)                                                                \
      "3:\n\t"                                                               \
      "vmovdqu %%ymm0, 0(%[acc])\n\t"                                        \
      "vmovdqu %%ymm1, 32(%[acc])\n\t"                                       \
      "vmovdqu %%ymm2, 64(%[acc])\n\t"                                       \
      "vmovdqu %%ymm3, 96(%[acc])\n\t"                                       \
      "vmovdqu %%ymm4, 128(%[acc])\n\t"                                      \
      "vmovdqu %%ymm5, 160(%[acc])\n\t"                                      \
      "vmovdqu %%ymm6, 192(%[acc])\n\t"                                      \
      "vmovdqu %%ymm7, 224(%[acc])\n\t"                                      \
      : [w] "+r"(w), [a] "+r"(a), [n] "+r"(pairs)                            \
      : [odd] "r"(odd), [bs] "r"(bs), [lda] "r"(ldas), [lda3] "r"(lda3),     \
        [acc] "r"(acc), [pf0] "r"(pf0), [pf1] "r"(pf1)                       \
      : "cc", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",      \
        "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13",   \
        "xmm14", "xmm15")

// acc[2 * row + block] = exact int32 dot products of MR rows of A with 2 blocks (kg groups):
// block 0 at w, block 1 at w + bs. pf0, pf1: byte offsets from w of the lines prefetched, one
// per block and iteration (0, 0: lines of this tile, already in L1; else the next tile's two
// blocks, see GemmK::Prefetch for when).
template <int MR>
inline void KernelX2Asm(int kg, const int8_t* a, int lda, const int8_t* w, ptrdiff_t bs, ptrdiff_t pf0,
                        ptrdiff_t pf1, __m256i acc[8]) {
  size_t pairs = size_t(kg) / 2;
  const size_t odd = size_t(kg) & 1, ldas = size_t(lda), lda3 = 3 * size_t(lda);
  if constexpr (MR == 4) {
    MTLITE_TILE_ASM(MTLITE_G4);
  } else if constexpr (MR == 3) {
    MTLITE_TILE_ASM(MTLITE_G3);
  } else if constexpr (MR == 2) {
    MTLITE_TILE_ASM(MTLITE_G2);
  } else {
    static_assert(MR == 1, "1..4 rows");
    MTLITE_TILE_ASM(MTLITE_G1);
  }
}
#endif  // MTLITE_GEMM_ASM

struct GemmK : GemmCommon {
  static constexpr int kMR = 4, kNR = 2;
  // Chunks of blocks whose weights (<= 128 KiB) stay in L2 while all rows of A pass over them
  // in 4-row x 2-block tiles; within a chunk, each 4-row panel of C is written contiguously.
  static constexpr size_t kChunkBytes = size_t(128) << 10;
  static constexpr int kGemvNR = 1;
  // Every m >= 2 runs the tiles, no one-block stream: its arithmetic bounds this kernel, and the
  // 4 x 2 tile shares each activation broadcast between two blocks, without GCC's loop overhead.
  // m 2..4 went to a one-block stream tile (one sequential weight stream, before the tiles
  // prefetched: gemm_bench m 4 from DRAM 18 vs 15.5 GB/s on Zen3); since they prefetch, the
  // tiles measured faster on Zen5 both in cache (m 4, n 512..8001: 203-215 against 175-180
  // GOPS) and from DRAM (n 58101 k 512: 57 % of the read bandwidth against 51 %). In the
  // decoder (beam 4) the stream tile's compiled loop ran at a speed that depended on where the
  // linker put it: `mtlite translate`, demo, 64 sentences, 1.02-1.08 s with it, 0.92-0.93 s
  // with the tiles, e2e_bench (another binary) the same with both. The assembly tile's loop is
  // aligned (.p2align 5). m 5..8: the tiles as well.
  static constexpr size_t kStreamBytes = 0, kStreamRowsBytes = 0;
  static constexpr int kStreamMR = kMR;
  static constexpr size_t kStreamPanelsBytes = 0;
  // The first row panel of a chunk brings it from memory (the later ones find it in L2) and
  // prefetches the next tile's blocks (the driver asks only there) when the weights exceed
  // kTilePrefetchBytes (avx2/avx2_gemm.h).
  static bool Prefetch(int, int nb, size_t bs) { return size_t(nb) * bs >= kTilePrefetchBytes; }

  template <int MR, int NR>
  static void Tile(int kg, const int8_t* a, int lda, const int8_t* const* w, const int8_t* const* next,
                   const PanelState&, Acc (&acc)[MR][NR]) {
#if defined(MTLITE_GEMM_ASM)
    if constexpr (NR == 2) {
      __m256i r[8];
      KernelX2Asm<MR>(kg, a, lda, w[0], w[1] - w[0], next ? next[0] - w[0] : 0,
                      next ? next[1] - w[0] : 0, r);
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) acc[i][0] = r[2 * i], acc[i][1] = r[2 * i + 1];
      return;
    }
#endif
    TileSign<MaddDot, MR, NR>(kg, a, lda, w, acc);
  }
  template <int G>
  static void Gemv(int kg, const int8_t* a, const int8_t* const* w, const int8_t* const* next, bool,
                   Acc (&acc)[G]) {
    static_assert(G == 1, "one block at a time");
    // contiguous blocks: the stream ahead; a gathered selection: a block further on
    acc[0] = next ? GemvBlock<false, true>(kg, a, w[0], next[0]) : GemvBlock<true>(kg, a, w[0]);
  }
};

}  // namespace
}  // namespace avx2

template <>
void AddGemmKernels<IsaAvx2>(KernelTable& t) {
  generic::SetGemmEntries<avx2::GemmK>(t);
}

}  // namespace kernels
}  // namespace mtlite

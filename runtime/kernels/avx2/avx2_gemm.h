// What the x86 int8 GEMM micro-kernels (avx2/, avxvnni/, avx512/) share for the tile driver
// (generic/gemm_driver.h): the 8 exact int32 sums of one (row, block) as one __m256i, and their
// epilogues with the AVX2 float operations. Internal linkage only.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "avx2/avx2_ops.h"
#include "bits.h"
#include "generic/activation.h"
#include "generic/gemm_driver.h"

namespace mtlite {
namespace kernels {
namespace avx2 {
namespace {

// The streaming kernels (the GEMV, and m 2..4 in the VNNI tables, over contiguous weights, each
// byte read once per call: from DRAM or L3 on the larger models) prefetch the line kAheadBytes past
// the one they read, one prefetch per 64 weight bytes spread over the loop. The hardware
// prefetchers alone keep too few lines in flight: on Zen5 a batch-1 step of OPUS-MT base (52 MB of
// weights) read them at 37-38 GB/s without, 48-57 GB/s with (every x86 table; a plain read cycled
// over a buffer that size, part of it kept by L3, gets ~72 GB/s, over 1 GiB ~41 with or without
// prefetching). 12 KiB ahead was the best of 8-24 over base, tiny32k and the shortlist.
// prefetcht0, not prefetchnta: on an Intel Xeon with AMX (2-vCPU KVM guest) every prefetchnta
// of this loop stalled (perf: 85 % of the GEMV's samples on the instruction after one) and
// batch-1 greedy ran 3.3-4.8x slower than with prefetcht0 or none (e2e_bench: demo 1,640 vs
// 5,430-5,570 tokens/s, tiny32k 549 vs 2,248, OPUS-MT base 93 vs 448-450). On Zen5, NTA had
// measured the same as T0 on base and 2-4 % faster on tiny32k, whose weights come from L3; T2
// slower than none.
// Inline assembly, not _mm_prefetch: with the builtin, GCC 12 -O3 emitted no prefetch at all in the
// kernels below, whose prefetching and plain instantiations a run-time flag selects. A prefetch
// never faults, so reading ahead past the end of the weights is harmless.
constexpr ptrdiff_t kAheadBytes = 12 << 10;
inline void PrefetchAhead(const int8_t* p) {
  asm volatile("prefetcht0 %c1(%0)" : : "r"(p), "i"(kAheadBytes));
}
inline void PrefetchLine(const int8_t* p) { asm volatile("prefetcht0 (%0)" : : "r"(p)); }
// Tiles (m > 4; in the AVX2 table every m >= 2, in the AVX-VNNI one m 2..4 below 8 MiB as well) run
// over chunks of blocks that every row panel reads in turn: the first panel brings a chunk from
// memory, the others find it in L2. Over weights of at least kTilePrefetchBytes that first panel
// prefetches the next tile's blocks into L1/L2 (prefetcht0: the other panels re-read them) as it
// reads the current ones. Zen5, decoder step at batch 16: OPUS-MT base 6.7 -> 5.4-5.6 ms
// (avx512-vnni) and 13.8 -> 10.8 ms (avx2), tiny32k 1.0 -> 0.8 ms and 2.3 -> 2.0 ms, base beam 4 at
// batch 16 -6 %, demo unchanged (a 1 MiB threshold: base 5.8-5.9 ms; every panel prefetching had
// cost 3 % at m 16 on Zen3). The AVX-VNNI tiles gained most (base, Zen5 with that table forced:
// beam 4 2.5-2.9 -> 1.8 ms per step, 1.5-1.6 -> 0.8 ms with the shortlist, batch 16 9.7 -> 6.7 ms).
constexpr size_t kTilePrefetchBytes = size_t(256) << 10;
inline void PrefetchLineT0(const int8_t* p) { asm volatile("prefetcht0 (%0)" : : "r"(p)); }

struct GemmCommon : generic::NoPanelState {
  using Acc = __m256i;
  // SiLU / GELU are long dependency chains (exp, divide): run per 8 outputs inside the tile
  // loop they are latency-bound, so they run as a second pass over the rows just written (in
  // cache), where independent iterations overlap. Same operations, same results.
  static constexpr bool kActSecondPass = true;
  static void Epilogue(const Acc& acc, float as, const float* ws, const float* bias, const float* res,
                       float* out, int count, Act act) {
    generic::Epilogue8<F8>(acc, as, ws, bias, res, out, count, act);
  }
  static void StoreAcc(const Acc& acc, int32_t* out, int count) { generic::StoreAcc8<F8>(acc, out, count); }
  static void Activation(float* x, int n, Act act) { generic::Activation<F8>(x, n, act); }
};

// acc += the 4-byte dot products of u (unsigned) and s (signed) per int32 lane, with AVX2:
// vpmaddubsw (pairs to int16; exact here: |u| <= 128, |s| <= 127) and vpmaddwd with ones.
struct MaddDot {
  static __m256i Dot(__m256i acc, __m256i u, __m256i s) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
  }
};

// MR rows x NR blocks of 8 output rows, full K, with the sign trick: u = |w| (0..128 as u8) and
// s = a * sign(w) (vpsignb; |a| <= 127, no overflow), so u * s = a * w. Dot::Dot(acc, u, s) is
// MaddDot for AVX2 or vpdpbusd (avxvnni/vnni_ymm.h). MR * NR accumulators + 2 * NR weight
// registers + a broadcast fit in the 16 ymm registers for (4, 2).
// Pf: prefetch the next tile's blocks pf[j] (for w[j]) line for line into L1, as the AVX2
// assembly tile does (the tile driver's Prefetch).
template <class Dot, int MR, int NR, bool Pf = false>
inline void TileSign(int kg, const int8_t* a, int lda, const int8_t* const* w, __m256i (&acc)[MR][NR],
                     const int8_t* const* pf = nullptr) {
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_setzero_si256();
  for (int g = 0; g < kg; ++g) {
    if (Pf && (g & 1) == 0)
#pragma GCC unroll 8
      for (int j = 0; j < NR; ++j) PrefetchLineT0(pf[j] + size_t(g) * 32);
    __m256i wv[NR], wa[NR];
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) {
      wv[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[j] + size_t(g) * 32));
      wa[j] = _mm256_abs_epi8(wv[j]);
    }
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m256i av = _mm256_set1_epi32(Load4(a + size_t(i) * lda + size_t(g) * 4));
#pragma GCC unroll 8
      for (int j = 0; j < NR; ++j) acc[i][j] = Dot::Dot(acc[i][j], wa[j], _mm256_sign_epi8(av, wv[j]));
    }
  }
}

}  // namespace
}  // namespace avx2
}  // namespace kernels
}  // namespace mtlite

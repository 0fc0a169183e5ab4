// int8 GEMM / GEMV on the BlockedN8K4 layout with AVX-512 VNNI (vpdpbusd on zmm): the
// micro-kernel of the shared tile driver (generic/gemm_driver.h). The weights are read in place
// (no repacking): one zmm holds two consecutive 32-byte groups of one block (8 rows x 8 k), so a
// block streams as whole 64-byte lines.
//
// Exactness. vpdpbusd multiplies unsigned by signed bytes and adds each 4 products to an int32
// lane without saturation (wrapping). Every step below is exact in int32 arithmetic modulo 2^32,
// so the result equals the reference's exact int32 sum whenever that sum is representable
// (kernels.h contract). Weights may be any int8, -128 included; |a| <= 127.
//
// Tiles (m >= 2): the weights are the unsigned operand, u = w XOR 0x80 = w + 128, and the
// activations the signed one, so sum_k u a - 128 sum_k a = sum_k w a, where 128 sum_k a is one
// number per row of A (PanelPrepare, once per row panel: no per-block correction, no column
// sums in the model file). A weight register (groups 2p | 2p+1 of a block, rows 0-7 each) is
// permuted to row-major pairs (lane 2r = row r over group 2p, lane 2r+1 = row r over 2p+1), so
// the activations of both groups are one 8-byte broadcast (vpbroadcastq: a load, no shuffle);
// adjacent lanes are added at the end. Per 64 weight bytes: one load, one vpermd and one vpxord
// shared by the rows, one vpdpbusd per row.
//   TileZmm: up to 4 rows x 4 blocks (16 accumulators + 4 weights + 4 activations + 2
//     constants: no spills). Measured in cache on Zen5 (gemm_bench hot, m 8..64, k 512 / 2048):
//     700-850 GOPS with vpdpbusd as inline assembly (Dp), 580-690 with the intrinsic (GCC 12
//     copied each accumulator once per iteration), 290-390 in the earlier form (activations as
//     a + 128, a correction vpdpbusd per block, a vpermd per row; 4 x 3 tiles).
//   StreamTileZmm: up to 4 rows x 1 block, two accumulator chains per row. Over weights read
//     once (m <= 4: greedy batches, beam search at batch 1) blocks go one at a time: one
//     sequential weight stream, which DRAM serves far better than the several streams of a
//     multi-block tile (gemm_bench m 4 cold: ~20 GB/s against 12-15 for the 4 x 3 tile), and in
//     cache it is faster than the tiles as well (m 4 hot: 430-530 GOPS), so m 2..4 always take it.
//     It takes up to 8 rows (16 accumulators): m 5..16 over weights of at least
//     kStreamPanelsBytes run as one or two 8-row panels block by block (see kStreamPanelsBytes).
// Prefetching (avx2/avx2_gemm.h, PrefetchAhead): over contiguous weights the streaming kernels
// read 12 KiB ahead; over a gathered selection (the shortlist) the GEMV and the stream tile
// prefetch a selected block a few slots on, line for line, as they read the current one
// (generic/gemm_driver.h, GatheredBlocks).
// m == 1 (GEMV): activations as u = a + 128 and a correction vpdpbusd of the weights with bytes
// 0x80 (128 sum_k w per row, from the same weight registers): GemvZmm, one block at a time
// (lanes 0-7 = rows over the even groups, 8-15 over the odd ones; in cache it beats the
// 256-bit GEMV by ~30 %), or over large weights (kStreamBytes: from DRAM) the 256-bit GEMV of
// avxvnni/vnni_ymm.h (EVEX encoding), which keeps ~95 % of the streaming read bandwidth there
// (the zmm one ~85 %).
//
// Included by gemm_avx512.cc (the "avx512-vnni" table) and amx/gemm_amx.cc (whose K derives from
// GemmK: AMX tiles for m >= its threshold, these kernels below it). Internal linkage only.
#pragma once

#include "avx512/avx512_ops.h"  // first: it sets diagnostics for <immintrin.h>

#include <immintrin.h>

#include <cstddef>
#include <cstring>

#include "avx2/avx2_gemm.h"
#include "avxvnni/vnni_ymm.h"
#include "bits.h"
#include "kernel_families.h"

namespace mtlite {
namespace kernels {
namespace avx512 {
namespace {

// acc + u . s (vpdpbusd, zmm or EVEX ymm) in place: with the intrinsic, GCC 12 copied every
// accumulator of the loops below once per iteration (a vmovdqa per vpdpbusd).
template <class Vec>
inline Vec Dp(Vec acc, Vec u, Vec s) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u), "v"(s));
  return acc;
}

// dword 0 to lanes 0-7, dword 1 to lanes 8-15
inline __m512i PairIndex() { return _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0); }
inline __m512i Bytes80() { return _mm512_set1_epi32(int(0x80808080u)); }

// Groups g, g+1 of an activation row (8 bytes at p) as u8 = a + 128: lanes 0-7 group g, 8-15 g+1.
inline __m512i ActPair(const int8_t* p, __m512i idx, __m512i x80) {
  const __m128i v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return _mm512_xor_si512(_mm512_permutexvar_epi32(idx, _mm512_zextsi128_si512(v)), x80);
}
// The last group of an odd count (4 bytes at p: nothing is read past it); lanes 8-15 meet the
// zero upper half of the weight register, so whatever they hold adds nothing.
inline __m512i ActLast(const int8_t* p, __m512i idx, __m512i x80) {
  const __m128i v = _mm_cvtsi32_si128(Load4(p));
  return _mm512_xor_si512(_mm512_permutexvar_epi32(idx, _mm512_zextsi128_si512(v)), x80);
}
inline __m512i WeightPair(const int8_t* p) { return _mm512_loadu_si512(p); }
inline __m512i WeightLast(const int8_t* p) {
  return _mm512_zextsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
// lanes 0-7 + lanes 8-15
inline __m256i Fold(__m512i v) {
  return _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
}

// m == 1: one block, two accumulator chains over the k pairs (and two correction chains).
// Ahead: prefetch the contiguous stream ahead; nb (gathered blocks): a block further on, line for line.
template <bool Ahead, bool Next>
inline __m256i GemvZmm(int kg, const int8_t* a, const int8_t* w, const int8_t* nb = nullptr) {
  const __m512i idx = PairIndex(), x80 = Bytes80();
  __m512i s0 = _mm512_setzero_si512(), s1 = s0, c0 = s0, c1 = s0;
  const int pairs = kg / 2;
  int p = 0;
  for (; p + 2 <= pairs; p += 2) {
    if (Ahead) avx2::PrefetchAhead(w + size_t(p) * 64), avx2::PrefetchAhead(w + size_t(p) * 64 + 64);
    if (Next) avx2::PrefetchLine(nb + size_t(p) * 64), avx2::PrefetchLine(nb + size_t(p) * 64 + 64);
    const __m512i a0 = ActPair(a + size_t(p) * 8, idx, x80);
    const __m512i a1 = ActPair(a + size_t(p) * 8 + 8, idx, x80);
    const __m512i w0 = WeightPair(w + size_t(p) * 64), w1 = WeightPair(w + size_t(p) * 64 + 64);
    s0 = Dp(s0, a0, w0);
    s1 = Dp(s1, a1, w1);
    c0 = Dp(c0, x80, w0);
    c1 = Dp(c1, x80, w1);
  }
  if (p < pairs) {
    const __m512i w0 = WeightPair(w + size_t(p) * 64);
    s0 = Dp(s0, ActPair(a + size_t(p) * 8, idx, x80), w0);
    c0 = Dp(c0, x80, w0);
  }
  if (kg & 1) {
    const __m512i w0 = WeightLast(w + size_t(pairs) * 64);
    s1 = Dp(s1, ActLast(a + size_t(pairs) * 8, idx, x80), w0);
    c1 = Dp(c1, x80, w0);
  }
  return _mm256_sub_epi32(Fold(_mm512_add_epi32(s0, s1)), Fold(_mm512_add_epi32(c0, c1)));
}

// ---- tiles for m >= 2 (see the top of the file) ----------------------------------------------
inline __m512i RowPairIndex() { return _mm512_set_epi32(15, 7, 14, 6, 13, 5, 12, 4, 11, 3, 10, 2, 9, 1, 8, 0); }

// The 8 activation bytes of groups 2p, 2p+1 in every qword.
inline __m512i ActBroadcast(const int8_t* p) {
  int64_t v;
  std::memcpy(&v, p, 8);
  return _mm512_set1_epi64(v);
}
// The last group of an odd count: its 4 bytes, and zeros for the missing group (nothing is read
// past the row; the odd lanes of the XORed weights hold 0x80 and meet these zeros).
inline __m512i ActLastBroadcast(const int8_t* p) { return _mm512_set1_epi64(int64_t(uint32_t(Load4(p)))); }
// Weights of pair p at w (or the last group alone): row-major pairs, as u = w + 128.
inline __m512i RowPairWeights(const int8_t* w, bool last, __m512i idx, __m512i x80) {
  return _mm512_xor_si512(_mm512_permutexvar_epi32(idx, last ? WeightLast(w) : WeightPair(w)), x80);
}
// lane 2r + lane 2r+1 (mod 2^32) -> dword r
inline __m256i FoldPairs(__m512i v) { return _mm512_cvtepi64_epi32(_mm512_add_epi32(v, _mm512_srli_epi64(v, 32))); }

// 128 * sum_k a of each row (exact: |a| <= 127, k < 2^23): N rows, 4 for the tiles' panels, 8 for
// the stream tile's.
template <int N>
struct RowTermsOf {
  int32_t t[N];
};
using RowTerms = RowTermsOf<4>;
using StreamTerms = RowTermsOf<8>;
template <int N>
inline RowTermsOf<N> RowSumTerms(int mr, int kg, const int8_t* a, int lda) {
  RowTermsOf<N> r{};
  const size_t kp = size_t(kg) * 4;
  const __m512i x80 = Bytes80();
  for (int i = 0; i < mr && i < N; ++i) {
    const int8_t* row = a + size_t(i) * lda;
    __m512i s = _mm512_setzero_si512();
    size_t k = 0;
    for (; k + 64 <= kp; k += 64) s = _mm512_dpbusd_epi32(s, x80, _mm512_loadu_si512(row + k));
    if (k < kp) s = _mm512_dpbusd_epi32(s, x80, _mm512_maskz_loadu_epi8(~0ull >> (64 - (kp - k)), row + k));
    r.t[i] = _mm512_reduce_add_epi32(s);
  }
  return r;
}

// Always inlined, as TileZmm: with the 8-row stream tiles GCC 12 stopped inlining the smaller
// tiles into the driver, and left the rest a worse register allocation (m 64 hot 800 -> 670 GOPS).
template <int MR, bool Ahead, bool Next>
__attribute__((always_inline)) inline void StreamTileZmm(int kg, const int8_t* a, int lda, const int8_t* w,
                                                         const StreamTerms& terms, __m256i (&acc)[MR],
                                                         const int8_t* nb = nullptr) {
  const __m512i idx = RowPairIndex(), x80 = Bytes80();
  __m512i s0[MR], s1[MR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) s0[i] = s1[i] = _mm512_setzero_si512();
  const int pairs = kg / 2;
  int p = 0;
  for (; p + 2 <= pairs; p += 2) {
    if (Ahead) avx2::PrefetchAhead(w + size_t(p) * 64), avx2::PrefetchAhead(w + size_t(p) * 64 + 64);
    if (Next) avx2::PrefetchLine(nb + size_t(p) * 64), avx2::PrefetchLine(nb + size_t(p) * 64 + 64);
    const __m512i w0 = RowPairWeights(w + size_t(p) * 64, false, idx, x80);
    const __m512i w1 = RowPairWeights(w + size_t(p) * 64 + 64, false, idx, x80);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const int8_t* ap = a + size_t(i) * lda + size_t(p) * 8;
      s0[i] = Dp(s0[i], w0, ActBroadcast(ap));
      s1[i] = Dp(s1[i], w1, ActBroadcast(ap + 8));
    }
  }
  if (p < pairs) {
    const __m512i w0 = RowPairWeights(w + size_t(p) * 64, false, idx, x80);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i)
      s0[i] = Dp(s0[i], w0, ActBroadcast(a + size_t(i) * lda + size_t(p) * 8));
  }
  if (kg & 1) {
    const __m512i w0 = RowPairWeights(w + size_t(pairs) * 64, true, idx, x80);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) s1[i] = Dp(s1[i], w0, ActLastBroadcast(a + size_t(i) * lda + size_t(pairs) * 8));
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
    acc[i] = _mm256_sub_epi32(FoldPairs(_mm512_add_epi32(s0[i], s1[i])), _mm256_set1_epi32(terms.t[i]));
}

// MR rows x NR blocks, full K, in the same form as StreamTileZmm: one permute + XOR per weight
// register shared by the MR rows, one broadcast per row shared by the NR blocks; MR * NR
// accumulator chains. Pf: prefetch the next tile's blocks (next[j] for w[j]) line for line.
template <int MR, int NR, bool Pf = false>
__attribute__((always_inline)) inline void TileZmm(int kg, const int8_t* a, int lda, const int8_t* const* w,
                                                   const RowTerms& terms,
                    __m256i (&acc)[MR][NR], const int8_t* const* next = nullptr) {
  const __m512i idx = RowPairIndex(), x80 = Bytes80();
  __m512i s[MR][NR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) s[i][j] = _mm512_setzero_si512();
  // one step over k pair p, or over the last group alone (odd kg)
  auto step = [&](int p, bool last) __attribute__((always_inline)) {
    __m512i wv[NR];
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) {
      if (Pf) avx2::PrefetchLineT0(next[j] + size_t(p) * 64);
      wv[j] = RowPairWeights(w[j] + size_t(p) * 64, last, idx, x80);
    }
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const int8_t* ap = a + size_t(i) * lda + size_t(p) * 8;
      const __m512i av = last ? ActLastBroadcast(ap) : ActBroadcast(ap);
#pragma GCC unroll 8
      for (int j = 0; j < NR; ++j) s[i][j] = Dp(s[i][j], wv[j], av);
    }
  };
  const int pairs = kg / 2;
  for (int p = 0; p < pairs; ++p) step(p, false);
  if (kg & 1) step(pairs, true);
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    const __m256i t = _mm256_set1_epi32(terms.t[i]);
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_sub_epi32(FoldPairs(s[i][j]), t);
  }
}

struct EvexDot {
  static __m256i Dot(__m256i acc, __m256i u, __m256i s) { return Dp(acc, u, s); }
};
using Ymm = VnniYmm<EvexDot>;

struct GemmK : avx2::GemmCommon {
  static constexpr int kMR = 4, kNR = 4, kGemvNR = 1;
  static constexpr int kStreamMR = 8;  // StreamTileZmm's 16 accumulators for 8 rows still fit
  // the second pass of SiLU / GELU (kActSecondPass) over 16 lanes: the same values as 8
  static void Activation(float* x, int n, Act act) { generic::Activation<F16>(x, n, act); }
  static constexpr size_t kChunkBytes = size_t(256) << 10;
  static constexpr size_t kStreamBytes = size_t(8) << 20;
  static constexpr size_t kStreamRowsBytes = 1;  // every size (see the top of the file)
  // m 5..16 over weights of 256 KiB and more (the generic driver's StreamPanels, one or two 8-row
  // panels): in a model run such weights come from L3 or DRAM, where the stream beats the tiles
  // (gemm_bench n 2048 k 512 from DRAM: m 8 321-347 -> 515-560 GOPS, m 16 443-495 -> 610-625),
  // hot in L2 the tiles stay ~10 % faster at m 16. OPUS-MT base at batch 16: +14-30 % tokens/s
  // on 1 thread, +18 % on 2 (8 rows per thread), the encoder at batch 1 (15 source rows) -12 %;
  // tiny32k even; the demo model, whose weights stay in L3, -3 % at batch 16.
  static constexpr size_t kStreamPanelsBytes = size_t(256) << 10;
  // the first row panel of a chunk prefetches the next tile's blocks (avx2/avx2_gemm.h)
  static bool Prefetch(int, int nb, size_t bs) { return size_t(nb) * bs >= avx2::kTilePrefetchBytes; }
  using PanelState = RowTerms;
  static RowTerms PanelPrepare(int mr, int kg, const int8_t* a, int lda) { return RowSumTerms<4>(mr, kg, a, lda); }
  using StreamState = StreamTerms;
  static StreamTerms StreamPrepare(int mr, int kg, const int8_t* a, int lda) {
    return RowSumTerms<8>(mr, kg, a, lda);
  }
  template <int MR, int NR>
  static void Tile(int kg, const int8_t* a, int lda, const int8_t* const* w, const int8_t* const* next,
                   const RowTerms& terms, Acc (&acc)[MR][NR]) {
    if (next)
      TileZmm<MR, NR, true>(kg, a, lda, w, terms, acc, next);
    else
      TileZmm<MR, NR, false>(kg, a, lda, w, terms, acc);
  }
  template <int MR>
  static void StreamTile(int kg, const int8_t* a, int lda, const int8_t* w, const int8_t* next,
                         const StreamTerms& terms, Acc (&acc)[MR]) {
    if (next)  // a gathered selection: prefetch a block further on
      StreamTileZmm<MR, false, true>(kg, a, lda, w, terms, acc, next);
    else  // contiguous blocks: the stream ahead
      StreamTileZmm<MR, true, false>(kg, a, lda, w, terms, acc);
  }
  template <int G>
  static void Gemv(int kg, const int8_t* a, const int8_t* const* w, const int8_t* const* next, bool stream,
                   Acc (&acc)[G]) {
    static_assert(G == 1, "one block at a time");
    if (next)  // a gathered selection: prefetch a block further on
      acc[0] = GemvZmm<false, true>(kg, a, w[0], next[0]);
    else  // contiguous blocks: the stream ahead
      acc[0] = stream ? Ymm::GemvBlock<true>(kg, a, w[0]) : GemvZmm<true, false>(kg, a, w[0]);
  }
};

}  // namespace
}  // namespace avx512
}  // namespace kernels
}  // namespace mtlite

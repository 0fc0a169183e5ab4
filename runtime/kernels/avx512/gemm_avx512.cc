// int8 GEMM / GEMV on the BlockedN8K4 layout with AVX-512 VNNI (vpdpbusd on zmm): the
// micro-kernel of the shared tile driver (generic/gemm_driver.h). The weights are read in place
// (no repacking): one zmm holds two consecutive 32-byte groups of one block (8 rows x 8 k), so a
// block streams as whole 64-byte lines.
//
// Exactness. vpdpbusd multiplies unsigned by signed bytes and adds each 4 products to an int32
// lane without saturation (wrapping). The activations are signed, so they enter as
// u = a + 128 (a XOR 0x80, in 1..255) and the kernel subtracts 128 * sum_k w per output row,
// itself a vpdpbusd of the weights with bytes 0x80 (the "correction" accumulators, computed
// alongside from the same weight registers: no column sums in the model file):
//   sum_k u w - sum_k 128 w = sum_k a w.
// Every step is exact in int32 arithmetic modulo 2^32, so the result equals the reference's
// exact int32 sum whenever that sum is representable (kernels.h contract). Weights may be any
// int8, -128 included.
//
// Lanes: a zmm accumulator holds lanes 0-7 = rows 0-7 over the even groups, lanes 8-15 = rows
// 0-7 over the odd groups (the activation register holds group g in lanes 0-7 and g+1 in 8-15,
// one vpermd of an 8-byte load); the two halves are added at the end.
// Tiles: up to 4 rows x 3 blocks (12 accumulators + 3 corrections + 3 weights + 4 activations +
// 2 constants, no spills; measured in cache on Zen5, gemm_bench m 4..64, n 2048, k 512: ~370
// GOPS steadily, where 4 x 4 tiles spill (~315), 4 x 2 get ~350 and 5 x 3 / 6 x 3 (a few
// spills) vary between 270 and 420); m == 1: GemvZmm, one block at a time (in cache it beats
// the 256-bit GEMV by ~30 %).
// Over large weights (streamed from DRAM: kStreamBytes) blocks go one at a time (one sequential
// stream): m <= 4 rows x 1 block zmm tiles, and for m = 1 the 256-bit GEMV of
// avxvnni/vnni_ymm.h (EVEX encoding). Measured on Zen5 with weights from DRAM (gemm_bench
// stream/): the m = 1 zmm GEMV reaches ~85 % of the streaming read bandwidth, the ymm one ~95 %;
// at m = 4 the 1-block zmm tile ~80 %, 4-block tiles or 1-block ymm tiles ~55-75 %.
#include "avx512/avx512_ops.h"  // first: it sets diagnostics for <immintrin.h>

#include <immintrin.h>

#include <cstddef>

#include "avx2/avx2_gemm.h"
#include "avxvnni/vnni_ymm.h"
#include "bits.h"
#include "kernel_families.h"

namespace mtlite {
namespace kernels {
namespace avx512 {
namespace {

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

// MR rows x NR blocks, full K.
template <int MR, int NR>
inline void TileZmm(int kg, const int8_t* a, int lda, const int8_t* const* w, __m256i (&acc)[MR][NR]) {
  const __m512i idx = PairIndex(), x80 = Bytes80();
  __m512i s[MR][NR], corr[NR];
#pragma GCC unroll 8
  for (int j = 0; j < NR; ++j) {
    corr[j] = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) s[i][j] = _mm512_setzero_si512();
  }
  // one step over k pair p, or over the last group alone (odd kg)
  auto step = [&](int p, bool last) __attribute__((always_inline)) {
    __m512i wv[NR];
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) {
      wv[j] = last ? WeightLast(w[j] + size_t(p) * 64) : WeightPair(w[j] + size_t(p) * 64);
      corr[j] = _mm512_dpbusd_epi32(corr[j], x80, wv[j]);
    }
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const int8_t* ap = a + size_t(i) * lda + size_t(p) * 8;
      const __m512i av = last ? ActLast(ap, idx, x80) : ActPair(ap, idx, x80);
#pragma GCC unroll 8
      for (int j = 0; j < NR; ++j) s[i][j] = _mm512_dpbusd_epi32(s[i][j], av, wv[j]);
    }
  };
  const int pairs = kg / 2;
  for (int p = 0; p < pairs; ++p) step(p, false);
  if (kg & 1) step(pairs, true);
#pragma GCC unroll 8
  for (int j = 0; j < NR; ++j) {
    const __m256i c = Fold(corr[j]);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) acc[i][j] = _mm256_sub_epi32(Fold(s[i][j]), c);
  }
}

// m == 1: one block, two accumulator chains over the k pairs (and two correction chains).
inline __m256i GemvZmm(int kg, const int8_t* a, const int8_t* w) {
  const __m512i idx = PairIndex(), x80 = Bytes80();
  __m512i s0 = _mm512_setzero_si512(), s1 = s0, c0 = s0, c1 = s0;
  const int pairs = kg / 2;
  int p = 0;
  for (; p + 2 <= pairs; p += 2) {
    const __m512i a0 = ActPair(a + size_t(p) * 8, idx, x80);
    const __m512i a1 = ActPair(a + size_t(p) * 8 + 8, idx, x80);
    const __m512i w0 = WeightPair(w + size_t(p) * 64), w1 = WeightPair(w + size_t(p) * 64 + 64);
    s0 = _mm512_dpbusd_epi32(s0, a0, w0);
    s1 = _mm512_dpbusd_epi32(s1, a1, w1);
    c0 = _mm512_dpbusd_epi32(c0, x80, w0);
    c1 = _mm512_dpbusd_epi32(c1, x80, w1);
  }
  if (p < pairs) {
    const __m512i w0 = WeightPair(w + size_t(p) * 64);
    s0 = _mm512_dpbusd_epi32(s0, ActPair(a + size_t(p) * 8, idx, x80), w0);
    c0 = _mm512_dpbusd_epi32(c0, x80, w0);
  }
  if (kg & 1) {
    const __m512i w0 = WeightLast(w + size_t(pairs) * 64);
    s1 = _mm512_dpbusd_epi32(s1, ActLast(a + size_t(pairs) * 8, idx, x80), w0);
    c1 = _mm512_dpbusd_epi32(c1, x80, w0);
  }
  return _mm256_sub_epi32(Fold(_mm512_add_epi32(s0, s1)), Fold(_mm512_add_epi32(c0, c1)));
}

struct EvexDot {
  static __m256i Dot(__m256i acc, __m256i u, __m256i s) { return _mm256_dpbusd_epi32(acc, u, s); }
};
using Ymm = VnniYmm<EvexDot>;

struct GemmK : avx2::GemmCommon {
  static constexpr int kMR = 4, kNR = 3, kGemvNR = 1;
  static constexpr size_t kChunkBytes = size_t(256) << 10;
  static constexpr size_t kStreamBytes = size_t(8) << 20;
  static bool Prefetch(int, int, size_t) { return false; }
  template <int MR, int NR>
  static void Tile(int kg, const int8_t* a, int lda, const int8_t* const* w, const int8_t* const*,
                   Acc (&acc)[MR][NR]) {
    TileZmm<MR, NR>(kg, a, lda, w, acc);
  }
  template <int MR>
  static void StreamTile(int kg, const int8_t* a, int lda, const int8_t* w, Acc (&acc)[MR]) {
    Acc t[MR][1];
    TileZmm<MR, 1>(kg, a, lda, &w, t);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) acc[i] = t[i][0];
  }
  template <int G>
  static void Gemv(int kg, const int8_t* a, const int8_t* const* w, const int8_t* const*, bool stream,
                   Acc (&acc)[G]) {
    static_assert(G == 1, "one block at a time");
    acc[0] = stream ? Ymm::GemvBlock(kg, a, w[0]) : GemvZmm(kg, a, w[0]);
  }
};

}  // namespace
}  // namespace avx512

template <>
void AddGemmKernels<IsaAvx512>(KernelTable& t) {
  generic::SetGemmEntries<avx512::GemmK>(t);
}

}  // namespace kernels
}  // namespace mtlite

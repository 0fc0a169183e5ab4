// int8 GEMM micro-kernels on 256-bit vpdpbusd, shared by avxvnni/ (VEX encoding, AVX-VNNI) and
// avx512/ (EVEX encoding, AVX-512 VNNI + VL): Dot::Dot(acc, u, s) is the instruction of the
// including translation unit. One ymm is one 32-byte group (8 rows x 4 k) of a block; a broadcast
// 4-byte activation group lines up with it.
//
// Exactness: vpdpbusd multiplies unsigned by signed bytes and adds each 4 products to an int32
// lane without saturation (wrapping). The activations are signed, so they enter as
// u = a + 128 (a XOR 0x80, in 1..255), and 128 * sum_k w, a vpdpbusd of the weights with bytes
// 0x80 computed alongside from the same weight registers (no column sums in the model file), is
// subtracted per output row: sum_k u w - sum_k 128 w = sum_k a w, exact in int32 modulo 2^32,
// so equal to the reference's exact sum whenever that is representable (kernels.h contract).
// Weights may be any int8, -128 included.
// avx2::TileSign (avx2/avx2_gemm.h) with Dot = vpdpbusd is the other way to feed vpdpbusd
// signed bytes, as the AVX2 kernel does with vpmaddubsw: u = |w| (0..128 as u8) and
// s = a * sign(w) (vpsignb; |a| <= 127, so no overflow), u * s = a * w. It needs no correction
// but a vpsignb per (row, block) and a vpabsb per block: on Zen5 ~20 % faster in cache (fewer
// vpdpbusd), slower over weights from DRAM (more operations wait for each weight load).
// Internal linkage only.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "avx2/avx2_gemm.h"
#include "bits.h"

namespace mtlite {
namespace kernels {
namespace {


template <class Dot>
struct VnniYmm {
  static __m256i Bytes80() { return _mm256_set1_epi32(int(0x80808080u)); }
  // one activation group as u8 = a + 128, broadcast to the 8 rows
  static __m256i ActGroup(const int8_t* p, __m256i x80) {
    return _mm256_xor_si256(_mm256_set1_epi32(Load4(p)), x80);
  }
  static __m256i Weights(const int8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

  // MR rows x NR blocks, full K, offset trick: acc[i][j] = row i . block w[j].
  // Ahead (NR == 1, contiguous blocks): avx2::PrefetchAhead once per 64 weight bytes.
  template <int MR, int NR, bool Ahead = false, bool Next = false>
  static void Tile(int kg, const int8_t* a, int lda, const int8_t* const* w, __m256i (&acc)[MR][NR],
                   const int8_t* nb = nullptr) {
    static_assert(!(Ahead || Next) || NR == 1, "prefetching follows one weight stream");
    const __m256i x80 = Bytes80();
    __m256i corr[NR];
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) {
      corr[j] = _mm256_setzero_si256();
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) acc[i][j] = _mm256_setzero_si256();
    }
    for (int g = 0; g < kg; ++g) {
      if (Ahead && (g & 1) == 0) avx2::PrefetchAhead(w[0] + size_t(g) * 32);
      if (Next && (g & 1) == 0) avx2::PrefetchLine(nb + size_t(g) * 32);
      __m256i wv[NR];
#pragma GCC unroll 8
      for (int j = 0; j < NR; ++j) {
        wv[j] = Weights(w[j] + size_t(g) * 32);
        corr[j] = Dot::Dot(corr[j], x80, wv[j]);
      }
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
        const __m256i av = ActGroup(a + size_t(i) * lda + size_t(g) * 4, x80);
#pragma GCC unroll 8
        for (int j = 0; j < NR; ++j) acc[i][j] = Dot::Dot(acc[i][j], av, wv[j]);
      }
    }
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
      for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_sub_epi32(acc[i][j], corr[j]);
  }

  // m == 1, one block: four accumulator chains over the groups (and two for the correction).
  // The weights are read as one sequential stream, half a line per load: on Zen5 this streams
  // from DRAM at ~95 % of a plain read, where the 512-bit version (one line per load) gets ~85 %.
  // Ahead: prefetch the contiguous stream ahead; Next: the block at nb (one further on in a
  // gathered selection), line for line.
  template <bool Ahead, bool Next = false>
  static __m256i GemvBlock(int kg, const int8_t* a, const int8_t* wb, const int8_t* nb = nullptr) {
    const __m256i x80 = Bytes80();
    __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0, c0 = s0, c1 = s0;
    int g = 0;
    for (; g + 4 <= kg; g += 4) {
      const int8_t* wg = wb + size_t(g) * 32;
      if (Ahead) avx2::PrefetchAhead(wg), avx2::PrefetchAhead(wg + 64);
      if (Next) avx2::PrefetchLine(nb + size_t(g) * 32), avx2::PrefetchLine(nb + size_t(g) * 32 + 64);
      const __m256i w0 = Weights(wg), w1 = Weights(wg + 32), w2 = Weights(wg + 64), w3 = Weights(wg + 96);
      s0 = Dot::Dot(s0, ActGroup(a + size_t(g) * 4, x80), w0);
      s1 = Dot::Dot(s1, ActGroup(a + size_t(g) * 4 + 4, x80), w1);
      s2 = Dot::Dot(s2, ActGroup(a + size_t(g) * 4 + 8, x80), w2);
      s3 = Dot::Dot(s3, ActGroup(a + size_t(g) * 4 + 12, x80), w3);
      c0 = Dot::Dot(Dot::Dot(c0, x80, w0), x80, w1);
      c1 = Dot::Dot(Dot::Dot(c1, x80, w2), x80, w3);
    }
    for (; g < kg; ++g) {
      const __m256i w0 = Weights(wb + size_t(g) * 32);
      s0 = Dot::Dot(s0, ActGroup(a + size_t(g) * 4, x80), w0);
      c0 = Dot::Dot(c0, x80, w0);
    }
    const __m256i s = _mm256_add_epi32(_mm256_add_epi32(s0, s1), _mm256_add_epi32(s2, s3));
    return _mm256_sub_epi32(s, _mm256_add_epi32(c0, c1));
  }
};

}  // namespace
}  // namespace kernels
}  // namespace mtlite

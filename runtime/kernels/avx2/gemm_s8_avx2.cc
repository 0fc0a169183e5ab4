// int8 GEMM / GEMV on the BlockedN8K4 weight layout, AVX2 without VNNI.
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
// Dequantisation follows the contract exactly: y = float(acc) * (a_scale * w_scale), + bias,
// + residual, then the activation (same float operations as the reference, lane by lane).
#include "avx2/avx2_kernels.h"

#if defined(__AVX2__)
#include <immintrin.h>

#include <cstring>

#include "avx2/avx2_math.h"

namespace mtlite {
namespace kernels {
namespace avx2 {
namespace {

inline int32_t Load4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// acc += (8 rows x 4 k of w) . (broadcast 4 activations a4)
inline __m256i Step(__m256i acc, __m256i w, __m256i w_abs, __m256i a4, __m256i ones) {
  const __m256i s = _mm256_sign_epi8(a4, w);             // a * sign(w)
  const __m256i p = _mm256_maddubs_epi16(w_abs, s);      // |w| * a * sign(w), pairs -> int16
  return _mm256_add_epi32(acc, _mm256_madd_epi16(p, ones));  // pairs -> int32
}

// Writes the 8 accumulators of one (row, block) tile: float epilogue or raw int32.
struct FloatEpilogue {
  int n;
  const float* a_scales;
  const float* w_scales;
  const float* bias;
  const float* residual;
  int ldr;
  float* c;
  int ldc;
  Act act;

  inline void operator()(int row, int col, __m256i acc) const {
    const int count = n - col;
    __m256 y = _mm256_cvtepi32_ps(acc);
    const __m256 as = _mm256_set1_ps(a_scales[row]);
    float* out = c + size_t(row) * ldc + col;
    if (count >= 8) {
      y = _mm256_mul_ps(y, _mm256_mul_ps(as, _mm256_loadu_ps(w_scales + col)));
      if (bias) y = _mm256_add_ps(y, _mm256_loadu_ps(bias + col));
      if (residual) y = _mm256_add_ps(y, _mm256_loadu_ps(residual + size_t(row) * ldr + col));
      _mm256_storeu_ps(out, Activate(y, act));
    } else {
      const __m256i mask = TailMask(count);
      y = _mm256_mul_ps(y, _mm256_mul_ps(as, _mm256_maskload_ps(w_scales + col, mask)));
      if (bias) y = _mm256_add_ps(y, _mm256_maskload_ps(bias + col, mask));
      if (residual)
        y = _mm256_add_ps(y, _mm256_maskload_ps(residual + size_t(row) * ldr + col, mask));
      _mm256_maskstore_ps(out, mask, Activate(y, act));
    }
  }
};

struct AccEpilogue {
  int n;
  int32_t* acc;
  int ldacc;
  inline void operator()(int row, int col, __m256i v) const {
    int32_t* out = acc + size_t(row) * ldacc + col;
    if (n - col >= 8) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), v);
    } else {
      _mm256_maskstore_epi32(out, TailMask(n - col), v);
    }
  }
};

// m == 1: one 8-row block at a time over all of K, four independent accumulators over the
// k groups. The weights are read strictly sequentially (one stream for the prefetchers).
template <class Epi>
void Gemv(int n, int kg, const int8_t* a, const int8_t* w, const Epi& epi) {
  const __m256i ones = _mm256_set1_epi16(1);
  const size_t bs = size_t(kg) * 32;  // bytes per 8-row block
  const int nb = (n + 7) / 8;
  for (int b = 0; b < nb; ++b) {
    const int8_t* wb = w + size_t(b) * bs;
    __m256i acc0 = _mm256_setzero_si256(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    int g = 0;
    for (; g + 4 <= kg; g += 4) {
      const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + g * 32));
      const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + g * 32 + 32));
      const __m256i w2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + g * 32 + 64));
      const __m256i w3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + g * 32 + 96));
      acc0 = Step(acc0, w0, _mm256_abs_epi8(w0), _mm256_set1_epi32(Load4(a + g * 4)), ones);
      acc1 = Step(acc1, w1, _mm256_abs_epi8(w1), _mm256_set1_epi32(Load4(a + g * 4 + 4)), ones);
      acc2 = Step(acc2, w2, _mm256_abs_epi8(w2), _mm256_set1_epi32(Load4(a + g * 4 + 8)), ones);
      acc3 = Step(acc3, w3, _mm256_abs_epi8(w3), _mm256_set1_epi32(Load4(a + g * 4 + 12)), ones);
    }
    for (; g < kg; ++g) {
      const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb + g * 32));
      acc0 = Step(acc0, w0, _mm256_abs_epi8(w0), _mm256_set1_epi32(Load4(a + g * 4)), ones);
    }
    const __m256i acc = _mm256_add_epi32(_mm256_add_epi32(acc0, acc1), _mm256_add_epi32(acc2, acc3));
    epi(0, b * 8, acc);
  }
}

// MR rows of A x NR blocks of 8 output rows, full K. MR * NR accumulators + 2 * NR weight
// registers + broadcast + ones fit in the 16 ymm registers for (4, 2).
template <int MR, int NR, class Epi>
inline void Tile(int kg, const int8_t* a, int lda, const int8_t* w, size_t bs, int row0, int b0,
                 const Epi& epi) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i acc[MR][NR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_setzero_si256();
  for (int g = 0; g < kg; ++g) {
    __m256i wv[NR], wa[NR];
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) {
      wv[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + j * bs + size_t(g) * 32));
      wa[j] = _mm256_abs_epi8(wv[j]);
    }
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m256i a4 = _mm256_set1_epi32(Load4(a + size_t(i) * lda + g * 4));
#pragma GCC unroll 8
      for (int j = 0; j < NR; ++j) acc[i][j] = Step(acc[i][j], wv[j], wa[j], a4, ones);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) epi(row0 + i, (b0 + j) * 8, acc[i][j]);
}

template <int NR, class Epi>
inline void TileRows(int mr, int kg, const int8_t* a, int lda, const int8_t* w, size_t bs,
                     int row0, int b0, const Epi& epi) {
  switch (mr) {
    case 4: Tile<4, NR>(kg, a, lda, w, bs, row0, b0, epi); break;
    case 3: Tile<3, NR>(kg, a, lda, w, bs, row0, b0, epi); break;
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
  // Chunks of blocks whose weights (<= 128 KiB) stay in L2 while all rows of A pass over them
  // in 4-row x 2-block tiles; within a chunk, each 4-row panel of C is written contiguously.
  int chunk = int((size_t(128) << 10) / bs) & ~1;
  if (chunk < 2) chunk = 2;
  for (int c0 = 0; c0 < nb; c0 += chunk) {
    const int c1 = c0 + chunk < nb ? c0 + chunk : nb;
    for (int i0 = 0; i0 < m; i0 += 4) {
      const int mr = m - i0 < 4 ? m - i0 : 4;
      const int8_t* ai = a + size_t(i0) * lda;
      for (int b0 = c0; b0 < c1; b0 += 2) {
        const int8_t* wb = w + size_t(b0) * bs;
        if (b0 + 1 < c1)
          TileRows<2>(mr, kg, ai, lda, wb, bs, i0, b0, epi);
        else
          TileRows<1>(mr, kg, ai, lda, wb, bs, i0, b0, epi);
      }
    }
  }
}

}  // namespace

void GemmS8Blocked(int m, int n, int k, const int8_t* a, int lda, const float* a_scales,
                   const int8_t* w, const float* w_scales, const float* bias, const float* residual,
                   int ldr, float* c, int ldc, Act act) {
  // SiLU / GELU are long dependency chains (exp, divide): run per 8 outputs inside the tile
  // loop they are latency-bound, so they run as a second pass over the rows just written
  // (in cache), where independent iterations overlap. Same operations, same results.
  const bool fused = act == Act::kNone || act == Act::kReLU;
  const FloatEpilogue epi{n, a_scales, w_scales, bias, residual, ldr, c, ldc, fused ? act : Act::kNone};
  Gemm(m, n, k, a, lda, w, epi);
  if (!fused && n > 0)
    for (int i = 0; i < m; ++i) Activation(c + size_t(i) * ldc, n, act);
}

void GemmS8BlockedAcc(int m, int n, int k, const int8_t* a, int lda, const int8_t* w, int32_t* acc,
                      int ldacc) {
  const AccEpilogue epi{n, acc, ldacc};
  Gemm(m, n, k, a, lda, w, epi);
}

}  // namespace avx2
}  // namespace kernels
}  // namespace mtlite

#endif  // __AVX2__

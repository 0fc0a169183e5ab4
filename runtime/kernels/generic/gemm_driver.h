// The int8 GEMM / GEMV driver on the BlockedN8K4 layout, shared by every SIMD ISA: the loop over
// m and n tiles, the tails, the epilogues and the entry points of the table. An ISA supplies only
// its micro-kernel K (the inner loop over K for one tile, and how 8 accumulators are written);
// this header is included by the ISA's gemm file and compiled with that ISA's flags.
//
// BlockedN8K4 (schema/mtlite.fbs): block b holds output rows 8b..8b+7, kg = ceil(k/4) groups of
// 32 bytes (8 rows x 4 k), so one block is bs = 32 kg bytes; the last block is zero-padded.
//
// K (a struct of static members, defined in an anonymous namespace by the ISA):
//   Acc                     exact int32 sums of one A row against one block (8 outputs)
//   kMR, kNR                the largest tile: kMR rows of A x kNR blocks
//   kChunkBytes             blocks are visited in chunks of about this many weight bytes (kept in
//                           L2 while every row panel of A passes over them); 0: kNR blocks
//   kGemvNR                 m == 1 runs K::Gemv<G> on G = kGemvNR blocks at a time (and G = 1
//                           for the rest); 0: m == 1 runs Tile<1, NR> like any m
//   kActSecondPass          SiLU / GELU run as a second pass over the finished rows (in cache,
//                           where independent iterations overlap) instead of inside the tile
//   Prefetch(m, nb, bs)     whether tiles should prefetch the next tile's blocks (asked only for
//                           the first row panel of each chunk: it reads the chunk from memory,
//                           the later panels find it in cache)
//   PanelState, PanelPrepare(mr, kg, a, lda)   per-row terms of a row panel of A (mr <= kMR
//                           rows), computed once per panel and passed to its tiles, e.g. a
//                           correction sum; NoPanelState: none
//   StreamState, StreamPrepare(mr, kg, a, lda)   the same for the stream tiles (mr <= kStreamMR)
//   Tile<MR, NR>(kg, a, lda, w, next, state, acc)   acc[i][j] = row i of a . block w[j], full K;
//                           next: null or the blocks to prefetch (next[j] for w[j])
//   Gemv<G>(kg, a, w, next, stream, acc)  acc[j] = the row a . block w[j], j < G (when
//                           kGemvNR > 0); next: null when the blocks are contiguous (the weights
//                           the next calls read follow w[G-1] in memory and may be prefetched at
//                           a distance), else blocks further on (next[j] for w[j]) in a gathered
//                           selection, to prefetch (GatheredBlocks::Ahead); stream: the weights
//                           are large (kStreamBytes)
//   kStreamBytes,           0, or: one row panel (m <= kMR) over weights of at least this many
//   kStreamRowsBytes        bytes (kStreamBytes for m == 1, kStreamRowsBytes for m > 1; e.g.
//                           each read once: from DRAM) runs block by block through
//                           StreamTile<MR>(kg, a, lda, w, next, state, acc) (acc[i] = row i .
//                           block w; next as for Gemv: null when the blocks are contiguous, else
//                           a block further on in a gathered selection, to prefetch; state:
//                           StreamPrepare once per call): one sequential weight stream;
//                           tiles over several blocks read as many concurrent streams, which
//                           DRAM serves far slower here
//   kStreamMR               the most rows StreamTile takes (>= kMR; StreamPrepare as many)
//   kStreamPanelsBytes      0, or: kMR < m <= 2 kStreamMR rows (one or two row panels of up to
//                           kStreamMR) over weights of at least this many bytes (more than L2
//                           holds: read from L3 or DRAM in every call) run block by block as
//                           well, each panel's StreamTile on a block before the next block
//                           (StreamPanels)
//   Epilogue(acc, a_scale, ws, bias, res, out, count, act)   the contract's dequantisation of
//                           the first `count` (1..8) outputs: out[j] = act(float(acc[j]) *
//                           (a_scale * ws[j]) + bias[j] + res[j]); bias / res may be null
//   StoreAcc(acc, out, count), Activation(x, n, act)
// Optional, for a matrix unit (AMX):
//   kMatrixTileRows, MatrixTiles(m, nb, kg, a, lda, blocks, epi)   m >= kMatrixTileRows runs
//                           MatrixTiles, which calls epi for every row and block slot as RunGemm
//                           does (its own loop, tiles and tails); smaller m the kernels above;
//   kMatrixPanelRows        with MatrixTiles: rows per tile-unit operation (else kMR is taken):
//                           the table's gemm_panel_rows
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "generic/vec_math.h"
#include "kernels.h"

namespace mtlite {
namespace kernels {
namespace generic {

// For ISAs whose tiles need no per-row terms of A.
struct NoPanelState {
  struct PanelState {};
  static PanelState PanelPrepare(int, int, const int8_t*, int) { return {}; }
  using StreamState = PanelState;
  static StreamState StreamPrepare(int, int, const int8_t*, int) { return {}; }
};

// Blocks of W in order: block b at w + b * bs, output columns 8b..8b+7.
struct ContiguousBlocks {
  static constexpr bool kGathered = false;
  const int8_t* w;
  size_t bs;
  const int8_t* Block(int b) const { return w + size_t(b) * bs; }
  int FirstRow(int b) const { return 8 * b; }
};

// The blocks of a list: slot s is block idx[s] (weight rows 8 idx[s]..), output columns 8s..8s+7.
// The streaming kernels prefetch the block kAhead slots on in the list, line for line as they
// read the current one: OPUS-MT base with the shortlist, the projection per step greedy 16-18 ->
// 13-14 us, beam 4 23-24 -> 18 us, against the next block (3 blocks of k 512 are the 12 KiB the
// contiguous stream prefetches ahead; tiny32k, whose selection stays in L2: within the noise).
struct GatheredBlocks {
  static constexpr bool kGathered = true;
  static constexpr int kAhead = 3;
  const int8_t* w;
  size_t bs;
  const int32_t* idx;
  const int8_t* Block(int s) const { return w + size_t(idx[s]) * bs; }
  int FirstRow(int s) const { return 8 * idx[s]; }
  // the block to prefetch while slot s of nb is read
  const int8_t* Ahead(int s, int nb) const { return Block(nb - s > kAhead ? s + kAhead : nb - 1); }
};

// One tile of mr (1..MR) rows x NR blocks: the tile code is instantiated for each row count.
template <class K, int MR, int NR, class Epi>
inline void TileRows(int mr, int kg, const int8_t* a, int lda, const int8_t* const* w,
                     const int8_t* const* next, const typename K::PanelState& state, int row0, int slot0,
                     const Epi& epi) {
  if constexpr (MR > 1) {
    if (mr < MR) {
      TileRows<K, MR - 1, NR>(mr, kg, a, lda, w, next, state, row0, slot0, epi);
      return;
    }
  }
  typename K::Acc acc[MR][NR];
  K::template Tile<MR, NR>(kg, a, lda, w, next, state, acc);
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < NR; ++j) epi(row0 + i, slot0 + j, acc[i][j]);
}

// Tiles of up to kMR rows x NR blocks starting at slot s.
template <class K, int NR, class Blocks, class Epi>
inline void TilePanel(int mr, int kg, const int8_t* a, int lda, const Blocks& blocks, int s, int nb,
                      bool prefetch, const typename K::PanelState& state, int row0, const Epi& epi) {
  const int8_t* w[NR];
  const int8_t* next[NR];
  for (int j = 0; j < NR; ++j) {
    w[j] = blocks.Block(s + j);
    next[j] = s + NR + j < nb ? blocks.Block(s + NR + j) : w[j];
  }
  TileRows<K, K::kMR, NR>(mr, kg, a, lda, w, prefetch ? next : nullptr, state, row0, s, epi);
}

// m == 1: G blocks starting at slot s.
template <class K, int G, class Blocks, class Epi>
inline void GemvPanel(int kg, const int8_t* a, const Blocks& blocks, int s, int nb, bool stream,
                      const Epi& epi) {
  const int8_t* w[G];
  const int8_t* next[G];
  for (int j = 0; j < G; ++j) {
    w[j] = blocks.Block(s + j);
    next[j] = nullptr;
    if constexpr (Blocks::kGathered) next[j] = blocks.Ahead(s + j, nb);
  }
  typename K::Acc acc[G];
  K::template Gemv<G>(kg, a, w, Blocks::kGathered ? next : nullptr, stream, acc);
#pragma GCC unroll 8
  for (int j = 0; j < G; ++j) epi(0, s + j, acc[j]);
}

// m == 1, all blocks. Out of line: inside RunGemm the GEMV loop got a worse register
// allocation (a loop bound reloaded from the stack, accumulator copies; -25 % at m = 1 in cache).
template <class K, class Blocks, class Epi>
__attribute__((noinline)) void RunGemv(int nb, int kg, const int8_t* a, const Blocks& blocks, bool stream,
                                       const Epi& epi) {
  constexpr int G = K::kGemvNR;
  int s = 0;
  for (; s + G <= nb; s += G) GemvPanel<K, G>(kg, a, blocks, s, nb, stream, epi);
  if constexpr (G > 1) {
    for (; s < nb; ++s) GemvPanel<K, 1>(kg, a, blocks, s, nb, stream, epi);
  }
}

// Row panel [row0, row0 + mr) (mr <= MR) against block slot s.
template <class K, int MR, class Epi>
inline void StreamBlock(int mr, int kg, const int8_t* a, int lda, const int8_t* w, const int8_t* next,
                        const typename K::StreamState& state, int row0, int s, const Epi& epi) {
  if constexpr (MR > 1) {
    if (mr < MR) {
      StreamBlock<K, MR - 1>(mr, kg, a, lda, w, next, state, row0, s, epi);
      return;
    }
  }
  typename K::Acc acc[MR];
  K::template StreamTile<MR>(kg, a, lda, w, next, state, acc);
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) epi(row0 + i, s, acc[i]);
}

// Streaming mode: all m (<= kMR) rows against one block at a time.
template <class K, int MR, class Blocks, class Epi>
inline void StreamRows(int mr, int nb, int kg, const int8_t* a, int lda, const Blocks& blocks,
                       const Epi& epi) {
  if constexpr (MR > 1) {
    if (mr < MR) {
      StreamRows<K, MR - 1>(mr, nb, kg, a, lda, blocks, epi);
      return;
    }
  }
  const typename K::StreamState state = K::StreamPrepare(mr, kg, a, lda);
  for (int s = 0; s < nb; ++s) {
    const int8_t* next = nullptr;  // contiguous: the stream ahead; gathered: a block ahead
    if constexpr (Blocks::kGathered) next = blocks.Ahead(s, nb);
    StreamBlock<K, MR>(MR, kg, a, lda, blocks.Block(s), next, state, 0, s, epi);
  }
}

// kMR < m <= 2 kStreamMR over weights from memory: the row panels (one or two, of up to kStreamMR
// rows) against one block, then the next block. One sequential weight stream, as StreamRows,
// and the block read once: a second panel finds it in L1. The chunked tiles read each chunk
// with their first panel alone, and there the memory and the arithmetic barely overlapped.
// gemm_bench, weights from DRAM, n 2048, k 512: see bench/README.md.
template <class K, class Blocks, class Epi>
void StreamPanels(int m, int nb, int kg, const int8_t* a, int lda, const Blocks& blocks, const Epi& epi) {
  constexpr int P = K::kStreamMR;
  const int m0 = m < P ? m : P, m1 = m - m0;
  const int8_t* a1 = a + size_t(P) * lda;
  const typename K::StreamState s0 = K::StreamPrepare(m0, kg, a, lda);
  const typename K::StreamState s1 = m1 > 0 ? K::StreamPrepare(m1, kg, a1, lda) : s0;
  for (int s = 0; s < nb; ++s) {
    const int8_t* next = nullptr;  // contiguous: the stream ahead; gathered: a block ahead
    if constexpr (Blocks::kGathered) next = blocks.Ahead(s, nb);
    const int8_t* w = blocks.Block(s);
    StreamBlock<K, P>(m0, kg, a, lda, w, next, s0, 0, s, epi);
    if (m1 > 0) StreamBlock<K, P>(m1, kg, a1, lda, w, nullptr, s1, P, s, epi);
  }
}

template <class K, class = void>
struct HasMatrixTiles : std::false_type {};
template <class K>
struct HasMatrixTiles<K, std::void_t<decltype(K::kMatrixTileRows)>> : std::true_type {};

// epi(row, slot, acc) for every row of A and every block slot in [0, nb).
template <class K, class Blocks, class Epi>
void RunGemm(int m, int nb, int kg, const int8_t* a, int lda, const Blocks& blocks, const Epi& epi) {
  if (m <= 0 || nb <= 0) return;
  if constexpr (HasMatrixTiles<K>::value) {
    if (m >= K::kMatrixTileRows) {
      K::MatrixTiles(m, nb, kg, a, lda, blocks, epi);
      return;
    }
  }
  const size_t bs = size_t(kg) * 32;
  const size_t threshold = m == 1 ? K::kStreamBytes : K::kStreamRowsBytes;
  const bool stream = threshold > 0 && m <= K::kMR && size_t(nb) * bs >= threshold;
  if constexpr (K::kGemvNR > 0) {
    if (m == 1) {
      RunGemv<K>(nb, kg, a, blocks, stream, epi);
      return;
    }
  }
  if constexpr (K::kStreamBytes > 0 || K::kStreamRowsBytes > 0) {
    if (stream) {
      StreamRows<K, K::kMR>(m, nb, kg, a, lda, blocks, epi);
      return;
    }
  }
  if constexpr (K::kStreamPanelsBytes > 0) {
    if (m > K::kMR && m <= 2 * K::kStreamMR && size_t(nb) * bs >= K::kStreamPanelsBytes) {
      StreamPanels<K>(m, nb, kg, a, lda, blocks, epi);
      return;
    }
  }
  constexpr int NR = K::kNR;
  int chunk = NR;
  if (K::kChunkBytes > 0 && bs > 0) {
    const size_t c = K::kChunkBytes / bs / NR * NR;
    chunk = c > size_t(nb) ? nb : int(c);
  } else if (K::kChunkBytes > 0) {
    chunk = nb;  // k == 0: no weight bytes at all
  }
  if (chunk < NR) chunk = NR;
  const bool prefetch = K::Prefetch(m, nb, bs);
  for (int c0 = 0; c0 < nb; c0 += chunk) {
    const int c1 = nb - c0 > chunk ? c0 + chunk : nb;
    for (int i0 = 0; i0 < m; i0 += K::kMR) {
      const int mr = m - i0 < K::kMR ? m - i0 : K::kMR;
      const int8_t* ai = a + size_t(i0) * lda;
      const typename K::PanelState state = K::PanelPrepare(mr, kg, ai, lda);
      int s = c0;
      for (; s + NR <= c1; s += NR)
        TilePanel<K, NR>(mr, kg, ai, lda, blocks, s, nb, prefetch && i0 == 0, state, i0, epi);
      if constexpr (NR > 1) {
        for (; s < c1; ++s) TilePanel<K, 1>(mr, kg, ai, lda, blocks, s, nb, prefetch && i0 == 0, state, i0, epi);
      }
    }
  }
}

// Float output: the contract's epilogue for the valid outputs of each block. Gathered blocks
// also write 0 to the columns of padding rows (weight rows >= n of a partial last block).
template <class K, class Blocks>
struct FloatOutput {
  const Blocks& blocks;
  int n;
  const float* a_scales;
  const float* w_scales;
  const float* bias;
  const float* residual;
  int ldr;
  float* c;
  int ldc;
  Act act;
  bool zero_padding;

  inline void operator()(int row, int slot, const typename K::Acc& acc) const {
    const int r0 = blocks.FirstRow(slot), col = 8 * slot;
    const int count = n - r0 < 8 ? n - r0 : 8;
    float* out = c + size_t(row) * ldc + col;
    K::Epilogue(acc, a_scales[row], w_scales + r0, bias ? bias + r0 : nullptr,
                residual ? residual + size_t(row) * ldr + col : nullptr, out, count, act);
    if (zero_padding)
      for (int j = count; j < 8; ++j) out[j] = 0.0f;
  }
};

// Float output to scattered columns: block slot s's valid outputs go to c[row][col[8 s + j]].
template <class K>
struct ScatterOutput {
  int n;
  const float* a_scales;
  const float* w_scales;
  const float* bias;
  const int32_t* col;
  float* c;
  int ldc;

  inline void operator()(int row, int slot, const typename K::Acc& acc) const {
    const int r0 = 8 * slot;
    const int count = n - r0 < 8 ? n - r0 : 8;
    alignas(64) float out[8];
    K::Epilogue(acc, a_scales[row], w_scales + r0, bias ? bias + r0 : nullptr, nullptr, out, count, Act::kNone);
    float* cr = c + size_t(row) * ldc;
    for (int j = 0; j < count; ++j) cr[col[r0 + j]] = out[j];
  }
};

template <class K>
struct AccOutput {
  int n;
  int32_t* acc;
  int ldacc;
  inline void operator()(int row, int slot, const typename K::Acc& v) const {
    const int col = 8 * slot;
    K::StoreAcc(v, acc + size_t(row) * ldacc + col, n - col < 8 ? n - col : 8);
  }
};

// K::Epilogue / K::StoreAcc for ISAs whose 8 accumulators are one 8-lane int vector D::I of
// their float operations D (generic/vec_math.h; CvtInt(i) -> V, StoreInt, StoreIntPartial).
template <class D>
inline void Epilogue8(const typename D::I& acc, float as, const float* ws, const float* bias,
                      const float* res, float* out, int count, Act act) {
  static_assert(D::kW == 8, "one block = 8 outputs");
  auto y = D::CvtInt(acc);
  if (count == 8) {
    y = D::Mul(y, D::Mul(D::Set(as), D::Load(ws)));
    if (bias) y = D::Add(y, D::Load(bias));
    if (res) y = D::Add(y, D::Load(res));
    D::Store(out, Activate<D>(y, act));
  } else {
    y = D::Mul(y, D::Mul(D::Set(as), D::LoadPartial(ws, count)));
    if (bias) y = D::Add(y, D::LoadPartial(bias, count));
    if (res) y = D::Add(y, D::LoadPartial(res, count));
    D::StorePartial(out, count, Activate<D>(y, act));
  }
}

template <class D>
inline void StoreAcc8(const typename D::I& acc, int32_t* out, int count) {
  if (count == 8)
    D::StoreInt(out, acc);
  else
    D::StoreIntPartial(out, count, acc);
}

// ---- the table entries (kernels.h) ----------------------------------------------------------

template <class K>
void GemmS8Blocked(int m, int n, int k, const int8_t* a, int lda, const float* a_scales,
                   const int8_t* w, const float* w_scales, const float* bias, const float* residual,
                   int ldr, float* c, int ldc, Act act) {
  const bool fused = !K::kActSecondPass || act == Act::kNone || act == Act::kReLU;
  const int kg = (k + 3) / 4;
  const ContiguousBlocks blocks{w, size_t(kg) * 32};
  const FloatOutput<K, ContiguousBlocks> epi{blocks, n,  a_scales, w_scales, bias,
                                             residual, ldr, c, ldc, fused ? act : Act::kNone, false};
  RunGemm<K>(m, (n + 7) / 8, kg, a, lda, blocks, epi);
  if (!fused && n > 0)
    for (int i = 0; i < m; ++i) K::Activation(c + size_t(i) * ldc, n, act);
}

template <class K>
void GemmS8BlockedGather(int m, int n, int nblocks, const int32_t* block_idx, int k, const int8_t* a,
                         int lda, const float* a_scales, const int8_t* w, const float* w_scales,
                         const float* bias, float* c, int ldc) {
  const int kg = (k + 3) / 4;
  const GatheredBlocks blocks{w, size_t(kg) * 32, block_idx};
  const FloatOutput<K, GatheredBlocks> epi{blocks, n,  a_scales, w_scales, bias,
                                           nullptr, 0, c, ldc, Act::kNone, true};
  RunGemm<K>(m, nblocks, kg, a, lda, blocks, epi);
}

template <class K>
void GemmS8BlockedScatter(int m, int n, int k, const int8_t* a, int lda, const float* a_scales, const int8_t* w,
                          const float* w_scales, const float* bias, const int32_t* col, float* c, int ldc) {
  const int kg = (k + 3) / 4;
  const ContiguousBlocks blocks{w, size_t(kg) * 32};
  RunGemm<K>(m, (n + 7) / 8, kg, a, lda, blocks, ScatterOutput<K>{n, a_scales, w_scales, bias, col, c, ldc});
}

template <class K>
void GemmS8BlockedAcc(int m, int n, int k, const int8_t* a, int lda, const int8_t* w, int32_t* acc,
                      int ldacc) {
  const int kg = (k + 3) / 4;
  RunGemm<K>(m, (n + 7) / 8, kg, a, lda, ContiguousBlocks{w, size_t(kg) * 32},
             AccOutput<K>{n, acc, ldacc});
}

// The GEMM entries of a table, for micro-kernel K.
template <class K>
void SetGemmEntries(KernelTable& t) {
  t.gemm_s8_blocked = GemmS8Blocked<K>;
  t.gemm_s8_blocked_acc = GemmS8BlockedAcc<K>;
  t.gemm_s8_blocked_gather = GemmS8BlockedGather<K>;
  t.gemm_s8_blocked_scatter = GemmS8BlockedScatter<K>;
  if constexpr (HasMatrixTiles<K>::value)
    t.gemm_panel_rows = K::kMatrixPanelRows;
  else
    t.gemm_panel_rows = K::kMR;
}

}  // namespace generic
}  // namespace kernels
}  // namespace mtlite

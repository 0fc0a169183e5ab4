// int8 GEMM with Intel AMX (AMX-TILE, AMX-INT8): the "avx512-amx" table is "avx512-vnni" whose
// GEMM runs m >= kMatrixTileRows in the tile unit, on the BlockedN8K4 weights in place.
//
// Tiles. One block's 16 groups k 16s..16s+15 are 512 contiguous bytes, 16 rows of 32 bytes
// (8 output rows x 4 k): exactly the B operand of TDPBSSD for 8 output columns (B rows = groups,
// 4 bytes per column per row). The A operand is mr (<= 16) activation rows x 64 bytes (the same
// 16 groups) at stride lda; C is mr rows x 8 int32. Registers: tmm0-3 accumulate 4 blocks, tmm4
// holds A, tmm5 / tmm6 take the blocks' B in turn. Per 64 k: one A load shared by 4 blocks, one
// B load and one TDPBSSD per block.
//
// Exactness. TDPBSSD multiplies signed by signed bytes and adds to int32 without saturation
// (wrapping), so each C element is the reference's exact int32 sum whenever that is
// representable (kernels.h contract), weights of -128 included; no sign trick, no correction.
// A k that is not a multiple of 64 ends with a step over zero-padded copies of the last groups
// of A (1 KiB) and of each block (512 bytes), so that nothing past a row of A or past the last
// block is read, and the missing groups add 0.
//
// Below kMatrixTileRows (the GEMV, and m 2..4: see GemmK) the AVX-512 VNNI kernels run as in
// "avx512-vnni" (avx512/avx512_gemm.h), and every other family is that table's.
//
// Measured on an Intel Xeon with AMX (2-vCPU KVM guest), gemm_bench against avx512-vnni, 1
// thread, n 2048 k 512 hot / cold (from DRAM): m 4 378 -> 513 / 87 -> 85 GOPS, m 8 452 -> 814 /
// 159 -> 183, m 16 461 -> 1,154 / 266 -> 341; the shortlist's gathered blocks (n 8001 k 256) m 16
// 334 -> 699 hot. e2e_bench, OPUS-MT base shape, batch 16 greedy: 2,208 -> 2,977 tokens/s.
//
// The instructions are written as inline assembly: GCC 12's intrinsics declare neither the
// memory that TILELOADD reads nor all of LDTILECFG's 64 bytes, so stores before them (the
// configuration, the zero-padded copies) could legally be moved past them.
//
// The OS. Linux enables the tile data state per process on request (arch_prctl
// ARCH_REQ_XCOMP_PERM, Linux >= 5.16); dispatch.cc asks before it lists this table. A thread
// configures the tiles (LDTILECFG) at the start of each call and releases them (TILERELEASE) at
// the end, so no thread keeps the 8 KiB of tile state between calls.
#include "avx512/avx512_gemm.h"  // first: avx512_ops.h sets diagnostics for <immintrin.h>

#include <cstring>
#include <type_traits>

namespace mtlite {
namespace kernels {
namespace amx {
namespace {

struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

#define MTLITE_TILE_LOAD(t, base, stride) \
  asm volatile("tileloadd (%0,%1,1), %%tmm" #t : : "r"(base), "r"(ptrdiff_t(stride)) : "memory")
#define MTLITE_TILE_STORE(t, base, stride) \
  asm volatile("tilestored %%tmm" #t ", (%0,%1,1)" : : "r"(base), "r"(ptrdiff_t(stride)) : "memory")
#define MTLITE_TILE_ZERO(t) asm volatile("tilezero %%tmm" #t : :)
// tmm c += tmm a (signed bytes) . tmm b (signed bytes)
#define MTLITE_TILE_DP(c, a, b) asm volatile("tdpbssd %%tmm" #b ", %%tmm" #a ", %%tmm" #c : :)

// mr rows of A and C (tmm0-4), 16 groups x one block for B (tmm5, tmm6).
inline void Configure(int mr) {
  TileConfig c;
  for (int t = 0; t < 4; ++t) c.rows[t] = uint8_t(mr), c.colsb[t] = 32;
  c.rows[4] = uint8_t(mr), c.colsb[4] = 64;
  c.rows[5] = c.rows[6] = 16, c.colsb[5] = c.colsb[6] = 32;
  asm volatile("ldtilecfg %0" : : "m"(c) : "memory");
}
inline void Release() { asm volatile("tilerelease" : : : "memory"); }

constexpr int kStepGroups = 16;  // k 64 per TDPBSSD
constexpr int kStepBytes = kStepGroups * 32;

// NC (1..4) blocks w[j] against the configured mr rows of A: full steps, then the zero-padded
// tail (atail: mr rows x 64 bytes; btail: NC x 512 bytes; both null when kg is a multiple of 16).
// c[j]: the block's mr x 8 sums, rows 32 bytes apart.
template <int NC>
inline void BlockTiles(int steps, const int8_t* a, int lda, const int8_t* const* w, const int8_t* const* next,
                       const int8_t* atail, const int8_t* btail, int32_t (*c)[16][8]) {
  MTLITE_TILE_ZERO(0);
  if constexpr (NC > 1) MTLITE_TILE_ZERO(1);
  if constexpr (NC > 2) MTLITE_TILE_ZERO(2);
  if constexpr (NC > 3) MTLITE_TILE_ZERO(3);
  auto step = [&](const int8_t* as, int sa, const int8_t* const* ws, size_t off) __attribute__((always_inline)) {
    MTLITE_TILE_LOAD(4, as, sa);
    MTLITE_TILE_LOAD(5, ws[0] + off, 32);
    MTLITE_TILE_DP(0, 4, 5);
    if constexpr (NC > 1) {
      MTLITE_TILE_LOAD(6, ws[1] + off, 32);
      MTLITE_TILE_DP(1, 4, 6);
    }
    if constexpr (NC > 2) {
      MTLITE_TILE_LOAD(5, ws[2] + off, 32);
      MTLITE_TILE_DP(2, 4, 5);
    }
    if constexpr (NC > 3) {
      MTLITE_TILE_LOAD(6, ws[3] + off, 32);
      MTLITE_TILE_DP(3, 4, 6);
    }
  };
  if (next) {
    for (int s = 0; s < steps; ++s) {
      const size_t off = size_t(s) * kStepBytes;
      for (int j = 0; j < NC; ++j)
        for (int l = 0; l < kStepBytes; l += 64) avx2::PrefetchLineT0(next[j] + off + l);
      step(a + size_t(s) * 64, lda, w, off);
    }
  } else {
    for (int s = 0; s < steps; ++s) step(a + size_t(s) * 64, lda, w, size_t(s) * kStepBytes);
  }
  if (atail) {
    const int8_t* bt[4];
    for (int j = 0; j < NC; ++j) bt[j] = btail + size_t(j) * kStepBytes;
    step(atail, 64, bt, 0);
  }
  MTLITE_TILE_STORE(0, c[0], 32);
  if constexpr (NC > 1) MTLITE_TILE_STORE(1, c[1], 32);
  if constexpr (NC > 2) MTLITE_TILE_STORE(2, c[2], 32);
  if constexpr (NC > 3) MTLITE_TILE_STORE(3, c[3], 32);
}

template <class Blocks, class Epi, int NC>
inline void PanelBlocks(int mr, int steps, int tail_groups, const int8_t* a, int lda, const int8_t* atail,
                        const Blocks& blocks, int s, int nb, bool prefetch, int row0, const Epi& epi) {
  const int8_t* w[NC];
  const int8_t* next[NC];
  for (int j = 0; j < NC; ++j) {
    w[j] = blocks.Block(s + j);
    next[j] = s + 4 + j < nb ? blocks.Block(s + 4 + j) : w[j];
  }
  alignas(64) int8_t btail[NC][kStepBytes];
  if (atail) {
    for (int j = 0; j < NC; ++j) {
      std::memcpy(btail[j], w[j] + size_t(steps) * kStepBytes, size_t(tail_groups) * 32);
      std::memset(btail[j] + tail_groups * 32, 0, size_t(kStepBytes - tail_groups * 32));
    }
  }
  alignas(64) int32_t c[NC][16][8];
  BlockTiles<NC>(steps, a, lda, w, prefetch ? next : nullptr, atail, atail ? btail[0] : nullptr, c);
  for (int j = 0; j < NC; ++j)
    for (int i = 0; i < mr; ++i)
      epi(row0 + i, s + j, _mm256_load_si256(reinterpret_cast<const __m256i*>(c[j][i])));
}

struct GemmK : avx512::GemmK {
  // m >= this runs in the tiles (generic/gemm_driver.h); below, avx512::GemmK's kernels (m 2..4:
  // its one-block stream tile). At m 2 the tiles were no faster (gemm_bench n 2048 k 512 hot 289
  // vs 293 GOPS, n 8001 k 256 170 vs 148). At m 4 they win in gemm_bench's hot loop (378 -> 513),
  // but in a model run, beam 4 at batch 1 (m 4 every decoder step, the weights from L3), the
  // stream tile is faster: e2e_bench, 5 interleaved runs, tokens/s +5.8 % (OPUS-MT base),
  // +3.4 % (tiny32k), +8 % (demo). At m 8 (greedy batch 8) the tiles stay: base +4 % with the
  // stream panels, demo -3.5 %.
  static constexpr int kMatrixTileRows = 5;
  // One TDPBSSD multiplies up to 16 rows of A (KernelTable::gemm_panel_rows).
  static constexpr int kMatrixPanelRows = 16;

  template <class Blocks, class Epi>
  static void MatrixTiles(int m, int nb, int kg, const int8_t* a, int lda, const Blocks& blocks, const Epi& epi) {
    const int steps = kg / kStepGroups, tail_groups = kg % kStepGroups;
    const size_t bs = size_t(kg) * 32;
    // chunks of blocks (kChunkBytes, as the AVX-512 tiles) that every row panel reads in turn, the
    // first bringing them into L2 and prefetching the next 4 blocks when Prefetch() says so
    int chunk = bs > 0 ? int(kChunkBytes / bs / 4 * 4) : nb;
    if (chunk < 4) chunk = 4;
    alignas(64) int8_t atail[16][64];
    const bool prefetch = Prefetch(m, nb, bs);
    int configured = 0;
    for (int c0 = 0; c0 < nb; c0 += chunk) {
      const int c1 = nb - c0 > chunk ? c0 + chunk : nb;
      for (int i0 = 0; i0 < m; i0 += 16) {
        const int mr = m - i0 < 16 ? m - i0 : 16;
        const int8_t* ai = a + size_t(i0) * lda;
        if (mr != configured) Configure(mr), configured = mr;
        const int8_t* at = nullptr;
        if (tail_groups > 0) {
          std::memset(atail, 0, sizeof atail);
          for (int i = 0; i < mr; ++i)
            std::memcpy(atail[i], ai + size_t(i) * lda + size_t(steps) * 64, size_t(tail_groups) * 4);
          at = atail[0];
        }
        const bool pf = prefetch && i0 == 0;
        auto run = [&](auto nc, int s) {
          PanelBlocks<Blocks, Epi, decltype(nc)::value>(mr, steps, tail_groups, ai, lda, at, blocks, s, nb, pf, i0, epi);
        };
        int s = c0;
        for (; s + 4 <= c1; s += 4) run(std::integral_constant<int, 4>(), s);
        switch (c1 - s) {
          case 3: run(std::integral_constant<int, 3>(), s); break;
          case 2: run(std::integral_constant<int, 2>(), s); break;
          case 1: run(std::integral_constant<int, 1>(), s); break;
          default: break;
        }
      }
    }
    if (configured) Release();
  }
};

#undef MTLITE_TILE_LOAD
#undef MTLITE_TILE_STORE
#undef MTLITE_TILE_ZERO
#undef MTLITE_TILE_DP

}  // namespace
}  // namespace amx

template <>
void AddGemmKernels<IsaAmx>(KernelTable& t) {
  generic::SetGemmEntries<amx::GemmK>(t);
}

}  // namespace kernels
}  // namespace mtlite

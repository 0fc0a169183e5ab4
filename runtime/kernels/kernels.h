// Kernel front end: raw-pointer kernels, one table per ISA, chosen at run time.
//
// NUMERICS CONTRACT (every ISA must be bit-identical to runtime/kernels/reference):
//  * The whole project builds with -ffp-contract=off: no FMA contraction anywhere.
//    SIMD code uses separate mul and add, never fma intrinsics.
//  * Reductions over a float vector of length n use 8 interleaved lanes over ALL n elements:
//      lane[j] = sum over i = j, j+8, j+16, ... (i < n) in increasing i  (lanes start at +0),
//      total = ((lane0+lane4) + (lane2+lane6)) + ((lane1+lane5) + (lane3+lane7)).
//    The tail (i >= n & ~7) goes into its lanes like the rest: in SIMD, add a zero-filled
//    partial vector. So appending zeros (e.g. exp of masked padding) never changes a sum:
//    a padded batch gives bit-identical results to one sentence at a time.
//    (AVX2: one __m256 accumulator; NEON and WebAssembly SIMD128: two 4-lane accumulators
//    {0..3},{4..7}.)
//    Max reductions are exact in any order.
//  * exp is mtlite::kernels::ExpRef (below): a fixed range reduction and polynomial,
//    evaluated with the same operations in the same order in every ISA (coefficients:
//    math_coeffs.h, shared by the reference and every SIMD version).
//  * int8 GEMM accumulates exactly in int32; dequantisation is
//      y = float(acc) * (a_scale[m] * w_scale[n]);  y = y + bias[n];  y = y + residual[m][n]
//    in that order, then the activation (if any).
//  * Activation quantisation: s = maxabs(row) / 127 (a row of zeros: s = 0, q = 0);
//      q = clamp(round_half_even(x * (127 / maxabs)), -127, 127)   [inv = 127.0f / maxabs, once per row]
//    -128 never occurs, which keeps the AVX2 sign trick exact (see avx2 kernels).
#pragma once

#include <cstddef>
#include <cstdint>

namespace mtlite {
namespace kernels {

// kSigmoid, 1 / (1 + ExpRef(-x)), is no model's FFN activation: the SSRU cell's forget gate.
enum class Act : int { kNone = 0, kSiLU = 1, kReLU = 2, kGELU = 3, kGELUTanh = 4, kSigmoid = 5 };

// BlockedN8K4 packing (see schema/mtlite.fbs).
inline int RoundUp(int x, int m) { return (x + m - 1) / m * m; }
// For shapes known to fit (a 32-bit size_t wraps at 2^32 bytes): the loader checks a file's
// shapes with the same product in CheckedSize (runtime/src/checked_size.h) first.
inline size_t BlockedN8K4Bytes(int n, int k) { return size_t(RoundUp(n, 8)) * size_t(RoundUp(k, 4)); }
// w: row-major [n][k] int8 -> out: BlockedN8K4Bytes(n, k) bytes (padding zero).
void PackBlockedN8K4(const int8_t* w, int n, int k, int8_t* out);
// Copies row `row` (k values) of a BlockedN8K4 matrix.
void UnpackBlockedRow(const int8_t* packed, int n, int k, int row, int8_t* out);

struct KernelTable {
  // "reference", "avx2", "avx-vnni", "avx512-vnni", "avx512-amx" (x86-64), "neon", "neon-dotprod" (ARM),
  // "wasm-simd128" (WebAssembly), "mve" (Armv8.1-M Helium)
  const char* name;

  // x [m][k] (row stride ldx floats) -> q [m][kp] (row stride ldq bytes, kp = RoundUp(k,4),
  // pad bytes zero), scales[m]. See contract above.
  void (*quantize_rows_s8)(const float* x, int m, int k, int ldx, int8_t* q, int ldq, float* scales);

  // c[m][n] = act(float(sum_k a[m][k] * W[n][k]) * (a_scales[m] * w_scales[n]) + bias[n] + residual[m][n])
  // a: [m][kp] int8 (stride lda bytes, |a| <= 127, pad zero); w: BlockedN8K4 of [n][k];
  // bias / residual may be null (residual stride ldr floats). c stride ldc floats.
  // c may alias residual exactly (c == residual, ldc == ldr).
  void (*gemm_s8_blocked)(int m, int n, int k, const int8_t* a, int lda, const float* a_scales,
                          const int8_t* w, const float* w_scales, const float* bias,
                          const float* residual, int ldr, float* c, int ldc, Act act);

  // Exact int32 accumulators only: acc[m][n] = sum_k a[m][k] * W[n][k]. For tests and checks.
  void (*gemm_s8_blocked_acc)(int m, int n, int k, const int8_t* a, int lda, const int8_t* w,
                              int32_t* acc, int ldacc);

  // y[m][d] = (x - mean) / sqrt(var + eps) * gamma + beta, per row; mean and var
  // (biased, = mean((x-mean)^2)) with the 8-lane reduction. y may alias x.
  // inv = 1.0f / sqrtf(var + eps); y = ((x - mean) * inv) * gamma + beta.
  void (*layer_norm)(const float* x, int m, int d, const float* gamma, const float* beta,
                     float eps, float* y);

  // Row-wise softmax over n scores in place, with an additive mask applied first:
  // s[j] = x[j] + (mask ? mask[j] : 0), where masked entries are -inf. Max over s;
  // if max == -inf (every key masked) the row becomes all zeros. e[j] = ExpRef(s[j] - max);
  // sum with the 8-lane reduction; x[j] = e[j] * (1.0f / sum).
  void (*softmax_masked)(float* x, int n, const float* mask);

  // dot(a, b) over n floats with the 8-lane reduction (attention scores QK^T).
  float (*dot_f32)(const float* a, const float* b, int n);

  // In-place activation over n floats (same formulas as the reference).
  void (*activation)(float* x, int n, Act act);

  // --- attention over a set of key / value rows (row j at base + r_j * ld floats, with
  // r_j = idx ? idx[j] : j) ---
  // out[j] = dot_f32(q, k_j, n) * scale for j < m (the same 8-lane dot).
  void (*attn_scores)(const float* q, const float* k, int ld, const int32_t* idx, int m, int n,
                      float scale, float* out);
  // ctx[0..n) = sum over j = 0..m-1 in order of p[j] * v_j, starting from +0, each step
  // ctx[i] = ctx[i] + (p[j] * v_j[i]); rows with p[j] == 0 (masked keys) are skipped.
  void (*attn_context)(const float* p, const float* v, int ld, const int32_t* idx, int m, int n,
                       float* ctx);
  // The same for `heads` heads of n floats side by side in each row (head h: q + h * n, columns
  // [h * n, h * n + n) of every key/value row), every row read once for all of them: scores
  // out[h * ldo + j] = attn_scores of head h; ctx[h * n .. h * n + n) = attn_context of head h
  // with probabilities p + h * ldp. Bit for bit what the per-head calls give.
  void (*attn_scores_heads)(const float* q, const float* k, int ld, const int32_t* idx, int m, int n, int heads,
                            float scale, float* out, int ldo);
  void (*attn_context_heads)(const float* p, int ldp, const float* v, int ld, const int32_t* idx, int m, int n,
                             int heads, float* ctx);

  // --- search over the logits (beam / greedy), n >= 1 ---
  // Log-softmax statistics without writing: *max_out = max over x (NaN skipped like
  // softmax_masked); returns sum of ExpRef(x[j] - max) with the 8-lane reduction, or 0 when
  // max == -inf. log_softmax(x)[j] = x[j] - (max + log(sum)), as torch computes it.
  float (*max_sum_exp)(const float* x, int n, float* max_out);
  // Candidate scan: the first j in [from, n) with s = (x[j] - sub) + add > thr (NaN never
  // passes); writes s to *s_out and returns j, or returns n when there is none.
  int (*scan_gt)(const float* x, int from, int n, float sub, float add, float thr, float* s_out);
  // First index of the maximum: best = 0; for j: if (x[j] > x[best]) best = j.
  int (*argmax)(const float* x, int n);

  // --- vocabulary shortlist: the GEMM over a list of 8-row blocks of W ---
  // w: BlockedN8K4 of [n][k] (w_scales[n], bias[n] or null); block_idx[s] in [0, ceil(n/8))
  // for s < nblocks (any order, repeats allowed; the caller checks the range). For each row i
  // of a and each s, j < 8, with weight row r = 8 * block_idx[s] + j:
  //   c[i][8s + j] = float(sum_k a[i][k] * W[r][k]) * (a_scales[i] * w_scales[r]) + bias[r]
  // (the dequantisation of gemm_s8_blocked, no residual, no activation), and 0 for r >= n
  // (the padding rows of a partial last block). c: [m][8 * nblocks], stride ldc floats.
  void (*gemm_s8_blocked_gather)(int m, int n, int nblocks, const int32_t* block_idx, int k,
                                 const int8_t* a, int lda, const float* a_scales, const int8_t* w,
                                 const float* w_scales, const float* bias, float* c, int ldc);
  // --- rows stored in another order (a shortlist's row order): gemm_s8_blocked's values, no
  // residual, no activation, written to column col[r] for weight row r < n:
  //   c[i][col[r]] = float(sum_k a[i][k] * W[r][k]) * (a_scales[i] * w_scales[r]) + bias[r]
  void (*gemm_s8_blocked_scatter)(int m, int n, int k, const int8_t* a, int lda, const float* a_scales,
                                  const int8_t* w, const float* w_scales, const float* bias, const int32_t* col,
                                  float* c, int ldc);

  // Rows of A up to which the int8 GEMM takes about as long for m rows as for this many: the
  // rows that share each weight read (the vector tables' row panel; 1 in the reference) or, in
  // avx512-amx, the 16 rows of one tile-unit instruction (gemm_bench: m 8 runs at 70 % of m 16's
  // operations per second). A decoder step on several threads with fewer rows per thread splits
  // its larger layers by output columns instead (runtime/src/decoder_step.cc).
  int gemm_panel_rows;
};

// Scalar reference kernels (always available).
const KernelTable& ReferenceKernels();
// The best table for this CPU (runtime dispatch). MTLITE_KERNELS=<table name> in the environment
// forces one (if the CPU supports it; another name is reported on stderr once, and the best kept).
const KernelTable& BestKernels();
// All tables this CPU can run (reference first), for tests and benchmarks.
int AvailableKernels(const KernelTable** out, int max);

// The specified exp: identical results on every ISA. Accurate to ~2 ulp on [-87, 88];
// returns 0 for x < -87.3 (and for -inf), +inf above 88.7.
float ExpRef(float x);

}  // namespace kernels
}  // namespace mtlite

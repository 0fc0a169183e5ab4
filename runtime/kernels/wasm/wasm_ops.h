// WebAssembly SIMD128 operations for the generic kernels (generic/vec_math.h lists what they are)
// and the epilogue of the GEMM micro-kernel, shared by the wasm translation units (wasm/).
// Internal linkage only.
//
// The 8 lanes of the contract are two v128 {0..3}, {4..7}, as NEON's float32x4_t pairs. SIMD128
// float arithmetic is IEEE 754 lane by lane (round to nearest, subnormals kept; only the bits of
// a NaN result are left to the engine, and NaN payloads are not part of the contract), so the
// same operations in the same order give the reference's bits. Only the deterministic SIMD128
// instructions are used: never relaxed SIMD (its results may differ between engines).
#pragma once

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include <cstdint>
#include <cstring>

#include "bits.h"
#include "generic/activation.h"
#include "generic/gemm_driver.h"
#include "kernels.h"

namespace mtlite {
namespace kernels {
namespace wasm {
namespace {

struct F8 {
  static constexpr int kW = 8;
  struct V {
    v128_t lo, hi;
  };
  struct M {
    v128_t lo, hi;
  };
  struct I {
    v128_t lo, hi;
  };
  using A = V;

  static V Set(float f) { return {wasm_f32x4_splat(f), wasm_f32x4_splat(f)}; }
  static V Load(const float* p) { return {wasm_v128_load(p), wasm_v128_load(p + 4)}; }
  static void Store(float* p, V v) {
    wasm_v128_store(p, v.lo);
    wasm_v128_store(p + 4, v.hi);
  }
  static V LoadPartial(const float* p, int count) {
    float t[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    std::memcpy(t, p, sizeof(float) * size_t(count));
    return Load(t);
  }
  static void StorePartial(float* p, int count, V v) {
    float t[8];
    Store(t, v);
    std::memcpy(p, t, sizeof(float) * size_t(count));
  }
  static M FirstLanes(int count) {
    const v128_t c = wasm_i32x4_splat(count);
    return {wasm_i32x4_gt(c, wasm_i32x4_make(0, 1, 2, 3)), wasm_i32x4_gt(c, wasm_i32x4_make(4, 5, 6, 7))};
  }
  static V KeepWhere(V v, M m) { return {wasm_v128_and(v.lo, m.lo), wasm_v128_and(v.hi, m.hi)}; }
  static V KeepFirst(V v, int count) { return KeepWhere(v, FirstLanes(count)); }
  static V Select(M m, V a, V b) { return {wasm_v128_bitselect(a.lo, b.lo, m.lo), wasm_v128_bitselect(a.hi, b.hi, m.hi)}; }
  static V FirstOr(V v, int count, float f) { return Select(FirstLanes(count), v, Set(f)); }

  static V Add(V a, V b) { return {wasm_f32x4_add(a.lo, b.lo), wasm_f32x4_add(a.hi, b.hi)}; }
  static V Sub(V a, V b) { return {wasm_f32x4_sub(a.lo, b.lo), wasm_f32x4_sub(a.hi, b.hi)}; }
  static V Mul(V a, V b) { return {wasm_f32x4_mul(a.lo, b.lo), wasm_f32x4_mul(a.hi, b.hi)}; }
  static V Div(V a, V b) { return {wasm_f32x4_div(a.lo, b.lo), wasm_f32x4_div(a.hi, b.hi)}; }
  static V Neg(V a) { return {wasm_f32x4_neg(a.lo), wasm_f32x4_neg(a.hi)}; }
  static M Gt(V a, V b) { return {wasm_f32x4_gt(a.lo, b.lo), wasm_f32x4_gt(a.hi, b.hi)}; }
  static M NotGt(V a, V b) { return {wasm_v128_not(wasm_f32x4_gt(a.lo, b.lo)), wasm_v128_not(wasm_f32x4_gt(a.hi, b.hi))}; }
  static M Eq(V a, V b) { return {wasm_f32x4_eq(a.lo, b.lo), wasm_f32x4_eq(a.hi, b.hi)}; }
  static M IsNaN(V a) { return {wasm_f32x4_ne(a.lo, a.lo), wasm_f32x4_ne(a.hi, a.hi)}; }
  static M OrMask(M a, M b) { return {wasm_v128_or(a.lo, b.lo), wasm_v128_or(a.hi, b.hi)}; }
  static bool AnyTrue(M m) { return wasm_v128_any_true(wasm_v128_or(m.lo, m.hi)); }
  static int FirstTrue(M m) {
    const uint32_t bits = wasm_i32x4_bitmask(m.lo) | (wasm_i32x4_bitmask(m.hi) << 4);
    return bits ? __builtin_ctz(bits) : -1;
  }
  // a > b ? a : b (f32x4.max would propagate NaN)
  static V MaxGt(V a, V b) { return Select(Gt(a, b), a, b); }
  static float HMax(V v) {  // no NaN lanes: exact in any order
    v128_t m = wasm_f32x4_max(v.lo, v.hi);
    m = wasm_f32x4_max(m, wasm_i32x4_shuffle(m, m, 2, 3, 0, 1));
    m = wasm_f32x4_max(m, wasm_i32x4_shuffle(m, m, 1, 0, 3, 2));
    return wasm_f32x4_extract_lane(m, 0);
  }

  static I TruncToInt(V v) { return {wasm_i32x4_trunc_sat_f32x4(v.lo), wasm_i32x4_trunc_sat_f32x4(v.hi)}; }
  static I ShiftRightArith1(I i) { return {wasm_i32x4_shr(i.lo, 1), wasm_i32x4_shr(i.hi, 1)}; }
  static I SubInt(I a, I b) { return {wasm_i32x4_sub(a.lo, b.lo), wasm_i32x4_sub(a.hi, b.hi)}; }
  static V Pow2(I n) {
    const v128_t bias = wasm_i32x4_splat(127);
    return {wasm_i32x4_shl(wasm_i32x4_add(n.lo, bias), 23), wasm_i32x4_shl(wasm_i32x4_add(n.hi, bias), 23)};
  }
  static V CvtInt(I i) { return {wasm_f32x4_convert_i32x4(i.lo), wasm_f32x4_convert_i32x4(i.hi)}; }

  static A AccZero() { return Set(0.0f); }
  static A AccAdd(A acc, V v) { return Add(acc, v); }
  // lanes 0..3 in lo, 4..7 in hi: ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7))
  static float Reduce8(A v) {
    const v128_t q = wasm_f32x4_add(v.lo, v.hi);
    const v128_t h = wasm_f32x4_add(q, wasm_i32x4_shuffle(q, q, 2, 3, 0, 1));
    return wasm_f32x4_extract_lane(h, 0) + wasm_f32x4_extract_lane(h, 1);
  }

  // quantisation (generic/quantize.h)
  using QI = v128_t;
  static QI QZero() { return wasm_i32x4_splat(0); }
  static QI QMaxAbsBits(QI acc, V v) {
    const v128_t abs_mask = wasm_i32x4_splat(0x7fffffff);
    acc = wasm_u32x4_max(acc, wasm_v128_and(v.lo, abs_mask));
    return wasm_u32x4_max(acc, wasm_v128_and(v.hi, abs_mask));
  }
  static uint32_t QHMax(QI v) {
    v = wasm_u32x4_max(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
    v = wasm_u32x4_max(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
    return uint32_t(wasm_i32x4_extract_lane(v, 0));
  }
  static bool QuantizeRowVectorOk(uint32_t) { return true; }
  // 4 floats (already x * inv) -> 4 int32 per the contract: NaN (0 * inf when 127 / maxabs
  // overflows) -> 0, clamp to [-127, 127], round half to even (f32x4.nearest), then convert
  // (exact: the values are integers).
  static v128_t QuantizeLanes(v128_t v) {
    v = wasm_v128_and(v, wasm_f32x4_eq(v, v));
    v = wasm_f32x4_min(wasm_f32x4_max(v, wasm_f32x4_splat(-127.0f)), wasm_f32x4_splat(127.0f));
    return wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(v));
  }
  static constexpr int kQ = 16;
  static void QuantizeW(const float* x, V inv, int8_t* q) {
    const v128_t q0 = QuantizeLanes(wasm_f32x4_mul(wasm_v128_load(x), inv.lo));
    const v128_t q1 = QuantizeLanes(wasm_f32x4_mul(wasm_v128_load(x + 4), inv.hi));
    const v128_t b = wasm_i8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(q0, q1), wasm_i16x8_splat(0));
    const int64_t lo8 = wasm_i64x2_extract_lane(b, 0);
    std::memcpy(q, &lo8, 8);
  }
  static void Quantize(const float* x, V inv, int8_t* q) {
    const v128_t q0 = QuantizeLanes(wasm_f32x4_mul(wasm_v128_load(x), inv.lo));
    const v128_t q1 = QuantizeLanes(wasm_f32x4_mul(wasm_v128_load(x + 4), inv.hi));
    const v128_t q2 = QuantizeLanes(wasm_f32x4_mul(wasm_v128_load(x + 8), inv.lo));
    const v128_t q3 = QuantizeLanes(wasm_f32x4_mul(wasm_v128_load(x + 12), inv.hi));
    wasm_v128_store(q, wasm_i8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(q0, q1), wasm_i16x8_narrow_i32x4(q2, q3)));
  }

  static void StoreInt(int32_t* p, I v) {
    wasm_v128_store(p, v.lo);
    wasm_v128_store(p + 4, v.hi);
  }
  static void StoreIntPartial(int32_t* p, int count, I v) {
    int32_t t[8];
    StoreInt(t, v);
    std::memcpy(p, t, sizeof(int32_t) * size_t(count));
  }
};

// The accumulators of one (row, block) of the int8 GEMM (wasm/gemm_wasm.cc) as two i32x4 (rows
// 0-3, 4-7), and their epilogues for the tile driver (generic/gemm_driver.h).
struct GemmCommon {
  using Acc = F8::I;
  // SiLU / GELU: a second pass over the rows just written (same operations, same results).
  static constexpr bool kActSecondPass = true;
  static void Epilogue(const Acc& acc, float as, const float* ws, const float* bias, const float* res,
                       float* out, int count, Act act) {
    generic::Epilogue8<F8>(acc, as, ws, bias, res, out, count, act);
  }
  static void Activation(float* x, int n, Act act) { generic::Activation<F8>(x, n, act); }
  static void StoreAcc(const Acc& acc, int32_t* out, int count) { generic::StoreAcc8<F8>(acc, out, count); }
};

}  // namespace
}  // namespace wasm
}  // namespace kernels
}  // namespace mtlite

#endif  // __wasm_simd128__

// AVX2 quantisation, layer norm, softmax, dot, axpy and activations, plus the AVX2 table.
// Bit-identical to the scalar reference: the same IEEE operations in the same order per
// element, the 8-lane reduction of kernels.h as one __m256 accumulator (the tail enters its
// lanes as a zero-filled partial vector, as the contract specifies). (x86 SSE/AVX scalar and vector arithmetic share MXCSR, so
// rounding mode and denormal handling are the same for both.)
#include "avx2/avx2_kernels.h"

#if defined(__AVX2__)
#include <immintrin.h>

#include <cstring>

#include "avx2/avx2_math.h"
#include "reference/kernels_reference.h"

namespace mtlite {
namespace kernels {
namespace avx2 {
namespace {

inline uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint32_t HMaxU32(__m256i v) {  // values are < 2^31
  __m128i q = _mm_max_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  q = _mm_max_epi32(q, _mm_shuffle_epi32(q, _MM_SHUFFLE(1, 0, 3, 2)));
  q = _mm_max_epi32(q, _mm_shuffle_epi32(q, _MM_SHUFFLE(2, 3, 0, 1)));
  return uint32_t(_mm_cvtsi128_si32(q));
}

// v -> int32 per the contract: NaN -> 0 (only 0 * inf makes one), clamp to [-127, 127]
// (commutes with rounding since the bounds are integers), then round half to even
// (vcvtps2dq uses MXCSR rounding: nearest-even, as std::nearbyint in the reference).
inline __m256i QuantizeLanes(__m256 v) {
  v = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));
  v = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f));
  return _mm256_cvtps_epi32(v);
}

void QuantizeRowsS8(const float* x, int m, int k, int ldx, int8_t* q, int ldq, float* scales) {
  const int kp = (k + 3) & ~3;
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff);
  for (int i = 0; i < m; ++i) {
    const float* xr = x + size_t(i) * ldx;
    int8_t* qr = q + size_t(i) * ldq;
    // maxabs on the bit patterns: for |x| the integer order is the float order, with
    // inf > finite and NaN > inf, so any non-finite value gives bits >= 0x7f800000.
    __m256i mv = _mm256_setzero_si256();
    int j = 0;
    for (; j + 8 <= k; j += 8)
      mv = _mm256_max_epi32(
          mv, _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xr + j)), abs_mask));
    uint32_t mb = HMaxU32(mv);
    for (; j < k; ++j) {
      const uint32_t b = FloatBits(xr[j]) & 0x7fffffffu;
      mb = b > mb ? b : mb;
    }
    if (mb == 0 || mb >= 0x7f800000u) {
      std::memset(qr, 0, size_t(kp));
      scales[i] = 0.0f;
      continue;
    }
    const float maxabs = BitsFloat(mb);
    const float inv = 127.0f / maxabs;
    scales[i] = maxabs / 127.0f;
    const __m256 vinv = _mm256_set1_ps(inv);
    const __m256i perm = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    j = 0;
    for (; j + 32 <= k; j += 32) {
      const __m256i q0 = QuantizeLanes(_mm256_mul_ps(_mm256_loadu_ps(xr + j), vinv));
      const __m256i q1 = QuantizeLanes(_mm256_mul_ps(_mm256_loadu_ps(xr + j + 8), vinv));
      const __m256i q2 = QuantizeLanes(_mm256_mul_ps(_mm256_loadu_ps(xr + j + 16), vinv));
      const __m256i q3 = QuantizeLanes(_mm256_mul_ps(_mm256_loadu_ps(xr + j + 24), vinv));
      // packs work per 128-bit lane: bytes come out as dword groups 0,2,4,6,1,3,5,7 -> permute.
      const __m256i b =
          _mm256_packs_epi16(_mm256_packs_epi32(q0, q1), _mm256_packs_epi32(q2, q3));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(qr + j), _mm256_permutevar8x32_epi32(b, perm));
    }
    for (; j + 8 <= k; j += 8) {
      const __m256i q0 = QuantizeLanes(_mm256_mul_ps(_mm256_loadu_ps(xr + j), vinv));
      const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(q0), _mm256_extracti128_si256(q0, 1));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(qr + j), _mm_packs_epi16(w, w));
    }
    for (; j < k; ++j) qr[j] = ref::QuantizeOne(xr[j] * inv);
    for (; j < kp; ++j) qr[j] = 0;
  }
}

void LayerNorm(const float* x, int m, int d, const float* gamma, const float* beta, float eps,
               float* y) {
  const int d8 = d & ~7;
  for (int i = 0; i < m; ++i) {
    const float* xr = x + size_t(i) * d;
    float* yr = y + size_t(i) * d;
    const __m256i tail = TailMask(d - d8);
    __m256 acc = _mm256_setzero_ps();
    for (int j = 0; j < d8; j += 8) acc = _mm256_add_ps(acc, _mm256_loadu_ps(xr + j));
    if (d8 < d) acc = _mm256_add_ps(acc, _mm256_maskload_ps(xr + d8, tail));
    const float mean = Reduce8(acc) / float(d);
    const __m256 vmean = _mm256_set1_ps(mean);
    acc = _mm256_setzero_ps();
    for (int j = 0; j < d8; j += 8) {
      const __m256 t = _mm256_sub_ps(_mm256_loadu_ps(xr + j), vmean);
      acc = _mm256_add_ps(acc, _mm256_mul_ps(t, t));
    }
    if (d8 < d) {
      const __m256 t = _mm256_sub_ps(_mm256_maskload_ps(xr + d8, tail), vmean);
      acc = _mm256_add_ps(acc, _mm256_and_ps(_mm256_mul_ps(t, t), _mm256_castsi256_ps(tail)));
    }
    const float var = Reduce8(acc) / float(d);
    const float inv = 1.0f / __builtin_sqrtf(var + eps);
    const __m256 vinv = _mm256_set1_ps(inv);
    for (int j = 0; j < d8; j += 8) {
      const __m256 t = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(xr + j), vmean), vinv);
      _mm256_storeu_ps(yr + j, _mm256_add_ps(_mm256_mul_ps(t, _mm256_loadu_ps(gamma + j)),
                                             _mm256_loadu_ps(beta + j)));
    }
    for (int j = d8; j < d; ++j) yr[j] = ((xr[j] - mean) * inv) * gamma[j] + beta[j];
  }
}

inline float HMax(__m256 v) {  // no NaN lanes here; max is exact in any order
  __m128 q = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  q = _mm_max_ps(q, _mm_movehl_ps(q, q));
  q = _mm_max_ss(q, _mm_movehdup_ps(q));
  return _mm_cvtss_f32(q);
}

void SoftmaxMasked(float* x, int n, const float* mask) {
  const float ninf = -__builtin_inff();
  const int n8 = n & ~7;
  // s = x + mask; max skips NaN like the reference (MAXPS(s, m) keeps m unless s > m).
  __m256 mv = _mm256_set1_ps(ninf);
  if (mask) {
    for (int j = 0; j < n8; j += 8) {
      const __m256 s = _mm256_add_ps(_mm256_loadu_ps(x + j), _mm256_loadu_ps(mask + j));
      _mm256_storeu_ps(x + j, s);
      mv = _mm256_max_ps(s, mv);
    }
  } else {
    for (int j = 0; j < n8; j += 8) mv = _mm256_max_ps(_mm256_loadu_ps(x + j), mv);
  }
  float mx = HMax(mv);
  for (int j = n8; j < n; ++j) {
    const float s = mask ? x[j] + mask[j] : x[j];
    x[j] = s;
    mx = s > mx ? s : mx;
  }
  if (mx == ninf) {
    std::memset(x, 0, sizeof(float) * size_t(n));
    return;
  }
  const __m256 vmx = _mm256_set1_ps(mx);
  __m256 acc = _mm256_setzero_ps();
  for (int j = 0; j < n8; j += 8) {
    const __m256 e = Exp(_mm256_sub_ps(_mm256_loadu_ps(x + j), vmx));
    _mm256_storeu_ps(x + j, e);
    acc = _mm256_add_ps(acc, e);
  }
  if (n8 < n) {
    const __m256i tail = TailMask(n - n8);
    const __m256 e = _mm256_and_ps(Exp(_mm256_sub_ps(_mm256_maskload_ps(x + n8, tail), vmx)),
                                   _mm256_castsi256_ps(tail));
    _mm256_maskstore_ps(x + n8, tail, e);
    acc = _mm256_add_ps(acc, e);
  }
  const float inv = 1.0f / Reduce8(acc);
  const __m256 vinv = _mm256_set1_ps(inv);
  for (int j = 0; j < n8; j += 8) _mm256_storeu_ps(x + j, _mm256_mul_ps(_mm256_loadu_ps(x + j), vinv));
  for (int j = n8; j < n; ++j) x[j] = x[j] * inv;
}

float Dot(const float* a, const float* b, int n);

void AttnScores(const float* q, const float* k, int ld, const int32_t* idx, int m, int n, float scale,
                float* out) {
  // Four keys at a time share the query loads; each key's lanes and reduction are Dot's.
  const int n8 = n & ~7;
  const __m256i tail = TailMask(n - n8);
  auto row = [&](int j) { return k + size_t(idx ? idx[j] : j) * size_t(ld); };
  int j = 0;
  for (; j + 4 <= m; j += 4) {
    const float *k0 = row(j), *k1 = row(j + 1), *k2 = row(j + 2), *k3 = row(j + 3);
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int i = 0; i < n8; i += 8) {
      const __m256 qv = _mm256_loadu_ps(q + i);
      a0 = _mm256_add_ps(a0, _mm256_mul_ps(qv, _mm256_loadu_ps(k0 + i)));
      a1 = _mm256_add_ps(a1, _mm256_mul_ps(qv, _mm256_loadu_ps(k1 + i)));
      a2 = _mm256_add_ps(a2, _mm256_mul_ps(qv, _mm256_loadu_ps(k2 + i)));
      a3 = _mm256_add_ps(a3, _mm256_mul_ps(qv, _mm256_loadu_ps(k3 + i)));
    }
    if (n8 < n) {
      const __m256 qv = _mm256_maskload_ps(q + n8, tail);
      a0 = _mm256_add_ps(a0, _mm256_mul_ps(qv, _mm256_maskload_ps(k0 + n8, tail)));
      a1 = _mm256_add_ps(a1, _mm256_mul_ps(qv, _mm256_maskload_ps(k1 + n8, tail)));
      a2 = _mm256_add_ps(a2, _mm256_mul_ps(qv, _mm256_maskload_ps(k2 + n8, tail)));
      a3 = _mm256_add_ps(a3, _mm256_mul_ps(qv, _mm256_maskload_ps(k3 + n8, tail)));
    }
    out[j] = Reduce8(a0) * scale;
    out[j + 1] = Reduce8(a1) * scale;
    out[j + 2] = Reduce8(a2) * scale;
    out[j + 3] = Reduce8(a3) * scale;
  }
  for (; j < m; ++j) out[j] = Dot(q, row(j), n) * scale;
}

void AttnContext(const float* p, const float* v, int ld, const int32_t* idx, int m, int n, float* ctx) {
  // One 8-float column slice at a time, summed over every row j in order in a register.
  for (int c = 0; c < n; c += 8) {
    const bool full = c + 8 <= n;
    const __m256i mask = TailMask(full ? 8 : n - c);
    __m256 acc = _mm256_setzero_ps();
    for (int j = 0; j < m; ++j) {
      if (p[j] == 0.0f) continue;
      const float* vr = v + size_t(idx ? idx[j] : j) * size_t(ld) + c;
      const __m256 x = full ? _mm256_loadu_ps(vr) : _mm256_maskload_ps(vr, mask);
      acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_set1_ps(p[j]), x));
    }
    if (full)
      _mm256_storeu_ps(ctx + c, acc);
    else
      _mm256_maskstore_ps(ctx + c, mask, acc);
  }
}

float MaxSumExp(const float* x, int n, float* max_out) {
  const float ninf = -__builtin_inff();
  const int n8 = n & ~7;
  __m256 mv = _mm256_set1_ps(ninf);
  for (int j = 0; j < n8; j += 8) mv = _mm256_max_ps(_mm256_loadu_ps(x + j), mv);  // skips NaN in x
  float mx = HMax(mv);
  for (int j = n8; j < n; ++j) mx = x[j] > mx ? x[j] : mx;
  *max_out = mx;
  if (mx == ninf) return 0.0f;
  const __m256 vmx = _mm256_set1_ps(mx);
  __m256 acc = _mm256_setzero_ps();
  for (int j = 0; j < n8; j += 8) acc = _mm256_add_ps(acc, Exp(_mm256_sub_ps(_mm256_loadu_ps(x + j), vmx)));
  if (n8 < n) {
    const __m256i tail = TailMask(n - n8);
    acc = _mm256_add_ps(acc, _mm256_and_ps(Exp(_mm256_sub_ps(_mm256_maskload_ps(x + n8, tail), vmx)),
                                           _mm256_castsi256_ps(tail)));
  }
  return Reduce8(acc);
}

int ScanGt(const float* x, int from, int n, float sub, float add, float thr, float* s_out) {
  int j = from < 0 ? 0 : from;
  const __m256 vsub = _mm256_set1_ps(sub), vadd = _mm256_set1_ps(add), vthr = _mm256_set1_ps(thr);
  for (; j + 8 <= n; j += 8) {
    const __m256 s = _mm256_add_ps(_mm256_sub_ps(_mm256_loadu_ps(x + j), vsub), vadd);
    if (_mm256_movemask_ps(_mm256_cmp_ps(s, vthr, _CMP_GT_OQ))) break;  // a hit in these 8
  }
  return ref::ScanGt(x, j, n, sub, add, thr, s_out);  // the hit's block, or the tail
}

int Argmax(const float* x, int n) {
  // Pass 1: the maximum, and whether any NaN is present (then the reference's order-dependent
  // answer is used). Pass 2: the first index holding the maximum.
  const int n8 = n & ~7;
  __m256 mv = _mm256_set1_ps(-__builtin_inff());
  __m256 nan = _mm256_setzero_ps();
  for (int j = 0; j < n8; j += 8) {
    const __m256 v = _mm256_loadu_ps(x + j);
    mv = _mm256_max_ps(v, mv);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  bool any_nan = _mm256_movemask_ps(nan) != 0;
  float mx = HMax(mv);
  for (int j = n8; j < n; ++j) {
    any_nan |= x[j] != x[j];
    mx = x[j] > mx ? x[j] : mx;
  }
  if (any_nan) return ref::Argmax(x, n);
  const __m256 vmx = _mm256_set1_ps(mx);
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    const int bits = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + j), vmx, _CMP_EQ_OQ));
    if (bits) return j + __builtin_ctz(unsigned(bits));
  }
  for (; j < n; ++j)
    if (x[j] == mx) return j;
  return 0;  // n <= 0
}

float Dot(const float* a, const float* b, int n) {
  const int n8 = n & ~7;
  __m256 acc = _mm256_setzero_ps();
  for (int i = 0; i < n8; i += 8)
    acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
  if (n8 < n) {
    const __m256i tail = TailMask(n - n8);
    acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_maskload_ps(a + n8, tail), _mm256_maskload_ps(b + n8, tail)));
  }
  return Reduce8(acc);
}

void Axpy(float alpha, const float* x, float* y, int n) {
  const __m256 va = _mm256_set1_ps(alpha);
  int i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(y + i), _mm256_mul_ps(va, _mm256_loadu_ps(x + i))));
  for (; i < n; ++i) y[i] = y[i] + alpha * x[i];
}

}  // namespace

template <class F>
inline void ApplyLanes(float* x, int n, F f) {
  int i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, f(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i mask = TailMask(n - i);
    _mm256_maskstore_ps(x + i, mask, f(_mm256_maskload_ps(x + i, mask)));
  }
}

void Activation(float* x, int n, Act act) {
  switch (act) {
    case Act::kNone: return;
    case Act::kSiLU: ApplyLanes(x, n, [](__m256 v) { return SiLU(v); }); return;
    case Act::kReLU: ApplyLanes(x, n, [](__m256 v) { return ReLU(v); }); return;
    case Act::kGELU: ApplyLanes(x, n, [](__m256 v) { return GELU(v); }); return;
    case Act::kGELUTanh: ApplyLanes(x, n, [](__m256 v) { return GELUTanh(v); }); return;
  }
  ref::Activation(x, n, act);  // unknown enum value: whatever the reference does
}

}  // namespace avx2

const KernelTable& Avx2Kernels() {
  static const KernelTable table = {
      "avx2",
      avx2::QuantizeRowsS8,
      avx2::GemmS8Blocked,
      avx2::GemmS8BlockedAcc,
      avx2::LayerNorm,
      avx2::SoftmaxMasked,
      avx2::Dot,
      avx2::Axpy,
      avx2::Activation,
      avx2::AttnScores,
      avx2::AttnContext,
      avx2::MaxSumExp,
      avx2::ScanGt,
      avx2::Argmax,
  };
  return table;
}

}  // namespace kernels
}  // namespace mtlite

#endif  // __AVX2__

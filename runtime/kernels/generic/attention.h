// Attention kernels (kernels.h contract): softmax_masked, dot_f32, attn_scores, attn_context,
// written once over an ISA's operations D (generic/vec_math.h). Sums use the 8-lane reduction
// (D::AccAdd / D::Reduce8); tails enter their lanes as zero-filled partial vectors.
#pragma once

#include <cstring>

#include "generic/vec_math.h"
#include "kernels.h"

namespace mtlite {
namespace kernels {
namespace generic {

// Rows gathered through idx (a beam's ancestors in the decoder's KV cache: cache rows of positions
// 0..t, wherever each position's ancestor sat) jump in a pattern the hardware prefetchers do not
// follow, and after a layer's weight stream they come from L3: the row kRowsAhead rows on is
// prefetched while the current one is summed. OPUS-MT base shape, beam 4 with the shortlist:
// self-attention 12.7-13.1 -> 10.1-10.3 us per layer. Contiguous rows (idx null: the source
// rows of cross-attention, the encoder) are left to the hardware, which measured as fast.
constexpr int kRowsAhead = 4;
inline void PrefetchRow(const float* p, int floats) {
  const char* c = reinterpret_cast<const char*>(p);
  for (int o = 0; o < floats * int(sizeof(float)); o += 64) __builtin_prefetch(c + o, 0, 3);
}

template <class D>
void SoftmaxMasked(float* x, int n, const float* mask) {
  constexpr int W = D::kW;
  const float ninf = -__builtin_inff();
  const int nw = n - n % W, rest = n - nw;
  // s = x + mask; the max skips NaN like the reference (keep m unless s > m).
  auto mv = D::Set(ninf);
  if (mask) {
    for (int j = 0; j < nw; j += W) {
      const auto s = D::Add(D::Load(x + j), D::Load(mask + j));
      D::Store(x + j, s);
      mv = D::MaxGt(s, mv);
    }
  } else {
    for (int j = 0; j < nw; j += W) mv = D::MaxGt(D::Load(x + j), mv);
  }
  // The tail (a partial vector) stays in a register through every pass: a masked store read
  // back by the next pass cannot be forwarded and stalls (4x slower rows of 8 with AVX-512).
  auto tail = D::Set(0.0f);
  if (rest) {
    tail = D::LoadPartial(x + nw, rest);
    if (mask) tail = D::Add(tail, D::LoadPartial(mask + nw, rest));
    mv = D::MaxGt(D::FirstOr(tail, rest, ninf), mv);  // missing lanes -inf for the max
  }
  const float mx = D::HMax(mv);
  if (mx == ninf) {
    std::memset(x, 0, sizeof(float) * size_t(n));
    return;
  }
  const auto vmx = D::Set(mx);
  auto acc = D::AccZero();
  for (int j = 0; j < nw; j += W) {
    const auto e = Exp<D>(D::Sub(D::Load(x + j), vmx));
    D::Store(x + j, e);
    acc = D::AccAdd(acc, e);
  }
  if (rest) {
    tail = D::KeepFirst(Exp<D>(D::Sub(tail, vmx)), rest);
    acc = D::AccAdd(acc, tail);
  }
  const float inv = 1.0f / D::Reduce8(acc);
  const auto vinv = D::Set(inv);
  for (int j = 0; j < nw; j += W) D::Store(x + j, D::Mul(D::Load(x + j), vinv));
  if (rest) D::StorePartial(x + nw, rest, D::Mul(tail, vinv));
}

template <class D>
float Dot(const float* a, const float* b, int n) {
  constexpr int W = D::kW;
  const int nw = n - n % W, rest = n - nw;
  auto acc = D::AccZero();
  for (int i = 0; i < nw; i += W) acc = D::AccAdd(acc, D::Mul(D::Load(a + i), D::Load(b + i)));
  if (rest) acc = D::AccAdd(acc, D::Mul(D::LoadPartial(a + nw, rest), D::LoadPartial(b + nw, rest)));
  return D::Reduce8(acc);
}

template <class D>
void AttnScores(const float* q, const float* k, int ld, const int32_t* idx, int m, int n, float scale,
                float* out) {
  // Four keys at a time share the query loads; each key's lanes and reduction are Dot's.
  constexpr int W = D::kW;
  const int nw = n - n % W, rest = n - nw;
  auto row = [&](int j) { return k + size_t(idx ? idx[j] : j) * size_t(ld); };
  int j = 0;
  for (; j + 4 <= m; j += 4) {
    const float *k0 = row(j), *k1 = row(j + 1), *k2 = row(j + 2), *k3 = row(j + 3);
    auto a0 = D::AccZero(), a1 = a0, a2 = a0, a3 = a0;
    for (int i = 0; i < nw; i += W) {
      const auto qv = D::Load(q + i);
      a0 = D::AccAdd(a0, D::Mul(qv, D::Load(k0 + i)));
      a1 = D::AccAdd(a1, D::Mul(qv, D::Load(k1 + i)));
      a2 = D::AccAdd(a2, D::Mul(qv, D::Load(k2 + i)));
      a3 = D::AccAdd(a3, D::Mul(qv, D::Load(k3 + i)));
    }
    if (rest) {
      const auto qv = D::LoadPartial(q + nw, rest);
      a0 = D::AccAdd(a0, D::Mul(qv, D::LoadPartial(k0 + nw, rest)));
      a1 = D::AccAdd(a1, D::Mul(qv, D::LoadPartial(k1 + nw, rest)));
      a2 = D::AccAdd(a2, D::Mul(qv, D::LoadPartial(k2 + nw, rest)));
      a3 = D::AccAdd(a3, D::Mul(qv, D::LoadPartial(k3 + nw, rest)));
    }
    out[j] = D::Reduce8(a0) * scale;
    out[j + 1] = D::Reduce8(a1) * scale;
    out[j + 2] = D::Reduce8(a2) * scale;
    out[j + 3] = D::Reduce8(a3) * scale;
  }
  for (; j < m; ++j) out[j] = Dot<D>(q, row(j), n) * scale;
}

template <class D>
void AttnContext(const float* p, const float* v, int ld, const int32_t* idx, int m, int n, float* ctx) {
  // Four kW-float column slices per pass over the rows (a head of 64 floats in one pass with 16
  // lanes, two with 8): a row's four loads are adjacent lines, in flight together, and four
  // independent sums hide the add latency. One slice per pass fetched each row's lines one pass
  // at a time, and the decoder's attention over a KV cache that the weight stream had pushed out
  // of L1/L2 waited on every line. The last columns (fewer than four slices) take one slice per
  // pass. Each output is still summed over the rows j in order.
  constexpr int W = D::kW;
  auto row = [&](int j) { return v + size_t(idx ? idx[j] : j) * size_t(ld); };
  int c = 0;
  for (; c + 4 * W <= n; c += 4 * W) {
    auto a0 = D::Set(0.0f), a1 = a0, a2 = a0, a3 = a0;
    for (int j = 0; j < m; ++j) {
      if (p[j] == 0.0f) continue;
      const float* vr = row(j) + c;
      const auto pj = D::Set(p[j]);
      a0 = D::Add(a0, D::Mul(pj, D::Load(vr)));
      a1 = D::Add(a1, D::Mul(pj, D::Load(vr + W)));
      a2 = D::Add(a2, D::Mul(pj, D::Load(vr + 2 * W)));
      a3 = D::Add(a3, D::Mul(pj, D::Load(vr + 3 * W)));
    }
    D::Store(ctx + c, a0);
    D::Store(ctx + c + W, a1);
    D::Store(ctx + c + 2 * W, a2);
    D::Store(ctx + c + 3 * W, a3);
  }
  for (; c < n; c += W) {
    const int cnt = n - c < W ? n - c : W;
    auto acc = D::Set(0.0f);
    for (int j = 0; j < m; ++j) {
      if (p[j] == 0.0f) continue;
      const float* vr = row(j) + c;
      const auto x = cnt == W ? D::Load(vr) : D::LoadPartial(vr, cnt);
      acc = D::Add(acc, D::Mul(D::Set(p[j]), x));
    }
    if (cnt == W)
      D::Store(ctx + c, acc);
    else
      D::StorePartial(ctx + c, cnt, acc);
  }
}

template <class D>
void AttnScoresHeads(const float* q, const float* k, int ld, const int32_t* idx, int m, int n, int heads, float scale,
                     float* out, int ldo) {
  // Row by row (its heads are adjacent in memory: one sequential read of the K cache), four heads
  // at a time in independent sums; each (head, key) is Dot's computation, as in AttnScores.
  constexpr int W = D::kW;
  const int nw = n - n % W, rest = n - nw;
  for (int j = 0; j < m; ++j) {
    const float* r = k + size_t(idx ? idx[j] : j) * size_t(ld);
    if (idx && j + kRowsAhead < m) PrefetchRow(k + size_t(idx[j + kRowsAhead]) * size_t(ld), heads * n);
    int h = 0;
    for (; h + 4 <= heads; h += 4) {
      const float *q0 = q + size_t(h) * n, *q1 = q0 + n, *q2 = q1 + n, *q3 = q2 + n;
      const float *k0 = r + size_t(h) * n, *k1 = k0 + n, *k2 = k1 + n, *k3 = k2 + n;
      auto a0 = D::AccZero(), a1 = a0, a2 = a0, a3 = a0;
      for (int i = 0; i < nw; i += W) {
        a0 = D::AccAdd(a0, D::Mul(D::Load(q0 + i), D::Load(k0 + i)));
        a1 = D::AccAdd(a1, D::Mul(D::Load(q1 + i), D::Load(k1 + i)));
        a2 = D::AccAdd(a2, D::Mul(D::Load(q2 + i), D::Load(k2 + i)));
        a3 = D::AccAdd(a3, D::Mul(D::Load(q3 + i), D::Load(k3 + i)));
      }
      if (rest) {
        a0 = D::AccAdd(a0, D::Mul(D::LoadPartial(q0 + nw, rest), D::LoadPartial(k0 + nw, rest)));
        a1 = D::AccAdd(a1, D::Mul(D::LoadPartial(q1 + nw, rest), D::LoadPartial(k1 + nw, rest)));
        a2 = D::AccAdd(a2, D::Mul(D::LoadPartial(q2 + nw, rest), D::LoadPartial(k2 + nw, rest)));
        a3 = D::AccAdd(a3, D::Mul(D::LoadPartial(q3 + nw, rest), D::LoadPartial(k3 + nw, rest)));
      }
      out[size_t(h) * ldo + j] = D::Reduce8(a0) * scale;
      out[size_t(h + 1) * ldo + j] = D::Reduce8(a1) * scale;
      out[size_t(h + 2) * ldo + j] = D::Reduce8(a2) * scale;
      out[size_t(h + 3) * ldo + j] = D::Reduce8(a3) * scale;
    }
    for (; h < heads; ++h) out[size_t(h) * ldo + j] = Dot<D>(q + size_t(h) * n, r + size_t(h) * n, n) * scale;
  }
}

// AttnContextHeads' register form: heads [0, hg) (hg a multiple of G), columns [0, nc) of each
// (nc a multiple of S W), G heads x S vectors of columns at a time, their sums in registers.
template <class D, int S, int G>
void AttnContextHeadsRegs(const float* p, int ldp, const float* v, int ld, const int32_t* idx, int m, int n, int hg,
                          int nc, float* ctx) {
  constexpr int W = D::kW;
  using V = typename D::V;
  for (int h = 0; h < hg; h += G) {
    for (int c = 0; c < nc; c += S * W) {
      V a[G][S];
#pragma GCC unroll 16
      for (int g = 0; g < G; ++g)
#pragma GCC unroll 4
        for (int q = 0; q < S; ++q) a[g][q] = D::Set(0.0f);
      for (int j = 0; j < m; ++j) {
        const float* r = v + size_t(idx ? idx[j] : j) * size_t(ld) + size_t(h) * n + c;
        if (idx && c == 0 && j + kRowsAhead < m)  // the group's heads, on the first pass
          PrefetchRow(v + size_t(idx[j + kRowsAhead]) * size_t(ld) + size_t(h) * n, G * n);
#pragma GCC unroll 16
        for (int g = 0; g < G; ++g) {
          const float pj = p[size_t(h + g) * ldp + j];
          if (pj == 0.0f) continue;
          const V vp = D::Set(pj);
#pragma GCC unroll 4
          for (int q = 0; q < S; ++q) a[g][q] = D::Add(a[g][q], D::Mul(vp, D::Load(r + size_t(g) * n + q * W)));
        }
      }
#pragma GCC unroll 16
      for (int g = 0; g < G; ++g)
#pragma GCC unroll 4
        for (int q = 0; q < S; ++q) D::Store(ctx + size_t(h + g) * n + c + q * W, a[g][q]);
    }
  }
}

template <class D>
void AttnContextHeads(const float* p, int ldp, const float* v, int ld, const int32_t* idx, int m, int n, int heads,
                      float* ctx) {
  // Each output summed over the rows in order as in AttnContext: ctx = ctx + p * v from +0,
  // masked rows (p == 0) skipped per head. Groups of G heads x S vectors of columns (S = 4, 2 or
  // 1 by the head width; G S = 16 accumulators with 16 lanes, 8 with fewer) keep their sums in
  // registers over the rows, reading a row's G heads as one stretch (hot, AVX-512, 4 heads of 64
  // with the scores: 490 -> 313 ns at 16 keys; the sums kept in ctx, stored and re-loaded per
  // row, took about 1.5 times as long). The columns past the last group of a head, and the heads
  // past the last group, keep theirs in ctx (L1), row by row.
  constexpr int W = D::kW;
  constexpr int kAcc = W >= 16 ? 16 : 8;
  using V = typename D::V;
  const int S = n >= 4 * W ? 4 : n >= 2 * W ? 2 : n >= W ? 1 : 0;
  const int G = S > 0 ? kAcc / S : 1;
  const int nc = S > 0 ? n - n % (S * W) : 0;  // columns summed in registers (per head)
  const int hg = nc > 0 ? heads - heads % G : 0;  // heads summed in registers
  if (hg > 0) {
    if (S == 4)
      AttnContextHeadsRegs<D, 4, kAcc / 4>(p, ldp, v, ld, idx, m, n, hg, nc, ctx);
    else if (S == 2)
      AttnContextHeadsRegs<D, 2, kAcc / 2>(p, ldp, v, ld, idx, m, n, hg, nc, ctx);
    else
      AttnContextHeadsRegs<D, 1, kAcc>(p, ldp, v, ld, idx, m, n, hg, nc, ctx);
  }
  // the rest: columns [c0, n) of heads [h0, h1), sums in ctx
  auto in_memory = [&](int h0, int h1, int c0) {
    const int len = n - c0, lw = len - len % W, rest = len - lw;
    if (h1 <= h0 || len <= 0) return;
    for (int h = h0; h < h1; ++h)
      for (int i = c0; i < n; ++i) ctx[size_t(h) * n + i] = 0.0f;
    for (int j = 0; j < m; ++j) {
      const float* r = v + size_t(idx ? idx[j] : j) * size_t(ld);
      for (int h = h0; h < h1; ++h) {
        const float pj = p[size_t(h) * ldp + j];
        if (pj == 0.0f) continue;
        const V vp = D::Set(pj);
        float* c = ctx + size_t(h) * n + c0;
        const float* x = r + size_t(h) * n + c0;
        for (int i = 0; i < lw; i += W) D::Store(c + i, D::Add(D::Load(c + i), D::Mul(vp, D::Load(x + i))));
        if (rest)
          D::StorePartial(c + lw, rest, D::Add(D::LoadPartial(c + lw, rest), D::Mul(vp, D::LoadPartial(x + lw, rest))));
      }
    }
  };
  in_memory(0, hg, nc);
  in_memory(hg, heads, 0);
}

// The attention entries of a table, for float operations D.
template <class D>
void SetAttentionEntries(KernelTable& t) {
  t.softmax_masked = SoftmaxMasked<D>;
  t.dot_f32 = Dot<D>;
  t.attn_scores = AttnScores<D>;
  t.attn_context = AttnContext<D>;
  t.attn_scores_heads = AttnScoresHeads<D>;
  t.attn_context_heads = AttnContextHeads<D>;
}

}  // namespace generic
}  // namespace kernels
}  // namespace mtlite

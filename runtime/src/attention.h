// Scaled dot-product attention of one query row and one head over a set of key/value rows, the
// one primitive behind encoder self-attention, decoder self-attention over the KV cache and
// cross-attention. Key/value row j sits at base + r_j * ld floats, r_j = idx ? idx[j] : j (the
// decoder reads its beam's past through an ancestor index). The mask is additive (-inf on masked
// keys) and applied before the softmax; a row whose keys are all masked becomes zeros.
//   encoder self-attention: mask = source padding of the sentence;
//   decoder self-attention: no mask, keys 0..t only (causal by construction: later keys do not
//                           exist yet);
//   cross-attention:        mask = source padding only, never causal.
#pragma once

#include <cstdint>

#include "kernels.h"

namespace mtlite {
namespace detail {

// `heads` heads at once (head h: q + h * hd and columns [h * hd, h * hd + hd) of every key/value
// row; ctx likewise), each row read once for all of them: per head, the probabilities
// (attn_scores, then softmax_masked) and ctx = sum_j p_j * v_j (attn_context), the same values as
// those entries give head by head. scores: heads * m floats (head h's at scores + h * m).
inline void AttendHeads(const kernels::KernelTable& K, const float* q, const float* keys, const float* values,
                        int ld, const int32_t* idx, int m, int hd, int heads, float scale, const float* mask,
                        float* scores, float* ctx) {
  K.attn_scores_heads(q, keys, ld, idx, m, hd, heads, scale, scores, m);
  for (int h = 0; h < heads; ++h) K.softmax_masked(scores + size_t(h) * m, m, mask);
  K.attn_context_heads(scores, m, values, ld, idx, m, hd, heads, ctx);
}

// Probabilities only (alignments): scores[0..m).
inline void AttentionProbs(const kernels::KernelTable& K, const float* q, const float* keys, int ld, int m, int hd,
                           float scale, const float* mask, float* scores) {
  K.attn_scores(q, keys, ld, nullptr, m, hd, scale, scores);
  K.softmax_masked(scores, m, mask);
}

}  // namespace detail
}  // namespace mtlite

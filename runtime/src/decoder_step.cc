// One incremental decoder step: causal self-attention over the beam-history KV cache,
// cross-attention over the encoder K/V (source padding masked, never causal), FFN, and the
// output projection.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "attention.h"
#include "status_macros.h"
#include "transformer.h"

namespace mtlite {
namespace detail {

using kernels::Act;

Status Transformer::DecoderStep(int t, int n, const int32_t* slots, const int32_t* tokens, BeamHistory* history,
                                int align_layer, float** logits) {
  const kernels::KernelTable& K = *exec_.K;
  const Dims& x = dims_;
  const int d = x.d, H = cfg_->decoder_heads, hd = d / H, R = x.R, W = x.W, T = x.T;
  const float scaling = 1.0f / std::sqrt(float(hd));
  const int smax = smax_;
  for (int i = 0; i < n; ++i) {
    Embed(md_->target_embed, tokens[i], t, pos_dec_, dx_ + size_t(i) * d);
    history->Ancestors(t, slots[i], anc_ + size_t(i) * T);  // KV-cache rows of positions 0..t
  }
  const Act act = ToAct(cfg_->activation);
  const int scores_stride = std::max(x.S, x.T);
  const LinearScratch& sc = dec_scratch_;
  const size_t cross_stride = size_t(x.B) * x.S * d;
  for (int l = 0; l < x.Ld; ++l) {
    const DecoderLayerView& Wt = md_->decoder[size_t(l)];
    float* kc = kcache_ + size_t(l) * T * R * d;
    float* vc = vcache_ + size_t(l) * T * R * d;
    // --- causal self-attention over this row's own history (positions 0..t) ---
    MTLITE_RETURN_IF_ERROR(dec(l, 0).Run(exec_, dx_, n, dq_, nullptr, Act::kNone, sc));
    MTLITE_RETURN_IF_ERROR(dec(l, 1).Run(exec_, dx_, n, dk_, nullptr, Act::kNone, sc));
    MTLITE_RETURN_IF_ERROR(dec(l, 2).Run(exec_, dx_, n, dv_, nullptr, Act::kNone, sc));
    for (int i = 0; i < n; ++i) {
      const size_t row = size_t(t) * R + size_t(slots[i]);
      std::memcpy(kc + row * d, dk_ + size_t(i) * d, sizeof(float) * d);
      std::memcpy(vc + row * d, dv_ + size_t(i) * d, sizeof(float) * d);
    }
    const int tasks = std::max(1, std::min(x.threads, n * H));
    exec_.pool->ParallelFor(tasks, [&](int task, int) {
      float* scores = scores_ + size_t(task) * scores_stride;
      for (int ih = task; ih < n * H; ih += tasks) {
        const int i = ih / H, h = ih % H;
        // keys beyond t do not exist yet: causal by construction
        Attend(K, dq_ + size_t(i) * d + h * hd, kc + h * hd, vc + h * hd, d, anc_ + size_t(i) * T, t + 1, hd,
               scaling, nullptr, scores, dctx_ + size_t(i) * d + h * hd);
      }
    });
    MTLITE_RETURN_IF_ERROR(dec(l, 3).Run(exec_, dctx_, n, dx_, dx_, Act::kNone, sc));
    K.layer_norm(dx_, n, d, Wt.self_attn_ln.gamma.data, Wt.self_attn_ln.beta.data, cfg_->layer_norm_eps, dx_);
    // --- cross-attention: source padding mask only, never causal ---
    MTLITE_RETURN_IF_ERROR(dec(l, 4).Run(exec_, dx_, n, dq_, nullptr, Act::kNone, sc));
    const float* ckl = ck_ + size_t(l) * cross_stride;
    const float* cvl = cv_ + size_t(l) * cross_stride;
    exec_.pool->ParallelFor(tasks, [&](int task, int) {
      float* scores = scores_ + size_t(task) * scores_stride;
      for (int ih = task; ih < n * H; ih += tasks) {
        const int i = ih / H, h = ih % H;
        const int b = slots[i] / W;
        Attend(K, dq_ + size_t(i) * d + h * hd, ckl + size_t(b) * smax * d + h * hd,
               cvl + size_t(b) * smax * d + h * hd, d, nullptr, smax, hd, scaling, mask_ + size_t(b) * smax, scores,
               dctx_ + size_t(i) * d + h * hd);
      }
    });
    if (l == align_layer) {
      // Mean over heads of the attention probabilities (recomputed serially, cheap).
      float* scores = scores_;
      for (int i = 0; i < n; ++i) {
        const int b = slots[i] / W;
        float* al = history->align_row(t, slots[i]);
        std::memset(al, 0, sizeof(float) * x.S);
        for (int h = 0; h < H; ++h) {
          AttentionProbs(K, dq_ + size_t(i) * d + h * hd, ckl + size_t(b) * smax * d + h * hd, d, smax, hd, scaling,
                         mask_ + size_t(b) * smax, scores);
          for (int j = 0; j < smax; ++j) al[j] += scores[j] / float(H);
        }
      }
    }
    MTLITE_RETURN_IF_ERROR(dec(l, 7).Run(exec_, dctx_, n, dx_, dx_, Act::kNone, sc));
    K.layer_norm(dx_, n, d, Wt.cross_attn_ln.gamma.data, Wt.cross_attn_ln.beta.data, cfg_->layer_norm_eps, dx_);
    // --- FFN ---
    MTLITE_RETURN_IF_ERROR(dec(l, 8).Run(exec_, dx_, n, dffn_, nullptr, act, sc));
    MTLITE_RETURN_IF_ERROR(dec(l, 9).Run(exec_, dffn_, n, dx_, dx_, Act::kNone, sc));
    K.layer_norm(dx_, n, d, Wt.final_ln.gamma.data, Wt.final_ln.beta.data, cfg_->layer_norm_eps, dx_);
  }
  MTLITE_RETURN_IF_ERROR(out_proj().Run(exec_, dx_, n, logits_, nullptr, Act::kNone, sc));
  *logits = logits_;
  return Status::Ok();
}

}  // namespace detail
}  // namespace mtlite

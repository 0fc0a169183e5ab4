// One incremental decoder step: causal self-attention over the beam-history KV cache,
// cross-attention over the sentence's own encoder K/V (never causal; padding never enters), FFN, and the
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
  Profiler* prof = exec_.prof;
  if (prof) prof->set_step(t);
  Span step(prof, Op::kDecoderStep);
  const Dims& x = dims_;
  const int d = x.d, H = cfg_->decoder_heads, hd = d / H, R = x.R, W = x.W, T = x.T;
  const float scaling = 1.0f / std::sqrt(float(hd));
  const int smax = smax_;
  {
    Span embed(prof, Op::kDecoderEmbed);
    for (int i = 0; i < n; ++i) {
      Embed(md_->target_embed, tokens[i], t, pos_dec_, dx_ + size_t(i) * d);
      history->Ancestors(t, slots[i], anc_ + size_t(i) * T);  // KV-cache rows of positions 0..t
    }
  }
  const Act act = ToAct(cfg_->activation);
  const int scores_stride = std::max(x.S, x.T);
  const LinearScratch& sc = dec_scratch_;
  const size_t cross_stride = size_t(x.B) * x.S * d;
  const int tasks = std::max(1, std::min(x.threads, n * H));
  for (int l = 0; l < x.Ld; ++l) {
    Span layer(prof, Op::kDecoderLayer, l);
    const DecoderLayerView& Wt = md_->decoder[size_t(l)];
    float* kc = kcache_ + size_t(l) * T * R * d;
    float* vc = vcache_ + size_t(l) * T * R * d;
    {  // --- causal self-attention over this row's own history (positions 0..t) ---
      Span qkv(prof, Op::kDecSelfAttnQKV, l);
      MTLITE_RETURN_IF_ERROR(Lin(qkv, dec(l, 0), dx_, n, dq_, nullptr, Act::kNone, sc));
      MTLITE_RETURN_IF_ERROR(Lin(qkv, dec(l, 1), dx_, n, dk_, nullptr, Act::kNone, sc));
      MTLITE_RETURN_IF_ERROR(Lin(qkv, dec(l, 2), dx_, n, dv_, nullptr, Act::kNone, sc));
    }
    {
      Span attention(prof, Op::kDecSelfAttnCore, l);
      const uint64_t keys = uint64_t(n) * uint64_t(t + 1);
      attention.Work(keys * uint64_t(d) * 2 * sizeof(float), keys * uint64_t(d) * 2, n, t + 1, hd);
      for (int i = 0; i < n; ++i) {  // this step's K/V, written once at cache row t*R + slot
        const size_t row = size_t(t) * R + size_t(slots[i]);
        std::memcpy(kc + row * d, dk_ + size_t(i) * d, sizeof(float) * d);
        std::memcpy(vc + row * d, dv_ + size_t(i) * d, sizeof(float) * d);
      }
      exec_.pool->ParallelFor(tasks, [&](int task, int thread) {
        const uint64_t t0 = prof && thread > 0 ? prof->Now() : 0;
        float* scores = scores_ + size_t(task) * scores_stride;
        for (int ih = task; ih < n * H; ih += tasks) {
          const int i = ih / H, h = ih % H;
          // keys beyond t do not exist yet: causal by construction
          Attend(K, dq_ + size_t(i) * d + h * hd, kc + h * hd, vc + h * hd, d, anc_ + size_t(i) * T, t + 1, hd,
                 scaling, nullptr, scores, dctx_ + size_t(i) * d + h * hd);
        }
        if (prof && thread > 0) prof->Part(Op::kAttentionPart, l, thread, t0, prof->Now(), n, t + 1, hd);
      });
    }
    {
      Span out(prof, Op::kDecSelfAttnOut, l);
      MTLITE_RETURN_IF_ERROR(Lin(out, dec(l, 3), dctx_, n, dx_, dx_, Act::kNone, sc));
    }
    Norm(Op::kDecSelfAttnNorm, l, dx_, n, Wt.self_attn_ln);
    // --- cross-attention over the source (its padding never enters), never causal ---
    {
      Span q(prof, Op::kCrossAttnQ, l);
      MTLITE_RETURN_IF_ERROR(Lin(q, dec(l, 4), dx_, n, dq_, nullptr, Act::kNone, sc));
    }
    const float* ckl = ck_ + size_t(l) * cross_stride;
    const float* cvl = cv_ + size_t(l) * cross_stride;
    {
      Span attention(prof, Op::kCrossAttnCore, l);
      uint64_t keys = 0;
      for (int i = 0; i < n; ++i) keys += uint64_t(len_[slots[i] / W]);
      attention.Work(keys * uint64_t(d) * 2 * sizeof(float), keys * uint64_t(d) * 2, n, smax, hd);
      exec_.pool->ParallelFor(tasks, [&](int task, int thread) {
        const uint64_t t0 = prof && thread > 0 ? prof->Now() : 0;
        float* scores = scores_ + size_t(task) * scores_stride;
        for (int ih = task; ih < n * H; ih += tasks) {
          const int i = ih / H, h = ih % H, b = slots[i] / W;
          float* ctx = dctx_ + size_t(i) * d + h * hd;
          if (len_[b] == 0) {  // no source token: every key masked, the context is zero
            std::memset(ctx, 0, sizeof(float) * hd);
            continue;
          }
          const size_t first = size_t(off_[b]) * d + size_t(h) * hd;
          Attend(K, dq_ + size_t(i) * d + h * hd, ckl + first, cvl + first, d, nullptr, len_[b], hd, scaling, nullptr,
                 scores, ctx);
        }
        if (prof && thread > 0) prof->Part(Op::kAttentionPart, l, thread, t0, prof->Now(), n, smax, hd);
      });
      if (l == align_layer) {
        // Mean over heads of the attention probabilities (recomputed serially, cheap); zero on the
        // columns beyond the sentence's own source tokens.
        float* scores = scores_;
        for (int i = 0; i < n; ++i) {
          const int b = slots[i] / W;
          float* al = history->align_row(t, slots[i]);
          std::memset(al, 0, sizeof(float) * x.S);
          const size_t first = size_t(off_[b]) * d;
          for (int h = 0; h < H && len_[b] > 0; ++h) {
            AttentionProbs(K, dq_ + size_t(i) * d + h * hd, ckl + first + size_t(h) * hd, d, len_[b], hd, scaling,
                           nullptr, scores);
            for (int j = 0; j < len_[b]; ++j) al[j] += scores[j] / float(H);
          }
        }
      }
    }
    {
      Span out(prof, Op::kCrossAttnOut, l);
      MTLITE_RETURN_IF_ERROR(Lin(out, dec(l, 7), dctx_, n, dx_, dx_, Act::kNone, sc));
    }
    Norm(Op::kCrossAttnNorm, l, dx_, n, Wt.cross_attn_ln);
    {  // --- FFN ---
      Span fc1(prof, Op::kDecFfn1, l);
      MTLITE_RETURN_IF_ERROR(Lin(fc1, dec(l, 8), dx_, n, dffn_, nullptr, act, sc));
    }
    {
      Span fc2(prof, Op::kDecFfn2, l);
      MTLITE_RETURN_IF_ERROR(Lin(fc2, dec(l, 9), dffn_, n, dx_, dx_, Act::kNone, sc));
    }
    Norm(Op::kDecFfnNorm, l, dx_, n, Wt.final_ln);
  }
  Span out(prof, Op::kOutputProjection);
  if (out_blocks_) {  // vocabulary shortlist: only the candidates' blocks
    Linear& L = out_proj();
    out.Work(L.block_bytes(num_out_blocks_), uint64_t(n) * uint64_t(num_out_blocks_) * 8 * uint64_t(d), n,
             num_out_blocks_ * 8, d);
    MTLITE_RETURN_IF_ERROR(L.RunBlocks(exec_, dx_, n, out_blocks_, num_out_blocks_, logits_, sc));
  } else {
    MTLITE_RETURN_IF_ERROR(Lin(out, out_proj(), dx_, n, logits_, nullptr, Act::kNone, sc));
  }
  *logits = logits_;
  return Status::Ok();
}

}  // namespace detail
}  // namespace mtlite

// The encoder, and the cross-attention K/V it leaves for the decoder (once per sentence).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "attention.h"
#include "status_macros.h"
#include "transformer.h"

namespace mtlite {
namespace detail {

using kernels::Act;

Status Transformer::Encode(const int32_t* src_ids, const int* src_len, int nb, int smax) {
  const kernels::KernelTable& K = *exec_.K;
  Profiler* prof = exec_.prof;
  const Dims& x = dims_;
  const int d = x.d, H = cfg_->encoder_heads, hd = d / H;
  const float scaling = 1.0f / std::sqrt(float(hd));
  const int rows = nb * smax;
  smax_ = smax;
  const LinearScratch& sc = enc_scratch_;
  {
    Span encoder(prof, Op::kEncoder);
    {
      // Embeddings; padded rows are zeros and masked (-inf) as keys.
      Span embed(prof, Op::kEncoderEmbed);
      for (int b = 0; b < nb; ++b)
        for (int i = 0; i < smax; ++i) {
          float* row = ex_ + (size_t(b) * smax + i) * d;
          mask_[size_t(b) * smax + i] = i < src_len[b] ? 0.0f : -std::numeric_limits<float>::infinity();
          if (i < src_len[b]) {
            Embed(md_->source_embed, src_ids[size_t(b) * x.S + i], i, pos_enc_, row);
          } else {
            std::memset(row, 0, sizeof(float) * d);
          }
        }
    }
    const Act act = ToAct(cfg_->activation);
    const int scores_stride = std::max(x.S, x.T);
    for (int l = 0; l < x.Le; ++l) {
      Span layer(prof, Op::kEncoderLayer, l);
      const EncoderLayerView& W = md_->encoder[size_t(l)];
      {  // --- self-attention: source padding masked ---
        Span qkv(prof, Op::kEncSelfAttnQKV, l);
        MTLITE_RETURN_IF_ERROR(Lin(qkv, enc(l, 0), ex_, rows, eq_, nullptr, Act::kNone, sc));
        MTLITE_RETURN_IF_ERROR(Lin(qkv, enc(l, 1), ex_, rows, ek_, nullptr, Act::kNone, sc));
        MTLITE_RETURN_IF_ERROR(Lin(qkv, enc(l, 2), ex_, rows, ev_, nullptr, Act::kNone, sc));
      }
      {
        // per (sentence, head, query row); padded query rows produce zeros
        Span attention(prof, Op::kEncSelfAttnCore, l);
        uint64_t keys = 0;
        for (int b = 0; b < nb; ++b) keys += uint64_t(src_len[b]) * uint64_t(smax);
        attention.Work(keys * uint64_t(d) * 2 * sizeof(float), keys * uint64_t(d) * 2, rows, smax, hd);
        const int tasks = std::max(1, std::min(x.threads, nb * H));
        exec_.pool->ParallelFor(tasks, [&](int task, int thread) {
          const uint64_t t0 = prof && thread > 0 ? Profiler::Now() : 0;
          float* scores = scores_ + size_t(task) * scores_stride;
          for (int bh = task; bh < nb * H; bh += tasks) {
            const int b = bh / H, h = bh % H;
            const float* mask = mask_ + size_t(b) * smax;
            const float* keys_b = ek_ + size_t(b) * smax * d + h * hd;
            const float* values = ev_ + size_t(b) * smax * d + h * hd;
            for (int i = 0; i < smax; ++i) {
              float* ctx = ectx_ + (size_t(b) * smax + i) * d + h * hd;
              if (i >= src_len[b]) {
                std::memset(ctx, 0, sizeof(float) * hd);
                continue;
              }
              const float* q = eq_ + (size_t(b) * smax + i) * d + h * hd;
              Attend(K, q, keys_b, values, d, nullptr, smax, hd, scaling, mask, scores, ctx);
            }
          }
          if (t0) prof->Part(Op::kAttentionPart, l, thread, t0, Profiler::Now(), rows, smax, hd);
        });
      }
      {
        Span out(prof, Op::kEncSelfAttnOut, l);
        MTLITE_RETURN_IF_ERROR(Lin(out, enc(l, 3), ectx_, rows, ex_, ex_, Act::kNone, sc));  // + residual
      }
      Norm(Op::kEncSelfAttnNorm, l, ex_, rows, W.self_attn_ln);
      // --- FFN, in chunks of C rows ---
      for (int r0 = 0; r0 < rows; r0 += x.C) {
        const int m = std::min(x.C, rows - r0);
        float* h = ex_ + size_t(r0) * d;
        {
          Span fc1(prof, Op::kEncFfn1, l);
          MTLITE_RETURN_IF_ERROR(Lin(fc1, enc(l, 4), h, m, effn_, nullptr, act, sc));
        }
        Span fc2(prof, Op::kEncFfn2, l);
        MTLITE_RETURN_IF_ERROR(Lin(fc2, enc(l, 5), effn_, m, h, h, Act::kNone, sc));
      }
      Norm(Op::kEncFfnNorm, l, ex_, rows, W.final_ln);
    }
  }
  // Cross-attention K/V of every decoder layer, once per sentence.
  Span cross(prof, Op::kCrossKV);
  const size_t layer_stride = size_t(x.B) * x.S * d;
  for (int l = 0; l < x.Ld; ++l) {
    MTLITE_RETURN_IF_ERROR(Lin(cross, dec(l, 5), ex_, rows, ck_ + l * layer_stride, nullptr, Act::kNone, sc));
    MTLITE_RETURN_IF_ERROR(Lin(cross, dec(l, 6), ex_, rows, cv_ + l * layer_stride, nullptr, Act::kNone, sc));
  }
  return Status::Ok();
}

}  // namespace detail
}  // namespace mtlite

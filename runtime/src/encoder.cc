// The encoder, and the cross-attention K/V it leaves for the decoder (once per sentence).
#include <algorithm>
#include <cmath>
#include <cstring>

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
  smax_ = smax;
  len_ = src_len;
  off_[0] = 0;
  for (int b = 0; b < nb; ++b) off_[b + 1] = off_[b] + src_len[b];
  const int rows = off_[nb];  // real tokens only: no padding row is computed
  const LinearScratch& sc = enc_scratch_;
  {
    Span encoder(prof, Op::kEncoder);
    {
      Span embed(prof, Op::kEncoderEmbed);
      for (int b = 0; b < nb; ++b)
        for (int i = 0; i < src_len[b]; ++i)
          Embed(md_->source_embed, src_ids[size_t(b) * x.S + i], i, pos_enc_, ex_ + size_t(off_[b] + i) * d);
    }
    const Act act = ToAct(cfg_->activation);
    const int scores_stride = std::max(x.S, x.T);
    for (int l = 0; l < x.Le; ++l) {
      Span layer(prof, Op::kEncoderLayer, l);
      const EncoderLayerView& W = md_->encoder[size_t(l)];
      {  // --- self-attention: each sentence over its own rows (padding never enters) ---
        Span qkv(prof, Op::kEncSelfAttnQKV, l);
        MTLITE_RETURN_IF_ERROR(Lin(qkv, enc(l, 0), ex_, rows, eq_, nullptr, Act::kNone, sc));
        MTLITE_RETURN_IF_ERROR(Lin(qkv, enc(l, 1), ex_, rows, ek_, nullptr, Act::kNone, sc));
        MTLITE_RETURN_IF_ERROR(Lin(qkv, enc(l, 2), ex_, rows, ev_, nullptr, Act::kNone, sc));
      }
      {
        Span attention(prof, Op::kEncSelfAttnCore, l);
        uint64_t keys = 0;
        for (int b = 0; b < nb; ++b) keys += uint64_t(src_len[b]) * uint64_t(src_len[b]);
        attention.Work(keys * uint64_t(d) * 2 * sizeof(float), keys * uint64_t(d) * 2, rows, smax, hd);
        // per (sentence, head): each query row over the sentence's own keys
        const int tasks = std::max(1, std::min(x.threads, nb * H));
        exec_.pool->ParallelFor(tasks, [&](int task, int thread) {
          const uint64_t t0 = prof && thread > 0 ? prof->Now() : 0;
          float* scores = scores_ + size_t(task) * scores_stride;
          for (int bh = task; bh < nb * H; bh += tasks) {
            const int b = bh / H, h = bh % H, n = src_len[b];
            const size_t first = size_t(off_[b]) * d + size_t(h) * hd;
            for (int i = 0; i < n; ++i) {
              const size_t row = first + size_t(i) * d;
              Attend(K, eq_ + row, ek_ + first, ev_ + first, d, nullptr, n, hd, scaling, nullptr, scores, ectx_ + row);
            }
          }
          if (prof && thread > 0) prof->Part(Op::kAttentionPart, l, thread, t0, prof->Now(), rows, smax, hd);
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
  const size_t layer_stride = size_t(x.B) * x.S * d;  // [layer][packed source row][d]
  for (int l = 0; l < x.Ld; ++l) {
    MTLITE_RETURN_IF_ERROR(Lin(cross, dec(l, 5), ex_, rows, ck_ + l * layer_stride, nullptr, Act::kNone, sc));
    MTLITE_RETURN_IF_ERROR(Lin(cross, dec(l, 6), ex_, rows, cv_ + l * layer_stride, nullptr, Act::kNone, sc));
  }
  return Status::Ok();
}

}  // namespace detail
}  // namespace mtlite

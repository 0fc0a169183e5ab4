// The encoder, and the cross-attention K/V it leaves for the decoder (once per sentence).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include "attention.h"
#include "status_macros.h"
#include "transformer.h"

namespace mtlite {
namespace detail {

using kernels::Act;

// Row-parallel encoding (the decoder's counterpart: decoder_step.cc): with int8 weights, >= 32
// rows per thread and at least two sentences, each thread embeds and encodes whole sentences,
// every layer in one fork-join and the cross K/V in a second, instead of a fork-join per op with
// a thread's attention reading q/k/v rows another core wrote. Each thread reads every weight; 32+ rows
// reuse each load enough. The sentences split by rows, so the threads' shares differ by at
// most one sentence. Same bits: a row's result never depends on the other rows.
constexpr int kEncRowParallelMinRows = 32;
// FFN rows a thread runs at a time in its share of the FFN buffer (C rows in all), at least.
constexpr int kEncRowParallelMinChunk = 8;

Status Transformer::Encode(const int32_t* src_ids, const int* src_len, int nb, int smax) {
  Profiler* prof = exec_.prof;
  const Dims& x = dims_;
  smax_ = smax;
  len_ = src_len;
  off_[0] = 0;
  for (int b = 0; b < nb; ++b) off_[b + 1] = off_[b] + src_len[b];
  const int rows = off_[nb];  // real tokens only: no padding row is computed
  const int threads = exec_.pool->threads();
  const EncPart whole{0, nb, 0, enc_quant_bytes_, enc_quant_rows_, enc_scratch_, effn_, x.C, prof, nullptr};
  const int tasks = std::min(threads, nb);
  const bool row_parallel = enc_int8_ && tasks > 1 && rows >= kEncRowParallelMinRows * threads &&
                            x.C / threads >= kEncRowParallelMinChunk;
  // Runs stage(ex, part) on each task's sentences (those whose first row falls in the task's
  // share of the rows), each thread (lane) with its own part of the quantization scratch and of
  // the FFN buffer (ForkJoin: the profiler's lanes and the join).
  auto run = [&](Op join, auto&& stage) -> Status {
    if (!row_parallel) return stage(exec_, whole);
    const int ffn_rows = x.C / threads;
    const size_t lane_bytes = enc_quant_bytes_ / size_t(threads);
    const int lane_rows = enc_quant_rows_ / threads;
    int cut[ThreadPool::kMaxThreads + 1];
    enc_rows_.Split(rows, tasks, cut);  // by the threads' measured speeds
    auto first = [&](int k) {
      int b = 0;
      while (b < nb && off_[b] < cut[k]) ++b;
      return b;
    };
    return ForkJoin(tasks, join, &enc_rows_, nullptr, [&](const Task& w, int* done) {
      const int thread = w.thread;
      const EncPart part{first(w.task), w.task + 1 == tasks ? nb : first(w.task + 1), thread, lane_bytes, lane_rows,
                         {enc_scratch_.quantized + size_t(thread) * lane_bytes,
                          enc_scratch_.quant_scales + size_t(thread) * lane_rows, enc_scratch_.staging},
                         effn_ + size_t(thread) * ffn_rows * x.F_enc, ffn_rows, w.ex.prof, w.parts};
      *done = off_[part.b1] - off_[part.b0];
      return stage(w.ex, part);
    });
  };
  {
    Span encoder(prof, Op::kEncoder);
    MTLITE_RETURN_IF_ERROR(
        run(Op::kEncoderJoin, [&](const Exec& ex, const EncPart& part) { return EncodeSentences(ex, part, src_ids, nb); }));
  }
  // Cross-attention K/V of every decoder layer, once per sentence: the span counts every row.
  Span cross(prof, Op::kCrossKV);
  for (int l = 0; l < x.Ld; ++l)
    for (Linear* L : {&dec_ops_[l].cross_attn.k, &dec_ops_[l].cross_attn.v}) {
      cross.Work(L->weight_bytes(), uint64_t(rows) * uint64_t(L->out_features()) * uint64_t(L->in_features()), rows,
                 L->out_features(), L->in_features());
    }
  return run(Op::kNumOps, [&](const Exec& ex, const EncPart& part) {
    const size_t layer_stride = size_t(x.B) * x.S * x.d;  // [layer][packed source row][d]
    const int r0 = off_[part.b0], m = off_[part.b1] - r0;
    for (int l = 0; l < x.Ld; ++l) {
      AttentionOps& A = dec_ops_[l].cross_attn;
      MTLITE_RETURN_IF_ERROR(EncLinear(ex, part, -1, A.k, m, ex_, r0, ck_ + l * layer_stride, r0, false, Act::kNone));
      MTLITE_RETURN_IF_ERROR(EncLinear(ex, part, -1, A.v, m, ex_, r0, cv_ + l * layer_stride, r0, false, Act::kNone));
    }
    return Status::Ok();
  });
}

// One linear layer over n rows of a part (input from row in_row of `in`, output to row y_row of
// y, plus y itself with `residual`), in runs of as many rows as the part's quantization scratch
// holds; a worker lane's trace part.
Status Transformer::EncLinear(const Exec& ex, const EncPart& part, int layer, Linear& L, int n, const float* in,
                              int in_row, float* y, int y_row, bool residual, Act act) {
  const int k = L.in_features(), o = L.out_features();
  PartTimer timer(part.parts, Op::kLinearPart, layer, part.lane, n, o, k);
  const int step = L.int8() ? int(std::min<size_t>(size_t(part.quant_rows), part.quant_bytes / size_t(kernels::RoundUp(k, 4))))
                            : std::max(n, 1);  // f32/f16: no quantization scratch
  if (step < 1) return Status(StatusCode::kInternal, "encoder: no quantization scratch for a row");
  for (int i = 0; i < n; i += step) {
    const int c = std::min(step, n - i);
    const size_t xi = size_t(in_row + i) * size_t(k), yi = size_t(y_row + i) * size_t(o);
    MTLITE_RETURN_IF_ERROR(L.Run(ex, in + xi, c, y + yi, residual ? y + yi : nullptr, act, part.sc));
  }
  return Status::Ok();
}

Status Transformer::EncLin(const Exec& ex, const EncPart& part, Span& span, int l, Linear& L, int n, int work,
                           const float* in, int in_row, float* y, int y_row, bool residual, Act act) {
  span.Work(L.weight_bytes(), uint64_t(work) * uint64_t(L.out_features()) * uint64_t(L.in_features()), work,
            L.out_features(), L.in_features());
  return EncLinear(ex, part, l, L, n, in, in_row, y, y_row, residual, act);
}

// Sentences [b0, b1) of the batch's nb: embedding, every layer, the final norm, with `ex`: the
// translator's pool (all sentences, one op at a time, large ops split inside) or, row-parallel, a
// serial pool on one lane. Spans record the whole batch's work. (No early return for a part
// without rows: its spans may be the call's lane-0 record.)
Status Transformer::EncodeSentences(const Exec& ex, const EncPart& part, const int32_t* src_ids, int nb) {
  Profiler* prof = part.prof;
  const Dims& x = dims_;
  const int d = x.d;
  const int r0 = off_[part.b0], m = off_[part.b1] - r0;
  {
    Span embed(prof, Op::kEncoderEmbed);
    for (int b = part.b0; b < part.b1; ++b)
      for (int i = 0; i < len_[b]; ++i)
        Embed(md_->source_embed, src_ids[size_t(b) * x.S + i], i, pos_enc_, ex_ + size_t(off_[b] + i) * d);
  }
  for (int l = 0; l < x.Le; ++l) {
    Span layer(prof, Op::kEncoderLayer, l);
    MTLITE_RETURN_IF_ERROR(EncSelfAttention(ex, part, l, nb));
    MTLITE_RETURN_IF_ERROR(EncFfn(ex, part, l, nb));
    // the stack's final norm, profiled as a second FFN norm of the last layer
    if (l + 1 == x.Le && cfg_->encoder_final_norm)
      Norm(prof, Op::kEncFfnNorm, l, ex_ + size_t(r0) * d, m, md_->encoder_final_ln, ex_ + size_t(r0) * d);
  }
  return Status::Ok();
}

// The self-attention block of encoder layer l: each sentence over its own rows (padding never
// enters). Pre-norm: its input LN(x) in the context buffer, which the attention then overwrites.
Status Transformer::EncSelfAttention(const Exec& ex, const EncPart& part, int l, int nb) {
  const kernels::KernelTable& K = *ex.K;
  Profiler* prof = part.prof;
  const Dims& x = dims_;
  const int d = x.d, H = cfg_->encoder_heads, hd = d / H, smax = smax_;
  const float scaling = 1.0f / std::sqrt(float(hd));
  const int r0 = off_[part.b0], r1 = off_[part.b1], rows = off_[nb], m = r1 - r0;
  const int scores_stride = std::max(x.S, x.T) * x.Hmax;
  const AttentionView& W = md_->encoder[size_t(l)].self_attn;
  AttentionOps& L = enc_ops_[l].self_attn;
  float* const xr = ex_ + size_t(r0) * d;
  const float* in = BlockInput(prof, Op::kEncSelfAttnNorm, l, xr, m, W.ln, ectx_ + size_t(r0) * d) - size_t(r0) * d;
  {
    Span qkv(prof, Op::kEncSelfAttnQKV, l);
    MTLITE_RETURN_IF_ERROR(EncLin(ex, part, qkv, l, L.q, m, rows, in, r0, eq_, r0, false, Act::kNone));
    MTLITE_RETURN_IF_ERROR(EncLin(ex, part, qkv, l, L.k, m, rows, in, r0, ek_, r0, false, Act::kNone));
    MTLITE_RETURN_IF_ERROR(EncLin(ex, part, qkv, l, L.v, m, rows, in, r0, ev_, r0, false, Act::kNone));
  }
  {
    Span attention(prof, Op::kEncSelfAttnCore, l);
    uint64_t keys = 0;
    for (int b = 0; b < nb; ++b) keys += uint64_t(len_[b]) * uint64_t(len_[b]);
    attention.Work(keys * uint64_t(d) * 2 * sizeof(float), keys * uint64_t(d) * 2, rows, smax, hd);
    PartTimer timer(part.parts, Op::kAttentionPart, l, part.lane, m, smax, hd);
    // per query row, every head at once over the sentence's own keys (AttendHeads: each key
    // row read once for all heads; one head at a time before: tiny32k shape, batch 1, 12.3-12.9
    // -> 9.2-9.5 us per layer, base 16.1-17.0 -> 14.6-15.2 us)
    const int r_first = r0, nq = r1 - r0;
    const int tasks = std::max(1, std::min(ex.pool->threads(), nq));
    ex.pool->ParallelFor(tasks, [&](int task, int thread) {
      const uint64_t t0 = prof && thread > 0 ? prof->Now() : 0;
      float* scores = scores_ + size_t(part.lane + task) * scores_stride;
      int b = part.b0;
      for (int q = r_first + int(int64_t(nq) * task / tasks), q1 = r_first + int(int64_t(nq) * (task + 1) / tasks);
           q < q1; ++q) {
        while (q >= off_[b] + len_[b]) ++b;  // the query's sentence (rows are grouped by sentence)
        const size_t first = size_t(off_[b]) * d, row = size_t(q) * d;
        AttendHeads(K, eq_ + row, ek_ + first, ev_ + first, d, nullptr, len_[b], hd, H, scaling, nullptr, scores,
                    ectx_ + row);
      }
      if (prof && thread > 0) prof->Part(Op::kAttentionPart, l, thread, t0, prof->Now(), rows, smax, hd);
    });
  }
  {
    Span out(prof, Op::kEncSelfAttnOut, l);
    MTLITE_RETURN_IF_ERROR(EncLin(ex, part, out, l, L.o, m, rows, ectx_, r0, ex_, r0, true, Act::kNone));  // + residual
  }
  BlockOutput(prof, Op::kEncSelfAttnNorm, l, xr, m, W.ln);
  return Status::Ok();
}

// The FFN block of encoder layer l, in chunks of the part's FFN rows; each chunk's span counts
// its share of the batch's rows (all of them over the part's chunks). Pre-norm: its input LN(x)
// in the q buffer (free after the attention).
Status Transformer::EncFfn(const Exec& ex, const EncPart& part, int l, int nb) {
  Profiler* prof = part.prof;
  const int d = dims_.d;
  const int r0 = off_[part.b0], rows = off_[nb], m = off_[part.b1] - r0;
  const FfnView& W = md_->encoder[size_t(l)].ffn;
  FfnOps& L = enc_ops_[l].ffn;
  const Act act = ToAct(cfg_->activation);
  float* const xr = ex_ + size_t(r0) * d;
  const float* in = BlockInput(prof, Op::kEncFfnNorm, l, xr, m, W.ln, eq_ + size_t(r0) * d) - size_t(r0) * d;
  for (int c0 = 0; c0 < m; c0 += part.ffn_rows) {
    const int c = std::min(part.ffn_rows, m - c0);
    const int work = int(int64_t(rows) * (c0 + c) / m - int64_t(rows) * c0 / m);
    {
      Span fc1(prof, Op::kEncFfn1, l);
      MTLITE_RETURN_IF_ERROR(EncLin(ex, part, fc1, l, L.fc1, c, work, in, r0 + c0, part.ffn, 0, false, act));
    }
    Span fc2(prof, Op::kEncFfn2, l);
    MTLITE_RETURN_IF_ERROR(EncLin(ex, part, fc2, l, L.fc2, c, work, part.ffn, 0, ex_, r0 + c0, true, Act::kNone));
  }
  BlockOutput(prof, Op::kEncFfnNorm, l, xr, m, W.ln);
  return Status::Ok();
}

}  // namespace detail
}  // namespace mtlite

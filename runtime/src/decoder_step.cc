// One incremental decoder step: causal self-attention over the beam-history KV cache,
// cross-attention over the sentence's own encoder K/V (never causal; padding never enters), FFN, and the
// output projection.
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

// Rows per thread from which the decoder layers run row-parallel: each thread runs the whole
// layer stack (embedding, every layer's projections, attention and norms) over its own rows, one
// fork-join per step instead of one per op, and nothing a thread writes is read by another before
// the output projection. Each thread then reads every layer weight itself, so that pays from 8
// rows per thread up (tiny32k's 2.3 MB of layers at batch 16 on 2 threads: 9 % faster than one
// op at a time; OPUS-MT base's 22 MB, which stream from memory: 10 % faster since the tiles
// prefetch the next tile's weights, 6 % slower before, when it took 16 rows per thread). Fewer
// rows (greedy at small batches, beam search at batch 1): one op at a time over all rows, large
// layers split by output columns (linear.cc), the weights read once. Both give the same bits: a
// row's result never depends on the other rows.
constexpr int kRowParallelMinRows = 8;

// A row-parallel step whose threads hold fewer rows than the GEMM's panel (KernelTable::
// gemm_panel_rows: 16 in avx512-amx, whose tile unit multiplies 8 rows in 70 % of the time of 16)
// runs its layers of at least kColumnSplitBytes of weights as a team: each thread quantizes its
// own rows, then, after a barrier, computes its share of the output columns for all rows, and
// after a second barrier goes on with its own rows. The threads thus multiply 16 rows per
// weight block instead of 8 and read half the weights each. The smaller layers (tiny32k's
// 256 x 256 projections, 64 KiB) stay on each thread's own rows, with no barrier: there the
// barriers cost more than the column split saves (self-attention output 5.1 -> 7.0 us per
// step and layer). e2e_bench, batch 16 greedy on 2 threads, avx512-amx on a 2-vCPU Intel Xeon,
// medians of 5 interleaved runs: demo 46.9k -> 49.3k tokens/s, tiny32k 26.4k -> 27.9k, OPUS-MT
// base 5.79k -> 6.15k; with 32 rows per thread (beam 4, batch 16) a column split measured
// slower (base -5 %), as it did at 8 rows per thread for avx512-vnni (tiny32k -4 %), whose
// 4-row panel is the same speed per row at 8. Same bits: every output element is computed by
// the same kernel from the same quantized row, only on another thread.
constexpr size_t kColumnSplitBytes = size_t(128) << 10;

// Before a layer's projections run, the K/V rows its attention will read are prefetched toward
// L2 (up to kKvPrefetchBytes of them), when the layer's weights are large (kKvPrefetchLayerBytes):
// a step then streams megabytes of weights per layer, which push the caches of the earlier
// positions out of L1/L2, and the attention waited on each of their lines. Prefetched during the
// projections, which are bound by the weight stream, they arrive in its shadow (OPUS-MT base
// shape, 3.7 MB per layer, batch 1 with the shortlist: self-attention 6.4-6.5 -> 5.5-6.0 us per
// layer, cross-attention 3.2 -> 2.2-2.5 us). tiny32k's 1.2 MB layers leave the rows in L2, and
// there the prefetches measured no better (1.8-1.9 against 1.6-1.9 us). Beyond the budget
// (long outputs, large batches) the rows would not stay in L2 anyway. Self-attention prefetches
// only the rows its rows' ancestors occupy, in position order, each once (beams that share a
// prefix share its rows) and up to the budget: prefetching every slot's rows of positions
// 0..t-1 left beam 4 on base without any prefetch past position 32 (batch 1 with the shortlist:
// 14.9-15.6 -> 13.7-14.7 us per layer; greedy 3.9-4.5 -> 3.7-3.9 us; noisy).
constexpr size_t kKvPrefetchBytes = size_t(512) << 10;
constexpr size_t kKvPrefetchLayerBytes = size_t(2) << 20;

void PrefetchKv(const float* k, const float* v, size_t floats) {
  if (floats > kKvPrefetchBytes / (2 * sizeof(float))) return;
  const size_t bytes = floats * sizeof(float);
  const char* a = reinterpret_cast<const char*>(k);
  const char* b = reinterpret_cast<const char*>(v);
  for (size_t o = 0; o < bytes; o += 64) {
    __builtin_prefetch(a + o, 0, 2);
    __builtin_prefetch(b + o, 0, 2);
  }
}

// The K/V rows of positions 0..t-1 that rows [r0, r1) will attend to (their ancestors' cache rows:
// beams that share a prefix share its rows, each prefetched once), up to kKvPrefetchBytes.
void PrefetchKvRows(const float* k, const float* v, int d, const int32_t* anc, int T, int r0, int r1, int t) {
  const size_t row_bytes = size_t(d) * sizeof(float);
  size_t budget = kKvPrefetchBytes;
  for (int p = 0; p < t; ++p) {
    for (int i = r0; i < r1; ++i) {
      const int32_t row = anc[size_t(i) * T + p];
      bool seen = false;
      for (int j = r0; j < i && !seen; ++j) seen = anc[size_t(j) * T + p] == row;
      if (seen) continue;
      if (budget < 2 * row_bytes) return;
      budget -= 2 * row_bytes;
      PrefetchKv(k + size_t(row) * d, v + size_t(row) * d, size_t(d));
    }
  }
}

// One step's rows [r0, r1) of its n on one thread (or all rows on the translator's pool) and
// what every block needs of them: the shapes, the thread's scratch, the attention's task split,
// and the linear layers over the same input (q, k, v; else one).
struct Transformer::StepRows {
  Transformer& tf;
  const Exec& ex;
  const Rows& rows;
  const kernels::KernelTable& K;
  Profiler* prof;
  int d, H, hd, R, W, T, n, r0, r1, m, smax;
  float scaling;
  int scores_stride;  // a task's scores: every head of a row
  LinearScratch sc;   // this thread's rows of the scratch (sized for every row at the widest input)
  // Attention runs a row's heads together (AttendHeads: the K/V rows read once, sequentially, for
  // all of them), in `groups` head groups per row when there are fewer rows than tasks. Batch 1
  // with the shortlist, per layer: base shape self-attention 5.2-5.4 -> 4.6-4.7 us, cross
  // 2.2-2.3 -> 2.0-2.3 us; tiny32k 1.5 -> 1.3 and 0.95 -> 0.7 us (one head at a time before).
  int tasks, groups, units;
  float* xr;  // this thread's rows of the hidden state

  StepRows(Transformer& t, const Exec& e, const Rows& r)
      : tf(t), ex(e), rows(r), K(*e.K), prof(r.prof), d(t.dims_.d), H(t.cfg_->decoder_heads), hd(d / H),
        R(t.dims_.R), W(t.dims_.W), T(t.dims_.T), n(r.n), r0(r.r0), r1(r.r1), m(r.r1 - r.r0), smax(t.smax_),
        scaling(1.0f / std::sqrt(float(hd))), scores_stride(std::max(t.dims_.S, t.dims_.T) * t.dims_.Hmax),
        sc{t.dec_scratch_.quantized + size_t(r.r0) * kernels::RoundUp(std::max(d, t.dims_.F_dec), 4),
           t.dec_scratch_.quant_scales + r.r0, t.dec_scratch_.staging},
        tasks(std::max(1, std::min(e.pool->threads(), m * H))), groups(std::max(1, std::min(H, tasks / std::max(m, 1)))),
        units(m * groups), xr(t.dx_ + size_t(r.r0) * d) {}

  // Linear layers over the same input: over this thread's rows, or, in a team, each member
  // quantizes its rows, then all compute their share of the output columns for all n rows
  // (dec_scratch_ holds the n quantized rows; a barrier before and after). The span counts all n
  // rows. A member that fails returns at once; DecoderStep then records its error and breaks the
  // barrier, and the others return `aborted` from theirs.
  Status Lins(Span& span, int l, int count, Linear* const* Ls, const float* in, float* const* ys,
              const float* residual, Act a) {
    size_t bytes = 0;
    for (int c = 0; c < count; ++c) {
      const Linear& L = *Ls[c];
      span.Work(L.weight_bytes(), uint64_t(n) * uint64_t(L.out_features()) * uint64_t(L.in_features()), n,
                L.out_features(), L.in_features());
      bytes += L.weight_bytes();
    }
    const int ki = Ls[0]->in_features();
    if (!rows.team || bytes < kColumnSplitBytes) {
      for (int c = 0; c < count; ++c) {
        const Linear& L = *Ls[c];
        PartTimer part(rows.parts, Op::kLinearPart, l, rows.lane, m, L.out_features(), ki);
        const size_t ko = size_t(L.out_features());
        MTLITE_RETURN_IF_ERROR(L.Run(ex, in + size_t(r0) * ki, m, ys[c] + size_t(r0) * ko,
                                     residual ? residual + size_t(r0) * ko : nullptr, a, sc));
      }
      return Status::Ok();
    }
    SpinBarrier& team = *rows.team;
    auto aborted = [] { return Status(StatusCode::kInternal, "another thread of the decoder step failed"); };
    for (int c = 0; c < count; ++c)
      if (ex.fault && ex.fault->Hit()) return Status(StatusCode::kInternal, "injected fault in a linear layer");
    PartTimer part(rows.parts, Op::kLinearPart, l, rows.lane, n, Ls[0]->out_features(), ki);
    Ls[0]->QuantizeRows(ex, in, r0, r1, tf.dec_scratch_.quantized, tf.dec_scratch_.quant_scales);
    if (!team.Wait()) return aborted();
    for (int c = 0; c < count; ++c)
      Ls[c]->RunColumns(ex, tf.dec_scratch_.quantized, tf.dec_scratch_.quant_scales, n, rows.member, team.members(),
                        ys[c], residual, a);
    if (!team.Wait()) return aborted();
    return Status::Ok();
  }
  Status Lin(Span& span, int l, Linear& L, const float* in, float* y, const float* residual, Act a) {
    Linear* Ls[1] = {&L};
    float* ys[1] = {y};
    return Lins(span, l, 1, Ls, in, ys, residual, a);
  }
  // A block's input (Transformer::BlockInput) over this thread's rows, as a buffer of all rows:
  // the hidden state, or (pre-norm) `scratch` with LN(x) in this thread's rows.
  const float* Input(Op op, int l, const LayerNormView& ln, float* scratch) {
    return tf.BlockInput(prof, op, l, xr, m, ln, scratch + size_t(r0) * d) - size_t(r0) * d;
  }
  void Output(Op op, int l, const LayerNormView& ln) { tf.BlockOutput(prof, op, l, xr, m, ln); }
};

// Embedding, every decoder layer's blocks and the final norm for rows [r0, r1) of the step's n
// rows, with `ex`: the translator's pool (one op at a time over all rows, large ops split inside)
// or, row-parallel, a serial pool on one thread. Spans (lane 0) record the whole step's work, n rows.
Status Transformer::DecoderLayers(const Exec& ex, const Rows& rows, int t, const int32_t* slots,
                                  const int32_t* tokens, BeamHistory* history, int align_layer) {
  if (rows.r1 - rows.r0 <= 0) return Status::Ok();
  StepRows s(*this, ex, rows);
  {
    Span embed(s.prof, Op::kDecoderEmbed);
    PartTimer part(rows.parts, Op::kLinearPart, -1, rows.lane, s.m, s.d, 0);
    for (int i = s.r0; i < s.r1; ++i) {
      Embed(md_->target_embed, tokens[i], t, pos_dec_, dx_ + size_t(i) * s.d);
      history->Ancestors(t, slots[i], anc_ + size_t(i) * s.T);  // KV-cache rows of positions 0..t
    }
  }
  for (int l = 0; l < dims_.Ld; ++l) {
    Span layer(s.prof, Op::kDecoderLayer, l);
    const DecoderLayerOps& L = dec_ops_[l];
    // the weights this step reads (not the cross K/V projections)
    const size_t layer_bytes = L.self_attn.q.weight_bytes() + L.self_attn.k.weight_bytes() +
                               L.self_attn.v.weight_bytes() + L.self_attn.o.weight_bytes() +
                               L.ssru.w.weight_bytes() + L.ssru.wf.weight_bytes() + L.cross_attn.q.weight_bytes() +
                               L.cross_attn.o.weight_bytes() + L.ffn.fc1.weight_bytes() + L.ffn.fc2.weight_bytes();
    const bool prefetch_kv = layer_bytes >= kKvPrefetchLayerBytes;
    switch (cfg_->decoder_layer) {
      case DecoderLayerKind::kSelfAttention: MTLITE_RETURN_IF_ERROR(DecSelfAttention(s, l, t, slots, prefetch_kv)); break;
      case DecoderLayerKind::kSsru: MTLITE_RETURN_IF_ERROR(DecSsru(s, l, t, slots)); break;
    }
    MTLITE_RETURN_IF_ERROR(DecCrossAttention(s, l, t, slots, history, align_layer, prefetch_kv));
    MTLITE_RETURN_IF_ERROR(DecFfn(s, l));
    // the stack's final norm, profiled as a second FFN norm of the last layer
    if (l + 1 == dims_.Ld && cfg_->decoder_final_norm)
      Norm(s.prof, Op::kDecFfnNorm, l, s.xr, s.m, md_->decoder_final_ln, s.xr);
  }
  return Status::Ok();
}

// Causal self-attention over each row's own history (positions 0..t): this step's K/V written
// once at cache row t*R + slot, the keys beyond t do not exist yet. Pre-norm: its input LN(x) in
// the context buffer, which the attention then overwrites.
Status Transformer::DecSelfAttention(StepRows& s, int l, int t, const int32_t* slots, bool prefetch_kv) {
  Profiler* prof = s.prof;
  const int d = s.d, hd = s.hd, T = s.T, R = s.R, n = s.n, r0 = s.r0, H = s.H;
  const AttentionView& W = md_->decoder[size_t(l)].self_attn;
  AttentionOps& L = dec_ops_[l].self_attn;
  float* kc = kcache_ + size_t(l) * T * R * d;
  float* vc = vcache_ + size_t(l) * T * R * d;
  const float* in = s.Input(Op::kDecSelfAttnNorm, l, W.ln, dctx_);
  {
    if (prefetch_kv) PrefetchKvRows(kc, vc, d, anc_, T, r0, s.r1, t);
    Span qkv(prof, Op::kDecSelfAttnQKV, l);
    Linear* Ls[3] = {&L.q, &L.k, &L.v};
    float* ys[3] = {dq_, dk_, dv_};
    MTLITE_RETURN_IF_ERROR(s.Lins(qkv, l, 3, Ls, in, ys, nullptr, Act::kNone));
  }
  {
    Span attention(prof, Op::kDecSelfAttnCore, l);
    const uint64_t keys = uint64_t(n) * uint64_t(t + 1);
    attention.Work(keys * uint64_t(d) * 2 * sizeof(float), keys * uint64_t(d) * 2, n, t + 1, hd);
    PartTimer part(s.rows.parts, Op::kAttentionPart, l, s.rows.lane, s.m, t + 1, hd);
    for (int i = r0; i < s.r1; ++i) {
      const size_t row = size_t(t) * R + size_t(slots[i]);
      std::memcpy(kc + row * d, dk_ + size_t(i) * d, sizeof(float) * d);
      std::memcpy(vc + row * d, dv_ + size_t(i) * d, sizeof(float) * d);
    }
    const int groups = s.groups, units = s.units, tasks = s.tasks;
    s.ex.pool->ParallelFor(tasks, [&](int task, int thread) {
      const uint64_t t0 = prof && thread > 0 ? prof->Now() : 0;
      float* scores = scores_ + size_t(s.rows.lane + task) * s.scores_stride;
      for (int u = task; u < units; u += tasks) {
        const int i = r0 + u / groups, g = u % groups, h = g * H / groups, nh = (g + 1) * H / groups - h;
        AttendHeads(s.K, dq_ + size_t(i) * d + h * hd, kc + h * hd, vc + h * hd, d, anc_ + size_t(i) * T, t + 1, hd,
                    nh, s.scaling, nullptr, scores, dctx_ + size_t(i) * d + h * hd);
      }
      if (prof && thread > 0) prof->Part(Op::kAttentionPart, l, thread, t0, prof->Now(), n, t + 1, hd);
    });
  }
  {
    Span out(prof, Op::kDecSelfAttnOut, l);
    MTLITE_RETURN_IF_ERROR(s.Lin(out, l, L.o, dctx_, dx_, dx_, Act::kNone));
  }
  s.Output(Op::kDecSelfAttnNorm, l, W.ln);
  return Status::Ok();
}

// Marian's SSRU cell over the parent's state (positions 0..t-1), in the self-attention's spans.
Status Transformer::DecSsru(StepRows& s, int l, int t, const int32_t* slots) {
  Profiler* prof = s.prof;
  const int d = s.d, n = s.n;
  const SsruView& W = md_->decoder[size_t(l)].ssru;
  SsruOps& L = dec_ops_[l].ssru;
  const float* in = s.Input(Op::kDecSelfAttnNorm, l, W.ln, dctx_);
  {
    Span proj(prof, Op::kDecSelfAttnQKV, l);
    Linear* Ls[2] = {&L.w, &L.wf};
    float* ys[2] = {dq_, dk_};  // x W^T, x Wf^T + bf
    MTLITE_RETURN_IF_ERROR(s.Lins(proj, l, 2, Ls, in, ys, nullptr, Act::kNone));
  }
  {
    Span cell(prof, Op::kDecSelfAttnCore, l);
    cell.Work(uint64_t(n) * uint64_t(d) * 2 * sizeof(float), uint64_t(n) * uint64_t(d) * 4, n, 1, d);
    PartTimer part(s.rows.parts, Op::kAttentionPart, l, s.rows.lane, s.m, 1, d);
    SsruCell(l, t, s.r0, s.r1, slots);
  }
  s.Output(Op::kDecSelfAttnNorm, l, W.ln);
  return Status::Ok();
}

// Cross-attention over the source (its padding never enters), never causal; with align_layer ==
// l, the mean over heads of its probabilities goes to the history. Pre-norm: its input LN(x) in
// the context buffer, which the attention then overwrites.
Status Transformer::DecCrossAttention(StepRows& s, int l, int t, const int32_t* slots, BeamHistory* history,
                                      int align_layer, bool prefetch_kv) {
  Profiler* prof = s.prof;
  const Dims& x = dims_;
  const int d = s.d, hd = s.hd, n = s.n, r0 = s.r0, H = s.H, W = s.W, smax = s.smax;
  const AttentionView& Wt = md_->decoder[size_t(l)].cross_attn;
  AttentionOps& L = dec_ops_[l].cross_attn;
  const size_t cross_stride = size_t(x.B) * x.S * d;
  const float* ckl = ck_ + size_t(l) * cross_stride;
  const float* cvl = cv_ + size_t(l) * cross_stride;
  const float* in = s.Input(Op::kCrossAttnNorm, l, Wt.ln, dctx_);
  if (prefetch_kv) {  // the source rows of this thread's sentences (rows are grouped by sentence)
    const int b0 = slots[r0] / W, b1 = slots[s.r1 - 1] / W;
    const int first = off_[b0], end = off_[b1] + len_[b1];
    if (end > first) PrefetchKv(ckl + size_t(first) * d, cvl + size_t(first) * d, size_t(end - first) * d);
  }
  {
    Span q(prof, Op::kCrossAttnQ, l);
    MTLITE_RETURN_IF_ERROR(s.Lin(q, l, L.q, in, dq_, nullptr, Act::kNone));
  }
  {
    Span attention(prof, Op::kCrossAttnCore, l);
    uint64_t keys = 0;
    for (int i = 0; i < n; ++i) keys += uint64_t(len_[slots[i] / W]);
    attention.Work(keys * uint64_t(d) * 2 * sizeof(float), keys * uint64_t(d) * 2, n, smax, hd);
    PartTimer part(s.rows.parts, Op::kAttentionPart, l, s.rows.lane, s.m, smax, hd);
    const int groups = s.groups, units = s.units, tasks = s.tasks;
    s.ex.pool->ParallelFor(tasks, [&](int task, int thread) {
      const uint64_t t0 = prof && thread > 0 ? prof->Now() : 0;
      float* scores = scores_ + size_t(s.rows.lane + task) * s.scores_stride;
      for (int u = task; u < units; u += tasks) {
        const int i = r0 + u / groups, g = u % groups, h = g * H / groups, nh = (g + 1) * H / groups - h;
        const int b = slots[i] / W;
        float* c = dctx_ + size_t(i) * d + h * hd;
        if (len_[b] == 0) {  // no source token: every key masked, the context is zero
          std::memset(c, 0, sizeof(float) * size_t(nh) * hd);
          continue;
        }
        const size_t first = size_t(off_[b]) * d + size_t(h) * hd;
        AttendHeads(s.K, dq_ + size_t(i) * d + h * hd, ckl + first, cvl + first, d, nullptr, len_[b], hd, nh,
                    s.scaling, nullptr, scores, c);
      }
      if (prof && thread > 0) prof->Part(Op::kAttentionPart, l, thread, t0, prof->Now(), n, smax, hd);
    });
    if (l == align_layer) {
      // Mean over heads of the attention probabilities (recomputed on this thread, cheap); zero
      // on the columns beyond the sentence's own source tokens.
      float* scores = scores_ + size_t(s.rows.lane) * s.scores_stride;
      for (int i = r0; i < s.r1; ++i) {
        const int b = slots[i] / W;
        float* al = history->align_row(t, slots[i]);
        std::memset(al, 0, sizeof(float) * x.S);
        const size_t first = size_t(off_[b]) * d;
        for (int h = 0; h < H && len_[b] > 0; ++h) {
          AttentionProbs(s.K, dq_ + size_t(i) * d + h * hd, ckl + first + size_t(h) * hd, d, len_[b], hd, s.scaling,
                         nullptr, scores);
          for (int j = 0; j < len_[b]; ++j) al[j] += scores[j] / float(H);
        }
      }
    }
  }
  {
    Span out(prof, Op::kCrossAttnOut, l);
    MTLITE_RETURN_IF_ERROR(s.Lin(out, l, L.o, dctx_, dx_, dx_, Act::kNone));
  }
  s.Output(Op::kCrossAttnNorm, l, Wt.ln);
  return Status::Ok();
}

// The FFN block. Pre-norm: its input LN(x) in the q buffer (free after the cross-attention).
Status Transformer::DecFfn(StepRows& s, int l) {
  const FfnView& W = md_->decoder[size_t(l)].ffn;
  FfnOps& L = dec_ops_[l].ffn;
  const float* in = s.Input(Op::kDecFfnNorm, l, W.ln, dq_);
  {
    Span fc1(s.prof, Op::kDecFfn1, l);
    MTLITE_RETURN_IF_ERROR(s.Lin(fc1, l, L.fc1, in, dffn_, nullptr, ToAct(cfg_->activation)));
  }
  {
    Span fc2(s.prof, Op::kDecFfn2, l);
    MTLITE_RETURN_IF_ERROR(s.Lin(fc2, l, L.fc2, dffn_, dx_, dx_, Act::kNone));
  }
  s.Output(Op::kDecFfnNorm, l, W.ln);
  return Status::Ok();
}

// The SSRU cell of layer l for rows [r0, r1) (x W^T in dq_, the forget gate's input in dk_):
// f = sigmoid(x Wf^T + bf), c = f * c_parent + (1 - f) * x W^T, x += relu(c) (the residual add
// before the layer norm). c_parent is the state the row's parent slot wrote at step t - 1
// (generation (t - 1) % 2; zero at t = 0); c goes to generation t % 2 at the row's own slot, so
// beam reordering gathers the parents' states without a copy. The gate is the kernel table's
// sigmoid (the specified ExpRef, the same bits on every table), the rest portable scalar code.
void Transformer::SsruCell(int l, int t, int r0, int r1, const int32_t* slots) {
  const Dims& x = dims_;
  const int d = x.d, R = x.R, T = x.T;
  const size_t layer = size_t(l) * R * d, generation = size_t(x.Ld) * R * d;
  float* const cur = ssru_state_ + size_t(t & 1) * generation + layer;
  const float* const prev = t > 0 ? ssru_state_ + size_t((t - 1) & 1) * generation + layer : nullptr;
  for (int i = r0; i < r1; ++i) {
    // the slot that computed position t - 1 on this row's path (position 0: the sentence's first)
    const float* cp = prev ? prev + size_t(anc_[size_t(i) * T + t - 1] - (t - 1) * R) * d : nullptr;
    float* c = cur + size_t(slots[i]) * d;
    const float* xw = dq_ + size_t(i) * d;
    float* gate = dk_ + size_t(i) * d;
    float* h = dx_ + size_t(i) * d;
    exec_.K->activation(gate, d, kernels::Act::kSigmoid);  // f, in place of the gate's input
    for (int j = 0; j < d; ++j) {
      const float f = gate[j];
      const float cj = (cp ? f * cp[j] : 0.0f) + (1.0f - f) * xw[j];
      c[j] = cj;
      h[j] = (cj > 0.0f ? cj : 0.0f) + h[j];
    }
  }
}

Status Transformer::DecoderStep(int t, int n, const int32_t* slots, const int32_t* tokens, BeamHistory* history,
                                int align_layer, float** logits) {
  Profiler* prof = exec_.prof;
  if (prof) prof->set_step(t);
  Span step(prof, Op::kDecoderStep);
  const Dims& x = dims_;
  const int d = x.d, threads = exec_.pool->threads();
  if (dec_int8_ && threads > 1 && n >= kRowParallelMinRows * threads) {
    int bounds[ThreadPool::kMaxThreads + 1];
    dec_rows_.Split(n, threads, bounds);  // by the threads' measured speeds
    // a team (above) when the threads' rows are fewer than the GEMM's panel, and every thread has
    // rows (a member that has none would return before the barriers)
    int fewest = n;
    for (int i = 0; i < threads; ++i) fewest = std::min(fewest, bounds[i + 1] - bounds[i]);
    SpinBarrier team;
    team.Reset(threads);
    const bool split = column_split_ > 0 || (column_split_ == 0 && fewest < exec_.K->gemm_panel_rows);
    SpinBarrier* const tm = split && fewest > 0 ? &team : nullptr;
    MTLITE_RETURN_IF_ERROR(ForkJoin(threads, Op::kDecoderJoin, &dec_rows_, tm, [&](const Task& w, int* done) {
      const Rows rows{bounds[w.task], bounds[w.task + 1], n, w.thread, w.ex.prof, w.parts, tm, w.task};
      *done = rows.r1 - rows.r0;
      return DecoderLayers(w.ex, rows, t, slots, tokens, history, align_layer);
    }));
  } else {
    MTLITE_RETURN_IF_ERROR(DecoderLayers(exec_, Rows{0, n, n, 0, prof, nullptr}, t, slots, tokens, history, align_layer));
  }
  const LinearScratch& sc = dec_scratch_;
  Span out(prof, Op::kOutputProjection);
  if (out_blocks_) {  // vocabulary shortlist: only the candidates' blocks
    Linear& L = out_proj();
    out.Work(L.block_bytes(num_out_blocks_), uint64_t(n) * uint64_t(num_out_blocks_) * 8 * uint64_t(d), n,
             num_out_blocks_ * 8, d);
    MTLITE_RETURN_IF_ERROR(L.RunBlocks(exec_, dx_, n, out_blocks_, num_out_blocks_, logits_, sc));
  } else if (md_->shortlist.row_order && out_proj().int8()) {
    // rows in the shortlist's order: the kernel writes row r's logit to token row_order[r]'s
    // column, the same values in the same places as a model stored in token order
    Linear& L = out_proj();
    out.Work(L.weight_bytes(), uint64_t(n) * uint64_t(L.out_features()) * uint64_t(d), n, L.out_features(), d);
    MTLITE_RETURN_IF_ERROR(L.RunScattered(exec_, dx_, n, md_->shortlist.row_order, logits_, sc));
  } else {
    MTLITE_RETURN_IF_ERROR(Lin(out, out_proj(), dx_, n, logits_, nullptr, Act::kNone, sc));
    if (const int32_t* token_row = md_->shortlist.token_row) {
      // (f32/f16 rows in a shortlist's order, which `mtlite shortlist` never writes but a file
      // may hold): back to token order, the same values in the same places. Gathered
      // (sequential writes): scattering the columns instead took 1.5x as long.
      const int V = x.V;
      for (int i = 0; i < n; ++i) {
        float* row = logits_ + size_t(i) * V;
        std::memcpy(token_order_row_, row, sizeof(float) * size_t(V));
        for (int t = 0; t < V; ++t) row[t] = token_order_row_[token_row[t]];
      }
    }
  }
  *logits = logits_;
  return Status::Ok();
}

}  // namespace detail
}  // namespace mtlite

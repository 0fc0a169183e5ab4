// The network: the encoder (encoder.cc) and one incremental decoder step (decoder_step.cc) of a
// transformer encoder-decoder, as blocks over the model's weights (read in place) and the
// translator's arena. What varies between model families is data of the model file (ModelConfig),
// never code of a family: the embedding scale and the position kind (a sinusoid or a stored
// table), the norm placement of every block (post: x = LN(x + Block(x)); pre: x = x + Block(LN(x))),
// a final norm per stack, the FFN activation, the decoder layer kind.
//
//   encoder layer i:  self-attention block (q/k/v projection, masked attention, output
//                     projection), FFN block (fc1 + activation, fc2); each with its residual add
//                     and its layer norm; then the encoder's final norm, if any
//   cross K/V:        every decoder layer's cross-attention K and V, projected once per sentence
//   decoder step t:   per layer: a causal self-attention block over the KV cache (or Marian's SSRU
//                     cell over the parent's state), a cross-attention block over the cross K/V
//                     (source padding masked), an FFN block; the decoder's final norm, if any; then
//                     the output projection
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

#include "arena_plan.h"
#include "beam_history.h"
#include "linear.h"
#include "model_data.h"
#include "profiler.h"

namespace mtlite {
namespace detail {

// The linear layers of each block, by the names of the model's views (model_data.h); constructed
// in the arena by Transformer::Init. A block a layer does not have (the self-attention of an SSRU
// layer, the SSRU cell of the others) keeps Linears without weights.
struct AttentionOps {
  Linear q, k, v, o;
};
struct SsruOps {
  Linear w, wf;
};
struct FfnOps {
  Linear fc1, fc2;
};
struct EncoderLayerOps {
  AttentionOps self_attn;
  FfnOps ffn;
};
struct DecoderLayerOps {
  AttentionOps self_attn;
  SsruOps ssru;
  AttentionOps cross_attn;
  FfnOps ffn;
};

class Transformer {
 public:
  // Bytes of the layers' Linears in the arena (arena_plan.cc's "layers.ops").
  static size_t OpsBytes(const ModelConfig& c) {
    return size_t(c.encoder_layers) * sizeof(EncoderLayerOps) + size_t(c.decoder_layers) * sizeof(DecoderLayerOps) +
           sizeof(Linear);
  }

  Transformer() = default;
  Transformer(const Transformer&) = delete;
  Transformer& operator=(const Transformer&) = delete;
  ~Transformer();

  // Binds the arena buffers of `plan`, creates the linear layers (in the arena) and writes the
  // sinusoid position tables.
  Status Init(const ModelData& md, const ArenaPlan& plan, uint8_t* arena, const Exec& ex);

  // Encodes nb sentences: ids at src_ids + b*S (S = max source tokens), lengths src_len[b]. The
  // sentences' rows are packed (sentence b at rows off[b] .. off[b] + len[b]): no padding row is
  // ever computed, and attention runs over each sentence's own keys, which is bit-identical to a
  // padded batch with masked keys (masked keys contribute exact zeros: kernels.h). Then projects
  // the cross-attention K/V of every decoder layer. smax (the longest source) is the width of the
  // alignment rows, with zeros beyond a sentence's own length.
  Status Encode(const int32_t* src_ids, const int* src_len, int nb, int smax);

  // Decoder position t for n rows: row i continues `slots[i]` (its past through `history`) with
  // input token tokens[i]. Writes K/V of position t at cache row t*R + slot. align_layer >= 0:
  // that layer's cross-attention probabilities (mean over heads) go to history->align_row(t, slot).
  // *logits = [n][V].
  Status DecoderStep(int t, int n, const int32_t* slots, const int32_t* tokens, BeamHistory* history,
                     int align_layer, float** logits);

  // Output projection over these 8-row blocks of the vocabulary only (int8; null: every row).
  // DecoderStep's logits are then [n][nblocks * 8], column c = token blocks[c / 8] * 8 + c % 8.
  void SetOutputBlocks(const int32_t* blocks, int nblocks) {
    out_blocks_ = blocks;
    num_out_blocks_ = nblocks;
  }

  int smax() const { return smax_; }
  void set_exec(const Exec& ex) { exec_ = ex; }  // e.g. a profiled call's profiler
  // Row-parallel decoder steps split their larger layers by output columns (decoder_step.cc):
  // 0 when the kernel table's GEMM panel asks for it, 1 always, -1 never (testing_hooks.h).
  void set_column_split(int mode) { column_split_ = mode; }
  const Dims& dims() const { return dims_; }

 private:
  Linear& out_proj() { return *out_proj_; }
  void Embed(const WeightView& table, int32_t id, int pos, const float* positions, float* out) const;
  // One linear layer inside `span` (adds its weight bytes, MACs and shape to the span).
  Status Lin(Span& span, Linear& L, const float* x, int m, float* y, const float* residual, kernels::Act act,
             const LinearScratch& sc);
  // LayerNorm of m rows from x to out (in place when they are the same), inside a span of `prof`
  // (null: none).
  void Norm(Profiler* prof, Op op, int layer, const float* x, int m, const LayerNormView& ln, float* out);
  bool pre_norm() const { return cfg_->norm == NormPlacement::kPre; }
  // A block's input: with pre-norm LN(x) written to `scratch` (the m rows at x's row), else x.
  const float* BlockInput(Profiler* prof, Op op, int layer, float* x, int m, const LayerNormView& ln, float* scratch);
  // After a block's residual add: with post-norm, x = LN(x).
  void BlockOutput(Profiler* prof, Op op, int layer, float* x, int m, const LayerNormView& ln);

  // One worker's view of a fork-join: its task, its thread (profiler lane), an Exec with a serial
  // pool and the profiler of its spans (task 0's runner: the call's lane-0 spans; none else), and
  // `parts`, the profiler of a worker lane's trace parts (null for task 0's runner).
  struct Task {
    int task, thread;
    Exec ex;
    Profiler* parts;
  };
  // The threading of the row-parallel calls, in one place: runs body(const Task&, int* rows) on
  // `tasks` tasks of the pool (body sets *rows to the rows it ran, for `balancer`). Task 0's
  // runner records the lane-0 spans, whichever thread it is: the calling thread holds the
  // enclosing span open and touches the profiler only after ParallelFor returns (which orders the
  // two), then records the wait from the end of task 0 to the join as `join` (kNumOps: none);
  // task 0's runner first records the wait from the fork to its start (waking the workers; longer
  // when the caller ran late and a worker took task 0). The first failure is returned; `team`
  // (non-null) is broken after it is recorded, so that the members it releases return `aborted`,
  // which never comes first.
  template <class Body>
  Status ForkJoin(int tasks, Op join, RowBalancer* balancer, SpinBarrier* team, Body&& body);

  // Rows [r0, r1) of a decoder step's n rows, run on thread `lane`. prof: lane-0 spans (the
  // step's whole work); parts: a worker lane's trace parts (row-parallel steps).
  // team: the barrier of the row-parallel tasks, when they split the larger int8 layers by output
  // columns (member = this task's index) instead of each running them over its own rows.
  struct Rows {
    int r0, r1, n, lane;
    Profiler* prof;
    Profiler* parts;
    SpinBarrier* team = nullptr;
    int member = 0;
  };
  // Sentences [b0, b1) of an encoder call, on thread `lane`, with its part of the quantization
  // scratch (quant_bytes, quant_rows scales) and of the FFN buffer (ffn_rows rows); prof, parts as
  // in Rows.
  struct EncPart {
    int b0, b1, lane;
    size_t quant_bytes;
    int quant_rows;
    LinearScratch sc;
    float* ffn;
    int ffn_rows;
    Profiler* prof;
    Profiler* parts;
  };
  // A worker lane's share of one op in the trace (nothing without a profiler).
  class PartTimer {
   public:
    PartTimer(Profiler* parts, Op op, int layer, int lane, int m, int n, int k)
        : p_(parts), op_(op), layer_(layer), lane_(lane), m_(m), n_(n), k_(k), t0_(p_ ? p_->Now() : 0) {}
    ~PartTimer() {
      if (p_) p_->Part(op_, layer_, lane_, t0_, p_->Now(), m_, n_, k_);
    }
    PartTimer(const PartTimer&) = delete;
    PartTimer& operator=(const PartTimer&) = delete;

   private:
    Profiler* p_;
    Op op_;
    int layer_, lane_, m_, n_, k_;
    uint64_t t0_;
  };
  // decoder_step.cc: the stack over a step's rows, its blocks, and their linear layers.
  class StepRows;
  Status DecoderLayers(const Exec& ex, const Rows& rows, int t, const int32_t* slots, const int32_t* tokens,
                       BeamHistory* history, int align_layer);
  Status DecSelfAttention(StepRows& s, int l, int t, const int32_t* slots, bool prefetch_kv);
  Status DecSsru(StepRows& s, int l, int t, const int32_t* slots);
  Status DecCrossAttention(StepRows& s, int l, int t, const int32_t* slots, BeamHistory* history, int align_layer,
                           bool prefetch_kv);
  Status DecFfn(StepRows& s, int l);
  void SsruCell(int l, int t, int r0, int r1, const int32_t* slots);
  // encoder.cc
  Status EncodeSentences(const Exec& ex, const EncPart& part, const int32_t* src_ids, int nb);
  Status EncSelfAttention(const Exec& ex, const EncPart& part, int l, int nb);
  Status EncFfn(const Exec& ex, const EncPart& part, int l, int nb);
  Status EncLinear(const Exec& ex, const EncPart& part, int layer, Linear& L, int n, const float* in, int in_row,
                   float* y, int y_row, bool residual, kernels::Act act);
  // A linear layer over n of an encoder part's rows; `work` rows of the batch go to the span.
  Status EncLin(const Exec& ex, const EncPart& part, Span& span, int l, Linear& L, int n, int work, const float* in,
                int in_row, float* y, int y_row, bool residual, kernels::Act act);

  const ModelData* md_ = nullptr;
  const ModelConfig* cfg_ = nullptr;
  Exec exec_;
  ThreadPool serial_;     // no workers: a row-parallel call's layers on one thread
  RowBalancer enc_rows_, dec_rows_;  // the threads' shares of row-parallel calls
  int column_split_ = 0;             // set_column_split
  bool enc_int8_ = false;  // every encoder projection and the cross K/V int8 (row-parallel encoding)
  bool dec_int8_ = false;  // every decoder projection int8 (row-parallel steps)
  Dims dims_;
  // in the arena: the layers' blocks, then the output projection
  EncoderLayerOps* enc_ops_ = nullptr;
  DecoderLayerOps* dec_ops_ = nullptr;
  Linear* out_proj_ = nullptr;
  int num_enc_ops_ = 0, num_dec_ops_ = 0;  // constructed so far (~Transformer destroys them)
  int smax_ = 0;           // longest source of the current batch
  const int32_t* out_blocks_ = nullptr;
  int num_out_blocks_ = 0;

  // arena buffers (arena_plan.h)
  const float* pos_enc_ = nullptr;  // [S][d] (or the stored table)
  const float* pos_dec_ = nullptr;  // [T][d]
  int* off_ = nullptr;              // [B + 1] first encoder row of each sentence
  const int* len_ = nullptr;        // source lengths of the current batch
  float *ex_ = nullptr, *eq_ = nullptr, *ek_ = nullptr, *ev_ = nullptr, *ectx_ = nullptr, *effn_ = nullptr;
  float* scores_ = nullptr;         // [threads][max(S, T)]
  float *ck_ = nullptr, *cv_ = nullptr;  // [Ld][B*S][d]
  float *dx_ = nullptr, *dq_ = nullptr, *dk_ = nullptr, *dv_ = nullptr, *dctx_ = nullptr, *dffn_ = nullptr;
  float* logits_ = nullptr;         // [R][V]
  float* token_order_row_ = nullptr;  // [V] when the projection's rows are in a shortlist's order
  float *kcache_ = nullptr, *vcache_ = nullptr;  // [Ld][T][R][d] (self-attention layers)
  float* ssru_state_ = nullptr;     // [2][Ld][R][d] (SSRU layers): step t writes generation t % 2
  int32_t* anc_ = nullptr;          // [R][T]
  LinearScratch enc_scratch_, dec_scratch_;
  size_t enc_quant_bytes_ = 0;  // enc_scratch_: quantized bytes, and
  int enc_quant_rows_ = 0;      // rows of scales (arena_plan.cc)
};

template <class Body>
Status Transformer::ForkJoin(int tasks, Op join, RowBalancer* balancer, SpinBarrier* team, Body&& body) {
  Profiler* prof = exec_.prof;
  std::atomic<int> failed{-1};
  Status error;
  uint64_t lane0_end = 0;
  const uint64_t fork = kernels::SteadyNs(), fork_ticks = prof ? prof->Now() : 0;
  exec_.pool->ParallelFor(tasks, [&](int task, int thread) {
    if (task == 0 && prof && join != Op::kNumOps) prof->Join(join, fork_ticks);
    Task w{task, thread, exec_, task > 0 && thread > 0 ? prof : nullptr};
    w.ex.pool = &serial_;
    w.ex.prof = task == 0 ? prof : nullptr;
    int rows = 0;
    Status s = body(static_cast<const Task&>(w), &rows);
    if (!s.ok()) {
      int none = -1;
      if (failed.compare_exchange_strong(none, task)) error = std::move(s);
      if (team) team->Break();
    }
    balancer->Record(task, thread, rows, kernels::SteadyNs() - fork);
    if (w.ex.prof) lane0_end = w.ex.prof->Now();
  });
  if (failed.load() >= 0) return error;
  if (prof && join != Op::kNumOps) prof->Join(join, lane0_end);
  return Status::Ok();
}

}  // namespace detail
}  // namespace mtlite

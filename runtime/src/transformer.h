// The network: the encoder (encoder.cc) and one incremental decoder step (decoder_step.cc) of a
// Marian transformer (post-norm, scaled embeddings + sinusoid or stored positions), as layers
// over the model's weights (read in place) and the translator's arena.
//
//   encoder layer i:  self-attention (q/k/v projection, masked attention, output projection,
//                     + residual, layer norm), FFN (fc1 + activation, fc2 + residual, layer norm)
//   cross K/V:        every decoder layer's cross-attention K and V, projected once per sentence
//   decoder step t:   per layer: causal self-attention over the KV cache (or Marian's SSRU cell
//                     over the parent's state), cross-attention over the cross K/V (source padding
//                     masked), FFN; then the output projection
#pragma once

#include <cstdint>

#include "arena_plan.h"
#include "beam_history.h"
#include "linear.h"
#include "model_data.h"
#include "profiler.h"

namespace mtlite {
namespace detail {

class Transformer {
 public:
  static constexpr int kEncOps = 6;   // q k v o fc1 fc2
  static constexpr int kDecOps = 10;  // q k v o (SSRU: W Wf - -), cross q k v o, fc1 fc2
  static int NumOps(const ModelConfig& c) { return c.encoder_layers * kEncOps + c.decoder_layers * kDecOps + 1; }

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
  Linear& enc(int layer, int op) { return ops_[layer * kEncOps + op]; }
  Linear& dec(int layer, int op) { return ops_[dims_.Le * kEncOps + layer * kDecOps + op]; }
  Linear& out_proj() { return ops_[num_ops_ - 1]; }
  void Embed(const WeightView& table, int32_t id, int pos, const float* positions, float* out) const;
  // One linear layer inside `span` (adds its weight bytes, MACs and shape to the span).
  Status Lin(Span& span, Linear& L, const float* x, int m, float* y, const float* residual, kernels::Act act,
             const LinearScratch& sc);
  // LayerNorm of m rows in place, inside a span of `prof` (null: none).
  void Norm(Profiler* prof, Op op, int layer, float* x, int m, const LayerNormView& ln);

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
  Status DecoderLayers(const Exec& ex, const Rows& rows, int t, const int32_t* slots, const int32_t* tokens,
                       BeamHistory* history, int align_layer);
  void SsruCell(int l, int t, int r0, int r1, const int32_t* slots);  // decoder_step.cc
  Status EncodeSentences(const Exec& ex, const EncPart& part, const int32_t* src_ids, int nb);
  Status EncLinear(const Exec& ex, const EncPart& part, int layer, Linear& L, int n, const float* in, int in_row,
                   float* y, int y_row, bool residual, kernels::Act act);

  const ModelData* md_ = nullptr;
  const ModelConfig* cfg_ = nullptr;
  Exec exec_;
  ThreadPool serial_;     // no workers: a row-parallel call's layers on one thread
  RowBalancer enc_rows_, dec_rows_;  // the threads' shares of row-parallel calls
  int column_split_ = 0;             // set_column_split
  bool enc_int8_ = false;  // every encoder projection and the cross K/V int8 (row-parallel encoding)
  bool dec_int8_ = false;  // every decoder projection int8 (row-parallel steps)
  Dims dims_;
  Linear* ops_ = nullptr;  // in the arena
  int num_ops_ = 0;
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

}  // namespace detail
}  // namespace mtlite

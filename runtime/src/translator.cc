// The translator: encoder, incremental decoder with a beam-history KV cache,
// cross-attention over the once-per-sentence encoder K/V, greedy and beam search.
//
// Memory: every working buffer is carved from one arena allocated in Create(),
// sized from TranslatorLimits by the same Plan() code that ArenaBytes() runs.
// translate() never touches the heap.
//
// Beam-history KV cache: decoder self-attention K/V for step t and row slot r are
// written once at kcache[layer][t][r]; a beam that continues from parent slot p
// reads its past keys through an ancestor table (anc[r][t'] = slot that produced
// position t' on r's path), so beam reordering never copies the cache.
#include <pthreadpool.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include "kernels.h"
#include "model_data.h"
#include "mtlite/mtlite.hpp"
#include "tokenizer.h"

#ifdef MTLITE_USE_XNNPACK
#include <xnnpack.h>
#endif

namespace mtlite {

using detail::ModelData;
using detail::VectorView;
using detail::WeightView;
using kernels::Act;
using kernels::RoundUp;

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Bump allocator used twice: once without a base to measure, once to assign.
struct Arena {
  uint8_t* base = nullptr;
  size_t used = 0;
  template <class T>
  T* Take(size_t count) {
    used = (used + 63) & ~size_t(63);
    T* p = base ? reinterpret_cast<T*>(base + used) : nullptr;
    used += count * sizeof(T);
    return p;
  }
};

Act ToAct(ActivationKind a) {
  switch (a) {
    case ActivationKind::kSiLU: return Act::kSiLU;
    case ActivationKind::kReLU: return Act::kReLU;
    case ActivationKind::kGELU: return Act::kGELU;
    case ActivationKind::kGELUTanh: return Act::kGELUTanh;
  }
  return Act::kNone;
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do { ++e; mant <<= 1; } while (!(mant & 0x400));
      bits = sign | uint32_t(127 - 15 - e) << 23 | (mant & 0x3ff) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// One linear layer y = x W^T + b (+ residual) (then activation).
struct Linear {
  const WeightView* w = nullptr;
  const float* bias = nullptr;
#ifdef MTLITE_USE_XNNPACK
  xnn_operator_t op = nullptr;
#endif
};

Status Err(StatusCode c, std::string m) { return Status(c, std::move(m)); }

}  // namespace

class TranslatorImpl {
 public:
  ~TranslatorImpl();
  Status Init(std::shared_ptr<const Model> model, const TranslatorLimits& limits);
  static size_t Plan(const ModelData& md, const TranslatorLimits& lim, TranslatorImpl* self, Arena* a);

  Status Run(const std::string_view* texts, const int32_t* const* ids, const int* lens, size_t n,
             const TranslateOptions& opt, const SentenceResultView** out);
  Status Forced(const int32_t* src, int src_len, const int32_t* tgt, int tgt_len, float* logits_out);

  size_t arena_bytes = 0;
  TranslatorLimits lim;

 private:
  struct EncLayer { Linear q, k, v, o, fc1, fc2; };
  struct DecLayer { Linear q, k, v, o, cq, ck, cv, co, fc1, fc2; };
  struct Hyp { float score; int t_end; int slot; };  // tokens: history up to t_end at slot

  Status MakeLinear(const WeightView& w, const VectorView& b, Linear* out);
  void RunLinear(const Linear& L, const float* x, int m, float* y, const float* residual, Act act);
  void Embed(const WeightView& table, int32_t id, int pos, const float* positions, float* out) const;
  void Encode(int nb, int smax);
  void DecoderStep(int t, int n_active, bool want_align, int align_layer);
  float RowLogSumExp(const float* row) const;
  Status EncodeSources(const std::string_view* texts, const int32_t* const* ids, const int* lens,
                       size_t n, int* smax);
  void Greedy(int nb, int max_len_b[], const TranslateOptions& opt);
  void Beam(int nb, int max_len_b[], const TranslateOptions& opt);
  Status Finish(int nb, const TranslateOptions& opt, bool greedy);
  template <class F>
  void ParallelFor(int n, F&& fn);

  std::shared_ptr<const Model> model_;
  const ModelData* md_ = nullptr;
  const ModelConfig* cfg_ = nullptr;
  const kernels::KernelTable* K_ = nullptr;
  pthreadpool_t pool_ = nullptr;
  std::unique_ptr<SpmTokenizer> src_tok_, tgt_tok_;
  std::vector<EncLayer> enc_;
  std::vector<DecLayer> dec_;
  Linear out_proj_;
  uint8_t* arena_ = nullptr;

  // dimensions
  int d_ = 0, B_ = 0, S_ = 0, T_ = 0, W_ = 0, NB_ = 0, R_ = 0, V_ = 0, F_ = 0, C_ = 0;
  int text_cap_ = 0;
  size_t tok_ws_bytes_ = 0;

  // ---- arena buffers (see Plan) ----
  float* pos_enc_ = nullptr;  // [S][d] sinusoid (or null when stored)
  float* pos_dec_ = nullptr;  // [T][d]
  int32_t* src_ids_ = nullptr;  // [B][S]
  int* src_len_ = nullptr;      // [B]
  uint8_t* tok_ws_ = nullptr;
  float* mask_ = nullptr;       // [B][S] additive source-padding mask
  float* ex_ = nullptr;         // [B*S][d] encoder hidden / output
  float* eq_ = nullptr;         // [B*S][d]
  float* ek_ = nullptr;
  float* ev_ = nullptr;
  float* ectx_ = nullptr;
  float* ffn_ = nullptr;        // [max(C,R)][F]
  float* tmp_ = nullptr;        // [max(B*S,R)][d] (XNNPACK residual staging)
  int8_t* qbuf_ = nullptr;      // quantised activations
  float* qscale_ = nullptr;
  float* scores_ = nullptr;     // [threads][max(S,T)]
  float* ck_ = nullptr;         // [Ld][B][S][d] cross-attention K (once per sentence)
  float* cv_ = nullptr;
  float* dx_ = nullptr;         // [R][d] decoder (compact active rows)
  float* dq_ = nullptr;
  float* dk_ = nullptr;
  float* dv_ = nullptr;
  float* dctx_ = nullptr;
  float* logits_ = nullptr;     // [R][V]
  float* kcache_ = nullptr;     // [Ld][T][R][d]
  float* vcache_ = nullptr;
  int32_t* anc_ = nullptr;      // [R][T]: slot that holds position p on compact row i's path
  int32_t* tok_hist_ = nullptr; // [T][R]: token generated at step t by slot r
  int32_t* par_hist_ = nullptr; // [T][R]: parent slot at step t-1
  float* align_hist_ = nullptr; // [T][R][S]
  int32_t* active_ = nullptr;   // [R] slots of the compact rows
  int32_t* row_tok_ = nullptr;  // [R] input token per compact row
  float* beam_score_ = nullptr; // [R]
  float* cand_score_ = nullptr; // [B][2W]
  int32_t* cand_tok_ = nullptr;
  int32_t* cand_par_ = nullptr;
  Hyp* hyps_ = nullptr;         // [B][W]
  int* num_hyps_ = nullptr;     // [B]
  float* worst_ = nullptr;      // [B]
  uint8_t* done_ = nullptr;     // [B]
  int32_t* out_ids_ = nullptr;  // [B][NB][T]
  char* out_text_ = nullptr;    // [B][NB][text_cap]
  float* out_align_ = nullptr;  // [B][NB][T][S]
  HypothesisView* hyp_views_ = nullptr;  // [B][NB]
  SentenceResultView* sent_views_ = nullptr;  // [B]
  int nthreads_ = 1;
  int src_smax_ = 0;            // padded source length of the current batch
  bool texts_mode_ = false;     // inputs were text (decode outputs to text)
};

// ---------------------------------------------------------------------------------------------
// Planning

size_t TranslatorImpl::Plan(const ModelData& md, const TranslatorLimits& lim, TranslatorImpl* s,
                            Arena* a) {
  const ModelConfig& c = md.config;
  const int d = c.d_model, B = lim.max_batch, S = lim.max_source_tokens, T = lim.max_target_tokens;
  const int W = lim.max_beam, NB = lim.max_n_best, R = B * W, V = c.target_vocab_size;
  const int F = std::max(c.encoder_ffn_dim, c.decoder_ffn_dim);
  const int C = std::min(B * S, 64);  // encoder FFN row chunk
  const int Ld = c.decoder_layers;
  const int threads = std::max(1, lim.num_threads);
  const size_t BS = size_t(B) * S;
  const int maxrows = int(std::max<size_t>(BS, size_t(R)));
  const int kpmax = RoundUp(std::max(d, F), 4);
  const int text_cap = T * 64 + 16;  // max 64 bytes of text per token (pieces are short)
  TranslatorImpl tmp;
  TranslatorImpl& t = s ? *s : tmp;
  t.d_ = d; t.B_ = B; t.S_ = S; t.T_ = T; t.W_ = W; t.NB_ = NB; t.R_ = R; t.V_ = V; t.F_ = F; t.C_ = C;
  t.text_cap_ = text_cap;
  t.nthreads_ = threads;
  t.tok_ws_bytes_ = SpmTokenizer::WorkspaceBytes(size_t(lim.max_input_bytes));

  t.pos_enc_ = c.positions_stored ? nullptr : a->Take<float>(size_t(S) * d);
  t.pos_dec_ = c.positions_stored ? nullptr : a->Take<float>(size_t(T) * d);
  t.src_ids_ = a->Take<int32_t>(BS);
  t.src_len_ = a->Take<int>(B);
  t.tok_ws_ = a->Take<uint8_t>(t.tok_ws_bytes_);
  t.mask_ = a->Take<float>(BS);
  t.ex_ = a->Take<float>(BS * d);
  t.eq_ = a->Take<float>(BS * d);
  t.ek_ = a->Take<float>(BS * d);
  t.ev_ = a->Take<float>(BS * d);
  t.ectx_ = a->Take<float>(BS * d);
  t.ffn_ = a->Take<float>(size_t(std::max(C, R)) * F);
  t.tmp_ = a->Take<float>(size_t(maxrows) * std::max(d, F));
  t.qbuf_ = a->Take<int8_t>(size_t(maxrows) * kpmax);
  t.qscale_ = a->Take<float>(maxrows);
  t.scores_ = a->Take<float>(size_t(threads) * std::max(S, T));
  t.ck_ = a->Take<float>(size_t(Ld) * BS * d);
  t.cv_ = a->Take<float>(size_t(Ld) * BS * d);
  t.dx_ = a->Take<float>(size_t(R) * d);
  t.dq_ = a->Take<float>(size_t(R) * d);
  t.dk_ = a->Take<float>(size_t(R) * d);
  t.dv_ = a->Take<float>(size_t(R) * d);
  t.dctx_ = a->Take<float>(size_t(R) * d);
  t.logits_ = a->Take<float>(size_t(R) * V);
  t.kcache_ = a->Take<float>(size_t(Ld) * T * R * d);
  t.vcache_ = a->Take<float>(size_t(Ld) * T * R * d);
  t.anc_ = a->Take<int32_t>(size_t(R) * T);
  t.tok_hist_ = a->Take<int32_t>(size_t(T) * R);
  t.par_hist_ = a->Take<int32_t>(size_t(T) * R);
  t.align_hist_ = lim.alignments ? a->Take<float>(size_t(T) * R * S) : nullptr;
  t.active_ = a->Take<int32_t>(R);
  t.row_tok_ = a->Take<int32_t>(R);
  t.beam_score_ = a->Take<float>(R);
  t.cand_score_ = a->Take<float>(size_t(B) * 2 * W);
  t.cand_tok_ = a->Take<int32_t>(size_t(B) * 2 * W);
  t.cand_par_ = a->Take<int32_t>(size_t(B) * 2 * W);
  t.hyps_ = a->Take<Hyp>(size_t(B) * W);
  t.num_hyps_ = a->Take<int>(B);
  t.worst_ = a->Take<float>(B);
  t.done_ = a->Take<uint8_t>(B);
  t.out_ids_ = a->Take<int32_t>(size_t(B) * NB * T);
  t.out_text_ = a->Take<char>(size_t(B) * NB * text_cap);
  t.out_align_ = lim.alignments ? a->Take<float>(size_t(B) * NB * T * S) : nullptr;
  t.hyp_views_ = a->Take<HypothesisView>(size_t(B) * NB);
  t.sent_views_ = a->Take<SentenceResultView>(B);
  return (a->used + 63) & ~size_t(63);
}

static Status CheckLimits(const ModelConfig& c, const TranslatorLimits& l) {
  auto bad = [](const char* what, long long v, long long lo, long long hi) {
    return Err(StatusCode::kInvalidArgument, std::string("TranslatorLimits.") + what + " = " +
                                                 std::to_string(v) + " is outside [" + std::to_string(lo) +
                                                 ", " + std::to_string(hi) + "]");
  };
  if (l.max_batch < 1 || l.max_batch > 4096) return bad("max_batch", l.max_batch, 1, 4096);
  if (l.max_beam < 1 || l.max_beam > 64) return bad("max_beam", l.max_beam, 1, 64);
  if (l.max_n_best < 1 || l.max_n_best > l.max_beam) return bad("max_n_best", l.max_n_best, 1, l.max_beam);
  if (l.max_source_tokens < 1 || l.max_source_tokens > 65536)
    return bad("max_source_tokens", l.max_source_tokens, 1, 65536);
  if (l.max_target_tokens < 1 || l.max_target_tokens > 65536)
    return bad("max_target_tokens", l.max_target_tokens, 1, 65536);
  if (l.max_input_bytes < 1 || l.max_input_bytes > (1 << 24))
    return bad("max_input_bytes", l.max_input_bytes, 1, 1 << 24);
  if (l.num_threads < 1 || l.num_threads > 256) return bad("num_threads", l.num_threads, 1, 256);
  // KV cache rows (batch x beam slots x target positions) are indexed with int32.
  const long long cache_rows = (long long)l.max_batch * l.max_beam * l.max_target_tokens;
  if (cache_rows > 0x7fffffffLL)
    return Err(StatusCode::kInvalidArgument,
               "TranslatorLimits: max_batch * max_beam * max_target_tokens = " + std::to_string(cache_rows) +
                   " exceeds 2^31 - 1 (the decoder KV cache alone would need " +
                   std::to_string(cache_rows / (1LL << 30)) + " GiB per float of d_model)");
  if (c.positions_stored) {
    if (l.max_source_tokens > c.max_positions)
      return bad("max_source_tokens (model max_positions)", l.max_source_tokens, 1, c.max_positions);
    if (l.max_target_tokens > c.max_positions)
      return bad("max_target_tokens (model max_positions)", l.max_target_tokens, 1, c.max_positions);
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Creation

TranslatorImpl::~TranslatorImpl() {
#ifdef MTLITE_USE_XNNPACK
  auto del = [](Linear& l) {
    if (l.op) xnn_delete_operator(l.op);
    l.op = nullptr;
  };
  for (auto& e : enc_) { del(e.q); del(e.k); del(e.v); del(e.o); del(e.fc1); del(e.fc2); }
  for (auto& e : dec_) {
    del(e.q); del(e.k); del(e.v); del(e.o); del(e.cq); del(e.ck); del(e.cv); del(e.co); del(e.fc1); del(e.fc2);
  }
  del(out_proj_);
#endif
  if (pool_) pthreadpool_destroy(pool_);
  std::free(arena_);
}

Status TranslatorImpl::MakeLinear(const WeightView& w, const VectorView& b, Linear* out) {
  out->w = &w;
  out->bias = b.data;
#ifdef MTLITE_USE_XNNPACK
  if (w.dtype == WeightType::kInt8) return Status::Ok();
  std::vector<float> tmp;  // creation-time only: XNNPACK packs its own copy
  const float* kernel = static_cast<const float*>(w.data);
  if (w.dtype == WeightType::kF16) {
    tmp.resize(size_t(w.rows) * w.cols);
    const uint16_t* h = static_cast<const uint16_t*>(w.data);
    for (size_t i = 0; i < tmp.size(); ++i) tmp[i] = HalfToFloat(h[i]);
    kernel = tmp.data();
  }
  xnn_status st = xnn_create_fully_connected_nc_f32(size_t(w.cols), size_t(w.rows), size_t(w.cols),
                                                    size_t(w.rows), kernel, b.data, -INFINITY, INFINITY,
                                                    0, &out->op);
  if (st != xnn_status_success)
    return Err(StatusCode::kResourceExhausted, "XNNPACK fully-connected creation failed (status " +
                                                   std::to_string(int(st)) + ")");
#endif
  return Status::Ok();
}

Status TranslatorImpl::Init(std::shared_ptr<const Model> model, const TranslatorLimits& limits) {
  model_ = std::move(model);
  md_ = &model_->data();
  cfg_ = &md_->config;
  lim = limits;
  if (Status s = CheckLimits(*cfg_, lim); !s.ok()) return s;
  K_ = &kernels::BestKernels();
#ifdef MTLITE_USE_XNNPACK
  if (cfg_->weight_type != WeightType::kInt8) {
    static const xnn_status init = xnn_initialize(nullptr);
    if (init != xnn_status_success) return Err(StatusCode::kInternal, "xnn_initialize failed");
  }
#endif
  Arena measure;
  arena_bytes = Plan(*md_, lim, nullptr, &measure);
  arena_ = static_cast<uint8_t*>(std::aligned_alloc(64, arena_bytes));
  if (!arena_) return Err(StatusCode::kResourceExhausted, "cannot allocate arena of " + std::to_string(arena_bytes) + " bytes");
  // Not zero-filled: every buffer is written before it is read, and pages the declared
  // limits reserve but a translation never reaches stay untouched (not resident).
  Arena assign;
  assign.base = arena_;
  Plan(*md_, lim, this, &assign);

  if (lim.num_threads > 1) {
    pool_ = pthreadpool_create(size_t(lim.num_threads));
    if (!pool_) return Err(StatusCode::kResourceExhausted, "cannot create thread pool");
  }
  src_tok_ = std::make_unique<SpmTokenizer>(md_->source_spm, md_->source_vocab);
  tgt_tok_ = std::make_unique<SpmTokenizer>(md_->target_spm, md_->target_vocab);
  if (!src_tok_->status().ok()) return src_tok_->status();
  if (!tgt_tok_->status().ok()) return tgt_tok_->status();

  enc_.resize(md_->encoder.size());
  for (size_t i = 0; i < enc_.size(); ++i) {
    const auto& L = md_->encoder[i];
    EncLayer& e = enc_[i];
    for (auto [lin, w, b] : {std::tuple{&e.q, &L.self_attn.q, &L.self_attn.q_bias},
                             {&e.k, &L.self_attn.k, &L.self_attn.k_bias},
                             {&e.v, &L.self_attn.v, &L.self_attn.v_bias},
                             {&e.o, &L.self_attn.o, &L.self_attn.o_bias},
                             {&e.fc1, &L.fc1, &L.fc1_bias},
                             {&e.fc2, &L.fc2, &L.fc2_bias}})
      if (Status s = MakeLinear(*w, *b, lin); !s.ok()) return s;
  }
  dec_.resize(md_->decoder.size());
  for (size_t i = 0; i < dec_.size(); ++i) {
    const auto& L = md_->decoder[i];
    DecLayer& e = dec_[i];
    for (auto [lin, w, b] : {std::tuple{&e.q, &L.self_attn.q, &L.self_attn.q_bias},
                             {&e.k, &L.self_attn.k, &L.self_attn.k_bias},
                             {&e.v, &L.self_attn.v, &L.self_attn.v_bias},
                             {&e.o, &L.self_attn.o, &L.self_attn.o_bias},
                             {&e.cq, &L.cross_attn.q, &L.cross_attn.q_bias},
                             {&e.ck, &L.cross_attn.k, &L.cross_attn.k_bias},
                             {&e.cv, &L.cross_attn.v, &L.cross_attn.v_bias},
                             {&e.co, &L.cross_attn.o, &L.cross_attn.o_bias},
                             {&e.fc1, &L.fc1, &L.fc1_bias},
                             {&e.fc2, &L.fc2, &L.fc2_bias}})
      if (Status s = MakeLinear(*w, *b, lin); !s.ok()) return s;
  }
  if (Status s = MakeLinear(md_->output_proj, md_->final_logits_bias, &out_proj_); !s.ok()) return s;

  // Marian sinusoid (HF MarianSinusoidalPositionalEmbedding): sin half then cos half.
  auto fill_pos = [&](float* p, int n) {
    const int d = d_, half = (d + 1) / 2;
    for (int pos = 0; pos < n; ++pos)
      for (int j = 0; j < d; ++j) {
        const int i = j < half ? j : j - half;  // frequency index
        const double angle = pos / std::pow(10000.0, 2.0 * i / d);
        p[size_t(pos) * d + j] = float(j < half ? std::sin(angle) : std::cos(angle));
      }
  };
  if (pos_enc_) fill_pos(pos_enc_, S_);
  if (pos_dec_) fill_pos(pos_dec_, T_);
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Building blocks

template <class F>
void TranslatorImpl::ParallelFor(int n, F&& fn) {
  if (!pool_ || n <= 1) {
    for (int i = 0; i < n; ++i) fn(i);
    return;
  }
  struct Ctx { F* f; };
  Ctx ctx{&fn};
  pthreadpool_parallelize_1d(
      pool_, [](void* c, size_t i) { (*static_cast<Ctx*>(c)->f)(int(i)); }, &ctx, size_t(n), 0);
}

void TranslatorImpl::RunLinear(const Linear& L, const float* x, int m, float* y, const float* residual,
                               Act act) {
  const WeightView& w = *L.w;
  const int n = w.rows, k = w.cols;
  if (m <= 0) return;
  if (w.dtype == WeightType::kInt8) {
    const int kp = RoundUp(k, 4);
    K_->quantize_rows_s8(x, m, k, k, qbuf_, kp, qscale_);
    const int8_t* wq = static_cast<const int8_t*>(w.data);
    // Split output channels over threads in blocks of 8 rows (BlockedN8K4 blocks).
    const int blocks = (n + 7) / 8;
    const int parts = pool_ ? std::min(nthreads_ * 2, blocks) : 1;
    ParallelFor(parts, [&](int p) {
      const int b0 = blocks * p / parts, b1 = blocks * (p + 1) / parts;
      const int n0 = b0 * 8, n1 = std::min(n, b1 * 8);
      if (n1 <= n0) return;
      K_->gemm_s8_blocked(m, n1 - n0, k, qbuf_, kp, qscale_, wq + size_t(b0) * kp * 8, w.scales + n0,
                          L.bias ? L.bias + n0 : nullptr, residual ? residual + n0 : nullptr, n, y + n0, n,
                          act);
    });
    return;
  }
  float* dst = residual ? tmp_ : y;
#ifdef MTLITE_USE_XNNPACK
  xnn_setup_fully_connected_nc_f32(L.op, size_t(m), x, dst, pool_);
  xnn_run_operator(L.op, pool_);
#else
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float s = 0;
      if (w.dtype == WeightType::kF32) {
        s = K_->dot_f32(x + size_t(i) * k, static_cast<const float*>(w.data) + size_t(j) * k, k);
      } else {
        const uint16_t* h = static_cast<const uint16_t*>(w.data) + size_t(j) * k;
        for (int q = 0; q < k; ++q) s += x[size_t(i) * k + q] * HalfToFloat(h[q]);
      }
      dst[size_t(i) * n + j] = L.bias ? s + L.bias[j] : s;
    }
#endif
  if (residual) {
    for (size_t i = 0; i < size_t(m) * n; ++i) y[i] = dst[i] + residual[i];
  }
  if (act != Act::kNone) K_->activation(y, m * n, act);
}

void TranslatorImpl::Embed(const WeightView& table, int32_t id, int pos, const float* positions,
                           float* out) const {
  const int d = d_;
  const float scale = cfg_->embed_scale;
  if (table.dtype == WeightType::kInt8) {
    int8_t row[16384];
    kernels::UnpackBlockedRow(static_cast<const int8_t*>(table.data), table.rows, d, id, row);
    const float s = table.scales[id];
    for (int j = 0; j < d; ++j) out[j] = (float(row[j]) * s) * scale;
  } else if (table.dtype == WeightType::kF16) {
    const uint16_t* h = static_cast<const uint16_t*>(table.data) + size_t(id) * d;
    for (int j = 0; j < d; ++j) out[j] = HalfToFloat(h[j]) * scale;
  } else {
    const float* f = static_cast<const float*>(table.data) + size_t(id) * d;
    for (int j = 0; j < d; ++j) out[j] = f[j] * scale;
  }
  const float* p = positions + size_t(pos) * d;
  for (int j = 0; j < d; ++j) out[j] = out[j] + p[j];
}

// Encoder over nb sentences padded to smax rows each; source padding is masked (-inf).
void TranslatorImpl::Encode(int nb, int smax) {
  const int d = d_, H = cfg_->encoder_heads, hd = d / H;
  const float scaling = 1.0f / std::sqrt(float(hd));
  const int rows = nb * smax;
  const float* pos = pos_enc_ ? pos_enc_ : md_->encoder_positions.data;
  for (int b = 0; b < nb; ++b)
    for (int i = 0; i < smax; ++i) {
      float* x = ex_ + (size_t(b) * smax + i) * d;
      mask_[size_t(b) * smax + i] = i < src_len_[b] ? 0.0f : kNegInf;
      if (i < src_len_[b]) {
        Embed(md_->source_embed, src_ids_[size_t(b) * S_ + i], i, pos, x);
      } else {
        std::memset(x, 0, sizeof(float) * d);
      }
    }
  const Act act = ToAct(cfg_->activation);
  const int smax_scores = std::max(S_, T_);
  for (size_t l = 0; l < enc_.size(); ++l) {
    const EncLayer& L = enc_[l];
    const auto& W = md_->encoder[l];
    RunLinear(L.q, ex_, rows, eq_, nullptr, Act::kNone);
    RunLinear(L.k, ex_, rows, ek_, nullptr, Act::kNone);
    RunLinear(L.v, ex_, rows, ev_, nullptr, Act::kNone);
    // attention per (sentence, head, query row); padded query rows produce zeros
    const int tasks = std::max(1, std::min(nthreads_, nb * H));
    ParallelFor(tasks, [&](int task) {
      float* sc = scores_ + size_t(task) * smax_scores;
      for (int bh = task; bh < nb * H; bh += tasks) {
        const int b = bh / H, h = bh % H;
        const float* mask = mask_ + size_t(b) * smax;
        for (int i = 0; i < smax; ++i) {
          float* ctx = ectx_ + (size_t(b) * smax + i) * d + h * hd;
          if (i >= src_len_[b]) {
            std::memset(ctx, 0, sizeof(float) * hd);
            continue;
          }
          const float* q = eq_ + (size_t(b) * smax + i) * d + h * hd;
          K_->attn_scores(q, ek_ + size_t(b) * smax * d + h * hd, d, nullptr, smax, hd, scaling, sc);
          K_->softmax_masked(sc, smax, mask);
          K_->attn_context(sc, ev_ + size_t(b) * smax * d + h * hd, d, nullptr, smax, hd, ctx);
        }
      }
    });
    RunLinear(L.o, ectx_, rows, ex_, ex_, Act::kNone);  // + residual
    K_->layer_norm(ex_, rows, d, W.self_attn_ln.gamma.data, W.self_attn_ln.beta.data, cfg_->layer_norm_eps, ex_);
    for (int r0 = 0; r0 < rows; r0 += C_) {
      const int m = std::min(C_, rows - r0);
      float* x = ex_ + size_t(r0) * d;
      RunLinear(L.fc1, x, m, ffn_, nullptr, act);
      RunLinear(L.fc2, ffn_, m, x, x, Act::kNone);
    }
    K_->layer_norm(ex_, rows, d, W.final_ln.gamma.data, W.final_ln.beta.data, cfg_->layer_norm_eps, ex_);
  }
  // Cross-attention K/V for every decoder layer, once per sentence.
  for (size_t l = 0; l < dec_.size(); ++l) {
    RunLinear(dec_[l].ck, ex_, rows, ck_ + l * size_t(B_) * S_ * d, nullptr, Act::kNone);
    RunLinear(dec_[l].cv, ex_, rows, cv_ + l * size_t(B_) * S_ * d, nullptr, Act::kNone);
  }
}

// One decoder step for the n_active compact rows (slots active_[i], inputs row_tok_[i]) at
// position t. Writes logits_[i][V]. smax = padded source length of the batch (stored in
// src_smax_ via mask_ layout): cross K/V rows for sentence b start at b*smax.
void TranslatorImpl::DecoderStep(int t, int n_active, bool want_align, int align_layer) {
  const int d = d_, H = cfg_->decoder_heads, hd = d / H, R = R_, W = W_;
  const float scaling = 1.0f / std::sqrt(float(hd));
  const float* pos = pos_dec_ ? pos_dec_ : md_->decoder_positions.data;
  const int smax = src_smax_;
  for (int i = 0; i < n_active; ++i) {
    Embed(md_->target_embed, row_tok_[i], t, pos, dx_ + size_t(i) * d);
    // ancestors: a[p] = slot that processed position p on this row's path (a[t] = own slot)
    int32_t* a = anc_ + size_t(i) * T_;
    a[t] = active_[i];
    for (int p = t; p > 0; --p) a[p - 1] = par_hist_[size_t(p) * R + a[p]];
    for (int p = 0; p <= t; ++p) a[p] = p * R + a[p];  // -> KV cache row of position p
  }
  const Act act = ToAct(cfg_->activation);
  const int scores_stride = std::max(S_, T_);
  for (size_t l = 0; l < dec_.size(); ++l) {
    const DecLayer& L = dec_[l];
    const auto& Wt = md_->decoder[l];
    float* kc = kcache_ + l * size_t(T_) * R * d;
    float* vc = vcache_ + l * size_t(T_) * R * d;
    // --- causal self-attention over this row's own history (positions 0..t) ---
    RunLinear(L.q, dx_, n_active, dq_, nullptr, Act::kNone);
    RunLinear(L.k, dx_, n_active, dk_, nullptr, Act::kNone);
    RunLinear(L.v, dx_, n_active, dv_, nullptr, Act::kNone);
    for (int i = 0; i < n_active; ++i) {
      const size_t slot = size_t(active_[i]);
      std::memcpy(kc + (size_t(t) * R + slot) * d, dk_ + size_t(i) * d, sizeof(float) * d);
      std::memcpy(vc + (size_t(t) * R + slot) * d, dv_ + size_t(i) * d, sizeof(float) * d);
    }
    const int tasks = std::max(1, std::min(nthreads_, n_active * H));
    ParallelFor(tasks, [&](int task) {
      float* sc = scores_ + size_t(task) * scores_stride;
      for (int ih = task; ih < n_active * H; ih += tasks) {
        const int i = ih / H, h = ih % H;
        const int32_t* rows = anc_ + size_t(i) * T_;  // cache row of each position on this path
        const float* q = dq_ + size_t(i) * d + h * hd;
        K_->attn_scores(q, kc + h * hd, d, rows, t + 1, hd, scaling, sc);
        K_->softmax_masked(sc, t + 1, nullptr);  // keys beyond t do not exist yet: causal by construction
        K_->attn_context(sc, vc + h * hd, d, rows, t + 1, hd, dctx_ + size_t(i) * d + h * hd);
      }
    });
    RunLinear(L.o, dctx_, n_active, dx_, dx_, Act::kNone);
    K_->layer_norm(dx_, n_active, d, Wt.self_attn_ln.gamma.data, Wt.self_attn_ln.beta.data, cfg_->layer_norm_eps, dx_);
    // --- cross-attention: source padding mask only, never causal ---
    RunLinear(L.cq, dx_, n_active, dq_, nullptr, Act::kNone);
    const float* ckl = ck_ + l * size_t(B_) * S_ * d;
    const float* cvl = cv_ + l * size_t(B_) * S_ * d;
    const bool align_here = want_align && int(l) == align_layer;
    ParallelFor(tasks, [&](int task) {
      float* sc = scores_ + size_t(task) * scores_stride;
      for (int ih = task; ih < n_active * H; ih += tasks) {
        const int i = ih / H, h = ih % H;
        const int b = active_[i] / W;
        const float* q = dq_ + size_t(i) * d + h * hd;
        const float* kb = ckl + size_t(b) * smax * d + h * hd;
        const float* vb = cvl + size_t(b) * smax * d + h * hd;
        K_->attn_scores(q, kb, d, nullptr, smax, hd, scaling, sc);
        K_->softmax_masked(sc, smax, mask_ + size_t(b) * smax);
        K_->attn_context(sc, vb, d, nullptr, smax, hd, dctx_ + size_t(i) * d + h * hd);
      }
    });
    if (align_here) {
      // Mean over heads of the attention probabilities (recomputed serially, cheap).
      float* sc = scores_;
      for (int i = 0; i < n_active; ++i) {
        const int slot = active_[i], b = slot / W;
        float* al = align_hist_ + (size_t(t) * R + slot) * S_;
        std::memset(al, 0, sizeof(float) * S_);
        for (int h = 0; h < H; ++h) {
          const float* q = dq_ + size_t(i) * d + h * hd;
          const float* kb = ckl + size_t(b) * smax * d + h * hd;
          K_->attn_scores(q, kb, d, nullptr, smax, hd, scaling, sc);
          K_->softmax_masked(sc, smax, mask_ + size_t(b) * smax);
          for (int j = 0; j < smax; ++j) al[j] += sc[j] / float(H);
        }
      }
    }
    RunLinear(L.co, dctx_, n_active, dx_, dx_, Act::kNone);
    K_->layer_norm(dx_, n_active, d, Wt.cross_attn_ln.gamma.data, Wt.cross_attn_ln.beta.data, cfg_->layer_norm_eps, dx_);
    // --- FFN ---
    RunLinear(L.fc1, dx_, n_active, ffn_, nullptr, act);
    RunLinear(L.fc2, ffn_, n_active, dx_, dx_, Act::kNone);
    K_->layer_norm(dx_, n_active, d, Wt.final_ln.gamma.data, Wt.final_ln.beta.data, cfg_->layer_norm_eps, dx_);
  }
  RunLinear(out_proj_, dx_, n_active, logits_, nullptr, Act::kNone);
}

// ---------------------------------------------------------------------------------------------
// Search

// lse = max + log(sum exp(x - max)) over a logits row (torch's log_softmax: log-prob = x - lse).
// HF Marian's logits processing around it, applied in place by the searches: pad is -inf
// before the log-softmax (MarianMTModel.adjust_logits_during_generation), the other bad words
// after it (NoBadWordsLogitsProcessor), and the forced final </s>
// (ForcedEOSTokenLogitsProcessor: every token -inf, </s> log-prob 0) is chosen directly.
float TranslatorImpl::RowLogSumExp(const float* row) const {
  float mx;
  const float sum = K_->max_sum_exp(row, V_, &mx);
  return mx + std::log(sum);
}

Status TranslatorImpl::EncodeSources(const std::string_view* texts, const int32_t* const* ids,
                                     const int* lens, size_t n, int* smax) {
  *smax = 0;
  for (size_t b = 0; b < n; ++b) {
    int32_t* dst = src_ids_ + b * S_;
    int len = 0;
    if (texts) {
      if (texts[b].size() > size_t(lim.max_input_bytes))
        return Err(StatusCode::kOutOfRange, "sentence " + std::to_string(b) + ": " + std::to_string(texts[b].size()) +
                                                " bytes exceed max_input_bytes " + std::to_string(lim.max_input_bytes));
      Status s = src_tok_->Encode(texts[b], tok_ws_, tok_ws_bytes_, dst, S_ - 1, &len);
      if (!s.ok()) {
        if (s.code() == StatusCode::kOutOfRange)
          return Err(StatusCode::kOutOfRange, "sentence " + std::to_string(b) + ": more than " +
                                                  std::to_string(S_ - 1) + " source tokens (max_source_tokens " +
                                                  std::to_string(S_) + " includes </s>)");
        return Err(s.code(), "sentence " + std::to_string(b) + ": " + s.message());
      }
      if (len > 0) dst[len++] = cfg_->eos_id;  // empty input stays empty: translated to ""
    } else {
      len = lens[b];
      if (len < 0 || len > S_)
        return Err(StatusCode::kOutOfRange, "sentence " + std::to_string(b) + ": " + std::to_string(len) +
                                                " source tokens exceed max_source_tokens " + std::to_string(S_));
      for (int i = 0; i < len; ++i) {
        const int32_t id = ids[b][i];
        if (id < 0 || id >= cfg_->source_vocab_size)
          return Err(StatusCode::kInvalidArgument, "sentence " + std::to_string(b) + ": token id " +
                                                       std::to_string(id) + " outside the source vocabulary");
        dst[i] = id;
      }
    }
    src_len_[b] = len;
    *smax = std::max(*smax, len);
  }
  *smax = std::max(*smax, 1);
  return Status::Ok();
}

// Greedy search: argmax after the logits processing, stop at </s>.
void TranslatorImpl::Greedy(int nb, int max_len_b[], const TranslateOptions& opt) {
  const int W = W_, R = R_;
  int n_active = 0;
  for (int b = 0; b < nb; ++b) {
    num_hyps_[b] = 0;
    done_[b] = texts_mode_ && src_len_[b] == 0;  // empty text: nothing to translate
    beam_score_[b * W] = 0;
    const int slot = b * W;
    tok_hist_[slot] = cfg_->decoder_start_id;
    par_hist_[slot] = slot;
  }
  for (int t = 0;; ++t) {
    n_active = 0;
    for (int b = 0; b < nb; ++b)
      if (!done_[b]) {
        active_[n_active] = b * W;
        row_tok_[n_active] = tok_hist_[size_t(t) * R + b * W];
        ++n_active;
      }
    if (n_active == 0) break;
    DecoderStep(t, n_active, opt.return_alignments, opt.alignment_layer);
    for (int i = 0; i < n_active; ++i) {
      const int slot = active_[i], b = slot / W;
      float* row = logits_ + size_t(i) * V_;
      const bool force = t + 1 >= max_len_b[b];
      // HF greedy_search: argmax over the processed logits (not the log-probs); the score is
      // the log-prob of the chosen token (0 for the forced </s>).
      row[cfg_->pad_id] = kNegInf;
      const float lse = opt.return_scores && !force ? RowLogSumExp(row) : 0.0f;
      for (int id : cfg_->bad_word_ids) row[id] = kNegInf;
      const int best = force ? cfg_->eos_id : K_->argmax(row, V_);
      const float lp = force ? 0.0f : row[best] - lse;
      if (opt.return_scores) beam_score_[slot] += lp;
      if (best == cfg_->eos_id || t + 1 >= max_len_b[b]) {
        // t+1 tokens generated (the last one is </s>, forced at the limit)
        const float len = float(t + 1);
        hyps_[size_t(b) * W] = {beam_score_[slot] / std::pow(len, opt.length_penalty), t, slot};
        num_hyps_[b] = 1;
        done_[b] = 1;
      } else {
        tok_hist_[size_t(t + 1) * R + slot] = best;
        par_hist_[size_t(t + 1) * R + slot] = slot;
      }
    }
  }
}

// Beam search with HF BeamSearchScorer semantics (transformers 4.2x): beam scores start at
// [0, -1e9, ...]; the top 2*beam candidates over beam*vocab are scanned best first; a </s>
// candidate ranked < beam finishes a hypothesis scored sum_logprobs / len^length_penalty
// (len = tokens including the decoder start, excluding </s>); the others refill the beams;
// a sentence is done once it has `beam` hypotheses and none of the running beams can beat
// the worst (early_stopping = false); beams still running at max length are finalised.
void TranslatorImpl::Beam(int nb, int max_len_b[], const TranslateOptions& opt) {
  const int W = W_, R = R_, beam = opt.beam_size, V = V_;
  for (int b = 0; b < nb; ++b) {
    num_hyps_[b] = 0;
    done_[b] = texts_mode_ && src_len_[b] == 0;  // empty text: nothing to translate
    worst_[b] = 1e9f;
    for (int w = 0; w < beam; ++w) {
      const int slot = b * W + w;
      beam_score_[slot] = w == 0 ? 0.0f : -1e9f;
      tok_hist_[slot] = cfg_->decoder_start_id;
      par_hist_[slot] = slot;
    }
  }
  // HF BeamHypotheses.add: keep the best `beam` hypotheses; worst_ is the lowest kept score.
  auto add_hyp = [&](int b, float sum_logprobs, int t_end, int slot, int cur_len) {
    const float score = sum_logprobs / std::pow(float(cur_len), opt.length_penalty);
    Hyp* h = hyps_ + size_t(b) * W;
    int& n = num_hyps_[b];
    if (n < beam) {
      h[n++] = {score, t_end, slot};
      worst_[b] = std::min(worst_[b], score);
    } else if (score > worst_[b]) {
      int wi = 0;  // replace the worst, then the new worst is the lowest remaining
      for (int i = 1; i < n; ++i)
        if (h[i].score < h[wi].score) wi = i;
      h[wi] = {score, t_end, slot};
      worst_[b] = h[0].score;
      for (int i = 1; i < n; ++i) worst_[b] = std::min(worst_[b], h[i].score);
    }
  };
  // Step 0: every beam of a sentence holds the same single token (the decoder start) and the
  // same empty history, so their rows would be bit-identical (each row's arithmetic does not
  // depend on the other rows): the decoder runs one row per sentence and the other beams'
  // K/V (and alignment) entries of position 0 are copies. Each beam still scores its own
  // candidates below (beams 1.. start at -1e9), exactly as if all rows had run.
  const int K2 = 2 * beam;
  for (int t = 0;; ++t) {
    const bool first = t == 0;
    const int rows_per = first ? 1 : beam;  // decoder rows per running sentence
    int n_active = 0;
    for (int b = 0; b < nb; ++b)
      if (!done_[b])
        for (int w = 0; w < rows_per; ++w) {
          const int slot = b * W + w;
          active_[n_active] = slot;
          row_tok_[n_active] = tok_hist_[size_t(t) * R + slot];
          ++n_active;
        }
    if (n_active == 0) break;
    DecoderStep(t, n_active, opt.return_alignments, opt.alignment_layer);
    if (first) {
      const size_t d = size_t(d_);
      for (int i = 0; i < n_active; ++i) {
        const int slot0 = active_[i];
        for (size_t l = 0; l < dec_.size(); ++l) {
          float* kc = kcache_ + l * size_t(T_) * R * d;
          float* vc = vcache_ + l * size_t(T_) * R * d;
          for (int w = 1; w < beam; ++w) {
            std::memcpy(kc + size_t(slot0 + w) * d, kc + size_t(slot0) * d, sizeof(float) * d);
            std::memcpy(vc + size_t(slot0 + w) * d, vc + size_t(slot0) * d, sizeof(float) * d);
          }
        }
        if (opt.return_alignments)
          for (int w = 1; w < beam; ++w)
            std::memcpy(align_hist_ + size_t(slot0 + w) * S_, align_hist_ + size_t(slot0) * S_,
                        sizeof(float) * size_t(S_));
      }
    }
    for (int i0 = 0; i0 < n_active; i0 += rows_per) {
      const int b = active_[i0] / W;
      const bool force = t + 1 >= max_len_b[b];
      // top 2*beam candidates over beam*V, kept sorted best first; ties keep the earlier
      // (beam, token), as a stable sort of HF's flattened scores does.
      float* cs = cand_score_ + size_t(b) * K2;
      int32_t* ct = cand_tok_ + size_t(b) * K2;
      int32_t* cp = cand_par_ + size_t(b) * K2;
      int nc = 0;
      auto insert = [&](float s, int tok, int w) {
        int pos = nc < K2 ? nc++ : K2 - 1;
        while (pos > 0 && s > cs[pos - 1]) {
          cs[pos] = cs[pos - 1]; ct[pos] = ct[pos - 1]; cp[pos] = cp[pos - 1];
          --pos;
        }
        cs[pos] = s; ct[pos] = tok; cp[pos] = w;
      };
      float* row = logits_ + size_t(i0) * V;  // step 0: one row shared by the beams
      float lse = 0.0f;
      for (int w = 0; w < beam; ++w) {
        if (!first && w > 0) row += V;
        if (!force && (w == 0 || !first)) {
          row[cfg_->pad_id] = kNegInf;
          lse = RowLogSumExp(row);
          for (int id : cfg_->bad_word_ids) row[id] = kNegInf;
        }
        const float base = beam_score_[b * W + w];
        if (force) {  // every token -inf, </s> log-prob 0
          for (int j = 0; j < V; ++j) {
            const float s = (j == cfg_->eos_id ? 0.0f : kNegInf) + base;
            if (nc < K2 || s > cs[K2 - 1]) insert(s, j, w);
          }
          continue;
        }
        // candidate score = log-prob + beam score = (x - lse) + base. Until 2*beam candidates
        // are held every token enters; then only tokens above the current cut-off, which the
        // SIMD scan finds.
        int j = 0;
        for (; j < V && nc < K2; ++j) insert((row[j] - lse) + base, j, w);
        while (j < V) {
          float s;
          j = K_->scan_gt(row, j, V, lse, base, cs[K2 - 1], &s);
          if (j >= V) break;
          insert(s, j, w);
          ++j;
        }
      }
      const int cur_len = t + 1;
      int next = 0;
      float new_score[64];
      int32_t new_tok[64], new_par[64];
      for (int rank = 0; rank < nc && next < beam; ++rank) {
        const int parent_slot = b * W + cp[rank];
        if (ct[rank] == cfg_->eos_id) {
          if (rank >= beam) continue;
          add_hyp(b, cs[rank], t, parent_slot, cur_len);
        } else {
          new_score[next] = cs[rank];
          new_tok[next] = ct[rank];
          new_par[next] = parent_slot;
          ++next;
        }
      }
      for (; next < beam; ++next) {  // only when every candidate was -inf/eos: keep dead beams
        new_score[next] = kNegInf;
        new_tok[next] = cfg_->eos_id;
        new_par[next] = b * W;
      }
      bool done = false;
      if (num_hyps_[b] >= beam) {
        const float best_running = nc > 0 ? cs[0] : kNegInf;
        done = worst_[b] >= best_running / std::pow(float(cur_len), opt.length_penalty);
      }
      if (force) done = true;  // every hypothesis ends at max length
      if (!done && t + 1 < max_len_b[b]) {
        for (int w = 0; w < beam; ++w) {
          const int slot = b * W + w;
          beam_score_[slot] = new_score[w];
          tok_hist_[size_t(t + 1) * R + slot] = new_tok[w];
          par_hist_[size_t(t + 1) * R + slot] = new_par[w];
        }
      } else if (!done) {
        done = true;
      }
      done_[b] = done ? 1 : 0;
    }
  }
}

Status TranslatorImpl::Finish(int nb, const TranslateOptions& opt, bool greedy) {
  const int W = W_, R = R_, NB = NB_;
  for (int b = 0; b < nb; ++b) {
    Hyp* h = hyps_ + size_t(b) * W;
    const int nh = num_hyps_[b];
    std::sort(h, h + nh, [](const Hyp& x, const Hyp& y) { return x.score > y.score; });
    const int k = std::min(nh, greedy ? 1 : opt.n_best);
    SentenceResultView& sv = sent_views_[b];
    sv.hypotheses = hyp_views_ + size_t(b) * NB;
    sv.num_hypotheses = 0;
    if (src_len_[b] == 0 && texts_mode_) {  // empty text -> empty translation
      HypothesisView& hv = hyp_views_[size_t(b) * NB];
      hv = HypothesisView();
      hv.ids = out_ids_ + size_t(b) * NB * T_;
      hv.text = std::string_view(out_text_ + size_t(b) * NB * text_cap_, 0);
      sv.num_hypotheses = 1;
      continue;
    }
    for (int j = 0; j < k; ++j) {
      HypothesisView& hv = hyp_views_[size_t(b) * NB + j];
      int32_t* ids = out_ids_ + (size_t(b) * NB + j) * T_;
      // Walk back from (t_end, slot): tokens at positions 1..t_end, then the final </s>.
      int slot = h[j].slot;
      const int t_end = h[j].t_end;
      float* al = out_align_ ? out_align_ + (size_t(b) * NB + j) * size_t(T_) * S_ : nullptr;
      for (int p = t_end; p >= 0; --p) {
        if (p >= 1) ids[p - 1] = tok_hist_[size_t(p) * R + slot];
        if (al && opt.return_alignments)
          std::memcpy(al + size_t(p) * src_smax_, align_hist_ + (size_t(p) * R + slot) * S_,
                      sizeof(float) * src_smax_);
        slot = par_hist_[size_t(p) * R + slot];
      }
      hv.ids = ids;
      hv.num_ids = t_end;
      hv.score = h[j].score;
      hv.alignment = (al && opt.return_alignments) ? al : nullptr;
      hv.source_tokens = src_smax_;
      char* text = out_text_ + (size_t(b) * NB + j) * text_cap_;
      size_t len = 0;
      if (texts_mode_) {
        Status s = tgt_tok_->Decode(ids, t_end, text, size_t(text_cap_), &len);
        if (!s.ok()) return Err(s.code(), "sentence " + std::to_string(b) + ": decoding the output: " + s.message());
      }
      hv.text = std::string_view(text, len);
      ++sv.num_hypotheses;
    }
  }
  return Status::Ok();
}

Status TranslatorImpl::Run(const std::string_view* texts, const int32_t* const* ids, const int* lens,
                           size_t n, const TranslateOptions& opt, const SentenceResultView** out) {
  *out = nullptr;
  if (n > size_t(B_))
    return Err(StatusCode::kOutOfRange, std::to_string(n) + " sentences exceed max_batch " + std::to_string(B_));
  if (opt.beam_size < 1 || opt.beam_size > W_)
    return Err(StatusCode::kInvalidArgument, "beam_size " + std::to_string(opt.beam_size) +
                                                 " outside [1, max_beam=" + std::to_string(W_) + "]");
  if (opt.n_best < 1 || opt.n_best > opt.beam_size || opt.n_best > NB_)
    return Err(StatusCode::kInvalidArgument, "n_best " + std::to_string(opt.n_best) +
                                                 " must be in [1, min(beam_size, max_n_best)]");
  if (opt.max_length < 1)
    return Err(StatusCode::kInvalidArgument, "max_length must be >= 1");
  if (!(opt.length_penalty > -100.0f && opt.length_penalty < 100.0f) || !(opt.max_length_ratio >= 0.0f) ||
      opt.max_length_ratio > 1e6f)
    return Err(StatusCode::kInvalidArgument, "length_penalty / max_length_ratio out of range");
  if (opt.return_alignments && !align_hist_)
    return Err(StatusCode::kInvalidArgument, "alignments requested but TranslatorLimits.alignments is false");
  const int align_layer = opt.alignment_layer < 0 ? int(dec_.size()) + opt.alignment_layer : opt.alignment_layer;
  if (opt.return_alignments && (align_layer < 0 || align_layer >= int(dec_.size())))
    return Err(StatusCode::kInvalidArgument, "alignment_layer out of range");
  texts_mode_ = texts != nullptr;
  int smax = 0;
  if (Status s = EncodeSources(texts, ids, lens, n, &smax); !s.ok()) return s;
  src_smax_ = smax;
  int max_len_b[4096];
  bool any = false;
  for (size_t b = 0; b < n; ++b) {
    long long cap = std::min(opt.max_length, T_);
    if (opt.max_length_ratio > 0)
      cap = std::min<long long>(cap, (long long)(opt.max_length_ratio * src_len_[b]) + opt.max_length_offset);
    max_len_b[b] = int(std::max<long long>(cap, 1));
    any = any || !(texts_mode_ && src_len_[b] == 0);
  }
  if (any) {
    Encode(int(n), smax);
    TranslateOptions o = opt;
    o.alignment_layer = align_layer;
    if (opt.beam_size == 1) Greedy(int(n), max_len_b, o); else Beam(int(n), max_len_b, o);
  }
  if (Status s = Finish(int(n), opt, opt.beam_size == 1); !s.ok()) return s;
  *out = sent_views_;
  return Status::Ok();
}

Status TranslatorImpl::Forced(const int32_t* src, int src_len, const int32_t* tgt, int tgt_len,
                              float* logits_out) {
  if (tgt_len < 1 || tgt_len > T_)
    return Err(StatusCode::kOutOfRange, "target length " + std::to_string(tgt_len) + " outside [1, max_target_tokens]");
  for (int i = 0; i < tgt_len; ++i)
    if (tgt[i] < 0 || tgt[i] >= V_) return Err(StatusCode::kInvalidArgument, "target id out of range");
  texts_mode_ = false;
  int smax = 0;
  const int32_t* ids[1] = {src};
  if (Status s = EncodeSources(nullptr, ids, &src_len, 1, &smax); !s.ok()) return s;
  src_smax_ = smax;
  Encode(1, smax);
  const int slot = 0;
  par_hist_[0] = slot;
  for (int t = 0; t < tgt_len; ++t) {
    active_[0] = slot;
    row_tok_[0] = t == 0 ? cfg_->decoder_start_id : tgt[t - 1];
    par_hist_[size_t(t) * R_ + slot] = slot;
    DecoderStep(t, 1, false, 0);
    std::memcpy(logits_out + size_t(t) * V_, logits_, sizeof(float) * V_);
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Public API

Result<std::unique_ptr<Translator>> Translator::Create(std::shared_ptr<const Model> model,
                                                       const TranslatorLimits& limits) {
  if (!model) return Err(StatusCode::kInvalidArgument, "null model");
  auto impl = std::make_unique<TranslatorImpl>();
  if (Status s = impl->Init(std::move(model), limits); !s.ok()) return s;
  return std::unique_ptr<Translator>(new Translator(std::move(impl)));
}

Result<size_t> Translator::ArenaBytes(const Model& model, const TranslatorLimits& limits) {
  if (Status s = CheckLimits(model.config(), limits); !s.ok()) return s;
  Arena measure;
  return TranslatorImpl::Plan(model.data(), limits, nullptr, &measure);
}

Translator::Translator(std::unique_ptr<TranslatorImpl> impl) : impl_(std::move(impl)) {}
Translator::~Translator() = default;
size_t Translator::arena_bytes() const { return impl_->arena_bytes; }
const TranslatorLimits& Translator::limits() const { return impl_->lim; }

Status Translator::TranslateViews(const std::string_view* inputs, size_t n, const TranslateOptions& options,
                                  const SentenceResultView** out) {
  return impl_->Run(inputs, nullptr, nullptr, n, options, out);
}

Status Translator::TranslateIdsViews(const int32_t* const* source_ids, const int* source_lengths, size_t n,
                                     const TranslateOptions& options, const SentenceResultView** out) {
  return impl_->Run(nullptr, source_ids, source_lengths, n, options, out);
}

static void CopyResults(const SentenceResultView* v, size_t n, std::vector<TranslationResult>* out) {
  out->clear();
  out->resize(n);
  for (size_t i = 0; i < n; ++i)
    for (int j = 0; j < v[i].num_hypotheses; ++j) {
      const HypothesisView& h = v[i].hypotheses[j];
      Hypothesis o;
      o.ids.assign(h.ids, h.ids + h.num_ids);
      o.text.assign(h.text);
      o.score = h.score;
      o.source_tokens = h.source_tokens;
      if (h.alignment) o.alignment.assign(h.alignment, h.alignment + size_t(h.num_ids + 1) * h.source_tokens);
      (*out)[i].hypotheses.push_back(std::move(o));
    }
}

Status Translator::Translate(const std::vector<std::string>& inputs, const TranslateOptions& options,
                             std::vector<TranslationResult>* out) {
  std::vector<std::string_view> views(inputs.begin(), inputs.end());
  const SentenceResultView* v = nullptr;
  Status s = TranslateViews(views.data(), views.size(), options, &v);
  if (s.ok()) CopyResults(v, inputs.size(), out);
  return s;
}

Status Translator::TranslateIds(const std::vector<std::vector<int32_t>>& source_ids, const TranslateOptions& options,
                                std::vector<TranslationResult>* out) {
  std::vector<const int32_t*> ptrs;
  std::vector<int> lens;
  for (const auto& s : source_ids) {
    ptrs.push_back(s.data());
    lens.push_back(int(s.size()));
  }
  const SentenceResultView* v = nullptr;
  Status s = TranslateIdsViews(ptrs.data(), lens.data(), source_ids.size(), options, &v);
  if (s.ok()) CopyResults(v, source_ids.size(), out);
  return s;
}

Status Translator::ForcedLogits(const int32_t* source_ids, int source_len, const int32_t* target_ids,
                                int target_len, float* logits_out) {
  return impl_->Forced(source_ids, source_len, target_ids, target_len, logits_out);
}

Status EncodeSource(const Model& model, std::string_view text, std::vector<int32_t>* ids) {
  const ModelData& md = model.data();
  SpmTokenizer tok(md.source_spm, md.source_vocab);
  if (!tok.status().ok()) return tok.status();
  // The workspace assumes a bounded NFKC expansion; the rare input that expands more gets a
  // larger workspace (there are never more ids than normalized bytes).
  for (size_t budget = std::max<size_t>(text.size(), 16);; budget *= 4) {
    std::vector<uint8_t> ws(SpmTokenizer::WorkspaceBytes(budget));
    const size_t cap = budget * SpmTokenizer::kMaxNormalizedPerInputByte + 16;
    ids->assign(cap + 1, 0);
    int n = 0;
    Status s = tok.Encode(text, ws.data(), ws.size(), ids->data(), int(cap), &n);
    if (s.code() == StatusCode::kOutOfRange && budget < text.size() * 64) continue;
    if (!s.ok()) return s;
    ids->resize(size_t(n));
    if (n > 0) ids->push_back(md.config.eos_id);
    return Status::Ok();
  }
}

Status DecodeTarget(const Model& model, const int32_t* ids, int n, std::string* text) {
  const ModelData& md = model.data();
  SpmTokenizer tok(md.target_spm, md.target_vocab);
  for (size_t cap = size_t(std::max(n, 0)) * 32 + 64;; cap *= 2) {
    text->assign(cap, '\0');
    size_t len = 0;
    Status s = tok.Decode(ids, n, text->data(), cap, &len);
    if (s.code() == StatusCode::kOutOfRange && cap < (size_t(1) << 28)) continue;
    if (!s.ok()) return s;
    text->resize(len);
    return Status::Ok();
  }
}

}  // namespace mtlite

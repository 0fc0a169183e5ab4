#include "transformer.h"

#include "marian_layout.h"
#include "status_macros.h"

#include <cmath>
#include <new>
#include <tuple>

namespace mtlite {
namespace detail {

Transformer::~Transformer() {
  for (int i = 0; i < num_enc_ops_; ++i) enc_ops_[i].~EncoderLayerOps();
  for (int i = 0; i < num_dec_ops_; ++i) dec_ops_[i].~DecoderLayerOps();
  if (out_proj_) out_proj_->~Linear();
}

namespace {

Status InitAttention(const AttentionView& w, AttentionOps* ops) {
  MTLITE_RETURN_IF_ERROR(ops->q.Init(w.q, w.q_bias));
  MTLITE_RETURN_IF_ERROR(ops->k.Init(w.k, w.k_bias));
  MTLITE_RETURN_IF_ERROR(ops->v.Init(w.v, w.v_bias));
  return ops->o.Init(w.o, w.o_bias);
}

Status InitSsru(const SsruView& w, SsruOps* ops) {
  static const VectorView kNoBias;
  MTLITE_RETURN_IF_ERROR(ops->w.Init(w.w, kNoBias));
  return ops->wf.Init(w.wf, w.bf);
}

Status InitFfn(const FfnView& w, FfnOps* ops) {
  MTLITE_RETURN_IF_ERROR(ops->fc1.Init(w.fc1, w.fc1_bias));
  return ops->fc2.Init(w.fc2, w.fc2_bias);
}

bool Int8(const AttentionOps& a) { return a.q.int8() && a.k.int8() && a.v.int8() && a.o.int8(); }

}  // namespace

Status Transformer::Init(const ModelData& md, const ArenaPlan& plan, uint8_t* arena, const Exec& ex) {
  md_ = &md;
  cfg_ = &md.config;
  exec_ = ex;
  dims_ = plan.dims();
  const Dims& x = dims_;

  float* pos_enc = plan.Get<float>(arena, kBufPosEncoder);
  float* pos_dec = plan.Get<float>(arena, kBufPosDecoder);
  pos_enc_ = pos_enc ? pos_enc : md.encoder_positions.data;
  pos_dec_ = pos_dec ? pos_dec : md.decoder_positions.data;
  off_ = plan.Get<int>(arena, kBufSrcOffsets);
  ex_ = plan.Get<float>(arena, kBufEncHidden);
  eq_ = plan.Get<float>(arena, kBufEncQ);
  ek_ = plan.Get<float>(arena, kBufEncK);
  ev_ = plan.Get<float>(arena, kBufEncV);
  ectx_ = plan.Get<float>(arena, kBufEncCtx);
  effn_ = plan.Get<float>(arena, kBufEncFfn);
  scores_ = plan.Get<float>(arena, kBufAttnScores);
  ck_ = plan.Get<float>(arena, kBufCrossK);
  cv_ = plan.Get<float>(arena, kBufCrossV);
  dx_ = plan.Get<float>(arena, kBufDecHidden);
  dq_ = plan.Get<float>(arena, kBufDecQ);
  dk_ = plan.Get<float>(arena, kBufDecK);
  dv_ = plan.Get<float>(arena, kBufDecV);
  dctx_ = plan.Get<float>(arena, kBufDecCtx);
  dffn_ = plan.Get<float>(arena, kBufDecFfn);
  logits_ = plan.Get<float>(arena, kBufLogits);
  token_order_row_ = plan.Get<float>(arena, kBufTokenOrderRow);
  kcache_ = plan.Get<float>(arena, kBufKCache);
  vcache_ = plan.Get<float>(arena, kBufVCache);
  anc_ = plan.Get<int32_t>(arena, kBufAncestors);
  ssru_state_ = plan.Get<float>(arena, kBufSsruState);
  enc_scratch_ = {plan.Get<int8_t>(arena, kBufEncQuant), plan.Get<float>(arena, kBufEncQuantScale),
                  plan.Get<float>(arena, kBufEncStaging)};
  enc_quant_bytes_ = plan.buffer(kBufEncQuant).bytes;
  enc_quant_rows_ = int(plan.buffer(kBufEncQuantScale).bytes / sizeof(float));
  dec_scratch_ = {plan.Get<int8_t>(arena, kBufDecQuant), plan.Get<float>(arena, kBufDecQuantScale),
                  plan.Get<float>(arena, kBufDecStaging)};

  // The blocks' linear layers, constructed in the arena (destroyed by ~Transformer): encoder
  // layers, decoder layers, the output projection (Transformer::OpsBytes).
  uint8_t* ops = plan.Get<uint8_t>(arena, kBufLayerOps);
  enc_ops_ = reinterpret_cast<EncoderLayerOps*>(ops);
  dec_ops_ = reinterpret_cast<DecoderLayerOps*>(ops + size_t(x.Le) * sizeof(EncoderLayerOps));
  out_proj_ = new (ops + size_t(x.Le) * sizeof(EncoderLayerOps) + size_t(x.Ld) * sizeof(DecoderLayerOps)) Linear();
  for (; num_enc_ops_ < x.Le; ++num_enc_ops_) new (enc_ops_ + num_enc_ops_) EncoderLayerOps();
  for (; num_dec_ops_ < x.Ld; ++num_dec_ops_) new (dec_ops_ + num_dec_ops_) DecoderLayerOps();
  dec_int8_ = enc_int8_ = true;
  for (int l = 0; l < x.Le; ++l) {
    const EncoderLayerView& W = md.encoder[size_t(l)];
    EncoderLayerOps& L = enc_ops_[l];
    MTLITE_RETURN_IF_ERROR(InitAttention(W.self_attn, &L.self_attn));
    MTLITE_RETURN_IF_ERROR(InitFfn(W.ffn, &L.ffn));
    enc_int8_ = enc_int8_ && Int8(L.self_attn) && L.ffn.fc1.int8() && L.ffn.fc2.int8();
  }
  for (int l = 0; l < x.Ld; ++l) {
    const DecoderLayerView& W = md.decoder[size_t(l)];
    DecoderLayerOps& L = dec_ops_[l];
    switch (cfg_->decoder_layer) {
      case DecoderLayerKind::kSelfAttention:
        MTLITE_RETURN_IF_ERROR(InitAttention(W.self_attn, &L.self_attn));
        dec_int8_ = dec_int8_ && Int8(L.self_attn);
        break;
      case DecoderLayerKind::kSsru:
        MTLITE_RETURN_IF_ERROR(InitSsru(W.ssru, &L.ssru));
        dec_int8_ = dec_int8_ && L.ssru.w.int8() && L.ssru.wf.int8();
        break;
    }
    MTLITE_RETURN_IF_ERROR(InitAttention(W.cross_attn, &L.cross_attn));
    MTLITE_RETURN_IF_ERROR(InitFfn(W.ffn, &L.ffn));
    dec_int8_ = dec_int8_ && Int8(L.cross_attn) && L.ffn.fc1.int8() && L.ffn.fc2.int8();
    enc_int8_ = enc_int8_ && L.cross_attn.k.int8() && L.cross_attn.v.int8();  // projected by the encoder
  }
  MTLITE_RETURN_IF_ERROR(out_proj().Init(md.output_proj, md.final_logits_bias));

  // The position kind's sinusoid, computed when not stored (marian_layout.h).
  if (pos_enc) layout::Sinusoid(cfg_->positions, x.S, x.d, cfg_->pad_id, pos_enc);
  if (pos_dec) layout::Sinusoid(cfg_->positions, x.T, x.d, cfg_->pad_id, pos_dec);
  return Status::Ok();
}

Status Transformer::Lin(Span& span, Linear& L, const float* x, int m, float* y, const float* residual,
                        kernels::Act act, const LinearScratch& sc) {
  span.Work(L.weight_bytes(), uint64_t(m) * uint64_t(L.out_features()) * uint64_t(L.in_features()), m,
            L.out_features(), L.in_features());
  return L.Run(exec_, x, m, y, residual, act, sc);
}

void Transformer::Norm(Profiler* prof, Op op, int layer, const float* x, int m, const LayerNormView& ln, float* out) {
  Span span(prof, op, layer);
  exec_.K->layer_norm(x, m, dims_.d, ln.gamma.data, ln.beta.data, cfg_->layer_norm_eps, out);
}

const float* Transformer::BlockInput(Profiler* prof, Op op, int layer, float* x, int m, const LayerNormView& ln,
                                     float* scratch) {
  if (!pre_norm()) return x;
  Norm(prof, op, layer, x, m, ln, scratch);
  return scratch;
}

void Transformer::BlockOutput(Profiler* prof, Op op, int layer, float* x, int m, const LayerNormView& ln) {
  if (!pre_norm()) Norm(prof, op, layer, x, m, ln, x);
}

// Scaled token embedding plus position. int8 tables are dequantized straight from their
// BlockedN8K4 layout (row r, column c at block r/8: (c/4)*32 + (r%8)*4 + c%4).
void Transformer::Embed(const WeightView& table, int32_t id, int pos, const float* positions, float* out) const {
  const int d = dims_.d;
  const float scale = cfg_->embed_scale;
  if (table.row_of) id = table.row_of[id];  // rows in a shortlist's order
  if (table.dtype == WeightType::kInt8) {
    const int kp = kernels::RoundUp(d, 4);
    const int8_t* block = static_cast<const int8_t*>(table.data) + size_t(id / 8) * size_t(kp) * 8 + (id % 8) * 4;
    const float s = table.scales[id];
    for (int j = 0; j < d; ++j) out[j] = (float(block[(j / 4) * 32 + (j % 4)]) * s) * scale;
  } else if (table.dtype == WeightType::kF16) {
    const uint16_t* h = static_cast<const uint16_t*>(table.data) + size_t(id) * d;
    for (int j = 0; j < d; ++j) out[j] = layout::F16ToF32(h[j]) * scale;
  } else {
    const float* f = static_cast<const float*>(table.data) + size_t(id) * d;
    for (int j = 0; j < d; ++j) out[j] = f[j] * scale;
  }
  const float* p = positions + size_t(pos) * d;
  for (int j = 0; j < d; ++j) out[j] = out[j] + p[j];
}

}  // namespace detail
}  // namespace mtlite

#include "transformer.h"

#include "marian_layout.h"

#include <cmath>
#include <new>
#include <tuple>

namespace mtlite {
namespace detail {

Transformer::~Transformer() {
  for (int i = 0; i < num_ops_; ++i) ops_[i].~Linear();
}

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

  // Linear layers, constructed in the arena (destroyed by ~Transformer).
  ops_ = plan.Get<Linear>(arena, kBufLayerOps);
  const int total = NumOps(*cfg_);
  for (; num_ops_ < total; ++num_ops_) new (ops_ + num_ops_) Linear();
  for (int l = 0; l < x.Le; ++l) {
    const EncoderLayerView& L = md.encoder[size_t(l)];
    const std::tuple<const WeightView*, const VectorView*> w[kEncOps] = {
        {&L.self_attn.q, &L.self_attn.q_bias}, {&L.self_attn.k, &L.self_attn.k_bias},
        {&L.self_attn.v, &L.self_attn.v_bias}, {&L.self_attn.o, &L.self_attn.o_bias},
        {&L.fc1, &L.fc1_bias},                 {&L.fc2, &L.fc2_bias}};
    for (int j = 0; j < kEncOps; ++j)
      if (Status s = enc(l, j).Init(*std::get<0>(w[j]), *std::get<1>(w[j])); !s.ok()) return s;
  }
  for (int l = 0; l < x.Ld; ++l) {
    const DecoderLayerView& L = md.decoder[size_t(l)];
    const std::tuple<const WeightView*, const VectorView*> w[kDecOps] = {
        {&L.self_attn.q, &L.self_attn.q_bias},   {&L.self_attn.k, &L.self_attn.k_bias},
        {&L.self_attn.v, &L.self_attn.v_bias},   {&L.self_attn.o, &L.self_attn.o_bias},
        {&L.cross_attn.q, &L.cross_attn.q_bias}, {&L.cross_attn.k, &L.cross_attn.k_bias},
        {&L.cross_attn.v, &L.cross_attn.v_bias}, {&L.cross_attn.o, &L.cross_attn.o_bias},
        {&L.fc1, &L.fc1_bias},                   {&L.fc2, &L.fc2_bias}};
    for (int j = 0; j < kDecOps; ++j) {
      if (cfg_->decoder_ssru && j < 4) continue;  // below
      if (Status s = dec(l, j).Init(*std::get<0>(w[j]), *std::get<1>(w[j])); !s.ok()) return s;
    }
    if (cfg_->decoder_ssru) {  // SSRU: W (no bias) and Wf in the self-attention's q and k slots
      static const VectorView kNoBias;
      if (Status s = dec(l, 0).Init(L.ssru_w, kNoBias); !s.ok()) return s;
      if (Status s = dec(l, 1).Init(L.ssru_wf, L.ssru_bf); !s.ok()) return s;
    }
  }
  if (Status s = out_proj().Init(md.output_proj, md.final_logits_bias); !s.ok()) return s;
  dec_int8_ = enc_int8_ = true;
  for (int l = 0; l < x.Le; ++l)
    for (int j = 0; j < kEncOps; ++j) enc_int8_ = enc_int8_ && enc(l, j).int8();
  for (int l = 0; l < x.Ld; ++l)
    for (int j = 0; j < kDecOps; ++j) {
      if (cfg_->decoder_ssru && (j == 2 || j == 3)) continue;  // unused
      dec_int8_ = dec_int8_ && dec(l, j).int8();
      if (j == 5 || j == 6) enc_int8_ = enc_int8_ && dec(l, j).int8();
    }

  // Marian sinusoid (HF MarianSinusoidalPositionalEmbedding), computed when not stored.
  if (pos_enc) layout::MarianSinusoid(x.S, x.d, pos_enc);
  if (pos_dec) layout::MarianSinusoid(x.T, x.d, pos_dec);
  return Status::Ok();
}

Status Transformer::Lin(Span& span, Linear& L, const float* x, int m, float* y, const float* residual,
                        kernels::Act act, const LinearScratch& sc) {
  span.Work(L.weight_bytes(), uint64_t(m) * uint64_t(L.out_features()) * uint64_t(L.in_features()), m,
            L.out_features(), L.in_features());
  return L.Run(exec_, x, m, y, residual, act, sc);
}

void Transformer::Norm(Profiler* prof, Op op, int layer, float* x, int m, const LayerNormView& ln) {
  Span span(prof, op, layer);
  exec_.K->layer_norm(x, m, dims_.d, ln.gamma.data, ln.beta.data, cfg_->layer_norm_eps, x);
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

#include "ct2_convert.h"

#include <sys/stat.h>

#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <unordered_map>
#include <utility>

#include <nlohmann/json.hpp>

#include "crc32c.h"
#include "io.h"
#include "marian_layout.h"
#include "model_internal.h"
#include "safetensors.h"
#include "spm_proto.h"
#include "status_macros.h"
#include "zip_reader.h"

#ifndef MTLITE_VERSION_STRING
#define MTLITE_VERSION_STRING "0.0.0"
#endif

namespace mtlite {
namespace converter {
namespace {

Status Reject(const std::string& message) { return Status(StatusCode::kInvalidModel, message); }
Status Unsupported(const std::string& message) { return Status(StatusCode::kUnsupported, message); }

// Positions of a model without a stored table (CTranslate2 computes its sinusoid for any length):
// the longest source or target the converted model takes.
constexpr int kBuiltinSinusoidPositions = 1024;

// CTranslate2's ActivationType codes (the spec's `activation` scalar).
bool ActivationFromCt2(int64_t code, ActivationKind* out) {
  switch (code) {
    case 0: *out = ActivationKind::kReLU; return true;
    case 1: *out = ActivationKind::kGELUTanh; return true;
    case 2: *out = ActivationKind::kSiLU; return true;
    case 3: *out = ActivationKind::kGELU; return true;
    default: return false;  // 4 GELU (sigmoid approximation), 5 tanh, ...
  }
}

// The tensors under HF MarianMT names, built in memory as a safetensors file (F32), so that
// ConvertHfTensors converts them like any HF checkpoint.
class HfTensors {
 public:
  void Add(const std::string& name, std::vector<int64_t> shape, const float* v, size_t n) {
    const uint64_t begin = data_.size();
    data_.append(reinterpret_cast<const char*>(v), n * sizeof(float));
    header_[name] = {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {begin, uint64_t(data_.size())}}};
  }
  void Add(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& v) {
    Add(name, std::move(shape), v.data(), v.size());
  }
  Status Finish(Safetensors* out) {
    const std::string h = header_.dump();
    std::string bytes(8, '\0');
    const uint64_t n = h.size();
    for (int i = 0; i < 8; ++i) bytes[size_t(i)] = char((n >> (8 * i)) & 0xff);
    bytes += h;
    bytes += data_;
    data_.clear();
    return Safetensors::Parse(std::move(bytes), "model.bin", out);
  }

 private:
  nlohmann::json header_ = nlohmann::json::object();
  std::string data_;
};

// The spec's variables, read once each; what is never read is reported as unsupported.
class Variables {
 public:
  explicit Variables(const Ct2ModelBin& bin) : bin_(bin) {}
  const Ct2ModelBin& bin() const { return bin_; }
  bool Has(const std::string& n) const { return bin_.Has(n); }

  Status F32(const std::string& n, std::vector<int64_t> shape, std::vector<float>* out) {
    const Ct2ModelBin::Variable* v = bin_.Find(n);
    if (!v) return Reject("model.bin: missing variable '" + n + "'");
    if (v->shape != shape) {
      return Reject("model.bin: variable '" + n + "' has shape " + Shape(v->shape) + ", expected " + Shape(shape));
    }
    MTLITE_RETURN_IF_ERROR(bin_.ReadF32(n, out));
    Use(n);
    if (v->dtype == Ct2DType::kInt8 || v->dtype == Ct2DType::kInt16) Use(n + "_scale");
    return Status::Ok();
  }
  Status Int(const std::string& n, int64_t def, int64_t* out) {
    if (!Has(n)) {
      *out = def;
      return Status::Ok();
    }
    Use(n);
    return bin_.ReadInt(n, out);
  }
  Status Flag(const std::string& n, bool def, bool* out) {
    if (Has(n)) Use(n);
    return bin_.FlagOr(n, def, out);
  }
  // An option mtlite does not implement: absent or false.
  Status MustBeOff(const std::string& n, const char* what) {
    bool on = false;
    MTLITE_RETURN_IF_ERROR(Flag(n, false, &on));
    if (on) return Unsupported("model.bin: " + n + " = true (" + what + ") is not supported");
    return Status::Ok();
  }
  void Use(const std::string& n) { used_.insert(bin_.Resolve(n)); }

  // The stored variables nobody read.
  std::vector<std::string> Unused() const {
    std::vector<std::string> out;
    for (const auto& [name, v] : bin_.variables())
      if (!used_.count(name)) out.push_back(name);
    return out;
  }

  static std::string Shape(const std::vector<int64_t>& s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
  }

 private:
  const Ct2ModelBin& bin_;
  std::set<std::string> used_;
};

std::string LayerScope(const char* side, int i) { return std::string(side) + "/layer_" + std::to_string(i); }

int CountLayers(const Ct2ModelBin& bin, const char* side) {
  int n = 0;
  while (n < 100000 && bin.Has(LayerScope(side, n) + "/self_attention/linear_0/weight")) ++n;
  return n;
}

// A linear layer: weight [rows, cols] and its optional bias [rows] (zeros when absent), as HF
// `prefix`.weight / .bias, split row-wise into `parts` equal blocks named by `names`.
Status Linear(Variables* v, const std::string& scope, int rows, int cols, const std::vector<std::string>& names,
              HfTensors* out) {
  std::vector<float> w, b;
  MTLITE_RETURN_IF_ERROR(v->F32(scope + "/weight", {rows, cols}, &w));
  if (v->Has(scope + "/bias")) MTLITE_RETURN_IF_ERROR(v->F32(scope + "/bias", {rows}, &b));
  else b.assign(size_t(rows), 0.0f);
  const int part = rows / int(names.size());
  for (size_t k = 0; k < names.size(); ++k) {
    out->Add(names[k] + layout::kWeight, {part, cols}, w.data() + k * size_t(part) * cols, size_t(part) * cols);
    out->Add(names[k] + layout::kBias, {part}, b.data() + k * size_t(part), size_t(part));
  }
  return Status::Ok();
}

Status LayerNorm(Variables* v, const std::string& scope, int d, const std::string& hf, HfTensors* out) {
  if (v->Has(scope + "/gamma") && !v->Has(scope + "/beta"))
    return Unsupported("model.bin: " + scope + " has no beta: RMS normalization is not supported");
  std::vector<float> g, b;
  MTLITE_RETURN_IF_ERROR(v->F32(scope + "/gamma", {d}, &g));
  MTLITE_RETURN_IF_ERROR(v->F32(scope + "/beta", {d}, &b));
  out->Add(hf + layout::kWeight, {d}, g);
  out->Add(hf + layout::kBias, {d}, b);
  return Status::Ok();
}

// The side's options that must be equal on both sides (mtlite has one value per model).
struct SideOptions {
  int heads = 0;
  bool pre_norm = true;
  float embed_scale = 0;  // 0: sqrt(d_model)
  int64_t activation = 0;
};

Status ReadSideOptions(Variables* v, const char* side, SideOptions* o) {
  const std::string s = side;
  int64_t heads = 0;
  MTLITE_RETURN_IF_ERROR(v->Int(s + "/num_heads", 8, &heads));  // specs before num_heads was saved: 8
  if (heads < 1 || heads > INT_MAX) return Reject("model.bin: " + s + "/num_heads is " + std::to_string(heads));
  o->heads = int(heads);
  MTLITE_RETURN_IF_ERROR(v->Flag(s + "/pre_norm", true, &o->pre_norm));
  MTLITE_RETURN_IF_ERROR(v->Int(s + "/activation", 0, &o->activation));
  // scale_embeddings (older specs: embeddings/multiply_by_sqrt_depth): a flag (sqrt(d_model) or
  // 1), or the scale itself as a float
  std::string scale_name = s + "/scale_embeddings";
  if (!v->Has(scale_name)) scale_name = s + "/embeddings/multiply_by_sqrt_depth";
  const Ct2ModelBin::Variable* sv = v->bin().Find(scale_name);
  if (sv && sv->dtype == Ct2DType::kFloat32) {
    std::vector<float> f;
    MTLITE_RETURN_IF_ERROR(v->F32(scale_name, {}, &f));
    if (!(f[0] > 0)) return Unsupported("model.bin: " + scale_name + " = " + std::to_string(f[0]) + " (a positive scale expected)");
    o->embed_scale = f[0];
  } else {
    bool scale = true;
    MTLITE_RETURN_IF_ERROR(v->Flag(scale_name, true, &scale));
    o->embed_scale = scale ? 0.0f : 1.0f;
  }
  MTLITE_RETURN_IF_ERROR(v->MustBeOff(s + "/multi_query_attention", "multi-query attention"));
  MTLITE_RETURN_IF_ERROR(v->MustBeOff(s + "/layernorm_embedding", "a layer norm after the embeddings"));
  MTLITE_RETURN_IF_ERROR(v->MustBeOff(s + "/alibi", "ALiBi"));
  return Status::Ok();
}

// The TransformerSpec's variables -> HF MarianMT tensors and the model config.
Status MapSpec(const Ct2Model& m, ModelConfig* c, HfTensors* hf, std::vector<std::string>* warnings) {
  const Ct2ModelBin& bin = m.bin;
  if (bin.binary_version() >= 2 && bin.spec() != "TransformerSpec") {
    return Unsupported("model.bin: spec '" + bin.spec() + "' is not supported (only TransformerSpec: encoder-decoder Transformers)");
  }
  Variables v(bin);
  // Embeddings: one source feature (embeddings or embeddings_0); the decoder's table; the projection.
  if (bin.Has("encoder/embeddings_1/weight"))
    return Unsupported("model.bin: encoder/embeddings_1 (extra source features) is not supported");
  const std::string enc_emb = bin.Has("encoder/embeddings_0/weight") ? "encoder/embeddings_0/weight" : "encoder/embeddings/weight";
  const std::string dec_emb = "decoder/embeddings/weight", proj = "decoder/projection/weight";
  for (const std::string& n : {enc_emb, dec_emb, proj}) {
    const Ct2ModelBin::Variable* e = bin.Find(n);
    if (!e) return Reject("model.bin: missing variable '" + n + "'");
    if (e->shape.size() != 2 || e->shape[0] < 1 || e->shape[1] < 1 || e->shape[0] > INT_MAX || e->shape[1] > detail::kMaxDModel)
      return Reject("model.bin: variable '" + n + "' has shape " + Variables::Shape(e->shape));
  }
  const int d = int(bin.Find(enc_emb)->shape[1]);
  const int vs = int(bin.Find(enc_emb)->shape[0]), vt = int(bin.Find(dec_emb)->shape[0]);
  if (int64_t(m.source_vocab.size()) != vs)
    return Reject(m.source_vocab_file + ": " + std::to_string(m.source_vocab.size()) + " tokens, " + enc_emb + " has " + std::to_string(vs) + " rows");
  if (int64_t(m.target_vocab.size()) != vt)
    return Reject(m.target_vocab_file + ": " + std::to_string(m.target_vocab.size()) + " tokens, " + dec_emb + " has " + std::to_string(vt) + " rows");
  c->d_model = d;
  c->source_vocab_size = vs;
  c->target_vocab_size = vt;

  SideOptions eo, dopt;
  MTLITE_RETURN_IF_ERROR(ReadSideOptions(&v, "encoder", &eo));
  MTLITE_RETURN_IF_ERROR(ReadSideOptions(&v, "decoder", &dopt));
  if (eo.pre_norm != dopt.pre_norm) return Unsupported("model.bin: encoder/pre_norm and decoder/pre_norm differ");
  if (eo.activation != dopt.activation) return Unsupported("model.bin: encoder/activation and decoder/activation differ");
  if (eo.embed_scale != dopt.embed_scale) return Unsupported("model.bin: encoder and decoder scale_embeddings differ");
  if (!ActivationFromCt2(eo.activation, &c->activation))
    return Unsupported("model.bin: activation " + std::to_string(eo.activation) + " is not supported (0 relu, 1 gelu-tanh, 2 swish, 3 gelu)");
  c->norm = eo.pre_norm ? NormPlacement::kPre : NormPlacement::kPost;
  c->encoder_heads = eo.heads;
  c->decoder_heads = dopt.heads;
  c->embed_scale = eo.embed_scale == 0 ? std::sqrt(float(d)) : eo.embed_scale;
  MTLITE_RETURN_IF_ERROR(v.MustBeOff("decoder/start_from_zero_embedding", "a zero vector as the first decoder input"));
  // Options that change nothing here: alignment settings (mtlite takes --alignment-layer), the
  // ALiBi variants when ALiBi is off, the merge mode of a single embeddings table.
  for (const char* n : {"decoder/alignment_layer", "decoder/alignment_heads", "decoder/alibi_use_positive_positions",
                        "decoder/scale_alibi", "encoder/embeddings_merge"})
    v.Use(n);

  c->encoder_layers = CountLayers(bin, "encoder");
  c->decoder_layers = CountLayers(bin, "decoder");
  if (c->encoder_layers < 1 || c->decoder_layers < 1) return Reject("model.bin: no encoder or no decoder layers");

  // Embeddings, shared and tied by alias (how CTranslate2 stores one table twice) or by value.
  std::vector<float> e_src, e_tgt, w_out;
  MTLITE_RETURN_IF_ERROR(v.F32(enc_emb, {vs, d}, &e_src));
  MTLITE_RETURN_IF_ERROR(v.F32(dec_emb, {vt, d}, &e_tgt));
  MTLITE_RETURN_IF_ERROR(v.F32(proj, {vt, d}, &w_out));
  c->shared_embeddings = m.source_vocab == m.target_vocab && (bin.SameVariable(enc_emb, dec_emb) || e_src == e_tgt);
  c->tied_output = bin.SameVariable(dec_emb, proj) || e_tgt == w_out;
  if (c->shared_embeddings) {
    hf->Add(layout::kSharedEmbedding, {vs, d}, e_src);
  } else {
    hf->Add(layout::kEncoderEmbedding, {vs, d}, e_src);
    hf->Add(layout::kDecoderEmbedding, {vt, d}, e_tgt);
  }
  if (!c->tied_output) hf->Add(layout::kOutputProjection, {vt, d}, w_out);
  e_src.clear(), e_tgt.clear(), w_out.clear();
  c->has_final_logits_bias = v.Has("decoder/projection/bias");
  if (c->has_final_logits_bias) {
    std::vector<float> b;
    MTLITE_RETURN_IF_ERROR(v.F32("decoder/projection/bias", {vt}, &b));
    hf->Add(layout::kFinalLogitsBias, {vt}, b);
  }

  // Positions: stored tables (OpenNMT-py's, row p for position p) or the built-in sinusoid.
  const char* const pos[2] = {"encoder/position_encodings/encodings", "decoder/position_encodings/encodings"};
  const char* const hf_pos[2] = {layout::kEncoderPositions, layout::kDecoderPositions};
  if (v.Has(pos[0]) != v.Has(pos[1]))
    return Unsupported(std::string("model.bin: only one of ") + pos[0] + " and " + pos[1] + " is stored");
  if (v.Has(pos[0])) {
    const Ct2ModelBin::Variable* t = bin.Find(pos[0]);
    if (t->shape.size() != 2 || t->shape[1] != d || t->shape[0] < 1 || t->shape[0] > detail::kMaxPositions)
      return Reject(std::string("model.bin: variable '") + pos[0] + "' has shape " + Variables::Shape(t->shape));
    c->positions = PositionKind::kTable;
    c->max_positions = int(t->shape[0]);
    for (int side = 0; side < 2; ++side) {
      std::vector<float> table;
      MTLITE_RETURN_IF_ERROR(v.F32(pos[side], {c->max_positions, d}, &table));
      hf->Add(hf_pos[side], {c->max_positions, d}, table);
    }
  } else {
    if (d % 2 != 0 || d < 4) return Unsupported("model.bin: the built-in sinusoid needs an even d_model >= 4 (d_model " + std::to_string(d) + ")");
    c->positions = PositionKind::kSinusoidCT2;
    c->max_positions = kBuiltinSinusoidPositions;
  }

  // Layers.
  int ffn_dim[2] = {0, 0};
  for (int side = 0; side < 2; ++side) {
    const bool dec = side == 1;
    const int layers = dec ? c->decoder_layers : c->encoder_layers;
    for (int i = 0; i < layers; ++i) {
      const std::string s = LayerScope(dec ? "decoder" : "encoder", i);
      const std::string p = layout::LayerPrefix(dec ? layout::Side::kDecoder : layout::Side::kEncoder, i);
      const std::string sa = p + layout::kSelfAttention;
      MTLITE_RETURN_IF_ERROR(Linear(&v, s + "/self_attention/linear_0", 3 * d, d,
                                    {sa + ".q_proj", sa + ".k_proj", sa + ".v_proj"}, hf));
      MTLITE_RETURN_IF_ERROR(Linear(&v, s + "/self_attention/linear_1", d, d, {sa + ".out_proj"}, hf));
      MTLITE_RETURN_IF_ERROR(LayerNorm(&v, s + "/self_attention/layer_norm", d, p + layout::kSelfAttentionNorm, hf));
      if (dec) {
        const std::string ca = p + layout::kCrossAttention;
        MTLITE_RETURN_IF_ERROR(Linear(&v, s + "/attention/linear_0", d, d, {ca + ".q_proj"}, hf));
        MTLITE_RETURN_IF_ERROR(Linear(&v, s + "/attention/linear_1", 2 * d, d, {ca + ".k_proj", ca + ".v_proj"}, hf));
        MTLITE_RETURN_IF_ERROR(Linear(&v, s + "/attention/linear_2", d, d, {ca + ".out_proj"}, hf));
        MTLITE_RETURN_IF_ERROR(LayerNorm(&v, s + "/attention/layer_norm", d, p + layout::kCrossAttentionNorm, hf));
      }
      const Ct2ModelBin::Variable* f = bin.Find(s + "/ffn/linear_0/weight");
      if (!f || f->shape.size() != 2 || f->shape[0] < 1 || f->shape[0] > INT_MAX)
        return Reject("model.bin: missing or malformed " + s + "/ffn/linear_0/weight");
      const int ffn = int(f->shape[0]);
      if (i > 0 && ffn != ffn_dim[side])
        return Unsupported("model.bin: " + s + " has FFN size " + std::to_string(ffn) + ", layer 0 " + std::to_string(ffn_dim[side]) + " (one size per stack)");
      ffn_dim[side] = ffn;
      MTLITE_RETURN_IF_ERROR(Linear(&v, s + "/ffn/linear_0", ffn, d, {p + layout::kFc1}, hf));
      MTLITE_RETURN_IF_ERROR(Linear(&v, s + "/ffn/linear_1", d, ffn, {p + layout::kFc2}, hf));
      MTLITE_RETURN_IF_ERROR(LayerNorm(&v, s + "/ffn/layer_norm", d, p + layout::kFinalNorm, hf));
    }
  }
  c->encoder_ffn_dim = ffn_dim[0];
  c->decoder_ffn_dim = ffn_dim[1];
  // The stacks' final norms (pre-norm models).
  c->encoder_final_norm = v.Has("encoder/layer_norm/gamma");
  c->decoder_final_norm = v.Has("decoder/layer_norm/gamma");
  if (c->encoder_final_norm) MTLITE_RETURN_IF_ERROR(LayerNorm(&v, "encoder/layer_norm", d, layout::kEncoderFinalNorm, hf));
  if (c->decoder_final_norm) MTLITE_RETURN_IF_ERROR(LayerNorm(&v, "decoder/layer_norm", d, layout::kDecoderFinalNorm, hf));

  const std::vector<std::string> unused = v.Unused();
  if (!unused.empty()) {
    std::string list;
    for (const std::string& n : unused) list += (list.empty() ? "" : ", ") + n;
    return Unsupported("model.bin: variables mtlite does not implement: " + list);
  }
  (void)warnings;
  return Status::Ok();
}

// config.json of the model directory: the decoding tokens and options.
Status ReadCt2Config(const Ct2Model& m, ModelConfig* c, std::vector<std::string>* warnings) {
  const nlohmann::json j = nlohmann::json::parse(m.config_json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Reject("config.json: not a JSON object");
  auto str = [&](const char* key, const char* def, std::string* out) -> Status {
    if (!j.contains(key) || j[key].is_null()) {
      *out = def;
      return Status::Ok();
    }
    if (!j[key].is_string()) return Reject(std::string("config.json: '") + key + "' must be a string");
    *out = j[key].get<std::string>();
    return Status::Ok();
  };
  auto flag = [&](const char* key, bool def, bool* out) -> Status {
    if (!j.contains(key) || j[key].is_null()) {
      *out = def;
      return Status::Ok();
    }
    if (!j[key].is_boolean()) return Reject(std::string("config.json: '") + key + "' must be true or false");
    *out = j[key].get<bool>();
    return Status::Ok();
  };
  static const std::set<std::string> known = {"add_source_bos", "add_source_eos", "bos_token", "decoder_start_token",
                                              "eos_token", "unk_token", "layer_norm_epsilon", "multi_query_attention"};
  for (const auto& [k, val] : j.items())
    if (!known.count(k)) warnings->push_back("config.json: field '" + k + "' ignored");
  bool source_bos = false, source_eos = false, mqa = false;
  MTLITE_RETURN_IF_ERROR(flag("add_source_bos", false, &source_bos));
  MTLITE_RETURN_IF_ERROR(flag("add_source_eos", false, &source_eos));
  MTLITE_RETURN_IF_ERROR(flag("multi_query_attention", false, &mqa));
  if (source_bos) return Unsupported("config.json: add_source_bos = true is not supported (a token before the source)");
  if (mqa) return Unsupported("config.json: multi_query_attention = true is not supported");
  c->source_eos = source_eos;
  std::string bos, start, eos, unk;
  MTLITE_RETURN_IF_ERROR(str("bos_token", "<s>", &bos));
  MTLITE_RETURN_IF_ERROR(str("decoder_start_token", bos.c_str(), &start));
  MTLITE_RETURN_IF_ERROR(str("eos_token", "</s>", &eos));
  MTLITE_RETURN_IF_ERROR(str("unk_token", "<unk>", &unk));
  if (j.contains("layer_norm_epsilon") && !j["layer_norm_epsilon"].is_null()) {
    const auto& e = j["layer_norm_epsilon"];
    if (!e.is_number() || !(e.get<double>() > 0) || e.get<double>() > 1)
      return Reject("config.json: 'layer_norm_epsilon' must be a number in (0, 1]");
    c->layer_norm_eps = e.get<float>();
  } else {
    c->layer_norm_eps = 1e-5f;  // CTranslate2's default for layer norms with a beta
  }
  // Ids: the first of equal tokens, as CTranslate2's vocabulary lookup.
  auto id_of = [](const std::vector<std::string>& vocab, const std::string& t) {
    for (size_t i = 0; i < vocab.size(); ++i)
      if (vocab[i] == t) return int(i);
    return -1;
  };
  c->eos_id = id_of(m.target_vocab, eos);
  c->decoder_start_id = id_of(m.target_vocab, start);
  c->unk_id = id_of(m.source_vocab, unk);
  if (c->eos_id < 0) return Reject(m.target_vocab_file + ": no eos_token '" + eos + "'");
  if (c->decoder_start_id < 0) return Reject(m.target_vocab_file + ": no decoder_start_token '" + start + "'");
  if (c->unk_id < 0) return Reject(m.source_vocab_file + ": no unk_token '" + unk + "'");
  if (source_eos && id_of(m.source_vocab, eos) != c->eos_id)
    return Unsupported("config.json: add_source_eos with a source eos id other than the target's is not supported");
  // <blank> (OpenNMT) or <pad>: never generated by mtlite (CTranslate2 does not ban it)
  c->pad_id = id_of(m.target_vocab, "<blank>");
  if (c->pad_id < 0) c->pad_id = id_of(m.target_vocab, "<pad>");
  if (c->pad_id < 0) {
    c->pad_id = id_of(m.target_vocab, unk);
    if (c->pad_id < 0) c->pad_id = c->decoder_start_id;
    warnings->push_back(m.target_vocab_file + ": no <blank> or <pad> token; id " + std::to_string(c->pad_id) + " serves as padding (never generated)");
  }
  c->bad_word_ids = {};  // CTranslate2 bans nothing (pad: SearchKind kCT2 does not ban it either)
  return Status::Ok();
}

Status ParseSpm(const std::string& bytes, const std::string& name, SpmProto* proto) {
  Status s = ParseSpmProto(bytes, proto);
  if (!s.ok()) return Reject(name + ": " + s.message());
  return ValidateSpmProto(*proto, name);  // unigram or BPE
}

// spm piece index -> vocabulary id (the first of equal tokens); missing pieces -> unk.
void MapPieces(const SpmProto& spm, const std::string& spm_name, const std::vector<std::string>& vocab,
               const std::string& vocab_name, int unk, std::vector<int32_t>* to_vocab, std::vector<std::string>* warnings) {
  std::unordered_map<std::string, int> index;
  for (size_t i = 0; i < vocab.size(); ++i) index.emplace(vocab[i], int(i));
  to_vocab->clear();
  int missing = 0;
  std::set<std::string> pieces;
  for (const SpmPiece& p : spm.pieces) {
    pieces.insert(p.piece);
    auto it = index.find(p.piece);
    missing += it == index.end();
    to_vocab->push_back(it == index.end() ? unk : it->second);
  }
  if (missing) warnings->push_back(std::to_string(missing) + " pieces of " + spm_name + " are not in " + vocab_name + " (mapped to its unknown token)");
  int extra = 0;
  for (const std::string& t : vocab) extra += !pieces.count(t);
  if (extra) warnings->push_back(std::to_string(extra) + " tokens of " + vocab_name + " are not pieces of " + spm_name + " (kept; decoded as their text)");
}

}  // namespace

Status ConvertCt2Model(const Ct2Model& model, const std::vector<std::string>& spm_bytes,
                       const std::vector<std::string>& spm_names, const ConvertOptions& options, ModelSpec* spec,
                       ConversionReport* report) {
  *spec = ModelSpec();
  if (spm_bytes.empty() || spm_bytes.size() > 2 || spm_names.size() != spm_bytes.size())
    return Status(StatusCode::kInvalidArgument, "a CTranslate2 model needs one SentencePiece model (shared) or two (source, target): --vocab");
  ModelConfig& c = spec->config;
  MTLITE_RETURN_IF_ERROR(ReadCt2Config(model, &c, &report->warnings));
  HfTensors hf;
  MTLITE_RETURN_IF_ERROR(MapSpec(model, &c, &hf, &report->warnings));
  c.default_beam = 2;          // CTranslate2's translate_batch default
  c.default_max_length = 257;  // its max_decoding_length 256, + the </s> mtlite counts
  c.search = SearchKind::kCT2;

  // Tokenizer: the SentencePiece model gives the text, the vocabulary the ids.
  spec->source_vocab = model.source_vocab;
  MTLITE_RETURN_IF_ERROR(ParseSpm(spm_bytes[0], spm_names[0], &spec->source_spm.proto));
  MapPieces(spec->source_spm.proto, spm_names[0], model.source_vocab, model.source_vocab_file, c.unk_id,
            &spec->source_spm.to_vocab, &report->warnings);
  const bool same_vocab = model.source_vocab == model.target_vocab;
  if (!same_vocab) spec->target_vocab = model.target_vocab;
  if (spm_bytes.size() == 2 || !same_vocab) {
    const size_t t = spm_bytes.size() - 1;
    SpmSpec target;
    MTLITE_RETURN_IF_ERROR(ParseSpm(spm_bytes[t], spm_names[t], &target.proto));
    int target_unk = -1;
    for (size_t i = 0; i < model.target_vocab.size() && target_unk < 0; ++i)
      if (model.target_vocab[i] == model.source_vocab[size_t(c.unk_id)]) target_unk = int(i);
    if (target_unk < 0) return Reject(model.target_vocab_file + ": no unknown token");
    MapPieces(target.proto, spm_names[t], model.target_vocab, model.target_vocab_file, target_unk, &target.to_vocab,
              &report->warnings);
    if (spm_bytes.size() == 2 || !same_vocab) spec->target_spm = std::move(target);
  }

  Safetensors st;
  MTLITE_RETURN_IF_ERROR(hf.Finish(&st));
  MTLITE_RETURN_IF_ERROR(ConvertHfTensors(st, options.quantize, spec, report));

  const std::string& bytes = model.bin.bytes();
  char hash[64];
  std::snprintf(hash, sizeof hash, "crc32c:%08x size:%llx", unsigned(Crc32c(bytes.data(), bytes.size())),
                static_cast<unsigned long long>(bytes.size()));
  spec->source_hash = hash;
  report->safetensors_bytes = bytes.size();
  report->source_file = "model.bin";
  spec->quantization = QuantizationName(options.quantize);
  spec->converter_version = std::string("mtlite convert ") + MTLITE_VERSION_STRING;
  spec->extra.push_back({"semantics", "ctranslate2"});
  spec->extra.push_back({"ct2_spec", model.bin.spec().empty() ? "TransformerSpec" : model.bin.spec()});
  spec->extra.push_back({"ct2_spec_revision", std::to_string(model.bin.spec_revision())});
  spec->extra.push_back({"ct2_binary_version", std::to_string(model.bin.binary_version())});
  if (!options.source_lang.empty()) c.source_lang = options.source_lang;
  if (!options.target_lang.empty()) c.target_lang = options.target_lang;
  return Status::Ok();
}

}  // namespace converter
}  // namespace mtlite

// ---- inputs: a CTranslate2 directory or an Argos package -----------------------------------

namespace mtlite {
namespace converter {
namespace {

std::string JoinPath(const std::string& dir, const std::string& file) {
  return dir.empty() || dir.back() == '/' ? dir + file : dir + "/" + file;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool HasSuffix(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// An Argos package: the zip, the directory inside it that holds metadata.json.
struct Package {
  std::string bytes;
  ZipReader zip;
  std::string root;  // "translate-en_de-1_0/" (or "" when the files are at the top)
};

Status OpenPackage(const std::string& path, Package* p) {
  MTLITE_RETURN_IF_ERROR(ReadFile(path, &p->bytes));
  MTLITE_RETURN_IF_ERROR(ZipReader::Open(p->bytes, path, &p->zip));
  const ZipEntry* meta = nullptr;
  for (const ZipEntry& e : p->zip.entries()) {
    const size_t slash = e.name.find('/');
    const bool top = e.name == "metadata.json";
    const bool one_down = slash != std::string::npos && e.name.compare(slash + 1, std::string::npos, "metadata.json") == 0;
    if (top || one_down) {
      if (meta) return Reject(path + ": more than one metadata.json (" + meta->name + ", " + e.name + ")");
      meta = &e;
    }
  }
  if (!meta) return Reject(path + ": no metadata.json (not an Argos Translate package)");
  p->root = meta->name.substr(0, meta->name.size() - std::strlen("metadata.json"));
  return Status::Ok();
}

Ct2Files PackageFiles(const Package& p, const std::string& path, const std::string& sub) {
  Ct2Files f;
  const std::string prefix = p.root + sub;
  f.where = path + ":" + prefix;
  const Package* pk = &p;
  f.exists = [pk, prefix](const std::string& file) { return pk->zip.Find(prefix + file) != nullptr; };
  f.read = [pk, prefix, path](const std::string& file, std::string* bytes) {
    const ZipEntry* e = pk->zip.Find(prefix + file);
    if (!e) return Reject(path + ": no " + prefix + file);
    return pk->zip.Read(*e, bytes);
  };
  return f;
}

}  // namespace

bool IsCt2Input(const std::string& input) {
  if (IsDirectory(input)) return IsCt2Model(Ct2DirectoryFiles(input));
  return HasSuffix(input, ".argosmodel");
}

Status ConvertCt2Input(const std::string& input, const ConvertOptions& options, AlignedBytes* out,
                       ConversionReport* report, ConvertInputs* inputs) {
  *report = ConversionReport();
  *inputs = ConvertInputs();
  inputs->model = input;
  if (options.semantics != Semantics::kDefault)
    return Status(StatusCode::kInvalidArgument, "--semantics applies to Marian and HF models, not to CTranslate2 models");
  Ct2Model model;
  std::vector<std::string> spm_bytes, spm_names;
  ModelSpec spec;
  ConvertOptions opt = options;
  if (IsDirectory(input)) {
    inputs->kind = "ct2";
    const Ct2Files files = Ct2DirectoryFiles(input);
    MTLITE_RETURN_IF_ERROR(LoadCt2Model(files, &model));
    std::vector<std::string> vocabs = options.vocabs;
    if (vocabs.empty()) {
      for (const char* f : {"sentencepiece.model", "source.spm"})
        if (FileExists(JoinPath(input, f))) {
          vocabs.push_back(JoinPath(input, f));
          break;
        }
      if (!vocabs.empty() && HasSuffix(vocabs[0], "source.spm") && FileExists(JoinPath(input, "target.spm")))
        vocabs.push_back(JoinPath(input, "target.spm"));
    }
    if (vocabs.empty())
      return Status(StatusCode::kInvalidArgument, input + ": a CTranslate2 model needs its SentencePiece model: --vocab SPM [--vocab TARGET_SPM]");
    if (vocabs.size() > 2) return Status(StatusCode::kInvalidArgument, "at most two --vocab files (source, target)");
    for (const std::string& v : vocabs) {
      spm_bytes.emplace_back();
      MTLITE_RETURN_IF_ERROR(ReadFile(v, &spm_bytes.back()));
      spm_names.push_back(v);
    }
  } else {
    inputs->kind = "argos";
    Package pkg;
    MTLITE_RETURN_IF_ERROR(OpenPackage(input, &pkg));
    MTLITE_RETURN_IF_ERROR(LoadCt2Model(PackageFiles(pkg, input, "model/"), &model));
    const Ct2Files top = PackageFiles(pkg, input, "");
    std::string meta_text;
    MTLITE_RETURN_IF_ERROR(top.read("metadata.json", &meta_text));
    const nlohmann::json meta = nlohmann::json::parse(meta_text, nullptr, /*allow_exceptions=*/false);
    if (meta.is_discarded() || !meta.is_object()) return Reject(input + ": metadata.json is not a JSON object");
    for (const char* k : {"from_code", "to_code"})
      if (meta.contains(k) && !meta[k].is_string()) return Reject(input + ": metadata.json '" + k + "' is not a string");
    if (meta.contains("type") && meta["type"].is_string() && meta["type"].get<std::string>() != "translate")
      return Unsupported(input + ": package type '" + meta["type"].get<std::string>() + "' is not a translation model");
    if (opt.source_lang.empty() && meta.contains("from_code")) opt.source_lang = meta["from_code"].get<std::string>();
    if (opt.target_lang.empty() && meta.contains("to_code")) opt.target_lang = meta["to_code"].get<std::string>();
    if (!options.vocabs.empty()) {
      for (const std::string& v : options.vocabs) {
        spm_bytes.emplace_back();
        MTLITE_RETURN_IF_ERROR(ReadFile(v, &spm_bytes.back()));
        spm_names.push_back(v);
      }
    } else {
      if (!top.exists("sentencepiece.model")) return Reject(input + ": no " + pkg.root + "sentencepiece.model");
      spm_bytes.emplace_back();
      MTLITE_RETURN_IF_ERROR(top.read("sentencepiece.model", &spm_bytes.back()));
      spm_names.push_back(pkg.root + "sentencepiece.model");
    }
  }
  inputs->vocabs = spm_names;
  MTLITE_RETURN_IF_ERROR(ConvertCt2Model(model, spm_bytes, spm_names, opt, &spec, report));
  // A CTranslate2 directory or Argos package records no decoding settings: the defaults of every
  // interface for the model are CTranslate2's own translate_batch defaults.
  DecodingDefaultsSpec& dd = spec.decoding_defaults;
  dd.source = "CTranslate2 defaults";
  dd.beam_size = spec.config.default_beam;
  dd.max_length = spec.config.default_max_length;
  ApplyDecodingDefaultsMode(options.decoding_defaults, false, &spec, report, inputs);
  return SpecToBytes(spec, out, report);
}

}  // namespace converter
}  // namespace mtlite

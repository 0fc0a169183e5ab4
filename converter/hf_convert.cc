#include "hf_convert.h"

#include <algorithm>
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
#include "quantize.h"
#include "safetensors.h"
#include "spm_proto.h"
#include "status_macros.h"
#include "translator_bounds.h"

#ifndef MTLITE_VERSION_STRING
#define MTLITE_VERSION_STRING "0.0.0"
#endif

namespace mtlite {
namespace converter {
namespace {

Status Reject(const std::string& message) { return Status(StatusCode::kInvalidModel, message); }

std::string Join(const std::string& dir, const std::string& file) {
  return dir.empty() || dir.back() == '/' ? dir + file : dir + "/" + file;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// A JSON file of the HF directory with typed, range-checked field access. Messages name the
// file and the field. JSON null counts as absent.
class JsonFile {
 public:
  static Status Load(const std::string& dir, const std::string& file, bool required, JsonFile* out) {
    out->name_ = file;
    const std::string path = Join(dir, file);
    if (!FileExists(path)) return required ? Reject(file + ": missing from " + dir) : Status::Ok();
    std::string text;
    MTLITE_RETURN_IF_ERROR(ReadFile(path, &text));
    return Parse(text, file, out);
  }
  static Status Parse(const std::string& text, const std::string& file, JsonFile* out) {
    out->name_ = file;
    out->json_ = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (out->json_.is_discarded() || !out->json_.is_object()) {
      out->json_ = nlohmann::json();
      return Reject(file + ": not a JSON object");
    }
    return Status::Ok();
  }

  const std::string& name() const { return name_; }
  const nlohmann::json& json() const { return json_; }
  bool Has(const char* key) const { return json_.is_object() && json_.contains(key) && !json_[key].is_null(); }

  Status Int(const char* key, int64_t lo, int64_t hi, int* out) const {
    if (!Has(key)) return Reject(name_ + ": missing field '" + key + "'");
    return IntOr(key, 0, lo, hi, out);
  }
  Status IntOr(const char* key, int def, int64_t lo, int64_t hi, int* out) const {
    if (!Has(key)) {
      *out = def;
      return Status::Ok();
    }
    const nlohmann::json& v = json_[key];
    if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi) {
      return Reject(name_ + ": field '" + key + "' must be an integer in [" + std::to_string(lo) + ", " +
                    std::to_string(hi) + "]");
    }
    *out = static_cast<int>(v.get<int64_t>());
    return Status::Ok();
  }
  Status BoolOr(const char* key, bool def, bool* out) const {
    if (!Has(key)) {
      *out = def;
      return Status::Ok();
    }
    if (!json_[key].is_boolean()) return Reject(name_ + ": field '" + key + "' must be true or false");
    *out = json_[key].get<bool>();
    return Status::Ok();
  }
  Status StringOr(const char* key, const std::string& def, std::string* out) const {
    if (!Has(key)) {
      *out = def;
      return Status::Ok();
    }
    if (!json_[key].is_string()) return Reject(name_ + ": field '" + key + "' must be a string");
    *out = json_[key].get<std::string>();
    return Status::Ok();
  }

 private:
  std::string name_;
  nlohmann::json json_;
};

Status ParseActivation(const std::string& name, ActivationKind* out) {
  if (layout::ActivationFromHfName(name, out)) return Status::Ok();
  return Reject("config.json: activation_function '" + name + "' is not supported (" + layout::kHfActivationNames + ")");
}

// bad_words_ids: [[id], [id, id], ...]. Single-token entries become banned ids; longer
// sequences cannot be expressed in the format and are reported as warnings.
Status ReadBadWords(const JsonFile& f, std::vector<int>* ids, std::vector<std::string>* warnings) {
  const nlohmann::json& v = f.json()["bad_words_ids"];
  if (!v.is_array()) return Reject(f.name() + ": field 'bad_words_ids' must be a list of lists of ids");
  for (const auto& seq : v) {
    if (!seq.is_array() || seq.empty()) return Reject(f.name() + ": field 'bad_words_ids' must be a list of lists of ids");
    for (const auto& id : seq) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT_MAX) {
        return Reject(f.name() + ": field 'bad_words_ids' contains a non-integer or negative id");
      }
    }
    if (seq.size() == 1) {
      ids->push_back(seq[0].get<int>());
    } else {
      warnings->push_back(f.name() + ": multi-token bad_words_ids entry ignored (only single tokens are supported)");
    }
  }
  return Status::Ok();
}

Status ReadConfig(const JsonFile& cfg, const JsonFile& gen, ModelConfig* c, std::vector<std::string>* warnings) {
  std::string model_type;
  MTLITE_RETURN_IF_ERROR(cfg.StringOr("model_type", "marian", &model_type));
  if (model_type != "marian") return Reject("config.json: model_type '" + model_type + "' is not supported (expected 'marian')");
  for (const char* unsupported : {"add_bias_logits", "normalize_embedding"}) {
    bool v = false;
    MTLITE_RETURN_IF_ERROR(cfg.BoolOr(unsupported, false, &v));
    if (v) return Reject(std::string("config.json: ") + unsupported + "=true is not supported");
  }
  // Pre-norm (BART-family configs' normalize_before): x + Block(LN(x)) in every block; the
  // stacks' final norms come with their tensors (ConvertTensors).
  bool pre_norm = false;
  MTLITE_RETURN_IF_ERROR(cfg.BoolOr("normalize_before", false, &pre_norm));
  c->norm = pre_norm ? NormPlacement::kPre : NormPlacement::kPost;
  // d_model and max_position_embeddings size tables built from them alone (the sinusoid of
  // --semantics marian): bounded here by the runtime's limits, before anything is built.
  MTLITE_RETURN_IF_ERROR(cfg.Int("d_model", 1, detail::kMaxDModel, &c->d_model));
  MTLITE_RETURN_IF_ERROR(cfg.Int("encoder_layers", 1, INT_MAX, &c->encoder_layers));
  MTLITE_RETURN_IF_ERROR(cfg.Int("decoder_layers", 1, INT_MAX, &c->decoder_layers));
  MTLITE_RETURN_IF_ERROR(cfg.Int("encoder_attention_heads", 1, INT_MAX, &c->encoder_heads));
  MTLITE_RETURN_IF_ERROR(cfg.Int("decoder_attention_heads", 1, INT_MAX, &c->decoder_heads));
  MTLITE_RETURN_IF_ERROR(cfg.Int("encoder_ffn_dim", 1, INT_MAX, &c->encoder_ffn_dim));
  MTLITE_RETURN_IF_ERROR(cfg.Int("decoder_ffn_dim", 1, INT_MAX, &c->decoder_ffn_dim));
  MTLITE_RETURN_IF_ERROR(cfg.Int("max_position_embeddings", 1, detail::kMaxPositions, &c->max_positions));
  MTLITE_RETURN_IF_ERROR(cfg.Int("vocab_size", 1, INT_MAX, &c->source_vocab_size));
  MTLITE_RETURN_IF_ERROR(cfg.IntOr("decoder_vocab_size", c->source_vocab_size, 1, INT_MAX, &c->target_vocab_size));
  MTLITE_RETURN_IF_ERROR(cfg.Int("pad_token_id", 0, INT_MAX, &c->pad_id));
  MTLITE_RETURN_IF_ERROR(cfg.Int("eos_token_id", 0, INT_MAX, &c->eos_id));
  MTLITE_RETURN_IF_ERROR(cfg.IntOr("decoder_start_token_id", c->pad_id, 0, INT_MAX, &c->decoder_start_id));
  std::string act;
  MTLITE_RETURN_IF_ERROR(cfg.StringOr("activation_function", "gelu", &act));  // MarianConfig default
  MTLITE_RETURN_IF_ERROR(ParseActivation(act, &c->activation));
  bool scale = false;
  MTLITE_RETURN_IF_ERROR(cfg.BoolOr("scale_embedding", false, &scale));
  c->embed_scale = scale ? std::sqrt(float(c->d_model)) : 1.0f;
  MTLITE_RETURN_IF_ERROR(cfg.BoolOr("share_encoder_decoder_embeddings", true, &c->shared_embeddings));
  MTLITE_RETURN_IF_ERROR(cfg.BoolOr("tie_word_embeddings", true, &c->tied_output));
  if (c->shared_embeddings && c->source_vocab_size != c->target_vocab_size) {
    return Reject("config.json: share_encoder_decoder_embeddings=true but vocab_size " + std::to_string(c->source_vocab_size) +
                  " != decoder_vocab_size " + std::to_string(c->target_vocab_size));
  }
  c->layer_norm_eps = 1e-5f;  // torch.nn.LayerNorm default, as used by HF Marian

  // Generation defaults: generation_config.json wins over config.json.
  const JsonFile& g = gen.Has("num_beams") ? gen : cfg;
  MTLITE_RETURN_IF_ERROR(g.IntOr("num_beams", 4, 1, detail::kMaxBeam, &c->default_beam));  // the loader's bound
  const JsonFile& gl = gen.Has("max_length") ? gen : cfg;
  MTLITE_RETURN_IF_ERROR(gl.IntOr("max_length", 256, 1, INT_MAX, &c->default_max_length));
  std::vector<int> bad;
  if (gen.Has("bad_words_ids")) MTLITE_RETURN_IF_ERROR(ReadBadWords(gen, &bad, warnings));
  else if (cfg.Has("bad_words_ids")) MTLITE_RETURN_IF_ERROR(ReadBadWords(cfg, &bad, warnings));
  bad.push_back(c->pad_id);  // pad is never generated
  std::sort(bad.begin(), bad.end());
  bad.erase(std::unique(bad.begin(), bad.end()), bad.end());
  c->bad_word_ids = bad;
  return Status::Ok();
}

// generation_config.json's decoding settings (the file alone; config.json's copies are older
// transformers' and not read here): num_beams, max_new_tokens or max_length (HF's counts the
// decoder start: mtlite's max_length is one less), length_penalty. The settings the runtime does
// not implement are listed in `ignored` when they are not HF's neutral value.
Status ReadGenerationDefaults(const JsonFile& gen, DecodingDefaultsSpec* d) {
  *d = DecodingDefaultsSpec();
  if (gen.json().is_null()) return Status::Ok();
  d->source = gen.name();
  int v = 0;
  if (gen.Has("num_beams")) {
    MTLITE_RETURN_IF_ERROR(gen.Int("num_beams", 1, detail::kMaxBeam, &v));
    d->beam_size = v;
  }
  // a cap beyond the runtime's range (or no integer) is reported, not recorded
  const char* cap = gen.Has("max_new_tokens") ? "max_new_tokens" : gen.Has("max_length") ? "max_length" : nullptr;
  if (cap) {
    const int minus = cap[4] == 'l' ? 1 : 0;  // max_length counts the decoder start
    if (gen.Int(cap, 1 + minus, detail::kMaxPositions, &v).ok()) {
      d->max_length = v - minus;
    } else {
      d->ignored.push_back(std::string(cap) + " " + gen.json()[cap].dump() + ": not an integer in [" +
                           std::to_string(1 + minus) + ", " + std::to_string(detail::kMaxPositions) + "], ignored");
    }
  }
  if (gen.Has("length_penalty")) {
    const nlohmann::json& lp = gen.json()["length_penalty"];
    if (!lp.is_number() || !(lp.get<double>() > -100 && lp.get<double>() < 100)) {
      return Reject(gen.name() + ": field 'length_penalty' must be a number in (-100, 100)");
    }
    d->length_penalty = float(lp.get<double>());
  }
  // key, its neutral value (HF's default: nothing to ignore), what the runtime lacks
  struct Unsupported {
    const char* key;
    double neutral;
    const char* why;
  };
  static const Unsupported kUnsupported[] = {
      {"no_repeat_ngram_size", 0, "n-gram blocking is not implemented"},
      {"encoder_no_repeat_ngram_size", 0, "n-gram blocking is not implemented"},
      {"repetition_penalty", 1, "repetition penalties are not implemented"},
      {"min_length", 0, "a minimum length is not implemented"},
      {"min_new_tokens", 0, "a minimum length is not implemented"},
      {"do_sample", 0, "sampling is not implemented (greedy and beam search only)"},
      {"early_stopping", 0, "the search stops as HF's early_stopping=false"},
      {"num_beam_groups", 1, "diverse beam search is not implemented"},
      {"diversity_penalty", 0, "diverse beam search is not implemented"},
      {"num_return_sequences", 1, "n-best lists are asked for per call (n_best)"},
  };
  for (const Unsupported& u : kUnsupported) {
    if (!gen.Has(u.key)) continue;
    const nlohmann::json& j = gen.json()[u.key];
    const double value = j.is_boolean() ? (j.get<bool>() ? 1 : 0) : j.is_number() ? j.get<double>() : u.neutral + 1;
    if (value != u.neutral) d->ignored.push_back(std::string(u.key) + " " + j.dump() + ": " + u.why + ", ignored");
  }
  return Status::Ok();
}

// vocab.json {piece: id} -> dense id_to_piece; size must match the config.
Status ReadVocab(const std::string& dir, const std::string& file, int expected, const char* size_field,
                 std::vector<std::string>* id_to_piece, std::unordered_map<std::string, int>* index) {
  JsonFile f;
  MTLITE_RETURN_IF_ERROR(JsonFile::Load(dir, file, true, &f));
  const size_t n = f.json().size();
  id_to_piece->assign(n, std::string());
  std::vector<bool> seen(n, false);
  for (const auto& [piece, id] : f.json().items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0) return Reject(file + ": id of '" + piece + "' is not a non-negative integer");
    const int64_t i = id.get<int64_t>();
    if (i >= int64_t(n)) return Reject(file + ": ids are not dense 0.." + std::to_string(n - 1) + " (found id " + std::to_string(i) + ")");
    if (seen[size_t(i)]) return Reject(file + ": id " + std::to_string(i) + " is assigned to more than one piece");
    seen[size_t(i)] = true;
    (*id_to_piece)[size_t(i)] = piece;
    (*index)[piece] = int(i);
  }
  if (int64_t(n) != expected) {
    return Reject("vocab/spm disagreement: " + file + " has " + std::to_string(n) + " entries but config.json " +
                  size_field + " is " + std::to_string(expected));
  }
  return Status::Ok();
}

Status ReadSpm(const std::string& dir, const std::string& file, std::string* bytes, SpmProto* proto) {
  MTLITE_RETURN_IF_ERROR(ReadFile(Join(dir, file), bytes));
  Status s = ParseSpmProto(*bytes, proto);
  if (!s.ok()) return Reject(file + ": " + s.message());
  MTLITE_RETURN_IF_ERROR(ValidateSpmProto(*proto, file));
  return Status::Ok();
}

// spm piece index -> vocab id; pieces missing from the vocab map to the vocab's unknown id.
Status MapToVocab(const std::string& spm_file, const SpmProto& spm, const std::string& vocab_file,
                  const std::unordered_map<std::string, int>& vocab, std::vector<int32_t>* to_vocab, int* unk,
                  std::vector<std::string>* warnings) {
  auto it = vocab.find(spm.pieces[size_t(spm.unk_id)].piece);
  if (it == vocab.end()) it = vocab.find("<unk>");
  if (it == vocab.end()) return Reject("vocab/spm disagreement: " + vocab_file + " has no entry for the unknown piece of " + spm_file);
  *unk = it->second;
  to_vocab->clear();
  int missing = 0;
  for (const SpmPiece& p : spm.pieces) {
    auto v = vocab.find(p.piece);
    missing += v == vocab.end();
    to_vocab->push_back(v == vocab.end() ? *unk : v->second);
  }
  if (missing) warnings->push_back(std::to_string(missing) + " pieces of " + spm_file + " are not in " + vocab_file + " (mapped to <unk>)");
  return Status::Ok();
}

class TensorConverter {
 public:
  TensorConverter(const Safetensors& st, Quantization q, ModelSpec* spec, ConversionReport* report)
      : st_(st), q_(q), spec_(spec), report_(report) {}

  // Reads the first present candidate, which must have one of the accepted shapes and
  // contain only finite values.
  Status Read(const std::vector<std::string>& candidates, const std::vector<std::vector<int64_t>>& shapes,
              std::vector<float>* out) {
    const std::string* name = nullptr;
    for (const std::string& c : candidates) {
      if (st_.Has(c)) {
        name = &c;
        break;
      }
    }
    if (!name) return Reject("model.safetensors: missing tensor '" + candidates.front() + "'");
    const Safetensors::Entry* e = st_.Find(*name);
    if (std::find(shapes.begin(), shapes.end(), e->shape) == shapes.end()) {
      return Reject("model.safetensors: tensor '" + *name + "' has shape " + ShapeString(e->shape) + ", expected " +
                    ShapeString(shapes.front()) + " (from config.json)");
    }
    MTLITE_RETURN_IF_ERROR(st_.ReadF32(*name, out));
    for (float v : *out) {
      if (!std::isfinite(v)) return Reject("model.safetensors: tensor '" + *name + "' contains NaN or infinite values");
    }
    used_.insert(*name);
    return Status::Ok();
  }

  bool Has(const std::string& name) const { return st_.Has(name); }

  // A 2-D weight [rows][cols], encoded per the quantization mode.
  Status Weight(const std::string& name, std::vector<std::string> candidates, int rows, int cols) {
    candidates.insert(candidates.begin(), name);
    std::vector<float> w;
    MTLITE_RETURN_IF_ERROR(Read(candidates, {{rows, cols}}, &w));
    TensorSpec t;
    t.name = name;
    t.shape = {rows, cols};
    t.dtype = WeightTypeOf(q_);
    EncodeError err;
    switch (q_) {
      case Quantization::kInt8:
        err = QuantizeInt8(w.data(), rows, cols, &t.data, &t.scales);
        break;
      case Quantization::kFp16:
        err = EncodeF16(w.data(), w.size(), &t.data);
        break;
      case Quantization::kFp32:
        t.data.resize(w.size() * 4);
        std::memcpy(t.data.data(), w.data(), t.data.size());
        break;
    }
    Add(std::move(t), q_ != Quantization::kFp32, err);
    return Status::Ok();
  }

  // An f32 tensor stored as is (biases, norms, final_logits_bias, position tables).
  Status F32(const std::string& name, const std::vector<std::vector<int64_t>>& accepted,
             std::vector<int64_t> stored_shape) {
    std::vector<float> v;
    MTLITE_RETURN_IF_ERROR(Read({name}, accepted, &v));
    AddF32(name, std::move(stored_shape), v);
    return Status::Ok();
  }

  void AddF32(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& v) {
    TensorSpec t;
    t.name = name;
    t.shape = std::move(shape);
    t.data.resize(v.size() * 4);
    std::memcpy(t.data.data(), v.data(), t.data.size());
    Add(std::move(t), false, {});
  }

  Status Linear(const std::string& prefix, int rows, int cols) {
    MTLITE_RETURN_IF_ERROR(Weight(prefix + layout::kWeight, {}, rows, cols));
    return F32(prefix + layout::kBias, {{rows}}, {rows});
  }

  Status LayerNorm(const std::string& prefix, int d) {
    MTLITE_RETURN_IF_ERROR(F32(prefix + layout::kWeight, {{d}}, {d}));
    return F32(prefix + layout::kBias, {{d}}, {d});
  }

  // Attention block `block` (kSelfAttention / kCrossAttention) of a layer and its layer norm.
  Status Attention(const std::string& layer, const char* block, const char* norm, int d) {
    for (const char* p : layout::kAttentionProjections) MTLITE_RETURN_IF_ERROR(Linear(layer + block + p, d, d));
    return LayerNorm(layer + norm, d);
  }

  Status Ffn(const std::string& layer, int d, int ffn) {
    MTLITE_RETURN_IF_ERROR(Linear(layer + layout::kFc1, ffn, d));
    MTLITE_RETURN_IF_ERROR(Linear(layer + layout::kFc2, d, ffn));
    return LayerNorm(layer + layout::kFinalNorm, d);
  }

  std::vector<std::string> Unused() const {
    std::vector<std::string> out;
    for (const auto& [name, e] : st_.entries()) {
      if (!used_.count(name)) out.push_back(name);
    }
    return out;
  }

 private:
  void Add(TensorSpec t, bool encoded, const EncodeError& err) {
    TensorReport r;
    r.name = t.name;
    r.dtype = t.dtype;
    r.shape = t.shape;
    r.bytes = t.data.size() + t.scales.size() * sizeof(float);
    r.encoded = encoded;
    r.max_abs_error = err.max_abs;
    r.rel_rms_error = err.rel_rms;
    report_->tensors.push_back(std::move(r));
    spec_->tensors.push_back(std::move(t));
  }

  const Safetensors& st_;
  const Quantization q_;
  ModelSpec* spec_;
  ConversionReport* report_;
  std::set<std::string> used_;
};

Status ConvertTensors(const Safetensors& st, Quantization q, ModelSpec* spec, ConversionReport* report) {
  ModelConfig& c = spec->config;
  const int d = c.d_model;
  TensorConverter tc(st, q, spec, report);
  const std::vector<std::string> lm_head =
      c.tied_output ? std::vector<std::string>{layout::kOutputProjection} : std::vector<std::string>{};
  if (c.shared_embeddings) {
    std::vector<std::string> alt = {layout::kEncoderEmbedding, layout::kDecoderEmbedding};
    alt.insert(alt.end(), lm_head.begin(), lm_head.end());
    MTLITE_RETURN_IF_ERROR(tc.Weight(layout::kSharedEmbedding, alt, c.source_vocab_size, d));
  } else {
    MTLITE_RETURN_IF_ERROR(tc.Weight(layout::kEncoderEmbedding, {}, c.source_vocab_size, d));
    MTLITE_RETURN_IF_ERROR(tc.Weight(layout::kDecoderEmbedding, lm_head, c.target_vocab_size, d));
  }
  if (!c.tied_output) MTLITE_RETURN_IF_ERROR(tc.Weight(layout::kOutputProjection, {}, c.target_vocab_size, d));

  c.has_final_logits_bias = tc.Has(layout::kFinalLogitsBias);
  if (c.has_final_logits_bias) {
    const int64_t v = c.target_vocab_size;
    MTLITE_RETURN_IF_ERROR(tc.F32(layout::kFinalLogitsBias, {{1, v}, {v}}, {v}));
  }

  // Positions: a caller's kind other than Marian's sinusoid stays (kTable: both tables stored,
  // a missing one as Marian's sinusoid). Otherwise nothing is stored when both tables (or their
  // absence) are one sinusoid the runtime computes (within layout::kSinusoidTolerance), whose kind
  // is recorded: Marian's, M2M100's at the padding offset, or CTranslate2's; else both are stored.
  const int P = c.max_positions;
  const char* const pos_names[2] = {layout::kEncoderPositions, layout::kDecoderPositions};
  std::vector<float> tables[2];
  for (int side = 0; side < 2; ++side) {
    if (tc.Has(pos_names[side])) MTLITE_RETURN_IF_ERROR(tc.Read({pos_names[side]}, {{P, d}}, &tables[side]));
  }
  if (c.positions == PositionKind::kSinusoidMarian && (!tables[0].empty() || !tables[1].empty())) {
    PositionKind found = PositionKind::kTable;
    for (PositionKind kind : {PositionKind::kSinusoidMarian, PositionKind::kSinusoidM2M100, PositionKind::kSinusoidCT2}) {
      if ((kind == PositionKind::kSinusoidM2M100 || kind == PositionKind::kSinusoidCT2) && (d < 4 || d % 2)) continue;
      bool all = true;
      for (int side = 0; side < 2 && all; ++side) {
        // an absent table is Marian's sinusoid
        if (tables[side].empty()) all = kind == PositionKind::kSinusoidMarian;
        else all = layout::IsSinusoid(kind, tables[side].data(), P, d, c.pad_id);
      }
      if (all) {
        found = kind;
        break;
      }
    }
    c.positions = found;
  }
  if (c.positions == PositionKind::kTable) {
    for (int side = 0; side < 2; ++side) {
      if (tables[side].empty()) tables[side] = layout::MarianSinusoidTable(P, d);
      tc.AddF32(pos_names[side], {P, d}, tables[side]);
    }
  }

  for (int i = 0; i < c.encoder_layers; ++i) {
    const std::string p = layout::LayerPrefix(layout::Side::kEncoder, i);
    MTLITE_RETURN_IF_ERROR(tc.Attention(p, layout::kSelfAttention, layout::kSelfAttentionNorm, d));
    MTLITE_RETURN_IF_ERROR(tc.Ffn(p, d, c.encoder_ffn_dim));
  }
  // The stacks' final norms: when the caller asks for them, or the checkpoint has them.
  c.encoder_final_norm = c.encoder_final_norm || tc.Has(std::string(layout::kEncoderFinalNorm) + layout::kWeight);
  c.decoder_final_norm = c.decoder_final_norm || tc.Has(std::string(layout::kDecoderFinalNorm) + layout::kWeight);
  if (c.encoder_final_norm) MTLITE_RETURN_IF_ERROR(tc.LayerNorm(layout::kEncoderFinalNorm, d));
  if (c.decoder_final_norm) MTLITE_RETURN_IF_ERROR(tc.LayerNorm(layout::kDecoderFinalNorm, d));
  for (int i = 0; i < c.decoder_layers; ++i) {
    const std::string p = layout::LayerPrefix(layout::Side::kDecoder, i);
    if (c.decoder_layer == DecoderLayerKind::kSsru) {  // Marian checkpoints only (ReadConfig never sets it)
      MTLITE_RETURN_IF_ERROR(tc.Weight(p + layout::kSsruInProj + layout::kWeight, {}, d, d));
      MTLITE_RETURN_IF_ERROR(tc.Linear(p + layout::kSsruForgetProj, d, d));
      MTLITE_RETURN_IF_ERROR(tc.LayerNorm(p + layout::kSsruNorm, d));
    } else {
      MTLITE_RETURN_IF_ERROR(tc.Attention(p, layout::kSelfAttention, layout::kSelfAttentionNorm, d));
    }
    MTLITE_RETURN_IF_ERROR(tc.Attention(p, layout::kCrossAttention, layout::kCrossAttentionNorm, d));
    MTLITE_RETURN_IF_ERROR(tc.Ffn(p, d, c.decoder_ffn_dim));
  }
  const std::vector<std::string> unused = tc.Unused();
  if (!unused.empty()) {
    std::string list;
    for (const std::string& n : unused) list += (list.empty() ? "" : ", ") + n;
    report->warnings.push_back("model.safetensors: ignored tensors (tied copies or unused): " + list);
  }
  return Status::Ok();
}

Status ConvertTokenizer(const std::string& dir, const JsonFile& tok_cfg, ModelSpec* spec, ConversionReport* report) {
  ModelConfig& c = spec->config;
  std::unordered_map<std::string, int> src_index, tgt_index;
  MTLITE_RETURN_IF_ERROR(ReadVocab(dir, "vocab.json", c.source_vocab_size, "vocab_size", &spec->source_vocab, &src_index));
  bool separate = false;
  MTLITE_RETURN_IF_ERROR(tok_cfg.BoolOr("separate_vocabs", false, &separate));
  const bool has_target_vocab = FileExists(Join(dir, "target_vocab.json"));
  if (separate && !has_target_vocab) return Reject("tokenizer_config.json: separate_vocabs is true but target_vocab.json is missing");
  if (has_target_vocab) {
    spec->target_vocab.emplace();
    MTLITE_RETURN_IF_ERROR(ReadVocab(dir, "target_vocab.json", c.target_vocab_size, "decoder_vocab_size",
                                     &*spec->target_vocab, &tgt_index));
  } else if (c.target_vocab_size != c.source_vocab_size) {
    return Reject("vocab/spm disagreement: config.json decoder_vocab_size " + std::to_string(c.target_vocab_size) +
                  " != vocab_size " + std::to_string(c.source_vocab_size) + " but there is no target_vocab.json");
  }

  std::string src_bytes, tgt_bytes;
  MTLITE_RETURN_IF_ERROR(ReadSpm(dir, "source.spm", &src_bytes, &spec->source_spm.proto));
  MTLITE_RETURN_IF_ERROR(MapToVocab("source.spm", spec->source_spm.proto, "vocab.json", src_index,
                                    &spec->source_spm.to_vocab, &c.unk_id, &report->warnings));
  SpmSpec target;
  MTLITE_RETURN_IF_ERROR(ReadSpm(dir, "target.spm", &tgt_bytes, &target.proto));
  if (tgt_bytes != src_bytes || has_target_vocab) {
    int target_unk = 0;
    MTLITE_RETURN_IF_ERROR(MapToVocab("target.spm", target.proto, has_target_vocab ? "target_vocab.json" : "vocab.json",
                                      has_target_vocab ? tgt_index : src_index, &target.to_vocab, &target_unk,
                                      &report->warnings));
    spec->target_spm = std::move(target);
  }
  MTLITE_RETURN_IF_ERROR(tok_cfg.StringOr("source_lang", "", &c.source_lang));
  MTLITE_RETURN_IF_ERROR(tok_cfg.StringOr("target_lang", "", &c.target_lang));
  return Status::Ok();
}

}  // namespace

const char* QuantizationName(Quantization q) { return layout::QuantizationName(WeightTypeOf(q)); }

bool ParseQuantization(const std::string& s, Quantization* q) {
  WeightType t;
  if (!layout::ParseQuantization(s, &t)) return false;
  *q = Quantization(int(t));
  return true;
}

Status ConvertHfTensors(const Safetensors& st, Quantization q, ModelSpec* spec, ConversionReport* report) {
  return ConvertTensors(st, q, spec, report);
}

Status ParseHfConfig(const std::string& config_json, const std::string& generation_json, ModelConfig* config,
                     std::vector<std::string>* warnings) {
  JsonFile cfg, gen;
  MTLITE_RETURN_IF_ERROR(JsonFile::Parse(config_json, "config.json", &cfg));
  if (!generation_json.empty()) MTLITE_RETURN_IF_ERROR(JsonFile::Parse(generation_json, "generation_config.json", &gen));
  return ReadConfig(cfg, gen, config, warnings);
}

Status ConvertHfDir(const std::string& dir, Quantization q, ModelSpec* spec, ConversionReport* report,
                    const HfTensorHook& hook) {
  *spec = ModelSpec();
  *report = ConversionReport();
  JsonFile cfg, gen, tok;
  MTLITE_RETURN_IF_ERROR(JsonFile::Load(dir, "config.json", true, &cfg));
  MTLITE_RETURN_IF_ERROR(JsonFile::Load(dir, "generation_config.json", false, &gen));
  MTLITE_RETURN_IF_ERROR(JsonFile::Load(dir, "tokenizer_config.json", false, &tok));
  MTLITE_RETURN_IF_ERROR(ReadConfig(cfg, gen, &spec->config, &report->warnings));
  MTLITE_RETURN_IF_ERROR(ConvertTokenizer(dir, tok, spec, report));

  const std::string st_path = Join(dir, "model.safetensors");
  if (!FileExists(st_path)) {
    return Reject("model.safetensors: missing from " + dir +
                  (FileExists(Join(dir, "pytorch_model.bin")) ? " (convert pytorch_model.bin with converter/pt_to_safetensors.py)" : ""));
  }
  Safetensors st;
  MTLITE_RETURN_IF_ERROR(Safetensors::Open(st_path, &st));
  report->safetensors_bytes = st.bytes().size();
  if (hook) MTLITE_RETURN_IF_ERROR(hook(&spec->config, &st));
  MTLITE_RETURN_IF_ERROR(ConvertTensors(st, q, spec, report));

  char hash[64];
  std::snprintf(hash, sizeof hash, "crc32c:%08x size:%llx", unsigned(Crc32c(st.bytes().data(), st.bytes().size())),
                static_cast<unsigned long long>(st.bytes().size()));
  spec->source_hash = hash;
  spec->quantization = QuantizationName(q);
  spec->converter_version = std::string("mtlite convert ") + MTLITE_VERSION_STRING;
  spec->extra.push_back({"hf_model_type", "marian"});
  std::string transformers;
  if (cfg.StringOr("transformers_version", "", &transformers).ok() && !transformers.empty()) {
    spec->extra.push_back({"hf_transformers_version", transformers});
  }
  return Status::Ok();
}

Status ReadHfDecodingDefaults(const std::string& dir, DecodingDefaultsSpec* out) {
  JsonFile gen;
  MTLITE_RETURN_IF_ERROR(JsonFile::Load(dir, "generation_config.json", false, &gen));
  return ReadGenerationDefaults(gen, out);
}

Status ConvertToBytes(const std::string& hf_dir, Quantization q, AlignedBytes* out, ConversionReport* report) {
  ModelSpec spec;
  MTLITE_RETURN_IF_ERROR(ConvertHfDir(hf_dir, q, &spec, report));
  return SpecToBytes(spec, out, report);
}

Status SpecToBytes(const ModelSpec& spec, AlignedBytes* out, ConversionReport* report) {
  *out = SerializeModel(spec);
  auto loaded = Model::FromBuffer(out->data(), out->size(), LoadOptions{/*verify_checksums=*/true});
  if (!loaded.ok()) return Status(loaded.status().code(), "converted model rejected by the runtime: " + loaded.status().message());
  report->file_bytes = out->size();
  report->size_profile = loaded.value()->SizeProfile();
  return Status::Ok();
}

}  // namespace converter
}  // namespace mtlite

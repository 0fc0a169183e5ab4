#include "marian_convert.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <unordered_map>
#include <utility>

#include <nlohmann/json.hpp>

#include "crc32c.h"
#include "io.h"
#include "kernels.h"
#include "marian_layout.h"
#include "safetensors.h"
#include "shortlist_builder.h"
#include "spm_proto.h"
#include "status_macros.h"
#include "translator_bounds.h"

#ifndef MTLITE_VERSION_STRING
#define MTLITE_VERSION_STRING "0.0.0"
#endif

namespace mtlite {
namespace converter {
namespace {

constexpr int kMaxPositions = 512;  // the position tables' rows (the transformers port's max_position_embeddings)

Status Bad(const std::string& message) { return Status(StatusCode::kInvalidModel, message); }
Status BadArg(const std::string& message) { return Status(StatusCode::kInvalidArgument, message); }

std::string FormatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// One side's vocabulary: the .spm (tokenizer) and the ids (the .spm's or a YAML's).
struct Side {
  std::string spm_file, yml_file;
  std::string spm_bytes;
  SpmProto proto;
  std::vector<std::string> pieces;  // id -> piece, without the appended <pad>
  std::vector<int32_t> to_vocab;    // spm piece -> id
  int unk = -1;
};

// A --vocab file: kind by content (an .spm parses as a SentencePiece model; a YAML vocabulary is
// `piece: id` text).
Status ReadVocabFile(const std::string& path, bool* is_spm, std::string* bytes, SpmProto* proto,
                     std::vector<std::string>* yml_pieces) {
  MTLITE_RETURN_IF_ERROR(ReadFile(path, bytes));
  const Status spm = ParseSpmProto(*bytes, proto);
  if (spm.ok()) {
    *is_spm = true;
    MTLITE_RETURN_IF_ERROR(ValidateSpmProto(*proto, path));
    return Status::Ok();
  }
  *is_spm = false;
  const Status yml = ParseMarianYamlVocab(*bytes, path, yml_pieces);
  if (yml.ok()) return Status::Ok();
  return Bad(path + ": neither a SentencePiece model (" + spm.message() + ") nor a Marian YAML vocabulary (" +
             yml.message() + ")");
}

// --vocab files -> source and target sides (see marian_convert.h for the rules).
Status ReadVocabularies(const std::vector<std::string>& files, Side* src, Side* tgt) {
  std::vector<Side> spms, ymls;
  for (const std::string& f : files) {
    Side s;
    bool is_spm = false;
    std::vector<std::string> yml;
    MTLITE_RETURN_IF_ERROR(ReadVocabFile(f, &is_spm, &s.spm_bytes, &s.proto, &yml));
    if (is_spm) {
      s.spm_file = f;
      spms.push_back(std::move(s));
    } else {
      s.yml_file = f;
      s.pieces = std::move(yml);
      ymls.push_back(std::move(s));
    }
  }
  if (spms.empty()) {
    return BadArg("--vocab: no SentencePiece model (.spm) given; mtlite tokenizes with it (a Marian .yml vocabulary "
                  "only gives the ids)");
  }
  if (spms.size() > 2 || ymls.size() > 2) {
    return BadArg("--vocab: at most two .spm and two .yml vocabularies (source, target); got " + std::to_string(spms.size()) +
                  " and " + std::to_string(ymls.size()));
  }
  *src = spms[0];
  *tgt = spms.size() > 1 ? spms[1] : spms[0];
  if (!ymls.empty()) {
    src->yml_file = ymls[0].yml_file;
    src->pieces = ymls[0].pieces;
    tgt->yml_file = ymls.back().yml_file;
    tgt->pieces = ymls.back().pieces;
  }
  for (Side* s : {src, tgt}) {
    if (s->yml_file.empty()) {
      for (const SpmPiece& p : s->proto.pieces) s->pieces.push_back(p.piece);
      s->to_vocab.resize(s->pieces.size());
      for (size_t i = 0; i < s->pieces.size(); ++i) s->to_vocab[i] = int32_t(i);
      s->unk = s->proto.unk_id;
      continue;
    }
    std::unordered_map<std::string, int32_t> index;
    for (size_t i = 0; i < s->pieces.size(); ++i) index.emplace(s->pieces[i], int32_t(i));
    auto unk = index.find("<unk>");
    if (unk == index.end()) unk = index.find(s->proto.pieces[size_t(s->proto.unk_id)].piece);
    if (unk == index.end()) return Bad(s->yml_file + ": no <unk> entry");
    s->unk = unk->second;
    for (const SpmPiece& p : s->proto.pieces) {
      auto it = index.find(p.piece);
      s->to_vocab.push_back(it == index.end() ? s->unk : it->second);
    }
  }
  return Status::Ok();
}

int PieceId(const std::vector<std::string>& pieces, const char* piece) {
  auto it = std::find(pieces.begin(), pieces.end(), piece);
  return it == pieces.end() ? -1 : int(it - pieces.begin());
}

std::string PadPiece(const std::vector<std::string>& pieces) {
  std::string pad = "<pad>";
  while (PieceId(pieces, pad.c_str()) >= 0) pad = "<" + pad + ">";
  return pad;
}

// {name: tensor} -> safetensors bytes (F32), so the HF tensor path converts them.
Status ToSafetensors(const std::map<std::string, HfTensor>& tensors, const std::string& name, Safetensors* out) {
  nlohmann::json header = nlohmann::json::object();
  uint64_t at = 0;
  for (const auto& [n, t] : tensors) {
    const uint64_t bytes = uint64_t(t.values.size()) * 4;
    header[n] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {at, at + bytes}}};
    at += bytes;
  }
  const std::string h = header.dump();
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[size_t(i)] = char((uint64_t(h.size()) >> (8 * i)) & 0xFF);
  bytes += h;
  bytes.reserve(bytes.size() + size_t(at));
  for (const auto& kv : tensors) {
    bytes.append(reinterpret_cast<const char*>(kv.second.values.data()), kv.second.values.size() * 4);
  }
  return Safetensors::Parse(std::move(bytes), name, out);
}

Status FromSafetensors(const Safetensors& st, std::map<std::string, HfTensor>* out) {
  for (const auto& [n, e] : st.entries()) {
    HfTensor& t = (*out)[n];
    t.shape = e.shape;
    MTLITE_RETURN_IF_ERROR(st.ReadF32(n, &t.values));
  }
  return Status::Ok();
}

// Appends one zero row (the <pad> / decoder-start row) to a [V, d] table, or a 0 to a [1, V] bias.
void AppendZeroRow(HfTensor* t) {
  if (t->shape.size() == 2 && t->shape[0] == 1) {
    t->shape[1] += 1;
    t->values.push_back(0.0f);
  } else {
    t->shape[0] += 1;
    t->values.resize(t->values.size() + size_t(t->shape.back()), 0.0f);
  }
}

void SetMarianPositions(int positions, int d, std::map<std::string, HfTensor>* t) {
  const std::vector<float> table = MarianNativeSinusoid(positions, d);
  for (const char* n : {layout::kEncoderPositions, layout::kDecoderPositions}) (*t)[n] = {{positions, d}, table, 0};
}

// int8 weights that were intgemm8 items: their own int8 values and one scale, 1/multiplier.
Status KeepIntgemm8(const std::map<std::string, HfTensor>& hf, ModelSpec* spec, ConversionReport* report, bool* any) {
  for (TensorSpec& t : spec->tensors) {
    auto it = hf.find(t.name);
    if (it == hf.end() || it->second.quant_mult <= 0 || t.dtype != WeightType::kInt8) continue;
    const HfTensor& h = it->second;
    const int rows = int(t.shape[0]), cols = int(t.shape[1]);
    std::vector<int8_t> q(h.values.size());
    for (size_t i = 0; i < q.size(); ++i) {
      const float r = std::nearbyint(h.values[i] * h.quant_mult);
      if (!(r >= -127.0f && r <= 127.0f)) return Bad(t.name + ": intgemm8 value " + std::to_string(r) + " outside [-127, 127]");
      q[i] = int8_t(r);
    }
    t.data.assign(kernels::BlockedN8K4Bytes(rows, cols), 0);
    kernels::PackBlockedN8K4(q.data(), rows, cols, reinterpret_cast<int8_t*>(t.data.data()));
    t.scales.assign(size_t(rows), 1.0f / h.quant_mult);
    for (TensorReport& r : report->tensors) {
      if (r.name == t.name) r.max_abs_error = r.rel_rms_error = 0;  // the file's own int8 values
    }
    *any = true;
  }
  return Status::Ok();
}

Status FillConfig(const MarianOptions& o, const Side& src, const Side& tgt, bool marian, ModelConfig* c) {
  c->d_model = o.dim_emb;
  c->encoder_layers = o.enc_depth;
  c->decoder_layers = o.dec_depth;
  c->encoder_heads = c->decoder_heads = o.heads;
  c->encoder_ffn_dim = o.dim_ffn;
  c->decoder_ffn_dim = o.dec_dim_ffn ? o.dec_dim_ffn : o.dim_ffn;
  if (!layout::ActivationFromHfName(o.activation, &c->activation)) {
    return Bad("special:model.yml: transformer-ffn-activation '" + o.activation + "' is not supported");
  }
  c->embed_scale = std::sqrt(float(o.dim_emb));
  c->max_positions = kMaxPositions;
  c->positions = marian ? PositionKind::kTable : PositionKind::kSinusoidMarian;
  c->layer_norm_eps = marian ? 1e-6f : 1e-5f;
  c->search = marian ? SearchKind::kMarian : SearchKind::kHF;
  c->shared_embeddings = o.tying == MarianTying::kAll || o.tying == MarianTying::kSrc;
  c->tied_output = o.tying == MarianTying::kAll || o.tying == MarianTying::kTied;
  c->has_final_logits_bias = true;
  c->decoder_layer = o.decoder_ssru ? DecoderLayerKind::kSsru : DecoderLayerKind::kSelfAttention;
  const int vs = int(src.pieces.size()), vt = int(tgt.pieces.size());
  if (vs != o.src_vocab || vt != o.tgt_vocab) {
    return Bad("vocabulary sizes " + std::to_string(vs) + " (" + BaseName(src.yml_file.empty() ? src.spm_file : src.yml_file) +
               ") and " + std::to_string(vt) + " (" + BaseName(tgt.yml_file.empty() ? tgt.spm_file : tgt.yml_file) +
               ") differ from the model's dim-vocabs [" + std::to_string(o.src_vocab) + ", " + std::to_string(o.tgt_vocab) + "]");
  }
  c->source_vocab_size = vs + 1;
  c->target_vocab_size = vt + 1;
  c->pad_id = c->decoder_start_id = vt;
  c->bad_word_ids = {vt};
  c->eos_id = PieceId(tgt.pieces, "</s>");
  if (c->eos_id < 0 || PieceId(src.pieces, "</s>") != c->eos_id) {
    return Bad("vocabularies: </s> must be in both with the same id (source " + std::to_string(PieceId(src.pieces, "</s>")) +
               ", target " + std::to_string(c->eos_id) + ")");
  }
  c->unk_id = src.unk;
  return Status::Ok();
}

// --semantics marian on an HF directory: Marian's eps, sinusoid and zero start vector.
Status HfToMarianSemantics(ModelConfig* c, Safetensors* st) {
  std::map<std::string, HfTensor> t;
  MTLITE_RETURN_IF_ERROR(FromSafetensors(*st, &t));
  // The two sinusoid tables come from config.json alone: bounded by the checkpoint's size (and
  // 16 MiB), so that a crafted config cannot make a GB table (a real one is 512 x d floats).
  const uint64_t table_bytes = uint64_t(c->max_positions) * uint64_t(c->d_model) * 4;
  if (table_bytes > std::max<uint64_t>(st->bytes().size(), uint64_t(16) << 20)) {
    return Bad("config.json: max_position_embeddings " + std::to_string(c->max_positions) + " x d_model " +
               std::to_string(c->d_model) + " makes position tables of " + std::to_string(table_bytes) +
               " bytes, more than model.safetensors (" + std::to_string(st->bytes().size()) + " bytes) holds");
  }
  c->layer_norm_eps = 1e-6f;
  c->positions = PositionKind::kTable;
  c->search = SearchKind::kMarian;
  SetMarianPositions(c->max_positions, c->d_model, &t);
  const int start = c->decoder_start_id;
  const bool banned = std::find(c->bad_word_ids.begin(), c->bad_word_ids.end(), start) != c->bad_word_ids.end();
  const char* table = t.count(layout::kSharedEmbedding) ? layout::kSharedEmbedding : layout::kDecoderEmbedding;
  if (!t.count(table)) return Bad(std::string("model.safetensors: missing tensor '") + table + "'");
  if (c->tied_output && !banned) {
    return Bad("--semantics marian: decoder_start_token_id " + std::to_string(start) +
               " can be generated, so its tied output row cannot become the zero start vector");
  }
  HfTensor& e = t[table];
  if (e.shape.size() != 2 || start >= e.shape[0]) return Bad(std::string("model.safetensors: ") + table + " has no row " + std::to_string(start));
  std::fill(e.values.begin() + std::ptrdiff_t(start * e.shape[1]), e.values.begin() + std::ptrdiff_t((start + 1) * e.shape[1]), 0.0f);
  return ToSafetensors(t, "model.safetensors", st);
}

// ---- folders --------------------------------------------------------------------------------

bool EndsWith(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}
bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

std::string List(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// The files of a Marian release folder: model, vocabularies (unless given), lexical shortlist.
Status FindFolderFiles(const std::string& dir, const ConvertOptions& options, std::string* model,
                       std::vector<std::string>* vocabs, std::string* lex, std::string* decoder) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec)) names.push_back(e.path().filename().string());
  }
  if (ec) return Status(StatusCode::kIoError, "cannot list " + dir + ": " + ec.message());
  std::vector<std::string> models, lexes, spm_src, spm_trg, spm_shared, ymls, decoders;
  // A gzipped file (Firefox Translations' releases: model.*.bin.gz, vocab.*.spm.gz,
  // lex.*.s2t.bin.gz) counts as the file it holds: ReadFile inflates it.
  std::map<std::string, std::string> file_of;  // name without .gz -> name in the folder
  for (std::string& n : names) {
    const std::string content = ContentName(n);
    if (content == n) continue;
    if (std::count(names.begin(), names.end(), content)) {
      return BadArg(dir + ": both " + content + " and " + n + " (remove one)");
    }
    file_of[content] = n;
    n = content;
  }
  std::sort(names.begin(), names.end());
  auto path = [&](const std::string& n) {
    auto gz = file_of.find(n);
    return (dir.back() == '/' ? dir : dir + "/") + (gz == file_of.end() ? n : gz->second);
  };
  for (const std::string& n : names) {
    if (StartsWith(n, "lex.")) {
      lexes.push_back(n);
    } else if (EndsWith(n, ".npz") || (EndsWith(n, ".bin") && (StartsWith(n, "model") || n.find(".intgemm") != std::string::npos))) {
      models.push_back(n);
    } else if (EndsWith(n, ".spm")) {
      (StartsWith(n, "srcvocab") || n == "source.spm" ? spm_src : StartsWith(n, "trgvocab") || n == "target.spm" ? spm_trg : spm_shared).push_back(n);
    } else if (EndsWith(n, ".yml") && n.find("vocab") != std::string::npos) {
      ymls.push_back(n);
    } else if (n == "decoder.yml" || (StartsWith(n, "config") && (EndsWith(n, ".yml") || EndsWith(n, ".yaml")))) {
      decoders.push_back(n);
    }
  }
  if (models.size() != 1) {
    return BadArg(dir + ": " + (models.empty() ? std::string("neither an HF directory (no config.json) nor a Marian model folder "
                                                             "(no model file: *.npz, model*.bin, *.intgemm*.bin)")
                                               : "more than one model file (" + List(models) + "): convert one of them with --vocab"));
  }
  *model = path(models[0]);
  if (std::count(decoders.begin(), decoders.end(), "decoder.yml")) decoders = {"decoder.yml"};
  if (decoders.size() > 1) return BadArg(dir + ": more than one decoder config (" + List(decoders) + ")");
  if (!decoders.empty()) *decoder = path(decoders[0]);
  if (lexes.size() > 1) return BadArg(dir + ": more than one lexical shortlist (" + List(lexes) + ")");
  if (!lexes.empty()) {
    if (!EndsWith(lexes[0], ".s2t") && !EndsWith(lexes[0], ".s2t.bin")) {
      return BadArg(path(lexes[0]) + ": not a lexical shortlist mtlite reads (lex*.s2t text or lex*.s2t.bin binary, "
                    "either gzipped or not)");
    }
    *lex = path(lexes[0]);
  }
  if (!options.vocabs.empty()) {
    *vocabs = options.vocabs;
    return Status::Ok();
  }
  if (spm_src.size() == 1 && spm_trg.size() == 1) {
    vocabs->push_back(path(spm_src[0]));
    vocabs->push_back(path(spm_trg[0]));
  } else if (spm_src.empty() && spm_trg.empty() && spm_shared.size() == 1) {
    vocabs->push_back(path(spm_shared[0]));
  } else {
    return BadArg(dir + ": cannot tell the vocabularies apart (.spm files: " +
                  List(spm_src.empty() && spm_trg.empty() && spm_shared.empty() ? std::vector<std::string>{"none"} : names) +
                  "); give them with --vocab SRC.spm [--vocab TRG.spm]");
  }
  if (ymls.size() > 1) return BadArg(dir + ": more than one YAML vocabulary (" + List(ymls) + "); give them with --vocab");
  if (!ymls.empty()) vocabs->push_back(path(ymls[0]));
  return Status::Ok();
}

// A number of a decoder config, checked: finite, within [lo, hi].
Status DecoderNumber(const MarianYaml& yaml, const char* key, const std::string& file, double lo, double hi, float* out) {
  auto it = yaml.find(key);
  if (it == yaml.end()) return Status::Ok();
  const std::string& text = it->second.scalar;
  char* end = nullptr;
  const double v = it->second.is_list || text.empty() ? NAN : std::strtod(text.c_str(), &end);
  if (!std::isfinite(v) || (end && *end) || v < lo || v > hi) {
    return Bad(file + ": " + key + " '" + (it->second.is_list ? "[...]" : text) + "' is not a number in [" +
               FormatNumber(lo) + ", " + FormatNumber(hi) + "]");
  }
  *out = float(v);
  return Status::Ok();
}


Status BuildInLex(const std::string& lex, AlignedBytes* bytes) {
  auto loaded = Model::FromBuffer(bytes->data(), bytes->size(), LoadOptions{true});
  if (!loaded.ok()) return loaded.status();
  ShortlistSpec sl;
  ShortlistReport r;
  MTLITE_RETURN_IF_ERROR(ImportLexShortlist(**loaded, lex, {}, ShortlistOptions(), &sl, &r));
  AlignedBytes with;
  MTLITE_RETURN_IF_ERROR(AddShortlist(**loaded, std::move(sl), &with));
  loaded.value().reset();
  *bytes = std::move(with);
  return Status::Ok();
}

}  // namespace

Status ReadDecoderOptions(const std::string& path, DecoderOptions* out) {
  *out = DecoderOptions();
  std::string text;
  MTLITE_RETURN_IF_ERROR(ReadFile(path, &text));
  MarianYaml yaml;
  const std::string name = ContentName(path);
  MTLITE_RETURN_IF_ERROR(ParseMarianYaml(text, name, &yaml));
  out->file = name;
  float beam = float(out->beam_size);
  MTLITE_RETURN_IF_ERROR(DecoderNumber(yaml, "beam-size", name, 1, detail::kMaxBeam, &beam));
  if (beam != std::floor(beam)) return Bad(name + ": beam-size must be a whole number");
  out->beam_size = int(beam);
  MTLITE_RETURN_IF_ERROR(DecoderNumber(yaml, "normalize", name, -99, 99, &out->normalize));
  MTLITE_RETURN_IF_ERROR(DecoderNumber(yaml, "word-penalty", name, -1e6, 1e6, &out->word_penalty));
  MTLITE_RETURN_IF_ERROR(DecoderNumber(yaml, "max-length-factor", name, 0, 1e6, &out->max_length_factor));
  if (out->word_penalty != 0) {
    out->ignored.push_back("word-penalty " + FormatNumber(out->word_penalty) + ": not applied by mtlite");
  }
  // marian-decoder's max-length limits the source (longer sentences are cropped or skipped); the
  // output is capped by max-length-factor alone
  if (auto it = yaml.find("max-length"); it != yaml.end()) {
    out->ignored.push_back("max-length " + it->second.scalar + ": a source-length limit of marian-decoder, not recorded");
  }
  if (auto it = yaml.find("n-best"); it != yaml.end() && it->second.scalar != "false") {
    out->ignored.push_back("n-best " + it->second.scalar + ": n-best lists are asked for per call (--n-best)");
  }
  return Status::Ok();
}

bool ParseDecodingDefaultsMode(const std::string& s, DecodingDefaultsMode* out) {
  if (s == "auto") *out = DecodingDefaultsMode::kAuto;
  else if (s == "record") *out = DecodingDefaultsMode::kRecord;
  else if (s == "none") *out = DecodingDefaultsMode::kNone;
  else return false;
  return true;
}

void ApplyDecodingDefaultsMode(DecodingDefaultsMode mode, bool hf, ModelSpec* spec, ConversionReport* report,
                               ConvertInputs* inputs) {
  DecodingDefaultsSpec& d = spec->decoding_defaults;
  for (const std::string& why : d.ignored) {
    report->warnings.push_back((d.source.empty() ? "" : d.source + ": ") + why);
  }
  d.ignored.clear();
  inputs->decoding = d;
  inputs->decoding_recorded =
      !d.empty() && (mode == DecodingDefaultsMode::kRecord || (mode == DecodingDefaultsMode::kAuto && !hf));
  if (!inputs->decoding_recorded) d = DecodingDefaultsSpec();
}

bool ParseSemantics(const std::string& s, Semantics* out) {
  if (s == "marian") *out = Semantics::kMarian;
  else if (s == "hf") *out = Semantics::kHf;
  else return false;
  return true;
}

const char* SemanticsName(Semantics s) {
  return s == Semantics::kMarian ? "marian" : s == Semantics::kHf ? "hf" : "default";
}

std::vector<float> MarianNativeSinusoid(int positions, int d) {
  const int half = d / 2;
  const float inc = float(std::log(10000.0) / double(float(d) / 2.0f - 1.0f));
  std::vector<float> out(size_t(positions) * size_t(d), 0.0f);
  for (int p = 0; p < positions; ++p) {
    for (int i = 0; i < half; ++i) {
      const float v = float(p) * std::exp(float(i) * -inc);
      out[size_t(p) * size_t(d) + size_t(i)] = float(std::sin(double(v)));
      out[size_t(p) * size_t(d) + size_t(half + i)] = float(std::cos(double(v)));
    }
  }
  return out;
}

Status ConvertMarianModel(const std::string& model_path, const ConvertOptions& options, ModelSpec* spec,
                          ConversionReport* report, ConvertInputs* inputs) {
  *spec = ModelSpec();
  *report = ConversionReport();
  if (options.vocabs.empty()) return BadArg(model_path + ": a Marian model needs its vocabularies: --vocab V.spm [--vocab TRG.spm]");
  const bool marian = options.semantics != Semantics::kHf;
  inputs->kind = "marian";
  inputs->model = model_path;
  inputs->vocabs = options.vocabs;
  inputs->semantics = marian ? Semantics::kMarian : Semantics::kHf;

  std::string bytes;
  MTLITE_RETURN_IF_ERROR(ReadFile(model_path, &bytes));
  MarianCheckpoint ckpt;
  MTLITE_RETURN_IF_ERROR(ParseMarianCheckpoint(bytes, model_path, &ckpt));
  Side src, tgt;
  MTLITE_RETURN_IF_ERROR(ReadVocabularies(options.vocabs, &src, &tgt));
  ModelConfig& c = spec->config;
  MTLITE_RETURN_IF_ERROR(FillConfig(ckpt.options, src, tgt, marian, &c));

  std::map<std::string, HfTensor> hf;
  MTLITE_RETURN_IF_ERROR(MarianToHfTensors(ckpt, &hf));
  ckpt.tensors.clear();
  for (const char* n : {layout::kSharedEmbedding, layout::kEncoderEmbedding, layout::kDecoderEmbedding,
                        layout::kOutputProjection, layout::kFinalLogitsBias}) {
    if (hf.count(n)) AppendZeroRow(&hf[n]);
  }
  if (marian) SetMarianPositions(c.max_positions, c.d_model, &hf);
  Safetensors st;
  MTLITE_RETURN_IF_ERROR(ToSafetensors(hf, ContentName(model_path), &st));
  for (auto& kv : hf) {
    if (kv.second.quant_mult <= 0) kv.second.values = {};  // only the intgemm8 ones are needed again
  }
  MTLITE_RETURN_IF_ERROR(ConvertHfTensors(st, options.quantize, spec, report));
  if (options.quantize == Quantization::kInt8) MTLITE_RETURN_IF_ERROR(KeepIntgemm8(hf, spec, report, &inputs->intgemm8_as_is));

  const std::string pad = PadPiece(src.pieces);
  spec->source_vocab = src.pieces;
  spec->source_vocab.push_back(pad);
  spec->source_spm = {src.proto, src.to_vocab};
  if (tgt.pieces != src.pieces) {
    spec->target_vocab = tgt.pieces;
    spec->target_vocab->push_back(PadPiece(tgt.pieces));
  }
  if (tgt.spm_bytes != src.spm_bytes || spec->target_vocab) spec->target_spm = SpmSpec{tgt.proto, tgt.to_vocab};

  char hash[64];
  std::snprintf(hash, sizeof hash, "crc32c:%08x size:%llx", unsigned(Crc32c(bytes.data(), bytes.size())),
                static_cast<unsigned long long>(bytes.size()));
  spec->source_hash = hash;
  spec->quantization = QuantizationName(options.quantize);
  spec->converter_version = std::string("mtlite convert ") + MTLITE_VERSION_STRING;
  spec->extra.push_back({"semantics", SemanticsName(inputs->semantics)});
  spec->extra.push_back({"marian_model", ContentName(model_path)});
  spec->extra.push_back({"marian_tying", MarianTyingName(ckpt.options.tying)});
  if (inputs->intgemm8_as_is) spec->extra.push_back({"marian_intgemm8", "int8 weights stored as in the file"});
  report->safetensors_bytes = bytes.size();
  report->source_file = ContentName(model_path);
  return Status::Ok();
}

namespace {

// s is lo to hi lowercase ASCII letters.
bool IsLowerCode(const std::string& s, size_t lo, size_t hi) {
  if (s.size() < lo || s.size() > hi) return false;
  for (char c : s)
    if (c < 'a' || c > 'z') return false;
  return true;
}

// The parts of s between the separators in seps.
std::vector<std::string> SplitName(const std::string& s, const char* seps) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (std::strchr(seps, c)) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

// The languages of the file (explicit options first, then the input's own, then its names).
void ApplyLanguages(const std::string& input, const std::string& model_file, const ConvertOptions& o,
                    ModelConfig* c) {
  std::string src, tgt;
  if ((c->source_lang.empty() || c->target_lang.empty()) &&
      (LanguagesFromName(model_file, &src, &tgt) || LanguagesFromName(input, &src, &tgt))) {
    if (c->source_lang.empty()) c->source_lang = src;
    if (c->target_lang.empty()) c->target_lang = tgt;
  }
  if (!o.source_lang.empty()) c->source_lang = o.source_lang;
  if (!o.target_lang.empty()) c->target_lang = o.target_lang;
}

}  // namespace

bool LanguagesFromName(const std::string& path, std::string* source, std::string* target) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t slash = p.find_last_of('/');
  const std::string base = slash == std::string::npos ? p : p.substr(slash + 1);
  // opus-mt-xx-yy: the last two parts of a name that starts with opus-mt
  if (base.compare(0, 7, "opus-mt") == 0) {
    const std::vector<std::string> parts = SplitName(base, "-_");
    if (parts.size() >= 4 && IsLowerCode(parts[parts.size() - 2], 2, 3) && IsLowerCode(parts.back(), 2, 3)) {
      *source = parts[parts.size() - 2];
      *target = parts.back();
      return true;
    }
    return false;
  }
  // Firefox Translations: a folder "enit", or a dotted part of four letters in a release file name
  const std::vector<std::string> dotted = SplitName(base, ".");
  const bool release_file = dotted.size() >= 3 && (dotted[0] == "model" || dotted[0] == "vocab" || dotted[0] == "lex" ||
                                                   dotted[0] == "srcvocab" || dotted[0] == "trgvocab");
  for (const std::string& d : release_file ? dotted : std::vector<std::string>{base}) {
    if (d.size() == 4 && IsLowerCode(d, 4, 4)) {
      *source = d.substr(0, 2);
      *target = d.substr(2);
      return true;
    }
  }
  return false;
}

Status ConvertInput(const std::string& input, const ConvertOptions& options, AlignedBytes* out,
                    ConversionReport* report, ConvertInputs* inputs) {
  *inputs = ConvertInputs();
  std::error_code ec;
  const bool dir = std::filesystem::is_directory(input, ec);
  ModelSpec spec;
  if (dir && FileExists((input.back() == '/' ? input : input + "/") + "config.json")) {
    if (!options.vocabs.empty()) return BadArg("--vocab is not used with an HF directory (" + input + " has config.json)");
    inputs->kind = "hf";
    inputs->model = input;
    inputs->semantics = options.semantics == Semantics::kMarian ? Semantics::kMarian : Semantics::kHf;
    HfTensorHook hook;
    if (inputs->semantics == Semantics::kMarian) hook = HfToMarianSemantics;
    MTLITE_RETURN_IF_ERROR(ConvertHfDir(input, options.quantize, &spec, report, hook));
    MTLITE_RETURN_IF_ERROR(ReadHfDecodingDefaults(input, &spec.decoding_defaults));
    ApplyDecodingDefaultsMode(options.decoding_defaults, true, &spec, report, inputs);
    spec.extra.push_back({"semantics", SemanticsName(inputs->semantics)});
    ApplyLanguages(input, input, options, &spec.config);
    return SpecToBytes(spec, out, report);
  }
  if (!dir && !FileExists(input)) return Status(StatusCode::kIoError, input + ": no such file or directory");
  ConvertOptions o = options;
  std::string model = input, lex, decoder;
  if (dir) MTLITE_RETURN_IF_ERROR(FindFolderFiles(input, options, &model, &o.vocabs, &lex, &decoder));
  DecoderOptions dec;
  if (!decoder.empty()) MTLITE_RETURN_IF_ERROR(ReadDecoderOptions(decoder, &dec));
  MTLITE_RETURN_IF_ERROR(ConvertMarianModel(model, o, &spec, report, inputs));
  ApplyLanguages(input, model, options, &spec.config);
  if (!dec.file.empty()) {  // the release's decoding settings: default_beam, metadata, the defaults
    inputs->decoder = dec;
    DecodingDefaultsSpec& dd = spec.decoding_defaults;
    dd.source = dec.file;
    dd.beam_size = dec.beam_size;
    dd.length_penalty = dec.normalize;
    dd.max_length_ratio = dec.max_length_factor;  // Marian's cap: factor x source tokens words, + the </s>
    dd.max_length_offset = 1;
    dd.ignored = dec.ignored;
    spec.config.default_beam = dec.beam_size;
    spec.extra.push_back({"marian_decoder", dec.file + ": beam-size " + std::to_string(spec.config.default_beam) +
                                                ", normalize " + FormatNumber(dec.normalize) + ", word-penalty " +
                                                FormatNumber(dec.word_penalty) + ", max-length-factor " +
                                                FormatNumber(dec.max_length_factor)});
  }
  ApplyDecodingDefaultsMode(options.decoding_defaults, false, &spec, report, inputs);
  MTLITE_RETURN_IF_ERROR(SpecToBytes(spec, out, report));
  if (!lex.empty()) {
    inputs->lex = lex;
    MTLITE_RETURN_IF_ERROR(BuildInLex(lex, out));
    report->file_bytes = out->size();
    auto loaded = Model::FromBuffer(out->data(), out->size(), LoadOptions{false});
    if (loaded.ok()) report->size_profile = loaded.value()->SizeProfile();
  }
  return Status::Ok();
}

}  // namespace converter
}  // namespace mtlite

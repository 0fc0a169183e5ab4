#include "model_reader.h"

#include <cstring>
#include <string>

#include "marian_layout.h"
#include "model_data.h"
#include "mtlite_generated.h"
#include "status_macros.h"

namespace mtlite {
namespace converter {
namespace {

Status Unsupported(const std::string& what) {
  return Status(StatusCode::kUnsupported, "cannot re-emit this model: " + what);
}

std::string Str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

// Bytes of a data buffer the loader validated (inside the file).
const uint8_t* At(const Model& model, const fb::BufferRef* ref) { return model.data().base + ref->offset(); }

Status ReadTensor(const Model& model, const fb::Tensor* t, TensorSpec* out) {
  out->name = t->name()->str();
  if (!layout::WeightTypeFromCode(int(t->dtype()), &out->dtype)) return Unsupported("tensor '" + out->name + "' has an unknown dtype");
  const bool int8 = out->dtype == WeightType::kInt8;
  if (t->layout() != (int8 ? fb::WeightLayout::BlockedN8K4 : fb::WeightLayout::RowMajor) ||
      t->quant() != (int8 ? fb::QuantScheme::SymmetricPerChannel : fb::QuantScheme::None) ||
      (t->scales() != nullptr) != int8) {
    return Unsupported("tensor '" + out->name + "' has a layout or quantization scheme this writer does not produce");
  }
  out->shape.clear();
  if (const auto* shape = t->shape()) {
    for (size_t i = 0; i < shape->size(); ++i) {
      int64_t v;  // int64 vectors are only 4-byte aligned: read bytewise (as the loader does)
      std::memcpy(&v, shape->Data() + i * sizeof v, sizeof v);
      out->shape.push_back(flatbuffers::EndianScalar(v));
    }
  }
  const uint8_t* data = At(model, t->data());
  out->data.assign(data, data + t->data()->size());
  out->scales.clear();
  if (int8) {
    if (t->scales()->size() % sizeof(float) != 0) return Unsupported("tensor '" + out->name + "' scales are not f32");
    out->scales.resize(size_t(t->scales()->size() / sizeof(float)));
    std::memcpy(out->scales.data(), At(model, t->scales()), size_t(t->scales()->size()));
  }
  return Status::Ok();
}

// The SentencePiece model as stored (scores and types from the validated views).
SpmSpec ReadSpm(const fb::SentencePieceModel* m, const detail::SpmView& v) {
  SpmSpec out;
  SpmProto& p = out.proto;
  p.pieces.resize(size_t(v.num_pieces));
  for (int i = 0; i < v.num_pieces; ++i) {
    p.pieces[size_t(i)] = {std::string(v.pieces[size_t(i)]), v.scores[i], int(v.types[i])};
  }
  p.unk_id = v.unk_id;
  p.bos_id = v.bos_id;
  p.eos_id = v.eos_id;
  p.pad_id = v.pad_id;
  p.byte_fallback = v.byte_fallback;
  p.model_type = int(v.model_type);
  p.treat_whitespace_as_suffix = v.treat_whitespace_as_suffix;
  p.add_dummy_prefix = v.add_dummy_prefix;
  p.remove_extra_whitespaces = v.remove_extra_whitespaces;
  p.escape_whitespaces = v.escape_whitespaces;
  p.normalizer_name = Str(m->normalizer_name());
  if (v.charsmap) p.precompiled_charsmap.assign(reinterpret_cast<const char*>(v.charsmap), v.charsmap_size);
  out.to_vocab.assign(v.to_vocab, v.to_vocab + v.num_pieces);
  return out;
}

std::vector<std::string> ReadVocab(const detail::VocabView& v) {
  return std::vector<std::string>(v.id_to_piece.begin(), v.id_to_piece.end());
}

}  // namespace

Status ReadModelSpec(const Model& model, ModelSpec* out) {
  const detail::ModelData& md = model.data();
  const fb::Model* root = fb::GetSizePrefixedModel(md.base);
  ModelSpec spec;
  spec.format_version = root->format_version();
  spec.config = md.config;
  for (const fb::Tensor* t : *root->tensors()) {
    spec.tensors.emplace_back();
    MTLITE_RETURN_IF_ERROR(ReadTensor(model, t, &spec.tensors.back()));
  }
  const fb::Tokenizer* tok = root->tokenizer();
  spec.source_spm = ReadSpm(tok->source_spm(), md.source_spm);
  if (tok->target_spm()) spec.target_spm = ReadSpm(tok->target_spm(), md.target_spm);
  spec.source_vocab = ReadVocab(md.source_vocab);
  if (tok->target_vocab()) spec.target_vocab = ReadVocab(md.target_vocab);
  if (const fb::Metadata* m = root->metadata()) {
    spec.converter_version = Str(m->converter_version());
    spec.quantization = Str(m->quantization());
    spec.source_hash = Str(m->source_hash());
    if (m->extra()) {
      for (const fb::KeyValue* kv : *m->extra()) spec.extra.push_back({Str(kv->key()), Str(kv->value())});
    }
  }
  if (md.shortlist.present) {
    const detail::ShortlistView& v = md.shortlist;
    const fb::Shortlist* s = root->shortlist();
    ShortlistSpec sl;
    sl.frequent.assign(v.frequent, v.frequent + v.num_frequent);
    sl.offsets.assign(v.offsets, v.offsets + md.config.source_vocab_size + 1);
    sl.targets.assign(v.targets, v.targets + sl.offsets.back());
    sl.include_source_ids = v.include_source_ids;
    if (v.row_order) sl.row_order.assign(v.row_order, v.row_order + md.config.target_vocab_size);
    sl.top_k = s->top_k();
    sl.method = Str(s->method());
    spec.shortlist = std::move(sl);
  }
  if (const fb::DecodingDefaults* d = root->decoding_defaults()) {  // checked by the loader
    DecodingDefaultsSpec& o = spec.decoding_defaults;
    o.source = Str(d->source());
    if (d->beam_size()) o.beam_size = *d->beam_size();
    if (d->max_length()) o.max_length = *d->max_length();
    if (d->max_length_ratio()) o.max_length_ratio = *d->max_length_ratio();
    if (d->max_length_offset()) o.max_length_offset = *d->max_length_offset();
    if (d->length_penalty()) o.length_penalty = *d->length_penalty();
  }
  *out = std::move(spec);
  return Status::Ok();
}

}  // namespace converter
}  // namespace mtlite

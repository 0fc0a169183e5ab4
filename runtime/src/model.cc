// Model loading: mmap / caller buffer -> FlatBuffers verification -> semantic validation ->
// detail::ModelData (pointers into the model bytes). Nothing in the file is trusted: every
// failure returns a Status naming the offending field or tensor; nothing aborts.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "crc32c.h"
#include "kernels.h"
#include "marian_layout.h"
#include "model_data.h"
#include "mtlite/mtlite.hpp"
#include "mtlite_generated.h"
#include "status_macros.h"

namespace mtlite {
namespace {

using layout::kDataAlignment;
using layout::kFormatVersion;
using layout::Part;

// The layout module's enum codes are the schema's.
static_assert(int(fb::DType::F32) == 0 && int(fb::DType::F16) == 1 && int(fb::DType::I8) == 2 &&
              int(fb::DType::MAX) == 2, "layout::WeightTypeCode must follow schema DType");
static_assert(int(fb::Activation::SiLU) == 0 && int(fb::Activation::ReLU) == 1 && int(fb::Activation::GELU) == 2 &&
              int(fb::Activation::GELUTanh) == 3 && int(fb::Activation::MAX) == 3,
              "layout::ActivationCode must follow schema Activation");

// Sanity limits: far above any real Marian model, low enough that no size computed from
// them can overflow 64 bits (10M x 65536 x 4 bytes < 2^42).
constexpr int kMaxDModel = 16384;
constexpr int kMaxLayers = 256;
constexpr int kMaxVocab = 10000000;
constexpr int kMaxFfn = 65536;
constexpr int kMaxPositions = 1000000;
constexpr int kMaxBeam = 1024;

Status Invalid(std::string message) { return Status(StatusCode::kInvalidModel, std::move(message)); }

std::string Str(const flatbuffers::String* s) { return s ? std::string(s->c_str(), s->size()) : std::string(); }
std::string_view View(const flatbuffers::String* s) { return std::string_view(s->c_str(), s->size()); }

// "f32" / "f16" / "int8", or "?" for a code this runtime does not know.
const char* DTypeName(fb::DType t) {
  WeightType w;
  return layout::WeightTypeFromCode(int(t), &w) ? layout::DTypeName(w) : "?";
}

// Tensor shapes are int64 vectors, which the FlatBuffers verifier only checks for 4-byte
// alignment: read them bytewise.
int64_t ShapeDim(const flatbuffers::Vector<int64_t>* shape, size_t i) {
  int64_t v;
  std::memcpy(&v, shape->Data() + i * sizeof(int64_t), sizeof v);
  return flatbuffers::EndianScalar(v);
}

std::string ShapeString(const flatbuffers::Vector<int64_t>* shape) {
  if (!shape) return "(none)";
  std::string s = "[";
  for (size_t i = 0; i < shape->size(); ++i) s += (i ? ", " : "") + std::to_string(ShapeDim(shape, i));
  return s + "]";
}

// Address of Model.structure_crc32c, or null when absent.
const uint8_t* StructureCrcField(const fb::Model* root) {
  return reinterpret_cast<const flatbuffers::Table*>(root)->GetAddressOf(fb::Model::VT_STRUCTURE_CRC32C);
}

class Loader {
 public:
  Loader(const uint8_t* base, size_t size, detail::ModelData* out) : base_(base), size_(size), md_(out) {}

  Status Run() {
    MTLITE_RETURN_IF_ERROR(CheckEnvelope());
    root_ = fb::GetSizePrefixedModel(base_);
    if (root_->format_version() > kFormatVersion) {
      return Status(StatusCode::kUnsupported, "format version " + std::to_string(root_->format_version()) +
                                                  " is newer than this runtime (" +
                                                  std::to_string(kFormatVersion) + ")");
    }
    if (root_->format_version() == 0) return Invalid("format_version is 0 (missing)");
    if (!StructureCrcField(root_)) return Invalid("structure_crc32c missing");
    MTLITE_RETURN_IF_ERROR(CheckDataSegment());
    MTLITE_RETURN_IF_ERROR(CheckConfig());
    MTLITE_RETURN_IF_ERROR(CheckTensorTable());
    MTLITE_RETURN_IF_ERROR(BindWeights());
    MTLITE_RETURN_IF_ERROR(BindTokenizer());
    MTLITE_RETURN_IF_ERROR(BindShortlist());
    BindMetadata();
    return CheckNoOverlap();
  }

 private:
  // ---- container ---------------------------------------------------------------------------
  Status CheckEnvelope() {
    if (size_ < 16) return Invalid("file too small (" + std::to_string(size_) + " bytes) to be an mtlite model");
    if (!fb::SizePrefixedModelBufferHasIdentifier(base_)) {
      return Invalid("not an mtlite file (file identifier is not \"MTL1\")");
    }
    const uint64_t prefix = flatbuffers::ReadScalar<uint32_t>(base_);
    fb_size_ = prefix + sizeof(uint32_t);
    if (fb_size_ > size_) {
      return Invalid("FlatBuffer size prefix (" + std::to_string(prefix) + ") exceeds the file size (" +
                     std::to_string(size_) + "): truncated file?");
    }
    if (fb_size_ >= FLATBUFFERS_MAX_BUFFER_SIZE) return Invalid("FlatBuffer part is larger than 2 GiB");
    flatbuffers::Verifier::Options opts;
    opts.max_depth = 16;        // Model > Tokenizer > SentencePieceModel > vector > string
    opts.max_tables = 1u << 20;
    opts.check_alignment = true;
    flatbuffers::Verifier verifier(base_, static_cast<size_t>(fb_size_), opts);
    if (!fb::VerifySizePrefixedModelBuffer(verifier)) {
      return Invalid("FlatBuffer verification failed (corrupt or truncated model structure)");
    }
    return Status::Ok();
  }

  Status CheckDataSegment() {
    const uint64_t off = root_->data_offset(), n = root_->data_size();
    if (off % kDataAlignment != 0) return Invalid("data_offset " + std::to_string(off) + " is not a multiple of 64");
    if (off < fb_size_) return Invalid("data_offset " + std::to_string(off) + " lies inside the FlatBuffer");
    if (off > size_ || n != size_ - off) {
      return Invalid("data segment [" + std::to_string(off) + ", +" + std::to_string(n) +
                     ") does not end at the end of the file (" + std::to_string(size_) +
                     " bytes): truncated or padded file");
    }
    return Status::Ok();
  }

  // ---- config ------------------------------------------------------------------------------
  static Status CheckRange(const std::string& field, int64_t v, int64_t lo, int64_t hi) {
    if (v < lo || v > hi) {
      return Invalid(field + " = " + std::to_string(v) + " is outside [" +
                     std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    return Status::Ok();
  }

  Status CheckConfig() {
    const fb::Config* c = root_->config();
    if (!c) return Invalid("config table missing");
    MTLITE_RETURN_IF_ERROR(CheckRange("config.d_model", c->d_model(), 1, kMaxDModel));
    MTLITE_RETURN_IF_ERROR(CheckRange("config.encoder_layers", c->encoder_layers(), 1, kMaxLayers));
    MTLITE_RETURN_IF_ERROR(CheckRange("config.decoder_layers", c->decoder_layers(), 1, kMaxLayers));
    MTLITE_RETURN_IF_ERROR(CheckRange("config.encoder_heads", c->encoder_heads(), 1, c->d_model()));
    MTLITE_RETURN_IF_ERROR(CheckRange("config.decoder_heads", c->decoder_heads(), 1, c->d_model()));
    if (c->d_model() % c->encoder_heads() || c->d_model() % c->decoder_heads()) {
      return Invalid("config.d_model " + std::to_string(c->d_model()) + " is not a multiple of the head count");
    }
    MTLITE_RETURN_IF_ERROR(CheckRange("config.encoder_ffn_dim", c->encoder_ffn_dim(), 1, kMaxFfn));
    MTLITE_RETURN_IF_ERROR(CheckRange("config.decoder_ffn_dim", c->decoder_ffn_dim(), 1, kMaxFfn));
    MTLITE_RETURN_IF_ERROR(CheckRange("config.max_positions", c->max_positions(), 1, kMaxPositions));
    MTLITE_RETURN_IF_ERROR(CheckRange("config.source_vocab_size", c->source_vocab_size(), 1, kMaxVocab));
    MTLITE_RETURN_IF_ERROR(CheckRange("config.target_vocab_size", c->target_vocab_size(), 1, kMaxVocab));
    const int vs = c->source_vocab_size(), vt = c->target_vocab_size();
    if (c->shared_embeddings() && vs != vt) {
      return Invalid("config.shared_embeddings is set but source_vocab_size " + std::to_string(vs) +
                     " != target_vocab_size " + std::to_string(vt));
    }
    MTLITE_RETURN_IF_ERROR(CheckRange("config.pad_id", c->pad_id(), 0, std::min(vs, vt) - 1));
    MTLITE_RETURN_IF_ERROR(CheckRange("config.eos_id", c->eos_id(), 0, std::min(vs, vt) - 1));
    MTLITE_RETURN_IF_ERROR(CheckRange("config.unk_id", c->unk_id(), 0, std::min(vs, vt) - 1));
    MTLITE_RETURN_IF_ERROR(CheckRange("config.decoder_start_id", c->decoder_start_id(), 0, vt - 1));
    MTLITE_RETURN_IF_ERROR(CheckRange("config.default_beam", c->default_beam(), 1, kMaxBeam));
    MTLITE_RETURN_IF_ERROR(CheckRange("config.default_max_length", c->default_max_length(), 1, kMaxPositions));
    if (!(std::isfinite(c->embed_scale()) && c->embed_scale() > 0)) return Invalid("config.embed_scale is not a positive number");
    if (!(std::isfinite(c->layer_norm_eps()) && c->layer_norm_eps() > 0)) return Invalid("config.layer_norm_eps is not a positive number");

    ModelConfig& mc = md_->config;
    mc.d_model = c->d_model();
    mc.encoder_layers = c->encoder_layers();
    mc.decoder_layers = c->decoder_layers();
    mc.encoder_heads = c->encoder_heads();
    mc.decoder_heads = c->decoder_heads();
    mc.encoder_ffn_dim = c->encoder_ffn_dim();
    mc.decoder_ffn_dim = c->decoder_ffn_dim();
    if (!layout::ActivationFromCode(int(c->activation()), &mc.activation)) {
      return Invalid("config.activation " + std::to_string(int(c->activation())) + " is unknown");
    }
    switch (c->position_kind()) {
      case fb::PositionKind::SinusoidalMarian: mc.positions_stored = false; break;
      case fb::PositionKind::Table: mc.positions_stored = true; break;
      default: return Invalid("config.position_kind " + std::to_string(int(c->position_kind())) + " is unknown");
    }
    mc.embed_scale = c->embed_scale();
    mc.max_positions = c->max_positions();
    mc.layer_norm_eps = c->layer_norm_eps();
    mc.shared_embeddings = c->shared_embeddings();
    mc.tied_output = c->tied_output();
    mc.has_final_logits_bias = c->has_final_logits_bias();
    mc.source_vocab_size = vs;
    mc.target_vocab_size = vt;
    mc.pad_id = c->pad_id();
    mc.eos_id = c->eos_id();
    mc.unk_id = c->unk_id();
    mc.decoder_start_id = c->decoder_start_id();
    mc.bad_word_ids.clear();
    if (const auto* bad = c->bad_word_ids()) {
      for (size_t i = 0; i < bad->size(); ++i) {
        const int id = bad->Get(static_cast<flatbuffers::uoffset_t>(i));
        if (id < 0 || id >= vt) return Invalid("config.bad_word_ids contains " + std::to_string(id) + ", outside the target vocabulary");
        mc.bad_word_ids.push_back(id);
      }
    }
    mc.default_beam = c->default_beam();
    mc.default_max_length = c->default_max_length();
    return Status::Ok();
  }

  // ---- data buffers ------------------------------------------------------------------------
  // Bounds and alignment of one BufferRef; registers it for VerifyChecksums, the overlap check
  // and the size profile (component, dtype). `expected_size` < 0: any size.
  Status CheckRef(const fb::BufferRef* ref, const std::string& name, layout::Component component, const char* dtype,
                  int64_t expected_size = -1) {
    const uint64_t off = ref->offset(), n = ref->size();
    if (off % kDataAlignment != 0) return Invalid("buffer of '" + name + "' at offset " + std::to_string(off) + " is not 64-byte aligned");
    if (off < root_->data_offset() || off > size_ || n > size_ - off) {
      return Invalid("buffer of '" + name + "' [" + std::to_string(off) + ", +" + std::to_string(n) +
                     ") lies outside the data segment [" + std::to_string(root_->data_offset()) + ", " +
                     std::to_string(size_) + ")");
    }
    if (expected_size >= 0 && n != static_cast<uint64_t>(expected_size)) {
      return Invalid("buffer of '" + name + "' has " + std::to_string(n) + " bytes, expected " +
                     std::to_string(expected_size));
    }
    md_->checks.push_back({name, base_ + off, static_cast<size_t>(n), ref->crc32c(), component, dtype});
    return Status::Ok();
  }

  Status CheckNoOverlap() const {
    std::vector<std::pair<uint64_t, const detail::BufferCheck*>> regions;
    regions.reserve(md_->checks.size());
    for (const auto& c : md_->checks) regions.push_back({uint64_t(c.data - base_), &c});
    std::sort(regions.begin(), regions.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 1; i < regions.size(); ++i) {
      const auto& prev = regions[i - 1];
      if (prev.first + prev.second->size > regions[i].first) {
        return Invalid("buffers of '" + prev.second->name + "' and '" + regions[i].second->name + "' overlap");
      }
    }
    return Status::Ok();
  }

  // ---- tensors -----------------------------------------------------------------------------
  // Names strictly ascending (sorted, unique) and every buffer in bounds.
  Status CheckTensorTable() {
    tensors_ = root_->tensors();
    if (!tensors_) return Invalid("tensor table missing");
    for (flatbuffers::uoffset_t i = 0; i < tensors_->size(); ++i) {
      const fb::Tensor* t = tensors_->Get(i);
      if (!t->name()) return Invalid("tensor #" + std::to_string(i) + " has no name");
      const std::string name = Str(t->name());
      if (i > 0 && !(View(tensors_->Get(i - 1)->name()) < View(t->name()))) {
        return Invalid("tensor table is not sorted by name (or has duplicates) at '" + name + "'");
      }
      if (!t->data()) return Invalid("tensor '" + name + "' has no data buffer");
      // Tagged "other tensors" until BindWeights binds the tensor to a component.
      tensor_checks_.push_back(md_->checks.size());
      MTLITE_RETURN_IF_ERROR(CheckRef(t->data(), name, {}, DTypeName(t->dtype())));
      if (t->scales()) MTLITE_RETURN_IF_ERROR(CheckRef(t->scales(), name + " (scales)", {}, "f32"));
      if (t->zero_points()) {
        return Status(StatusCode::kUnsupported, "tensor '" + name + "' has zero points (asymmetric quantization is not supported)");
      }
    }
    return Status::Ok();
  }

  // Index of the tensor called `name` in the (sorted) table, or -1.
  int64_t Find(std::string_view name) const {
    size_t lo = 0, hi = tensors_->size();
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      const std::string_view n = View(tensors_->Get(static_cast<flatbuffers::uoffset_t>(mid))->name());
      if (n == name) return int64_t(mid);
      if (n < name) lo = mid + 1; else hi = mid;
    }
    return -1;
  }

  // Finds a tensor the model uses and tags its buffers (data, scales) with the component
  // being bound (component_).
  Status FindWithShape(const std::string& name, std::initializer_list<int64_t> shape, const fb::Tensor** out) {
    const int64_t index = Find(name);
    if (index < 0) return Invalid("missing tensor '" + name + "'");
    const fb::Tensor* t = tensors_->Get(static_cast<flatbuffers::uoffset_t>(index));
    const size_t check = tensor_checks_[size_t(index)];
    md_->checks[check].component = component_;
    if (t->scales()) md_->checks[check + 1].component = component_;
    const auto* s = t->shape();
    bool ok = s && s->size() == shape.size();
    for (size_t i = 0; ok && i < shape.size(); ++i) ok = ShapeDim(s, i) == shape.begin()[i];
    if (!ok) {
      std::string want = "[";
      for (size_t i = 0; i < shape.size(); ++i) want += (i ? ", " : "") + std::to_string(shape.begin()[i]);
      return Invalid("tensor '" + name + "' has shape " + ShapeString(s) + ", expected " + want + "]");
    }
    *out = t;
    return Status::Ok();
  }

  // Data pointers below stay inside the file: CheckTensorTable validated every buffer.
  Status Weight(const std::string& name, int rows, int cols, detail::WeightView* w) {
    const fb::Tensor* t = nullptr;
    MTLITE_RETURN_IF_ERROR(FindWithShape(name, {rows, cols}, &t));
    const uint64_t elems = uint64_t(rows) * uint64_t(cols);
    uint64_t bytes = 0;
    if (!layout::WeightTypeFromCode(int(t->dtype()), &w->dtype)) {
      return Invalid("tensor '" + name + "' has unknown dtype " + std::to_string(int(t->dtype())));
    }
    switch (w->dtype) {
      case WeightType::kF32: bytes = elems * 4; break;
      case WeightType::kF16: bytes = elems * 2; break;
      case WeightType::kInt8: bytes = kernels::BlockedN8K4Bytes(rows, cols); break;
    }
    if (!have_weight_type_) {
      have_weight_type_ = true;
      first_weight_ = name;
      md_->config.weight_type = w->dtype;
    } else if (w->dtype != md_->config.weight_type) {
      return Invalid("tensor '" + name + "' is " + DTypeName(t->dtype()) + " but '" + first_weight_ +
                     "' is not: all weights must share one dtype");
    }
    const bool int8 = w->dtype == WeightType::kInt8;
    const fb::QuantScheme want_quant = int8 ? fb::QuantScheme::SymmetricPerChannel : fb::QuantScheme::None;
    const fb::WeightLayout want_layout = int8 ? fb::WeightLayout::BlockedN8K4 : fb::WeightLayout::RowMajor;
    if (t->quant() != want_quant) return Invalid("tensor '" + name + "': quantization scheme does not match its dtype");
    if (t->layout() != want_layout) return Invalid("tensor '" + name + "': layout does not match its dtype");
    if (t->data()->size() != bytes) {
      return Invalid("tensor '" + name + "' has " + std::to_string(t->data()->size()) + " data bytes, expected " +
                     std::to_string(bytes));
    }
    w->blocked = int8;
    w->rows = rows;
    w->cols = cols;
    w->data = base_ + t->data()->offset();
    w->scales = nullptr;
    if (int8) {
      if (!t->scales() || t->scales()->size() != uint64_t(rows) * 4) {
        return Invalid("tensor '" + name + "' needs " + std::to_string(rows) + " f32 scales");
      }
      const float* s = reinterpret_cast<const float*>(base_ + t->scales()->offset());
      for (int i = 0; i < rows; ++i) {
        if (!(std::isfinite(s[i]) && s[i] >= 0)) {
          return Invalid("tensor '" + name + "' scale[" + std::to_string(i) + "] is negative or not finite");
        }
      }
      w->scales = s;
    } else if (t->scales()) {
      return Invalid("tensor '" + name + "' is not quantized but has scales");
    }
    return Status::Ok();
  }

  // f32 vector (bias, norm) or f32 table flattened to `rows` x `cols` (cols = 0: 1-D).
  Status Vector(const std::string& name, int rows, int cols, detail::VectorView* v) {
    const fb::Tensor* t = nullptr;
    if (cols == 0) {
      MTLITE_RETURN_IF_ERROR(FindWithShape(name, {rows}, &t));
    } else {
      MTLITE_RETURN_IF_ERROR(FindWithShape(name, {rows, cols}, &t));
    }
    const uint64_t n = uint64_t(rows) * uint64_t(cols ? cols : 1);
    if (n > uint64_t(INT32_MAX)) return Invalid("tensor '" + name + "' has more than 2^31 elements");
    if (t->dtype() != fb::DType::F32 || t->quant() != fb::QuantScheme::None ||
        t->layout() != fb::WeightLayout::RowMajor || t->scales()) {
      return Invalid("tensor '" + name + "' must be plain f32");
    }
    if (t->data()->size() != n * 4) {
      return Invalid("tensor '" + name + "' has " + std::to_string(t->data()->size()) + " data bytes, expected " +
                     std::to_string(n * 4));
    }
    v->data = reinterpret_cast<const float*>(base_ + t->data()->offset());
    v->size = static_cast<int>(n);
    return Status::Ok();
  }

  Status LayerNorm(const std::string& prefix, detail::LayerNormView* ln) {
    const int d = md_->config.d_model;
    MTLITE_RETURN_IF_ERROR(Vector(prefix + layout::kWeight, d, 0, &ln->gamma));
    return Vector(prefix + layout::kBias, d, 0, &ln->beta);
  }

  Status Linear(const std::string& prefix, int rows, int cols, detail::WeightView* w, detail::VectorView* b) {
    MTLITE_RETURN_IF_ERROR(Weight(prefix + layout::kWeight, rows, cols, w));
    return Vector(prefix + layout::kBias, rows, 0, b);
  }

  // Attention block `block` (kSelfAttention / kCrossAttention) of a layer and its layer norm.
  Status Attention(const std::string& layer, const char* block, const char* norm, detail::AttentionView* a,
                   detail::LayerNormView* ln) {
    const int d = md_->config.d_model;
    detail::WeightView* w[4] = {&a->q, &a->k, &a->v, &a->o};
    detail::VectorView* b[4] = {&a->q_bias, &a->k_bias, &a->v_bias, &a->o_bias};
    for (int i = 0; i < 4; ++i) {
      MTLITE_RETURN_IF_ERROR(Linear(layer + block + layout::kAttentionProjections[i], d, d, w[i], b[i]));
    }
    return LayerNorm(layer + norm, ln);
  }

  template <class LayerView>
  Status Ffn(const std::string& layer, int ffn, LayerView* l) {
    const int d = md_->config.d_model;
    MTLITE_RETURN_IF_ERROR(Linear(layer + layout::kFc1, ffn, d, &l->fc1, &l->fc1_bias));
    MTLITE_RETURN_IF_ERROR(Linear(layer + layout::kFc2, d, ffn, &l->fc2, &l->fc2_bias));
    return LayerNorm(layer + layout::kFinalNorm, &l->final_ln);
  }

  Status BindWeights() {
    const ModelConfig& c = md_->config;
    const int d = c.d_model;
    component_ = {Part::kEmbeddings};
    if (c.shared_embeddings) {
      MTLITE_RETURN_IF_ERROR(Weight(layout::kSharedEmbedding, c.source_vocab_size, d, &md_->source_embed));
      md_->target_embed = md_->source_embed;
    } else {
      MTLITE_RETURN_IF_ERROR(Weight(layout::kEncoderEmbedding, c.source_vocab_size, d, &md_->source_embed));
      MTLITE_RETURN_IF_ERROR(Weight(layout::kDecoderEmbedding, c.target_vocab_size, d, &md_->target_embed));
    }
    if (c.tied_output) {
      md_->output_proj = md_->target_embed;
    } else {
      MTLITE_RETURN_IF_ERROR(Weight(layout::kOutputProjection, c.target_vocab_size, d, &md_->output_proj));
    }
    md_->final_logits_bias = {};
    if (c.has_final_logits_bias) {
      component_ = {Part::kFinalLogitsBias};
      MTLITE_RETURN_IF_ERROR(Vector(layout::kFinalLogitsBias, c.target_vocab_size, 0, &md_->final_logits_bias));
    }
    md_->encoder_positions = {};
    md_->decoder_positions = {};
    if (c.positions_stored) {
      component_ = {Part::kPositions};
      MTLITE_RETURN_IF_ERROR(Vector(layout::kEncoderPositions, c.max_positions, d, &md_->encoder_positions));
      MTLITE_RETURN_IF_ERROR(Vector(layout::kDecoderPositions, c.max_positions, d, &md_->decoder_positions));
    }
    md_->encoder.assign(size_t(c.encoder_layers), {});
    for (int i = 0; i < c.encoder_layers; ++i) {
      const std::string p = layout::LayerPrefix(layout::Side::kEncoder, i);
      detail::EncoderLayerView& l = md_->encoder[size_t(i)];
      component_ = {Part::kEncoderLayer, i};
      MTLITE_RETURN_IF_ERROR(Attention(p, layout::kSelfAttention, layout::kSelfAttentionNorm, &l.self_attn, &l.self_attn_ln));
      MTLITE_RETURN_IF_ERROR(Ffn(p, c.encoder_ffn_dim, &l));
    }
    md_->decoder.assign(size_t(c.decoder_layers), {});
    for (int i = 0; i < c.decoder_layers; ++i) {
      const std::string p = layout::LayerPrefix(layout::Side::kDecoder, i);
      detail::DecoderLayerView& l = md_->decoder[size_t(i)];
      component_ = {Part::kDecoderSelfAttention, i};
      MTLITE_RETURN_IF_ERROR(Attention(p, layout::kSelfAttention, layout::kSelfAttentionNorm, &l.self_attn, &l.self_attn_ln));
      component_ = {Part::kDecoderCrossAttention, i};
      MTLITE_RETURN_IF_ERROR(Attention(p, layout::kCrossAttention, layout::kCrossAttentionNorm, &l.cross_attn, &l.cross_attn_ln));
      component_ = {Part::kDecoderFfn, i};
      MTLITE_RETURN_IF_ERROR(Ffn(p, c.decoder_ffn_dim, &l));
    }
    return Status::Ok();
  }

  // ---- tokenizer ---------------------------------------------------------------------------
  Status BindSpm(const fb::SentencePieceModel* m, const std::string& what, int vocab_size, detail::SpmView* v) {
    const auto* pieces = m->pieces();
    if (!pieces || pieces->size() == 0) return Invalid(what + ".pieces missing or empty");
    if (pieces->size() > static_cast<flatbuffers::uoffset_t>(kMaxVocab)) return Invalid(what + ".pieces: too many pieces");
    const int n = static_cast<int>(pieces->size());
    const auto* types = m->types();
    const auto* sorted = m->sorted_pieces();
    const auto* to_vocab = m->to_vocab();
    if (!types || types->size() != pieces->size()) return Invalid(what + ".types length does not match the piece count");
    if (!sorted || sorted->size() != pieces->size()) return Invalid(what + ".sorted_pieces length does not match the piece count");
    if (!to_vocab || to_vocab->size() != pieces->size()) return Invalid(what + ".to_vocab length does not match the piece count");
    if (!m->scores()) return Invalid(what + ".scores missing");
    MTLITE_RETURN_IF_ERROR(CheckRef(m->scores(), what + ".scores", {Part::kTokenizer}, "f32", int64_t(n) * 4));
    MTLITE_RETURN_IF_ERROR(CheckRange(what + ".unk_id", m->unk_id(), 0, n - 1));
    MTLITE_RETURN_IF_ERROR(CheckRange(what + ".bos_id", m->bos_id(), -1, n - 1));
    MTLITE_RETURN_IF_ERROR(CheckRange(what + ".eos_id", m->eos_id(), -1, n - 1));
    MTLITE_RETURN_IF_ERROR(CheckRange(what + ".pad_id", m->pad_id(), -1, n - 1));

    v->num_pieces = n;
    v->pieces.resize(size_t(n));
    for (int i = 0; i < n; ++i) v->pieces[size_t(i)] = View(pieces->Get(flatbuffers::uoffset_t(i)));
    v->scores = reinterpret_cast<const float*>(base_ + m->scores()->offset());
    for (int i = 0; i < n; ++i) {
      if (!std::isfinite(v->scores[i])) return Invalid(what + ".scores[" + std::to_string(i) + "] is not finite");
    }
    const int8_t* t = reinterpret_cast<const int8_t*>(types->Data());
    for (int i = 0; i < n; ++i) {
      if (t[i] < int8_t(detail::PieceKind::kNormal) || t[i] > int8_t(detail::PieceKind::kByte)) {
        return Invalid(what + ".types[" + std::to_string(i) + "] = " + std::to_string(t[i]) + " is not a piece type");
      }
    }
    v->types = reinterpret_cast<const detail::PieceKind*>(t);
    v->sorted_pieces = reinterpret_cast<const int32_t*>(sorted->Data());
    v->to_vocab = reinterpret_cast<const int32_t*>(to_vocab->Data());
    std::vector<bool> seen(size_t(n), false);
    for (int i = 0; i < n; ++i) {
      const int32_t p = v->sorted_pieces[i];
      if (p < 0 || p >= n || seen[size_t(p)]) return Invalid(what + ".sorted_pieces is not a permutation");
      seen[size_t(p)] = true;
      if (i > 0 && !(v->pieces[size_t(v->sorted_pieces[i - 1])] < v->pieces[size_t(p)])) {
        return Invalid(what + ".sorted_pieces is not in ascending bytewise piece order at position " + std::to_string(i));
      }
      const int32_t id = v->to_vocab[i];
      if (id < 0 || id >= vocab_size) {
        return Invalid(what + ".to_vocab[" + std::to_string(i) + "] = " + std::to_string(id) + " is outside the vocabulary");
      }
    }
    v->unk_id = m->unk_id();
    v->bos_id = m->bos_id();
    v->eos_id = m->eos_id();
    v->pad_id = m->pad_id();
    v->add_dummy_prefix = m->add_dummy_prefix();
    v->remove_extra_whitespaces = m->remove_extra_whitespaces();
    v->escape_whitespaces = m->escape_whitespaces();
    v->treat_whitespace_as_suffix = m->treat_whitespace_as_suffix();
    v->byte_fallback = m->byte_fallback();
    v->charsmap = nullptr;
    v->charsmap_size = 0;
    if (const fb::BufferRef* cm = m->precompiled_charsmap(); cm && cm->size() > 0) {
      MTLITE_RETURN_IF_ERROR(CheckRef(cm, what + ".precompiled_charsmap", {Part::kTokenizer}, "bytes"));
      v->charsmap = base_ + cm->offset();
      v->charsmap_size = static_cast<size_t>(cm->size());
    }
    return Status::Ok();
  }

  static Status BindVocab(const fb::Vocab* vocab, const std::string& what, int vocab_size, detail::VocabView* v) {
    const auto* ids = vocab->id_to_piece();
    if (!ids || ids->size() != static_cast<flatbuffers::uoffset_t>(vocab_size)) {
      return Invalid(what + ".id_to_piece has " + std::to_string(ids ? ids->size() : 0) + " entries, config says " +
                     std::to_string(vocab_size));
    }
    v->id_to_piece.resize(size_t(vocab_size));
    for (int i = 0; i < vocab_size; ++i) v->id_to_piece[size_t(i)] = View(ids->Get(flatbuffers::uoffset_t(i)));
    return Status::Ok();
  }

  Status BindTokenizer() {
    const fb::Tokenizer* tok = root_->tokenizer();
    if (!tok) return Invalid("tokenizer table missing");
    if (!tok->source_spm()) return Invalid("tokenizer.source_spm missing");
    if (!tok->source_vocab()) return Invalid("tokenizer.source_vocab missing");
    const ModelConfig& c = md_->config;
    MTLITE_RETURN_IF_ERROR(BindVocab(tok->source_vocab(), "tokenizer.source_vocab", c.source_vocab_size, &md_->source_vocab));
    if (tok->target_vocab()) {
      MTLITE_RETURN_IF_ERROR(BindVocab(tok->target_vocab(), "tokenizer.target_vocab", c.target_vocab_size, &md_->target_vocab));
    } else if (c.target_vocab_size != c.source_vocab_size) {
      return Invalid("tokenizer.target_vocab is absent but target_vocab_size differs from source_vocab_size");
    } else {
      md_->target_vocab = md_->source_vocab;
    }
    MTLITE_RETURN_IF_ERROR(BindSpm(tok->source_spm(), "tokenizer.source_spm", c.source_vocab_size, &md_->source_spm));
    if (tok->target_spm()) {
      MTLITE_RETURN_IF_ERROR(BindSpm(tok->target_spm(), "tokenizer.target_spm", c.target_vocab_size, &md_->target_spm));
    } else if (tok->target_vocab()) {
      // The source spm's to_vocab maps into the source vocabulary, not the target one.
      return Invalid("tokenizer.target_spm is absent but a separate tokenizer.target_vocab is present");
    } else {
      md_->target_spm = md_->source_spm;
    }
    return Status::Ok();
  }

  // ---- shortlist (optional) ----------------------------------------------------------------
  // An int32/uint32 array buffer of `what`: size a multiple of 4 (exactly `count` elements when
  // count >= 0); returns the element count.
  Status ArrayRef(const fb::BufferRef* ref, const std::string& what, const char* dtype, int64_t count,
                  uint64_t* elements) {
    if (!ref) return Invalid(what + " missing");
    if (ref->size() % 4 != 0) return Invalid(what + " has " + std::to_string(ref->size()) + " bytes, not a multiple of 4");
    MTLITE_RETURN_IF_ERROR(CheckRef(ref, what, {Part::kShortlist}, dtype, count >= 0 ? count * 4 : -1));
    *elements = ref->size() / 4;
    return Status::Ok();
  }

  // Distinct ids in [0, vocab): `seen` (vocab entries) holds a stamp per id, `stamp` is new
  // for each list.
  static Status CheckIdList(const int32_t* ids, uint64_t n, int vocab, const std::string& what,
                            std::vector<uint32_t>* seen, uint32_t stamp) {
    for (uint64_t i = 0; i < n; ++i) {
      const int32_t id = ids[i];
      if (id < 0 || id >= vocab) {
        return Invalid(what + "[" + std::to_string(i) + "] = " + std::to_string(id) + " is outside the target vocabulary");
      }
      if ((*seen)[size_t(id)] == stamp) return Invalid(what + " lists target id " + std::to_string(id) + " twice");
      (*seen)[size_t(id)] = stamp;
    }
    return Status::Ok();
  }

  Status BindShortlist() {
    md_->shortlist = {};
    const fb::Shortlist* sl = root_->shortlist();
    if (!sl) return Status::Ok();
    const int vs = md_->config.source_vocab_size, vt = md_->config.target_vocab_size;
    uint64_t num_frequent = 0, num_offsets = 0, num_targets = 0;
    MTLITE_RETURN_IF_ERROR(ArrayRef(sl->frequent(), "shortlist.frequent", "int32", -1, &num_frequent));
    MTLITE_RETURN_IF_ERROR(ArrayRef(sl->offsets(), "shortlist.offsets", "uint32", int64_t(vs) + 1, &num_offsets));
    MTLITE_RETURN_IF_ERROR(ArrayRef(sl->targets(), "shortlist.targets", "int32", -1, &num_targets));
    if (num_frequent > uint64_t(vt)) {
      return Invalid("shortlist.frequent has " + std::to_string(num_frequent) + " ids, more than the target vocabulary");
    }
    const auto* frequent = reinterpret_cast<const int32_t*>(base_ + sl->frequent()->offset());
    const auto* offsets = reinterpret_cast<const uint32_t*>(base_ + sl->offsets()->offset());
    const auto* targets = reinterpret_cast<const int32_t*>(base_ + sl->targets()->offset());
    if (offsets[0] != 0) return Invalid("shortlist.offsets[0] = " + std::to_string(offsets[0]) + ", expected 0");
    if (offsets[vs] != num_targets) {
      return Invalid("shortlist.offsets[" + std::to_string(vs) + "] = " + std::to_string(offsets[vs]) + " but shortlist.targets has " +
                     std::to_string(num_targets) + " ids");
    }
    MTLITE_RETURN_IF_ERROR(CheckRange("shortlist.top_k", sl->top_k(), 0, vt));
    for (int s = 0; s < vs; ++s) {
      if (offsets[s + 1] < offsets[s]) {
        return Invalid("shortlist.offsets decrease at source id " + std::to_string(s) + " (" + std::to_string(offsets[s]) +
                       " > " + std::to_string(offsets[s + 1]) + ")");
      }
      if (offsets[s + 1] - offsets[s] > uint32_t(sl->top_k())) {
        return Invalid("shortlist: source id " + std::to_string(s) + " has " + std::to_string(offsets[s + 1] - offsets[s]) +
                       " targets, more than top_k " + std::to_string(sl->top_k()));
      }
    }
    // Non-decreasing from 0 to num_targets: every list lies inside targets.
    std::vector<uint32_t> seen(size_t(vt), 0);
    MTLITE_RETURN_IF_ERROR(CheckIdList(frequent, num_frequent, vt, "shortlist.frequent", &seen, 1));
    for (int s = 0; s < vs; ++s) {
      MTLITE_RETURN_IF_ERROR(CheckIdList(targets + offsets[s], offsets[s + 1] - offsets[s], vt,
                                         "shortlist.targets of source id " + std::to_string(s), &seen, uint32_t(s) + 2));
    }
    if (sl->include_source_ids() && md_->source_vocab.id_to_piece != md_->target_vocab.id_to_piece) {
      return Invalid("shortlist.include_source_ids is set but the source and target vocabularies differ");
    }
    detail::ShortlistView& v = md_->shortlist;
    v.present = true;
    v.frequent = frequent;
    v.num_frequent = static_cast<int>(num_frequent);
    v.offsets = offsets;
    v.targets = targets;
    v.include_source_ids = sl->include_source_ids();
    return Status::Ok();
  }

  void BindMetadata() {
    if (const fb::Metadata* m = root_->metadata()) {
      md_->config.source_lang = Str(m->source_lang());
      md_->config.target_lang = Str(m->target_lang());
    }
  }

  const uint8_t* base_;
  size_t size_;
  detail::ModelData* md_;
  uint64_t fb_size_ = 0;
  const fb::Model* root_ = nullptr;
  const flatbuffers::Vector<flatbuffers::Offset<fb::Tensor>>* tensors_ = nullptr;
  bool have_weight_type_ = false;
  std::string first_weight_;
  std::vector<size_t> tensor_checks_;  // tensor index -> its data buffer's index in md_->checks
  layout::Component component_;        // what BindWeights is binding
};

Status ChecksumMismatch(const std::string& name, uint32_t stored, uint32_t computed) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " (stored %08x, computed %08x)", unsigned(stored), unsigned(computed));
  return Status(StatusCode::kChecksumMismatch, "checksum mismatch in '" + name + "'" + buf);
}

// Model.structure_crc32c: CRC32C of the FlatBuffer with that field's 4 bytes read as zero.
Status VerifyStructure(const detail::ModelData& md) {
  const uint8_t* field = StructureCrcField(fb::GetSizePrefixedModel(md.base));
  const size_t fb_size = size_t(flatbuffers::ReadScalar<uint32_t>(md.base)) + sizeof(uint32_t);
  const size_t at = size_t(field - md.base);
  const uint8_t zeros[4] = {0, 0, 0, 0};
  uint32_t crc = Crc32c(md.base, at);
  crc = Crc32c(zeros, sizeof zeros, crc);
  crc = Crc32c(field + 4, fb_size - at - 4, crc);
  const uint32_t stored = flatbuffers::ReadScalar<uint32_t>(field);
  return crc == stored ? Status::Ok() : ChecksumMismatch("FlatBuffer structure (config, tensor table, tokenizer)", stored, crc);
}

// Bytes outside the FlatBuffer and the data buffers (alignment padding) must be zero, so
// that every byte of the file is covered by a check.
Status VerifyPadding(const detail::ModelData& md) {
  std::vector<std::pair<size_t, size_t>> buffers;  // [begin, end)
  buffers.reserve(md.checks.size() + 1);
  for (const detail::BufferCheck& c : md.checks) buffers.push_back({size_t(c.data - md.base), size_t(c.data - md.base) + c.size});
  buffers.push_back({md.size, md.size});
  std::sort(buffers.begin(), buffers.end());
  size_t pos = size_t(flatbuffers::ReadScalar<uint32_t>(md.base)) + sizeof(uint32_t);
  for (const auto& [begin, end] : buffers) {
    for (; pos < begin; ++pos) {
      if (md.base[pos] != 0) {
        return Status(StatusCode::kChecksumMismatch, "non-zero padding byte at file offset " + std::to_string(pos));
      }
    }
    pos = std::max(pos, end);
  }
  return Status::Ok();
}

Status VerifyBuffers(const detail::ModelData& md) {
  MTLITE_RETURN_IF_ERROR(VerifyStructure(md));
  for (const detail::BufferCheck& c : md.checks) {
    const uint32_t got = Crc32c(c.data, c.size);
    if (got != c.crc32c) return ChecksumMismatch(c.name, c.crc32c, got);
  }
  return VerifyPadding(md);
}

// FlatBuffer bytes of the tokenizer's strings and arrays (4-byte length + payload, strings
// NUL-terminated and 4-aligned; a string shared by several vectors counts once); alignment
// padding between objects stays "structure".
class TokenizerBytes {
 public:
  void Strings(const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* v) {
    if (!v) return;
    bytes_ += 4 + 4ull * v->size();
    for (const flatbuffers::String* s : *v) {
      if (seen_.insert(s).second) bytes_ += 4 + (s->size() + 4) / 4 * 4;
    }
  }
  void Spm(const fb::SentencePieceModel* m) {
    if (!m) return;
    const uint64_t n = m->pieces() ? m->pieces()->size() : 0;
    Strings(m->pieces());
    bytes_ += (4 + (n + 3) / 4 * 4) /*types*/ + 2 * (4 + 4 * n) /*sorted_pieces, to_vocab*/;
    if (m->normalizer_name()) bytes_ += 4 + (m->normalizer_name()->size() + 4) / 4 * 4;
  }
  void Vocab(const fb::Vocab* v) {
    if (v) Strings(v->id_to_piece());
  }
  uint64_t bytes() const { return bytes_; }

 private:
  uint64_t bytes_ = 0;
  std::set<const void*> seen_;
};

// Rows of the size profile in first-use order, keyed by component.
class Profile {
 public:
  void Add(layout::Component c, uint64_t bytes, const char* dtype) {
    Row& r = Get(c);
    r.bytes += bytes;
    if (dtype) r.dtypes.insert(dtype);
  }
  std::vector<SizeComponent> Rows() const {
    std::vector<SizeComponent> out;
    for (const Row& r : rows_) out.push_back({layout::ComponentName(r.component), r.bytes, {r.dtypes.begin(), r.dtypes.end()}});
    return out;
  }

 private:
  struct Row {
    layout::Component component;
    uint64_t bytes = 0;
    std::set<std::string> dtypes;
  };
  Row& Get(layout::Component c) {
    const auto [it, added] = index_.insert({{int(c.part), c.layer}, rows_.size()});
    if (added) rows_.push_back({c, 0, {}});
    return rows_[it->second];
  }
  std::vector<Row> rows_;
  std::map<std::pair<int, int>, size_t> index_;
};

// Validates md->base[0, md->size) and fills the rest of *md.
Status Prepare(detail::ModelData* md, const LoadOptions& options) {
  MTLITE_RETURN_IF_ERROR(Loader(md->base, md->size, md).Run());
  return options.verify_checksums ? VerifyBuffers(*md) : Status::Ok();
}

}  // namespace

Model::Model() : data_(new detail::ModelData) {}

Model::~Model() {
  if (data_ && data_->mapping) munmap(data_->mapping, data_->mapping_size);
}

const ModelConfig& Model::config() const { return data_->config; }

size_t Model::file_size() const { return data_->size; }

Status Model::VerifyChecksums() const { return VerifyBuffers(*data_); }

std::vector<SizeComponent> Model::SizeProfile() const {
  const detail::ModelData& md = *data_;
  Profile p;
  // The model's components in model order, present even when empty.
  for (Part part : {Part::kEmbeddings, Part::kPositions, Part::kFinalLogitsBias}) p.Add({part}, 0, nullptr);
  for (int i = 0; i < md.config.encoder_layers; ++i) p.Add({Part::kEncoderLayer, i}, 0, nullptr);
  for (int i = 0; i < md.config.decoder_layers; ++i) {
    for (Part part : {Part::kDecoderSelfAttention, Part::kDecoderCrossAttention, Part::kDecoderFfn}) p.Add({part, i}, 0, nullptr);
  }
  uint64_t in_buffers = 0;
  for (const detail::BufferCheck& c : md.checks) {
    in_buffers += c.size;
    p.Add(c.component, c.size, c.dtype);
  }
  const fb::Model* root = fb::GetSizePrefixedModel(md.base);
  const uint64_t fb_size = uint64_t(flatbuffers::ReadScalar<uint32_t>(md.base)) + sizeof(uint32_t);
  const fb::Tokenizer* tok = root->tokenizer();
  TokenizerBytes tb;
  tb.Spm(tok->source_spm());
  tb.Spm(tok->target_spm());
  tb.Vocab(tok->source_vocab());
  tb.Vocab(tok->target_vocab());
  const uint64_t tok_fb = std::min(tb.bytes(), fb_size);
  p.Add({Part::kTokenizer}, tok_fb, "strings");
  p.Add({Part::kStructure}, fb_size - tok_fb, "flatbuffer");
  // Buffers never overlap and lie after the FlatBuffer (checked at load).
  p.Add({Part::kPadding}, md.size - fb_size - in_buffers, "zero");
  return p.Rows();
}

Result<std::shared_ptr<const Model>> Model::FromBuffer(const void* data, size_t size, const LoadOptions& options) {
  if (!data) return Status(StatusCode::kInvalidArgument, "model buffer is null");
  if (reinterpret_cast<uintptr_t>(data) % kDataAlignment != 0) {
    return Status(StatusCode::kInvalidArgument, "model buffer must be 64-byte aligned (weights are read in place)");
  }
  std::shared_ptr<Model> model(new Model());
  model->data_->base = static_cast<const uint8_t*>(data);
  model->data_->size = size;
  MTLITE_RETURN_IF_ERROR(Prepare(model->data_.get(), options));
  return std::shared_ptr<const Model>(std::move(model));
}

Result<std::shared_ptr<const Model>> Model::Load(const std::string& path, const LoadOptions& options) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status(StatusCode::kIoError, "cannot open '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Status(StatusCode::kIoError, "'" + path + "' is not a readable regular file");
  }
  if (st.st_size <= 0 || uint64_t(st.st_size) > SIZE_MAX) {
    close(fd);
    return Status(StatusCode::kInvalidModel, path + ": empty or too large to map");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  close(fd);
  if (p == MAP_FAILED) return Status(StatusCode::kIoError, "cannot mmap '" + path + "': " + std::strerror(err));
  std::shared_ptr<Model> model(new Model());
  model->data_->mapping = p;  // owned from here on: ~Model unmaps
  model->data_->mapping_size = size;
  model->data_->base = static_cast<const uint8_t*>(p);
  model->data_->size = size;
  Status s = Prepare(model->data_.get(), options);
  if (!s.ok()) return Status(s.code(), path + ": " + s.message());
  return std::shared_ptr<const Model>(std::move(model));
}

}  // namespace mtlite

// Model loading: caller buffer (or Model::Load's mapping, model_file.cc) -> FlatBuffers
// verification -> semantic validation -> detail::ModelData (pointers into the model bytes).
// Nothing in the file is trusted: every failure returns a Status naming the offending field or
// tensor; nothing aborts. The other parts of the loader: model_internal.h.
//
// Allocation: the loader's tables (layer views, tokenizer piece/vocab views, checksum list) are
// carved from one block sized before anything is bound (TableCounts). Model::Load and
// Model::FromBuffer take that block from the heap; the caller-storage FromBuffer takes it, and
// the Model itself and its shared_ptr control block, from the caller's storage. Names and
// messages are built in fixed buffers on the success path: std::string appears only in errors,
// so a caller-storage load of a valid model makes no heap allocation (tests/unit/host/
// firmware_api_test.cc counts them).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "kernels.h"
#include "platform.h"
#include "marian_layout.h"
#include "model_data.h"
#include "model_internal.h"
#include "model_spec.h"
#include "mtlite/mtlite.hpp"
#include "mtlite_generated.h"
#include "status_macros.h"
#include "translator_bounds.h"

namespace mtlite {
namespace {

using layout::kDataAlignment;
using layout::kFormatVersion;
using layout::Part;



using detail::AlignUp;
using detail::kStorageAlign;
using detail::kTableAlign;
using detail::TableArena;
using detail::TableCounts;
using detail::DTypeName;
using detail::LayerPrefixName;
using detail::Name;
using detail::ShapeDim;
using detail::ShapeString;
using detail::TablesTooSmall;
using detail::View;

constexpr auto Invalid = detail::InvalidModel;

std::string Str(const flatbuffers::String* s) { return s ? std::string(s->c_str(), s->size()) : std::string(); }
std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

class Loader : public detail::LoaderBase {
 public:
  // caller_storage: build the config without a heap allocation (see FieldKind::kBannedIds).
  Loader(const uint8_t* base, size_t size, detail::ModelData* out, bool caller_storage)
      : LoaderBase(base, size, out), caller_storage_(caller_storage) {}

  // Binds everything, taking the tables from `tables` (TableCounts(root).Bytes() bytes).
  Status Run(TableArena* tables) {
    MTLITE_RETURN_IF_ERROR(detail::CheckEnvelope(base_, size_, &fb_size_));
    root_ = fb::GetSizePrefixedModel(base_);
    if (root_->format_version() > kFormatVersion) {
      return Status(StatusCode::kUnsupported, "format version " + std::to_string(root_->format_version()) +
                                                  " is newer than this runtime (" +
                                                  std::to_string(kFormatVersion) + ")");
    }
    if (root_->format_version() == 0) return Invalid("format_version is 0 (missing)");
    if (!detail::StructureCrcField(root_)) return Invalid("structure_crc32c missing");
    MTLITE_RETURN_IF_ERROR(CheckDataSegment());
    MTLITE_RETURN_IF_ERROR(TakeTables(tables));
    MTLITE_RETURN_IF_ERROR(CheckConfig());
    MTLITE_RETURN_IF_ERROR(CheckTensorTable());
    MTLITE_RETURN_IF_ERROR(BindWeights());
    MTLITE_RETURN_IF_ERROR(BindTokenizer());
    MTLITE_RETURN_IF_ERROR(BindShortlist());
    BindMetadata();
    MTLITE_RETURN_IF_ERROR(BindDecodingDefaults());
    md_->checks.Bind(checks_, num_checks_);
    return CheckNoOverlap();
  }

 private:
  // ---- container ---------------------------------------------------------------------------
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

  // The tables whose sizes are known up front; the piece and vocab views are taken per list.
  Status TakeTables(TableArena* tables) {
    tables_ = tables;
    const TableCounts n(root_);
    tensor_checks_ = tables->Take<uint32_t>(n.tensors);
    checks_ = tables->Take<detail::BufferCheck>(n.checks);
    uint32_t* order = tables->Take<uint32_t>(n.checks);
    detail::EncoderLayerView* enc = tables->Take<detail::EncoderLayerView>(n.encoder);
    detail::DecoderLayerView* dec = tables->Take<detail::DecoderLayerView>(n.decoder);
    if (!tensor_checks_ || !checks_ || !order || !enc || !dec) return TablesTooSmall();
    cap_checks_ = n.checks;
    md_->checks_by_offset.Bind(order, size_t(n.checks));
    md_->encoder.Bind(enc, size_t(n.encoder));
    md_->decoder.Bind(dec, size_t(n.decoder));
    return Status::Ok();
  }

  // ---- config ------------------------------------------------------------------------------
  Status CheckConfig() {
    const fb::Config* c = root_->config();
    if (!c) return Invalid("config table missing");
    MTLITE_RETURN_IF_ERROR(detail::LoadConfig(*c, caller_storage_, &md_->config));
    return detail::CheckFormatVersion(md_->config, root_->format_version());
  }

  // ---- data buffers ------------------------------------------------------------------------
  Status CheckNoOverlap() const {
    uint32_t* order = md_->checks_by_offset.data();
    const size_t n = md_->checks.size();
    if (md_->checks_by_offset.size() < n) return TablesTooSmall();
    md_->checks_by_offset.Bind(order, n);
    const detail::BufferCheck* c = md_->checks.data();
    for (size_t i = 0; i < n; ++i) order[i] = uint32_t(i);
    std::sort(order, order + n, [c](uint32_t a, uint32_t b) { return c[a].data < c[b].data; });
    for (size_t i = 1; i < n; ++i) {
      const detail::BufferCheck& prev = c[order[i - 1]];
      const detail::BufferCheck& cur = c[order[i]];
      if (prev.data + prev.size > cur.data) {
        return Invalid("buffers of " + Quote(prev.Label()) + " and " + Quote(cur.Label()) + " overlap");
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
      const std::string_view name = View(t->name());
      if (i > 0 && !(View(tensors_->Get(i - 1)->name()) < name)) {
        return Invalid("tensor table is not sorted by name (or has duplicates) at " + Quote(name));
      }
      if (!t->data()) return Invalid("tensor " + Quote(name) + " has no data buffer");
      // Tagged "other tensors" until BindWeights binds the tensor to a component.
      tensor_checks_[i] = uint32_t(num_checks_);
      MTLITE_RETURN_IF_ERROR(CheckRef(t->data(), name, false, {}, DTypeName(t->dtype())));
      if (t->scales()) MTLITE_RETURN_IF_ERROR(CheckRef(t->scales(), name, true, {}, "f32"));
      if (t->zero_points()) {
        return Status(StatusCode::kUnsupported,
                      "tensor " + Quote(name) + " has zero points (asymmetric quantization is not supported)");
      }
    }
    return Status::Ok();
  }

  // Index of the tensor called `name` in the (sorted) table, or -1.
  int64_t Find(const Name& name) const {
    if (name.overflowed()) return -1;
    const std::string_view want = name.view();
    size_t lo = 0, hi = tensors_->size();
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      const std::string_view n = View(tensors_->Get(static_cast<flatbuffers::uoffset_t>(mid))->name());
      if (n == want) return int64_t(mid);
      if (n < want) lo = mid + 1; else hi = mid;
    }
    return -1;
  }

  // Finds a tensor the model uses and tags its buffers (data, scales) with the component
  // being bound (component_).
  Status FindWithShape(const Name& name, std::initializer_list<int64_t> shape, const fb::Tensor** out) {
    const int64_t index = Find(name);
    if (index < 0) return Invalid("missing tensor " + Quote(name.view()));
    const fb::Tensor* t = tensors_->Get(static_cast<flatbuffers::uoffset_t>(index));
    const size_t check = tensor_checks_[size_t(index)];
    checks_[check].component = component_;
    if (t->scales()) checks_[check + 1].component = component_;
    const auto* s = t->shape();
    bool ok = s && s->size() == shape.size();
    for (size_t i = 0; ok && i < shape.size(); ++i) ok = ShapeDim(s, i) == shape.begin()[i];
    if (!ok) {
      std::string want = "[";
      for (size_t i = 0; i < shape.size(); ++i) want += (i ? ", " : "") + std::to_string(shape.begin()[i]);
      return Invalid("tensor " + Quote(name.view()) + " has shape " + ShapeString(s) + ", expected " + want + "]");
    }
    *out = t;
    return Status::Ok();
  }

  // Data pointers below stay inside the file: CheckTensorTable validated every buffer.
  Status Weight(const Name& name, int rows, int cols, detail::WeightView* w) {
    const fb::Tensor* t = nullptr;
    MTLITE_RETURN_IF_ERROR(FindWithShape(name, {rows, cols}, &t));
    const std::string_view tn = View(t->name());
    if (!layout::WeightTypeFromCode(int(t->dtype()), &w->dtype)) {
      return Invalid("tensor " + Quote(tn) + " has unknown dtype " + std::to_string(int(t->dtype())));
    }
    // in size_t, checked (kernels::BlockedN8K4Bytes for int8): a wrapped size would match a short buffer
    detail::CheckedSize bytes;
    switch (w->dtype) {
      case WeightType::kF32: bytes = detail::CheckedSize(rows) * cols * 4; break;
      case WeightType::kF16: bytes = detail::CheckedSize(rows) * cols * 2; break;
      case WeightType::kInt8: bytes = detail::CheckedSize(kernels::RoundUp(rows, 8)) * kernels::RoundUp(cols, 4); break;
    }
    if (!bytes.ok()) {
      return Invalid("tensor " + Quote(tn) + " of shape [" + std::to_string(rows) + ", " + std::to_string(cols) +
                     "] needs more bytes than this platform can address");
    }
    if (first_weight_.empty()) {
      first_weight_ = tn;
      md_->config.weight_type = w->dtype;
    } else if (w->dtype != md_->config.weight_type) {
      return Invalid("tensor " + Quote(tn) + " is " + DTypeName(t->dtype()) + " but " + Quote(first_weight_) +
                     " is not: all weights must share one dtype");
    }
    const bool int8 = w->dtype == WeightType::kInt8;
    const fb::QuantScheme want_quant = int8 ? fb::QuantScheme::SymmetricPerChannel : fb::QuantScheme::None;
    const fb::WeightLayout want_layout = int8 ? fb::WeightLayout::BlockedN8K4 : fb::WeightLayout::RowMajor;
    if (t->quant() != want_quant) return Invalid("tensor " + Quote(tn) + ": quantization scheme does not match its dtype");
    if (t->layout() != want_layout) return Invalid("tensor " + Quote(tn) + ": layout does not match its dtype");
    if (t->data()->size() != bytes.value()) {
      return Invalid("tensor " + Quote(tn) + " has " + std::to_string(t->data()->size()) + " data bytes, expected " +
                     std::to_string(bytes.value()));
    }
    w->blocked = int8;
    w->rows = rows;
    w->cols = cols;
    w->data = base_ + t->data()->offset();
    w->scales = nullptr;
    if (int8) {
      if (!t->scales() || t->scales()->size() != uint64_t(rows) * 4) {
        return Invalid("tensor " + Quote(tn) + " needs " + std::to_string(rows) + " f32 scales");
      }
      const float* s = reinterpret_cast<const float*>(base_ + t->scales()->offset());
      for (int i = 0; i < rows; ++i) {
        if (!(std::isfinite(s[i]) && s[i] >= 0)) {
          return Invalid("tensor " + Quote(tn) + " scale[" + std::to_string(i) + "] is negative or not finite");
        }
      }
      w->scales = s;
    } else if (t->scales()) {
      return Invalid("tensor " + Quote(tn) + " is not quantized but has scales");
    }
    return Status::Ok();
  }

  // f32 vector (bias, norm) or f32 table flattened to `rows` x `cols` (cols = 0: 1-D).
  Status Vector(const Name& name, int rows, int cols, detail::VectorView* v) {
    const fb::Tensor* t = nullptr;
    if (cols == 0) {
      MTLITE_RETURN_IF_ERROR(FindWithShape(name, {rows}, &t));
    } else {
      MTLITE_RETURN_IF_ERROR(FindWithShape(name, {rows, cols}, &t));
    }
    const std::string_view tn = View(t->name());
    const uint64_t n = uint64_t(rows) * uint64_t(cols ? cols : 1);
    if (n > uint64_t(INT32_MAX)) return Invalid("tensor " + Quote(tn) + " has more than 2^31 elements");
    if (t->dtype() != fb::DType::F32 || t->quant() != fb::QuantScheme::None ||
        t->layout() != fb::WeightLayout::RowMajor || t->scales()) {
      return Invalid("tensor " + Quote(tn) + " must be plain f32");
    }
    if (t->data()->size() != n * 4) {
      return Invalid("tensor " + Quote(tn) + " has " + std::to_string(t->data()->size()) + " data bytes, expected " +
                     std::to_string(n * 4));
    }
    v->data = reinterpret_cast<const float*>(base_ + t->data()->offset());
    v->size = static_cast<int>(n);
    return Status::Ok();
  }

  Status LayerNorm(const Name& prefix, detail::LayerNormView* ln) {
    const int d = md_->config.d_model;
    MTLITE_RETURN_IF_ERROR(Vector(prefix + layout::kWeight, d, 0, &ln->gamma));
    return Vector(prefix + layout::kBias, d, 0, &ln->beta);
  }

  Status Linear(const Name& prefix, int rows, int cols, detail::WeightView* w, detail::VectorView* b) {
    MTLITE_RETURN_IF_ERROR(Weight(prefix + layout::kWeight, rows, cols, w));
    return Vector(prefix + layout::kBias, rows, 0, b);
  }

  // Attention block `block` (kSelfAttention / kCrossAttention) of a layer and its layer norm.
  Status Attention(const Name& layer, const char* block, const char* norm, detail::AttentionView* a) {
    const int d = md_->config.d_model;
    detail::WeightView* w[4] = {&a->q, &a->k, &a->v, &a->o};
    detail::VectorView* b[4] = {&a->q_bias, &a->k_bias, &a->v_bias, &a->o_bias};
    for (int i = 0; i < 4; ++i) {
      MTLITE_RETURN_IF_ERROR(Linear(layer + block + layout::kAttentionProjections[i], d, d, w[i], b[i]));
    }
    return LayerNorm(layer + norm, &a->ln);
  }

  // An SSRU block: W (no bias), Wf and bf, and its norm.
  Status Ssru(const Name& layer, detail::SsruView* s) {
    const int d = md_->config.d_model;
    MTLITE_RETURN_IF_ERROR(Weight(layer + layout::kSsruInProj + layout::kWeight, d, d, &s->w));
    MTLITE_RETURN_IF_ERROR(Linear(layer + layout::kSsruForgetProj, d, d, &s->wf, &s->bf));
    return LayerNorm(layer + layout::kSsruNorm, &s->ln);
  }

  Status Ffn(const Name& layer, int ffn, detail::FfnView* f) {
    const int d = md_->config.d_model;
    MTLITE_RETURN_IF_ERROR(Linear(layer + layout::kFc1, ffn, d, &f->fc1, &f->fc1_bias));
    MTLITE_RETURN_IF_ERROR(Linear(layer + layout::kFc2, d, ffn, &f->fc2, &f->fc2_bias));
    return LayerNorm(layer + layout::kFinalNorm, &f->ln);
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
    md_->encoder_final_ln = {};
    md_->decoder_final_ln = {};
    if (c.positions == PositionKind::kTable) {
      component_ = {Part::kPositions};
      MTLITE_RETURN_IF_ERROR(Vector(layout::kEncoderPositions, c.max_positions, d, &md_->encoder_positions));
      MTLITE_RETURN_IF_ERROR(Vector(layout::kDecoderPositions, c.max_positions, d, &md_->decoder_positions));
    }
    if (md_->encoder.size() != size_t(c.encoder_layers) || md_->decoder.size() != size_t(c.decoder_layers)) {
      return TablesTooSmall();
    }
    for (int i = 0; i < c.encoder_layers; ++i) {
      const Name p = LayerPrefixName(layout::Side::kEncoder, i);
      detail::EncoderLayerView& l = md_->encoder[size_t(i)];
      component_ = {Part::kEncoderLayer, i};
      MTLITE_RETURN_IF_ERROR(Attention(p, layout::kSelfAttention, layout::kSelfAttentionNorm, &l.self_attn));
      MTLITE_RETURN_IF_ERROR(Ffn(p, c.encoder_ffn_dim, &l.ffn));
      // the stack's final norm belongs to its last layer in the size profile
      if (i + 1 == c.encoder_layers && c.encoder_final_norm) {
        MTLITE_RETURN_IF_ERROR(LayerNorm(layout::kEncoderFinalNorm, &md_->encoder_final_ln));
      }
    }
    for (int i = 0; i < c.decoder_layers; ++i) {
      const Name p = LayerPrefixName(layout::Side::kDecoder, i);
      detail::DecoderLayerView& l = md_->decoder[size_t(i)];
      component_ = {Part::kDecoderSelfAttention, i};
      switch (c.decoder_layer) {
        case DecoderLayerKind::kSelfAttention:
          MTLITE_RETURN_IF_ERROR(Attention(p, layout::kSelfAttention, layout::kSelfAttentionNorm, &l.self_attn));
          break;
        case DecoderLayerKind::kSsru: MTLITE_RETURN_IF_ERROR(Ssru(p, &l.ssru)); break;
      }
      component_ = {Part::kDecoderCrossAttention, i};
      MTLITE_RETURN_IF_ERROR(Attention(p, layout::kCrossAttention, layout::kCrossAttentionNorm, &l.cross_attn));
      component_ = {Part::kDecoderFfn, i};
      MTLITE_RETURN_IF_ERROR(Ffn(p, c.decoder_ffn_dim, &l.ffn));
      if (i + 1 == c.decoder_layers && c.decoder_final_norm) {
        MTLITE_RETURN_IF_ERROR(LayerNorm(layout::kDecoderFinalNorm, &md_->decoder_final_ln));
      }
    }
    return Status::Ok();
  }

  void BindMetadata() {
    if (const fb::Metadata* m = root_->metadata()) {
      md_->config.source_lang = Str(m->source_lang());
      md_->config.target_lang = Str(m->target_lang());
    }
  }

  // Optional table DecodingDefaults: each recorded value in the range a translate call accepts.
  Status BindDecodingDefaults() {
    const fb::DecodingDefaults* d = root_->decoding_defaults();
    if (!d) return Status::Ok();
    DecodingDefaults& o = md_->decoding_defaults;
    const auto bad = [](const char* field, const std::string& value, const char* range) {
      return detail::InvalidModel(std::string("decoding_defaults.") + field + " " + value + " outside " + range);
    };
    if (const auto v = d->beam_size()) {
      if (*v < 1 || *v > detail::kMaxBeam) return bad("beam_size", std::to_string(*v), "[1, 64]");
      o.beam_size = *v;
    }
    if (const auto v = d->max_length()) {
      if (*v < 1 || *v > detail::kMaxPositions) return bad("max_length", std::to_string(*v), "[1, 1000000]");
      o.max_length = *v;
    }
    if (const auto v = d->max_length_ratio()) {
      if (!(*v >= 0.0f && *v <= 1e6f)) return bad("max_length_ratio", std::to_string(*v), "[0, 1e6]");
      o.max_length_ratio = *v;
    }
    if (const auto v = d->max_length_offset()) {
      if (*v < 0 || *v > detail::kMaxPositions) return bad("max_length_offset", std::to_string(*v), "[0, 1000000]");
      o.max_length_offset = *v;
    }
    if (const auto v = d->length_penalty()) {
      if (!(*v > -100.0f && *v < 100.0f)) return bad("length_penalty", std::to_string(*v), "(-100, 100)");
      o.length_penalty = *v;
    }
    if (d->source()) o.source = std::string_view(d->source()->data(), d->source()->size());
    return Status::Ok();
  }

  bool caller_storage_;
  uint64_t fb_size_ = 0;
  const flatbuffers::Vector<flatbuffers::Offset<fb::Tensor>>* tensors_ = nullptr;
  std::string_view first_weight_;    // the first weight bound (its dtype is the model's)
  uint32_t* tensor_checks_ = nullptr;  // tensor index -> its data buffer's index in checks_
  layout::Component component_;        // what BindWeights is binding
};

}  // namespace

namespace detail {

// Bounds and alignment of one BufferRef; registers it for VerifyChecksums, the overlap check
// and the size profile (component, dtype). `expected_size` < 0: any size.
Status LoaderBase::CheckRef(const fb::BufferRef* ref, std::string_view name, bool scales, layout::Component component,
                            const char* dtype, int64_t expected_size) {
  const uint64_t off = ref->offset(), n = ref->size();
  // data is set only once the bounds hold: base_ + off for an offset past the file is not a pointer
  BufferCheck check{name, scales, nullptr, static_cast<size_t>(n), ref->crc32c(), component, dtype};
  if (off % kDataAlignment != 0) {
    return Invalid("buffer of " + Quote(check.Label()) + " at offset " + std::to_string(off) + " is not 64-byte aligned");
  }
  if (off < root_->data_offset() || off > size_ || n > size_ - off) {
    return Invalid("buffer of " + Quote(check.Label()) + " [" + std::to_string(off) + ", +" + std::to_string(n) +
                   ") lies outside the data segment [" + std::to_string(root_->data_offset()) + ", " +
                   std::to_string(size_) + ")");
  }
  if (expected_size >= 0 && n != static_cast<uint64_t>(expected_size)) {
    return Invalid("buffer of " + Quote(check.Label()) + " has " + std::to_string(n) + " bytes, expected " +
                   std::to_string(expected_size));
  }
  if (num_checks_ >= cap_checks_) return TablesTooSmall();
  check.data = base_ + off;
  checks_[num_checks_++] = check;
  return Status::Ok();
}

Status PrepareModel(ModelData* md, const LoadOptions& options, void* storage, size_t storage_bytes) {
  const bool caller_storage = storage != nullptr;
  if (!caller_storage) {
    Result<size_t> bytes = ModelTableBytes(md->base, md->size);
    if (!bytes.ok()) return bytes.status();
    storage_bytes = bytes.value();
    storage = platform::AlignedAlloc(kStorageAlign, AlignUp(storage_bytes, kStorageAlign));
    if (!storage) {
      return Status(StatusCode::kResourceExhausted,
                    "cannot allocate the model tables (" + std::to_string(storage_bytes) + " bytes)");
    }
    md->table_block = storage;
  }
  TableArena tables(static_cast<uint8_t*>(storage), storage_bytes);
  MTLITE_RETURN_IF_ERROR(Loader(md->base, md->size, md, caller_storage).Run(&tables));
  return options.verify_checksums ? VerifyBuffers(*md) : Status::Ok();
}

}  // namespace detail

}  // namespace mtlite

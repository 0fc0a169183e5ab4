// Model loading: caller buffer (or Model::Load's mapping, model_file.cc) -> FlatBuffers
// verification -> semantic validation -> detail::ModelData (pointers into the model bytes).
// Nothing in the file is trusted: every failure returns a Status naming the offending field or
// tensor; nothing aborts.
//
// Allocation: the loader's tables (layer views, tokenizer piece/vocab views, checksum list) are
// carved from one block sized before anything is bound (TableCounts). Model::Load and
// Model::FromBuffer take that block from the heap; the caller-storage FromBuffer takes it, and
// the Model itself and its shared_ptr control block, from the caller's storage. Names and
// messages are built in fixed buffers on the success path: std::string appears only in errors,
// so a caller-storage load of a valid model makes no heap allocation (tests/unit/host/
// firmware_api_test.cc counts them).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <set>
#include <string>
#include <type_traits>
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

// Caller storage (model tables, the Model object) is 64-byte aligned, like every other buffer a
// caller hands to mtlite; tables inside it are 16-byte aligned.
constexpr size_t kStorageAlign = 64;
constexpr size_t kTableAlign = 16;
constexpr uint64_t AlignUp(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

Status Invalid(std::string message) { return Status(StatusCode::kInvalidModel, std::move(message)); }

std::string Str(const flatbuffers::String* s) { return s ? std::string(s->c_str(), s->size()) : std::string(); }
std::string_view View(const flatbuffers::String* s) { return std::string_view(s->c_str(), s->size()); }
std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

// A tensor or field name built without allocating, e.g. "model.encoder.layers.3" +
// ".self_attn" + ".q_proj" + ".weight". Names longer than the capacity (none of the Marian
// layout's come close) are marked overflowed and never match a tensor.
class Name {
 public:
  Name() = default;
  Name(std::string_view s) { Append(s); }  // NOLINT: implicit by design
  Name(const char* s) { Append(s); }       // NOLINT
  Name operator+(std::string_view s) const {
    Name n = *this;
    n.Append(s);
    return n;
  }
  std::string_view view() const { return std::string_view(buf_, len_); }
  bool overflowed() const { return overflowed_; }
  std::string str() const { return std::string(view()); }

 private:
  void Append(std::string_view s) {
    const size_t k = std::min(s.size(), sizeof buf_ - len_);
    std::memcpy(buf_ + len_, s.data(), k);
    len_ += k;
    overflowed_ = overflowed_ || k < s.size();
  }
  char buf_[128];
  size_t len_ = 0;
  bool overflowed_ = false;
};

// layout::LayerPrefix ("model.encoder.layers.<layer>") without allocating; model_layout_test
// checks that the two agree.
Name LayerPrefixName(layout::Side side, int layer) {
  char digits[16];
  const int n = std::snprintf(digits, sizeof digits, "%d", layer);
  return Name(side == layout::Side::kEncoder ? "model.encoder.layers." : "model.decoder.layers.") +
         std::string_view(digits, size_t(n > 0 ? n : 0));
}

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

// The FlatBuffers verifier over base[0, size): the size prefix, the identifier and every table,
// vector and string of the structure. Allocation-free.
Status CheckEnvelope(const uint8_t* base, size_t size, uint64_t* fb_size) {
  if (size < 16) return Invalid("file too small (" + std::to_string(size) + " bytes) to be an mtlite model");
  if (!fb::SizePrefixedModelBufferHasIdentifier(base)) {
    return Invalid("not an mtlite file (file identifier is not \"MTL1\")");
  }
  const uint64_t prefix = flatbuffers::ReadScalar<uint32_t>(base);
  *fb_size = prefix + sizeof(uint32_t);
  if (*fb_size > size) {
    return Invalid("FlatBuffer size prefix (" + std::to_string(prefix) + ") exceeds the file size (" +
                   std::to_string(size) + "): truncated file?");
  }
  if (*fb_size >= FLATBUFFERS_MAX_BUFFER_SIZE) return Invalid("FlatBuffer part is larger than 2 GiB");
  flatbuffers::Verifier::Options opts;
  opts.max_depth = 16;        // Model > Tokenizer > SentencePieceModel > vector > string
  opts.max_tables = 1u << 20;
  opts.check_alignment = true;
  flatbuffers::Verifier verifier(base, static_cast<size_t>(*fb_size), opts);
  if (!fb::VerifySizePrefixedModelBuffer(verifier)) {
    return Invalid("FlatBuffer verification failed (corrupt or truncated model structure)");
  }
  return Status::Ok();
}

// Element counts of the loader's tables, read from a verified FlatBuffer before anything is
// bound. They bound what the loader binds (it checks each count against the file again).
struct TableCounts {
  uint64_t tensors = 0, checks = 0, encoder = 0, decoder = 0;
  uint64_t views = 0;  // string views: source/target pieces, source/target vocab

  explicit TableCounts(const fb::Model* root) {
    if (const auto* ts = root->tensors()) {
      tensors = ts->size();
      for (const fb::Tensor* t : *ts) checks += (t->data() ? 1 : 0) + (t->scales() ? 1 : 0);
    }
    if (const fb::Config* c = root->config()) {
      encoder = uint64_t(std::clamp(c->encoder_layers(), 0, kMaxLayers));
      decoder = uint64_t(std::clamp(c->decoder_layers(), 0, kMaxLayers));
    }
    if (const fb::Tokenizer* tok = root->tokenizer()) {
      for (const fb::SentencePieceModel* m : {tok->source_spm(), tok->target_spm()}) {
        if (!m) continue;
        checks += (m->scores() ? 1 : 0) + (m->precompiled_charsmap() && m->precompiled_charsmap()->size() > 0 ? 1 : 0);
        if (m->pieces()) views += m->pieces()->size();
      }
      for (const fb::Vocab* v : {tok->source_vocab(), tok->target_vocab()}) {
        if (v && v->id_to_piece()) views += v->id_to_piece()->size();
      }
    }
  }
  uint64_t Bytes() const {
    return AlignUp(tensors * sizeof(uint32_t), kTableAlign) + AlignUp(checks * sizeof(detail::BufferCheck), kTableAlign) +
           AlignUp(checks * sizeof(uint32_t), kTableAlign) +
           AlignUp(encoder * sizeof(detail::EncoderLayerView), kTableAlign) +
           AlignUp(decoder * sizeof(detail::DecoderLayerView), kTableAlign) +
           // one table per piece/vocab list: each rounds up on its own
           AlignUp(views * sizeof(std::string_view), kTableAlign) + 4 * kTableAlign;
  }
};

// Bump allocation of the tables from one block; what it hands out is never freed on its own.
class TableArena {
 public:
  TableArena(uint8_t* base, size_t bytes) : base_(base), cap_(bytes) {}
  template <class T>
  T* Take(uint64_t count) {
    static_assert(std::is_trivially_destructible<T>::value && alignof(T) <= kTableAlign, "table element type");
    const uint64_t at = AlignUp(used_, kTableAlign);
    if (at > cap_ || count > (cap_ - at) / sizeof(T)) return nullptr;
    T* out = reinterpret_cast<T*>(base_ + at);
    for (uint64_t i = 0; i < count; ++i) new (out + i) T();
    used_ = at + count * sizeof(T);
    return out;
  }

 private:
  uint8_t* base_;
  uint64_t cap_, used_ = 0;
};

Status TablesTooSmall() {
  return Status(StatusCode::kInternal, "model table storage smaller than the loader's own count (a bug)");
}

class Loader {
 public:
  // caller_storage: build the config without a heap allocation (see CheckConfig's bad_word_ids).
  Loader(const uint8_t* base, size_t size, detail::ModelData* out, bool caller_storage)
      : base_(base), size_(size), md_(out), caller_storage_(caller_storage) {}

  // Binds everything, taking the tables from `tables` (TableCounts(root).Bytes() bytes).
  Status Run(TableArena* tables) {
    MTLITE_RETURN_IF_ERROR(CheckEnvelope(base_, size_, &fb_size_));
    root_ = fb::GetSizePrefixedModel(base_);
    if (root_->format_version() > kFormatVersion) {
      return Status(StatusCode::kUnsupported, "format version " + std::to_string(root_->format_version()) +
                                                  " is newer than this runtime (" +
                                                  std::to_string(kFormatVersion) + ")");
    }
    if (root_->format_version() == 0) return Invalid("format_version is 0 (missing)");
    if (!StructureCrcField(root_)) return Invalid("structure_crc32c missing");
    MTLITE_RETURN_IF_ERROR(CheckDataSegment());
    MTLITE_RETURN_IF_ERROR(TakeTables(tables));
    MTLITE_RETURN_IF_ERROR(CheckConfig());
    MTLITE_RETURN_IF_ERROR(CheckTensorTable());
    MTLITE_RETURN_IF_ERROR(BindWeights());
    MTLITE_RETURN_IF_ERROR(BindTokenizer());
    BindMetadata();
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
  static Status CheckRange(Name field, int64_t v, int64_t lo, int64_t hi) {
    if (v < lo || v > hi) {
      return Invalid(field.str() + " = " + std::to_string(v) + " is outside [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "]");
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
        // Every search masks <pad> before the log-softmax, so a banned <pad> (Marian's usual
        // bad_words_ids [[pad]]) changes nothing; caller storage leaves it out of the list so
        // that the std::vector stays empty and unallocated (Model::FromBuffer with storage).
        if (caller_storage_ && id == mc.pad_id) continue;
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
  Status CheckRef(const fb::BufferRef* ref, std::string_view name, bool scales, layout::Component component,
                  const char* dtype, int64_t expected_size = -1) {
    const uint64_t off = ref->offset(), n = ref->size();
    detail::BufferCheck check{name, scales, base_ + off, static_cast<size_t>(n), ref->crc32c(), component, dtype};
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
    checks_[num_checks_++] = check;
    return Status::Ok();
  }

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
    const uint64_t elems = uint64_t(rows) * uint64_t(cols);
    uint64_t bytes = 0;
    if (!layout::WeightTypeFromCode(int(t->dtype()), &w->dtype)) {
      return Invalid("tensor " + Quote(tn) + " has unknown dtype " + std::to_string(int(t->dtype())));
    }
    switch (w->dtype) {
      case WeightType::kF32: bytes = elems * 4; break;
      case WeightType::kF16: bytes = elems * 2; break;
      case WeightType::kInt8: bytes = kernels::BlockedN8K4Bytes(rows, cols); break;
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
    if (t->data()->size() != bytes) {
      return Invalid("tensor " + Quote(tn) + " has " + std::to_string(t->data()->size()) + " data bytes, expected " +
                     std::to_string(bytes));
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
  Status Attention(const Name& layer, const char* block, const char* norm, detail::AttentionView* a,
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
  Status Ffn(const Name& layer, int ffn, LayerView* l) {
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
    if (md_->encoder.size() != size_t(c.encoder_layers) || md_->decoder.size() != size_t(c.decoder_layers)) {
      return TablesTooSmall();
    }
    for (int i = 0; i < c.encoder_layers; ++i) {
      const Name p = LayerPrefixName(layout::Side::kEncoder, i);
      detail::EncoderLayerView& l = md_->encoder[size_t(i)];
      component_ = {Part::kEncoderLayer, i};
      MTLITE_RETURN_IF_ERROR(Attention(p, layout::kSelfAttention, layout::kSelfAttentionNorm, &l.self_attn, &l.self_attn_ln));
      MTLITE_RETURN_IF_ERROR(Ffn(p, c.encoder_ffn_dim, &l));
    }
    for (int i = 0; i < c.decoder_layers; ++i) {
      const Name p = LayerPrefixName(layout::Side::kDecoder, i);
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
  // A table of n string views for a piece or vocab list.
  Status TakeViews(size_t n, detail::Table<std::string_view>* out) {
    std::string_view* v = tables_->Take<std::string_view>(n);
    if (!v) return TablesTooSmall();
    out->Bind(v, n);
    return Status::Ok();
  }

  // `what`: "tokenizer.source_spm" / "tokenizer.target_spm"; `scores_name`, `charsmap_name`: the
  // names of its two data buffers (static strings: a BufferCheck keeps a view of them).
  Status BindSpm(const fb::SentencePieceModel* m, const char* what, const char* scores_name, const char* charsmap_name,
                 int vocab_size, detail::SpmView* v) {
    const auto* pieces = m->pieces();
    if (!pieces || pieces->size() == 0) return Invalid(std::string(what) + ".pieces missing or empty");
    if (pieces->size() > static_cast<flatbuffers::uoffset_t>(kMaxVocab)) return Invalid(std::string(what) + ".pieces: too many pieces");
    const int n = static_cast<int>(pieces->size());
    const auto* types = m->types();
    const auto* sorted = m->sorted_pieces();
    const auto* to_vocab = m->to_vocab();
    if (!types || types->size() != pieces->size()) return Invalid(std::string(what) + ".types length does not match the piece count");
    if (!sorted || sorted->size() != pieces->size()) return Invalid(std::string(what) + ".sorted_pieces length does not match the piece count");
    if (!to_vocab || to_vocab->size() != pieces->size()) return Invalid(std::string(what) + ".to_vocab length does not match the piece count");
    if (!m->scores()) return Invalid(std::string(what) + ".scores missing");
    MTLITE_RETURN_IF_ERROR(CheckRef(m->scores(), scores_name, false, {Part::kTokenizer}, "f32", int64_t(n) * 4));
    MTLITE_RETURN_IF_ERROR(CheckRange(Name(what) + ".unk_id", m->unk_id(), 0, n - 1));
    MTLITE_RETURN_IF_ERROR(CheckRange(Name(what) + ".bos_id", m->bos_id(), -1, n - 1));
    MTLITE_RETURN_IF_ERROR(CheckRange(Name(what) + ".eos_id", m->eos_id(), -1, n - 1));
    MTLITE_RETURN_IF_ERROR(CheckRange(Name(what) + ".pad_id", m->pad_id(), -1, n - 1));

    v->num_pieces = n;
    MTLITE_RETURN_IF_ERROR(TakeViews(size_t(n), &v->pieces));
    for (int i = 0; i < n; ++i) v->pieces[size_t(i)] = View(pieces->Get(flatbuffers::uoffset_t(i)));
    v->scores = reinterpret_cast<const float*>(base_ + m->scores()->offset());
    for (int i = 0; i < n; ++i) {
      if (!std::isfinite(v->scores[i])) return Invalid(std::string(what) + ".scores[" + std::to_string(i) + "] is not finite");
    }
    const int8_t* t = reinterpret_cast<const int8_t*>(types->Data());
    for (int i = 0; i < n; ++i) {
      if (t[i] < int8_t(detail::PieceKind::kNormal) || t[i] > int8_t(detail::PieceKind::kByte)) {
        return Invalid(std::string(what) + ".types[" + std::to_string(i) + "] = " + std::to_string(t[i]) + " is not a piece type");
      }
    }
    v->types = reinterpret_cast<const detail::PieceKind*>(t);
    v->sorted_pieces = reinterpret_cast<const int32_t*>(sorted->Data());
    v->to_vocab = reinterpret_cast<const int32_t*>(to_vocab->Data());
    // In range and strictly ascending: then the pieces are distinct, so the indices are too, and
    // n distinct indices in [0, n) are a permutation (no "seen" table needed).
    for (int i = 0; i < n; ++i) {
      const int32_t p = v->sorted_pieces[i];
      if (p < 0 || p >= n) return Invalid(std::string(what) + ".sorted_pieces is not a permutation");
      if (i > 0 && !(v->pieces[size_t(v->sorted_pieces[i - 1])] < v->pieces[size_t(p)])) {
        if (std::find(v->sorted_pieces, v->sorted_pieces + i, p) != v->sorted_pieces + i) {
          return Invalid(std::string(what) + ".sorted_pieces is not a permutation");
        }
        return Invalid(std::string(what) + ".sorted_pieces is not in ascending bytewise piece order at position " +
                       std::to_string(i));
      }
      const int32_t id = v->to_vocab[i];
      if (id < 0 || id >= vocab_size) {
        return Invalid(std::string(what) + ".to_vocab[" + std::to_string(i) + "] = " + std::to_string(id) +
                       " is outside the vocabulary");
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
      MTLITE_RETURN_IF_ERROR(CheckRef(cm, charsmap_name, false, {Part::kTokenizer}, "bytes"));
      v->charsmap = base_ + cm->offset();
      v->charsmap_size = static_cast<size_t>(cm->size());
    }
    return Status::Ok();
  }

  Status BindVocab(const fb::Vocab* vocab, const char* what, int vocab_size, detail::VocabView* v) {
    const auto* ids = vocab->id_to_piece();
    if (!ids || ids->size() != static_cast<flatbuffers::uoffset_t>(vocab_size)) {
      return Invalid(std::string(what) + ".id_to_piece has " + std::to_string(ids ? ids->size() : 0) +
                     " entries, config says " + std::to_string(vocab_size));
    }
    MTLITE_RETURN_IF_ERROR(TakeViews(size_t(vocab_size), &v->id_to_piece));
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
      md_->target_vocab = md_->source_vocab;  // shares the table
    }
    MTLITE_RETURN_IF_ERROR(BindSpm(tok->source_spm(), "tokenizer.source_spm", "tokenizer.source_spm.scores",
                                   "tokenizer.source_spm.precompiled_charsmap", c.source_vocab_size, &md_->source_spm));
    if (tok->target_spm()) {
      MTLITE_RETURN_IF_ERROR(BindSpm(tok->target_spm(), "tokenizer.target_spm", "tokenizer.target_spm.scores",
                                     "tokenizer.target_spm.precompiled_charsmap", c.target_vocab_size, &md_->target_spm));
    } else if (tok->target_vocab()) {
      // The source spm's to_vocab maps into the source vocabulary, not the target one.
      return Invalid("tokenizer.target_spm is absent but a separate tokenizer.target_vocab is present");
    } else {
      md_->target_spm = md_->source_spm;  // shares the table
    }
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
  bool caller_storage_;
  uint64_t fb_size_ = 0;
  const fb::Model* root_ = nullptr;
  const flatbuffers::Vector<flatbuffers::Offset<fb::Tensor>>* tensors_ = nullptr;
  TableArena* tables_ = nullptr;
  std::string_view first_weight_;    // the first weight bound (its dtype is the model's)
  uint32_t* tensor_checks_ = nullptr;  // tensor index -> its data buffer's index in checks_
  detail::BufferCheck* checks_ = nullptr;
  size_t num_checks_ = 0, cap_checks_ = 0;
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
  size_t pos = size_t(flatbuffers::ReadScalar<uint32_t>(md.base)) + sizeof(uint32_t);
  auto zeros_until = [&](size_t begin) {
    for (; pos < begin; ++pos) {
      if (md.base[pos] != 0) {
        return Status(StatusCode::kChecksumMismatch, "non-zero padding byte at file offset " + std::to_string(pos));
      }
    }
    return Status::Ok();
  };
  for (const uint32_t i : md.checks_by_offset) {  // ascending offsets (the loader sorted them)
    const detail::BufferCheck& c = md.checks[i];
    const size_t begin = size_t(c.data - md.base);
    MTLITE_RETURN_IF_ERROR(zeros_until(begin));
    pos = std::max(pos, begin + c.size);
  }
  return zeros_until(md.size);
}

Status VerifyBuffers(const detail::ModelData& md) {
  MTLITE_RETURN_IF_ERROR(VerifyStructure(md));
  for (const detail::BufferCheck& c : md.checks) {
    const uint32_t got = Crc32c(c.data, c.size);
    if (got != c.crc32c) return ChecksumMismatch(c.Label(), c.crc32c, got);
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

}  // namespace

namespace detail {

Result<size_t> ModelTableBytes(const uint8_t* base, size_t size) {
  if (!base) return Status(StatusCode::kInvalidArgument, "model buffer is null");
  uint64_t fb_size = 0;
  MTLITE_RETURN_IF_ERROR(CheckEnvelope(base, size, &fb_size));
  const uint64_t bytes = TableCounts(fb::GetSizePrefixedModel(base)).Bytes();
  if (bytes > uint64_t(SIZE_MAX)) return Invalid("model tables do not fit the address space");
  return size_t(bytes);
}

Status PrepareModel(ModelData* md, const LoadOptions& options, void* storage, size_t storage_bytes) {
  const bool caller_storage = storage != nullptr;
  if (!caller_storage) {
    Result<size_t> bytes = ModelTableBytes(md->base, md->size);
    if (!bytes.ok()) return bytes.status();
    storage_bytes = bytes.value();
    storage = std::aligned_alloc(kStorageAlign, AlignUp(storage_bytes, kStorageAlign));
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

namespace {

// Caller storage: [Model][ModelData][shared_ptr control block][tables], each 64-byte aligned.
constexpr size_t kModelOffset = 0;
constexpr size_t kDataOffset = AlignUp(sizeof(Model), kStorageAlign);
constexpr size_t kControlOffset = kDataOffset + AlignUp(sizeof(detail::ModelData), kStorageAlign);
constexpr size_t kControlBytes = 128;  // a shared_ptr control block with a stateless deleter (~32-48 bytes)
constexpr size_t kTablesOffset = kControlOffset + kControlBytes;

// Hands the shared_ptr its control block from the caller's storage (a slot of kControlBytes);
// should a standard library ever need more, it falls back to the heap rather than fail.
template <class T>
struct SlotAllocator {
  using value_type = T;
  void* slot = nullptr;
  explicit SlotAllocator(void* s) : slot(s) {}
  template <class U>
  SlotAllocator(const SlotAllocator<U>& o) : slot(o.slot) {}  // NOLINT: rebinding
  T* allocate(size_t n) {
    if (n * sizeof(T) <= kControlBytes && alignof(T) <= kStorageAlign) return static_cast<T*>(slot);
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t) {
    if (p != slot) ::operator delete(p);
  }
  template <class U>
  bool operator==(const SlotAllocator<U>& o) const { return slot == o.slot; }
  template <class U>
  bool operator!=(const SlotAllocator<U>& o) const { return slot != o.slot; }
};

// Destroys a Model placed in caller storage (the storage itself belongs to the caller).
struct DestroyInPlace {
  void operator()(const Model* m) const { m->~Model(); }
};

}  // namespace

Model::Model() : data_(new detail::ModelData), owns_data_(true) {}
Model::Model(detail::ModelData* data) : data_(data), owns_data_(false) {}

Model::~Model() {
  if (data_->unmap && data_->mapping) data_->unmap(data_->mapping, data_->mapping_size);
  std::free(data_->table_block);
  if (owns_data_) {
    delete data_;
  } else {
    data_->~ModelData();
  }
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
  MTLITE_RETURN_IF_ERROR(detail::PrepareModel(model->data_, options, nullptr, 0));
  return std::shared_ptr<const Model>(std::move(model));
}

Result<size_t> Model::StorageBytes(const void* data, size_t size) {
  Result<size_t> tables = detail::ModelTableBytes(static_cast<const uint8_t*>(data), size);
  if (!tables.ok()) return tables.status();
  return kTablesOffset + tables.value();
}

Result<std::shared_ptr<const Model>> Model::FromBuffer(const void* data, size_t size, void* storage,
                                                       size_t storage_bytes, const LoadOptions& options) {
  if (!data) return Status(StatusCode::kInvalidArgument, "model buffer is null");
  if (reinterpret_cast<uintptr_t>(data) % kDataAlignment != 0) {
    return Status(StatusCode::kInvalidArgument, "model buffer must be 64-byte aligned (weights are read in place)");
  }
  if (!storage) return Status(StatusCode::kInvalidArgument, "model storage is null");
  if (reinterpret_cast<uintptr_t>(storage) % kStorageAlign != 0) {
    return Status(StatusCode::kInvalidArgument,
                  "model storage must be 64-byte aligned (declare it with alignas(64) or __attribute__((aligned(64))))");
  }
  Result<size_t> need = StorageBytes(data, size);
  if (!need.ok()) return need.status();
  if (storage_bytes < need.value()) {
    return Status(StatusCode::kResourceExhausted,
                  "model storage of " + std::to_string(storage_bytes) + " bytes is too small: this model needs " +
                      std::to_string(need.value()) + " bytes (Model::StorageBytes; `mtlite info --limits` prints it)");
  }
  uint8_t* s = static_cast<uint8_t*>(storage);
  auto* md = new (s + kDataOffset) detail::ModelData();
  md->base = static_cast<const uint8_t*>(data);
  md->size = size;
  Model* model = new (s + kModelOffset) Model(md);
  if (Status st = detail::PrepareModel(md, options, s + kTablesOffset, storage_bytes - kTablesOffset); !st.ok()) {
    model->~Model();
    return st;
  }
  return std::shared_ptr<const Model>(model, DestroyInPlace(), SlotAllocator<char>(s + kControlOffset));
}

}  // namespace mtlite

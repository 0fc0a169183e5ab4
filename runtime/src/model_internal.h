// Internal interfaces between the model loader's files: model.cc (validation and binding of the
// container, tensors and weights), model_spec.cc (the config), model_tokenizer.cc (the tokenizer),
// model_shortlist.cc (the shortlist), model_tables.cc (FlatBuffers envelope, table sizes),
// model_checks.cc (checksums, size profile), model_api.cc (the Model object and its placement in
// caller storage), model_file.cc (Model::Load).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <cstdint>
#include <new>
#include <string_view>
#include <type_traits>
#include <utility>

#include "checked_size.h"
#include "marian_layout.h"
#include "model_data.h"
#include "mtlite/mtlite.hpp"
#include "mtlite_generated.h"
#include "translator_bounds.h"

namespace mtlite {
namespace detail {

// Caller storage (model tables, the Model object) is 64-byte aligned, like every other buffer a
// caller hands to mtlite.
constexpr size_t kStorageAlign = 64;
constexpr uint64_t AlignUp(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }
constexpr size_t kTableAlign = 16;  // tables inside the storage block

// A malformed model file: kInvalidModel with a message naming the offending field or tensor.
inline Status InvalidModel(std::string message) { return Status(StatusCode::kInvalidModel, std::move(message)); }

inline Status TablesTooSmall() {
  return Status(StatusCode::kInternal, "model table storage smaller than the loader's own count (a bug)");
}

inline std::string_view View(const flatbuffers::String* s) { return std::string_view(s->c_str(), s->size()); }

// Sanity limits: far above any real Marian model, low enough that no size computed from
// them can overflow 64 bits (10M x 65536 x 4 bytes < 2^42).
constexpr int kMaxDModel = 16384;
constexpr int kMaxLayers = 256;
constexpr int kMaxVocab = 10000000;
constexpr int kMaxFfn = 65536;
constexpr int kMaxPositions = 1000000;

// The FlatBuffers verifier over base[0, size): the size prefix, the identifier and every table,
// vector and string of the structure; *fb_size: the FlatBuffer's bytes. Allocation-free.
Status CheckEnvelope(const uint8_t* base, size_t size, uint64_t* fb_size);

// Element counts of the loader's tables, read from a verified FlatBuffer before anything is
// bound. They bound what the loader binds (it checks each count against the file again).
struct TableCounts {
  uint64_t tensors = 0, checks = 0, encoder = 0, decoder = 0;
  uint64_t views = 0;  // string views: source/target pieces, source/target vocab
  uint64_t shortlist_marks = 0;  // bytes: one per target id while the shortlist is checked
  uint64_t token_rows = 0;       // int32 per target id: the inverse of a shortlist row_order

  explicit TableCounts(const fb::Model* root) {
    if (const auto* ts = root->tensors()) {
      tensors = ts->size();
      for (const fb::Tensor* t : *ts) checks += (t->data() ? 1 : 0) + (t->scales() ? 1 : 0);
    }
    if (const fb::Config* c = root->config()) {
      encoder = uint64_t(std::clamp<int32_t>(c->encoder_layers(), 0, kMaxLayers));
      decoder = uint64_t(std::clamp<int32_t>(c->decoder_layers(), 0, kMaxLayers));
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
    if (const fb::Shortlist* sl = root->shortlist()) {
      checks += (sl->frequent() ? 1 : 0) + (sl->offsets() ? 1 : 0) + (sl->targets() ? 1 : 0) + (sl->row_order() ? 1 : 0);
      if (const fb::Config* c = root->config()) shortlist_marks = uint64_t(std::clamp<int32_t>(c->target_vocab_size(), 0, kMaxVocab));
      if (sl->row_order()) token_rows = shortlist_marks;
    }
  }
  uint64_t Bytes() const {
    return AlignUp(tensors * sizeof(uint32_t), kTableAlign) + AlignUp(checks * sizeof(BufferCheck), kTableAlign) +
           AlignUp(checks * sizeof(uint32_t), kTableAlign) +
           AlignUp(encoder * sizeof(EncoderLayerView), kTableAlign) +
           AlignUp(decoder * sizeof(DecoderLayerView), kTableAlign) +
           // one table per piece/vocab list: each rounds up on its own
           AlignUp(views * sizeof(std::string_view), kTableAlign) + 4 * kTableAlign +
           AlignUp(shortlist_marks, kTableAlign) + AlignUp(token_rows * sizeof(int32_t), kTableAlign);
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


// The 4 bytes of Model.structure_crc32c inside the FlatBuffer, or null when the field is absent.
const uint8_t* StructureCrcField(const fb::Model* root);
// Every CRC32C of the file (FlatBuffer structure, each data buffer) and the zero padding.
Status VerifyBuffers(const ModelData& md);

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

// "<field> = <v> is outside [lo, hi]" unless lo <= v <= hi.
inline Status CheckRange(const Name& field, int64_t v, int64_t lo, int64_t hi) {
  if (v < lo || v > hi) {
    return InvalidModel(field.str() + " = " + std::to_string(v) + " is outside [" + std::to_string(lo) + ", " +
                        std::to_string(hi) + "]");
  }
  return Status::Ok();
}

// layout::LayerPrefix ("model.encoder.layers.<layer>") without allocating; model_layout_test
// checks that the two agree.
inline Name LayerPrefixName(layout::Side side, int layer) {
  char digits[16];
  const int n = std::snprintf(digits, sizeof digits, "%d", layer);
  return Name(side == layout::Side::kEncoder ? "model.encoder.layers." : "model.decoder.layers.") +
         std::string_view(digits, size_t(n > 0 ? n : 0));
}

// "f32" / "f16" / "int8", or "?" for a code this runtime does not know.
inline const char* DTypeName(fb::DType t) {
  WeightType w;
  return layout::WeightTypeFromCode(int(t), &w) ? layout::DTypeName(w) : "?";
}

// Tensor shapes are int64 vectors, which the FlatBuffers verifier only checks for 4-byte
// alignment: read them bytewise.
inline int64_t ShapeDim(const flatbuffers::Vector<int64_t>* shape, size_t i) {
  int64_t v;
  std::memcpy(&v, shape->Data() + i * sizeof(int64_t), sizeof v);
  return flatbuffers::EndianScalar(v);
}

inline std::string ShapeString(const flatbuffers::Vector<int64_t>* shape) {
  if (!shape) return "(none)";
  std::string s = "[";
  for (size_t i = 0; i < shape->size(); ++i) s += (i ? ", " : "") + std::to_string(ShapeDim(shape, i));
  return s + "]";
}

// What the loader's binding steps share: the file, the ModelData being filled, the block its
// tables come from and the data buffers registered so far. The loader (model.cc) derives from
// it; the tokenizer and the shortlist are bound in model_tokenizer.cc and model_shortlist.cc.
class LoaderBase {
 protected:
  LoaderBase(const uint8_t* base, size_t size, ModelData* md) : base_(base), size_(size), md_(md) {}

  // Bounds and alignment of one BufferRef; registers it for VerifyChecksums, the overlap check
  // and the size profile (component, dtype). `expected_size` < 0: any size. (model.cc)
  Status CheckRef(const fb::BufferRef* ref, std::string_view name, bool scales, layout::Component component,
                  const char* dtype, int64_t expected_size = -1);
  Status BindTokenizer();  // model_tokenizer.cc
  Status BindShortlist();  // model_shortlist.cc (optional section)

  const uint8_t* base_;
  size_t size_;
  ModelData* md_;
  const fb::Model* root_ = nullptr;
  TableArena* tables_ = nullptr;
  BufferCheck* checks_ = nullptr;
  size_t num_checks_ = 0, cap_checks_ = 0;

 private:
  // model_tokenizer.cc
  Status TakeViews(size_t n, Table<std::string_view>* out);
  Status BindSpm(const fb::SentencePieceModel* m, const char* what, const char* scores_name, const char* charsmap_name,
                 int vocab_size, SpmView* v);
  Status BindVocab(const fb::Vocab* vocab, const char* what, int vocab_size, VocabView* v);
  // model_shortlist.cc
  Status ArrayRef(const fb::BufferRef* ref, const char* name, const char* dtype, int64_t count, uint64_t* elements);
  bool SameVocabularies() const;
};

}  // namespace detail
}  // namespace mtlite

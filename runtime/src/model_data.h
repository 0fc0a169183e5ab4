// Internal, validated view of a loaded model. Everything points into the model
// bytes (mmap or caller buffer): no weight is copied. Built once by the loader
// (model.cc) after FlatBuffers verification and semantic validation, so the
// runtime may trust every pointer and size here.
//
// The loader's own tables (layer views, tokenizer piece/vocab views, the checksum list) are
// Table<T>s carved from one block whose size the loader computes before it binds anything
// (ModelTableBytes): a heap block for Model::Load / Model::FromBuffer, or the caller's storage
// for the firmware overload of Model::FromBuffer, which then allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "marian_layout.h"
#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace detail {

// A fixed array: either a view of memory the loader carved from the model's table block
// (Bind; copies share it), or, for tests and tools that build views by hand, an owned
// std::vector filled with push_back.
template <class T>
class Table {
 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  void Bind(T* data, size_t n) {
    owned_.clear();
    view_ = data;
    size_ = n;
  }
  void push_back(T v) {  // owned mode only (allocates)
    view_ = nullptr;
    owned_.push_back(std::move(v));
    size_ = owned_.size();
  }
  void pop_back() {  // owned mode only
    owned_.pop_back();
    size_ = owned_.size();
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return view_ ? view_ : owned_.data(); }
  const T* data() const { return view_ ? view_ : owned_.data(); }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  friend bool operator==(const Table& a, const Table& b) {
    if (a.size_ != b.size_) return false;
    for (size_t i = 0; i < a.size_; ++i)
      if (!(a[i] == b[i])) return false;
    return true;
  }
  friend bool operator!=(const Table& a, const Table& b) { return !(a == b); }

 private:
  T* view_ = nullptr;
  size_t size_ = 0;
  std::vector<T> owned_;
};

// A 2-D weight [rows=N output channels][cols=K].
struct WeightView {
  WeightType dtype = WeightType::kF32;
  bool blocked = false;          // int8 BlockedN8K4 layout (see schema/mtlite.fbs)
  int rows = 0, cols = 0;
  const void* data = nullptr;    // f32 / uint16 (f16 bits) / int8
  const float* scales = nullptr; // int8: per-row (per-output-channel) scales, f32[rows]
  const int32_t* row_of = nullptr;  // token id -> row (a shortlist's row_order); null: row = id
};

struct VectorView {
  const float* data = nullptr;   // nullptr when absent
  int size = 0;
};

struct LayerNormView {
  VectorView gamma, beta;  // gamma.data null: absent (a final norm of a stack without one)
};

// The blocks of a layer, each with its weights by name and its layer norm (after the residual
// add in post-norm models, on the block's input in pre-norm ones: Config.norm).
struct AttentionView {  // self- or cross-attention
  WeightView q, k, v, o;
  VectorView q_bias, k_bias, v_bias, o_bias;
  LayerNormView ln;
};

struct SsruView {  // Marian's SSRU cell: W (no bias), the forget gate's Wf and bf
  WeightView w, wf;
  VectorView bf;
  LayerNormView ln;
};

struct FfnView {
  WeightView fc1, fc2;
  VectorView fc1_bias, fc2_bias;
  LayerNormView ln;
};

struct EncoderLayerView {
  AttentionView self_attn;
  FfnView ffn;
};

struct DecoderLayerView {
  AttentionView self_attn;  // Config.decoder_layer_kind SelfAttention, else empty
  SsruView ssru;            // SSRU, else empty
  AttentionView cross_attn;
  FfnView ffn;
};

enum class PieceKind : uint8_t { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };

// How the tokenizer cuts normalized text into pieces (schema SpmModelType; the .spm's
// TrainerSpec.model_type).
enum class SpmModelType : uint8_t { kUnigram = 1, kBpe = 2 };

// A SentencePiece unigram or BPE model as stored in the file (validated by the loader).
struct SpmView {
  int num_pieces = 0;
  // piece i (views of the FlatBuffer strings; the table lives in the model's table block)
  Table<std::string_view> pieces;
  const float* scores = nullptr;         // [num_pieces]
  const PieceKind* types = nullptr;      // [num_pieces]
  const int32_t* sorted_pieces = nullptr;// [num_pieces], bytewise ascending piece order
  const int32_t* to_vocab = nullptr;     // [num_pieces] -> model vocab id
  int unk_id = 0, bos_id = -1, eos_id = -1, pad_id = -1;   // spm piece indices
  bool add_dummy_prefix = true;
  bool remove_extra_whitespaces = true;
  bool escape_whitespaces = true;
  bool treat_whitespace_as_suffix = false;
  bool byte_fallback = false;
  SpmModelType model_type = SpmModelType::kUnigram;
  const uint8_t* charsmap = nullptr;     // precompiled charsmap blob (may be null: identity)
  size_t charsmap_size = 0;
};

// HF vocab: model id -> piece string.
struct VocabView {
  Table<std::string_view> id_to_piece;
};

struct BufferCheck {
  std::string_view name;  // tensor name (in the FlatBuffer) or table name, for error messages
  bool scales = false;    // the int8 scales of tensor `name`, not its data
  const uint8_t* data = nullptr;
  size_t size = 0;
  uint32_t crc32c = 0;
  // For Model::SizeProfile: the component the loader bound the buffer to (kOtherTensors for a
  // tensor the model does not use) and what it holds ("f32", "f16", "int8", "bytes").
  layout::Component component;
  const char* dtype = "?";
  std::string Label() const { return scales ? std::string(name) + " (scales)" : std::string(name); }
};

// Output-vocabulary shortlist (optional section of the file; see schema/mtlite.fbs): for each
// source token id s, candidate target ids targets[offsets[s] .. offsets[s + 1]) (best first), plus
// target ids every sentence may produce (`frequent`). Validated by the loader: offsets are
// non-decreasing with offsets[0] = 0, every id is inside its vocabulary.
struct ShortlistView {
  bool present = false;
  const int32_t* frequent = nullptr;
  int num_frequent = 0;
  const uint32_t* offsets = nullptr;  // [source_vocab + 1]
  const int32_t* targets = nullptr;   // [offsets[source_vocab]]
  bool include_source_ids = false;    // shared vocabulary: a source token may be copied
  // Null: the output projection's rows are in token order. Otherwise row r of the output
  // projection (and of final_logits_bias, and of the embedding table tied to it) is token
  // row_order[r], and token_row is the inverse (built at load).
  const int32_t* row_order = nullptr;  // [target_vocab]
  const int32_t* token_row = nullptr;  // [target_vocab]
};

struct ModelData {
  ModelConfig config;
  const uint8_t* base = nullptr;   // start of the model bytes
  size_t size = 0;
  void* mapping = nullptr;         // region owned by the Model (Model::Load's file mapping), or null
  size_t mapping_size = 0;
  void (*unmap)(void* mapping, size_t size) = nullptr;  // releases `mapping` (~Model)
  void* table_block = nullptr;     // heap block of the tables below (platform::AlignedFree), or null: caller storage

  WeightView source_embed;         // [source_vocab][d_model]
  WeightView target_embed;         // [target_vocab][d_model] (same as source when shared)
  WeightView output_proj;          // [target_vocab][d_model] (same as target_embed when tied)
  VectorView final_logits_bias;    // [target_vocab] or absent
  VectorView encoder_positions;    // [max_positions * d_model] or absent (sinusoid)
  VectorView decoder_positions;
  Table<EncoderLayerView> encoder;
  Table<DecoderLayerView> decoder;
  LayerNormView encoder_final_ln;  // Config.encoder_final_norm, else absent
  LayerNormView decoder_final_ln;  // Config.decoder_final_norm, else absent

  SpmView source_spm, target_spm;
  VocabView source_vocab, target_vocab;

  ShortlistView shortlist;
  DecodingDefaults decoding_defaults;  // schema table DecodingDefaults (checked at load), or empty

  Table<BufferCheck> checks;       // every data buffer, for VerifyChecksums
  Table<uint32_t> checks_by_offset;  // indices into `checks`, by ascending file offset
};

// Validates base[0, size) (already in md->base / md->size) and fills the rest of *md: its tables
// come from `storage` (storage_bytes, 16-byte aligned) or, when storage is null, from a heap block
// the ModelData owns (table_block). Model::Load (model_file.cc) and Model::FromBuffer use it.
Status PrepareModel(ModelData* md, const LoadOptions& options, void* storage, size_t storage_bytes);
// Bytes of table storage PrepareModel needs for the model at base[0, size) (runs the FlatBuffers
// verifier; kInvalidModel for a buffer that is not an mtlite model).
Result<size_t> ModelTableBytes(const uint8_t* base, size_t size);

}  // namespace detail
}  // namespace mtlite

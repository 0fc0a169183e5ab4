// Internal, validated view of a loaded model. Everything points into the model
// bytes (mmap or caller buffer): no weight is copied. Built once by the loader
// (model.cc) after FlatBuffers verification and semantic validation, so the
// runtime may trust every pointer and size here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "marian_layout.h"
#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace detail {

// A 2-D weight [rows=N output channels][cols=K].
struct WeightView {
  WeightType dtype = WeightType::kF32;
  bool blocked = false;          // int8 BlockedN8K4 layout (see schema/mtlite.fbs)
  int rows = 0, cols = 0;
  const void* data = nullptr;    // f32 / uint16 (f16 bits) / int8
  const float* scales = nullptr; // int8: per-row (per-output-channel) scales, f32[rows]
};

struct VectorView {
  const float* data = nullptr;   // nullptr when absent
  int size = 0;
};

struct LayerNormView {
  VectorView gamma, beta;
};

struct AttentionView {
  WeightView q, k, v, o;
  VectorView q_bias, k_bias, v_bias, o_bias;
};

struct EncoderLayerView {
  AttentionView self_attn;
  LayerNormView self_attn_ln;
  WeightView fc1, fc2;
  VectorView fc1_bias, fc2_bias;
  LayerNormView final_ln;
};

struct DecoderLayerView {
  AttentionView self_attn;
  LayerNormView self_attn_ln;
  AttentionView cross_attn;
  LayerNormView cross_attn_ln;
  WeightView fc1, fc2;
  VectorView fc1_bias, fc2_bias;
  LayerNormView final_ln;
};

enum class PieceKind : uint8_t { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };

// A SentencePiece unigram model as stored in the file (validated by the loader).
struct SpmView {
  int num_pieces = 0;
  // piece i: bytes [piece_data[i], piece_data[i] + piece_size[i]); owned by ModelData
  // (pointers into the FlatBuffer strings).
  std::vector<std::string_view> pieces;
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
  const uint8_t* charsmap = nullptr;     // precompiled charsmap blob (may be null: identity)
  size_t charsmap_size = 0;
};

// HF vocab: model id -> piece string.
struct VocabView {
  std::vector<std::string_view> id_to_piece;
};

struct BufferCheck {
  std::string name;       // tensor or table name, for the error message
  const uint8_t* data = nullptr;
  size_t size = 0;
  uint32_t crc32c = 0;
  // For Model::SizeProfile: the component the loader bound the buffer to (kOtherTensors for a
  // tensor the model does not use) and what it holds ("f32", "f16", "int8", "bytes").
  layout::Component component;
  const char* dtype = "?";
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
};

struct ModelData {
  ModelConfig config;
  const uint8_t* base = nullptr;   // start of the model bytes
  size_t size = 0;
  void* mapping = nullptr;         // mmap'd region owned by the Model (nullptr for FromBuffer)
  size_t mapping_size = 0;

  WeightView source_embed;         // [source_vocab][d_model]
  WeightView target_embed;         // [target_vocab][d_model] (same as source when shared)
  WeightView output_proj;          // [target_vocab][d_model] (same as target_embed when tied)
  VectorView final_logits_bias;    // [target_vocab] or absent
  VectorView encoder_positions;    // [max_positions * d_model] or absent (sinusoid)
  VectorView decoder_positions;
  std::vector<EncoderLayerView> encoder;
  std::vector<DecoderLayerView> decoder;

  SpmView source_spm, target_spm;
  VocabView source_vocab, target_vocab;

  ShortlistView shortlist;

  std::vector<BufferCheck> checks; // every data buffer, for VerifyChecksums
};

}  // namespace detail
}  // namespace mtlite

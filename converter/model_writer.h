// In-memory description of an .mtlite model (what the converter produced) and its serializer.
// Tests build damaged variants by editing a ModelSpec and serializing it again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "marian_layout.h"
#include "mtlite/mtlite.hpp"
#include "spm_proto.h"

namespace mtlite {
namespace converter {

// std::vector storage aligned to 64 bytes, so a serialized model can be used with
// Model::FromBuffer directly.
template <class T>
struct Aligned64Allocator {
  using value_type = T;
  Aligned64Allocator() = default;
  template <class U>
  Aligned64Allocator(const Aligned64Allocator<U>&) {}  // NOLINT
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(64))); }
  void deallocate(T* p, size_t) { ::operator delete(p, std::align_val_t(64)); }
  template <class U>
  bool operator==(const Aligned64Allocator<U>&) const { return true; }
  template <class U>
  bool operator!=(const Aligned64Allocator<U>&) const { return false; }
};
using AlignedBytes = std::vector<uint8_t, Aligned64Allocator<uint8_t>>;

struct TensorSpec {
  std::string name;              // HF name
  WeightType dtype = WeightType::kF32;
  std::vector<int64_t> shape;
  // Stored bytes. kInt8: BlockedN8K4 layout, SymmetricPerChannel with `scales` (one per row);
  // kF16: row-major binary16 bits; kF32: row-major.
  std::vector<uint8_t> data;
  std::vector<float> scales;
};

struct SpmSpec {
  SpmProto proto;
  std::vector<int32_t> to_vocab;  // spm piece index -> model vocab id
};

// Output-vocabulary shortlist section (schema table Shortlist; detail::ShortlistView).
struct ShortlistSpec {
  std::vector<int32_t> frequent;   // target ids always allowed
  std::vector<uint32_t> offsets;   // [source_vocab + 1]
  std::vector<int32_t> targets;    // [offsets.back()]: per source id, best first
  bool include_source_ids = false;
  std::vector<int32_t> row_order;  // empty, or [target_vocab]: token of projection row r
  int top_k = 0;                   // the most targets kept per source id
  std::string method;              // provenance, free text
};

// The decoding settings a release translates with (schema table DecodingDefaults): the default of
// every interface's TranslateOptions for the model. Each loader fills what its input records
// (marian_convert.cc: decoder.yml / config*.yml; hf_convert.cc: generation_config.json; a
// CTranslate2 / Argos loader: its package's settings) into ModelSpec::decoding_defaults; unset
// fields are not recorded. `ignored` names the settings read but not representable ("key value:
// why"); the converter reports each as a warning.
struct DecodingDefaultsSpec {
  std::string source;                                  // the file they come from, e.g. "decoder.yml"
  std::optional<int> beam_size;                        // 1 = greedy
  std::optional<int> max_length;                       // generated tokens including </s>
  std::optional<float> max_length_ratio;               // with max_length_offset: ratio x source tokens + offset
  std::optional<int> max_length_offset;
  std::optional<float> length_penalty;                 // HF length_penalty / Marian normalize
  std::vector<std::string> ignored;
  bool empty() const {
    return !beam_size && !max_length && !max_length_ratio && !max_length_offset && !length_penalty;
  }
};

struct ModelSpec {
  uint32_t format_version = layout::kFormatVersion1;  // kFormatVersionRowOrder with shortlist->row_order
  ModelConfig config;            // weight_type is implied by the tensors; langs go to metadata
  std::vector<TensorSpec> tensors;
  SpmSpec source_spm;
  std::optional<SpmSpec> target_spm;                  // absent: same as source
  std::vector<std::string> source_vocab;              // id -> piece
  std::optional<std::vector<std::string>> target_vocab;
  std::string converter_version, quantization, source_hash;
  std::vector<std::pair<std::string, std::string>> extra;
  std::optional<ShortlistSpec> shortlist;             // absent: no shortlist section
  DecodingDefaultsSpec decoding_defaults;             // empty(): no DecodingDefaults table
};

// [size-prefixed FlatBuffer "MTL1"][zero padding][data segment]; every data buffer starts at
// a 64-byte-aligned file offset and carries its CRC32C. Deterministic for a given spec.
AlignedBytes SerializeModel(const ModelSpec& spec);

// Piece indices sorted by bytewise comparison of the piece strings (SentencePieceModel.sorted_pieces).
std::vector<int32_t> SortedPieceOrder(const std::vector<SpmPiece>& pieces);

}  // namespace converter
}  // namespace mtlite

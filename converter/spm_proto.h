// Minimal decoder for SentencePiece's ModelProto (sentencepiece_model.proto, proto2) so the
// converter can read a .spm file without linking protobuf. Only the fields mtlite needs are
// kept; every other field is skipped. Malformed input yields a Status error, never a crash.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace converter {

struct SpmPiece {
  std::string piece;
  float score = 0.0f;
  int type = 1;  // ModelProto.SentencePiece.Type: 1 NORMAL, 2 UNKNOWN, 3 CONTROL,
                 // 4 USER_DEFINED, 5 UNUSED, 6 BYTE (raw value as stored)
};

struct SpmProto {
  std::vector<SpmPiece> pieces;
  // TrainerSpec (proto2 defaults)
  int model_type = 1;  // 1 UNIGRAM, 2 BPE, 3 WORD, 4 CHAR
  int unk_id = 0, bos_id = 1, eos_id = 2, pad_id = -1;
  bool byte_fallback = false, treat_whitespace_as_suffix = false;
  // NormalizerSpec (proto2 defaults)
  bool add_dummy_prefix = true, remove_extra_whitespaces = true, escape_whitespaces = true;
  std::string normalizer_name;
  std::string precompiled_charsmap;
};

// Parses a serialized sentencepiece.ModelProto (the bytes of a .spm / .model file).
// Returns kInvalidModel on malformed wire data (truncation, bad varints, wire-type mismatch).
Status ParseSpmProto(std::string_view bytes, SpmProto* out);

// The consistency rules libsentencepiece applies when it loads a model (every rejection of its
// model_interface.cc InitializePieces: at least one piece, no empty piece, no piece defined twice
// within the normal kinds (NORMAL, USER_DEFINED, UNUSED) or within the reserved ones (UNKNOWN,
// CONTROL, BYTE), exactly one UNKNOWN piece, BYTE pieces "<0xHH>" only with byte_fallback and
// then all 256 of them), plus what mtlite relies on: piece types 1..6, TrainerSpec.unk_id naming
// that UNKNOWN piece, the precompiled charsmap's layout (the tokenizer's own check), and a
// TrainerSpec.model_type the runtime implements (1 UNIGRAM or 2 BPE).
// kInvalidModel with the first violation; `what` (e.g. "source.spm") starts the message.
Status ValidateSpmProto(const SpmProto& proto, const std::string& what);

}  // namespace converter
}  // namespace mtlite

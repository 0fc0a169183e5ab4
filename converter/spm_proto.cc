#include "spm_proto.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <unordered_set>

#include "tokenizer_text.h"

namespace mtlite {
namespace converter {
namespace {

// Protobuf wire types.
enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// Field numbers from sentencepiece_model.proto.
namespace field {
// ModelProto
constexpr uint32_t kPieces = 1, kTrainerSpec = 2, kNormalizerSpec = 3;
// ModelProto.SentencePiece
constexpr uint32_t kPiece = 1, kScore = 2, kType = 3;
// TrainerSpec
constexpr uint32_t kModelType = 3, kTreatWhitespaceAsSuffix = 24, kByteFallback = 35,
                   kUnkId = 40, kBosId = 41, kEosId = 42, kPadId = 43;
// NormalizerSpec
constexpr uint32_t kName = 1, kPrecompiledCharsmap = 2, kAddDummyPrefix = 3,
                   kRemoveExtraWhitespaces = 4, kEscapeWhitespaces = 5;
}  // namespace field

Status Malformed(const std::string& what, size_t offset) {
  return Status(StatusCode::kInvalidModel,
                "sentencepiece model: " + what + " at byte " + std::to_string(offset));
}

// Bounds-checked cursor over one (sub)message. `base` is the absolute offset of data[0]
// in the whole file, for error messages.
class Reader {
 public:
  Reader(std::string_view data, size_t base) : data_(data), base_(base) {}
  bool done() const { return pos_ >= data_.size(); }
  size_t offset() const { return base_ + pos_; }

  Status Varint(uint64_t* v) {
    uint64_t result = 0;
    for (int i = 0; i < 10; ++i) {
      if (pos_ >= data_.size()) return Malformed("truncated varint", offset());
      const uint8_t b = static_cast<uint8_t>(data_[pos_++]);
      if (i == 9 && b > 1) return Malformed("varint overflows 64 bits", offset() - 1);
      result |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
      if ((b & 0x80) == 0) {
        *v = result;
        return Status::Ok();
      }
    }
    return Malformed("varint longer than 10 bytes", offset());
  }

  Status Tag(uint32_t* field_number, uint32_t* wire_type) {
    const size_t at = offset();
    uint64_t tag = 0;
    Status s = Varint(&tag);
    if (!s.ok()) return s;
    if (tag > 0xffffffffu || (tag >> 3) == 0) return Malformed("invalid field tag", at);
    *field_number = static_cast<uint32_t>(tag >> 3);
    *wire_type = static_cast<uint32_t>(tag & 7);
    return Status::Ok();
  }

  Status Bytes(std::string_view* v, size_t* abs_offset) {
    uint64_t len = 0;
    Status s = Varint(&len);
    if (!s.ok()) return s;
    if (len > data_.size() - pos_) return Malformed("length-delimited field overruns its message", offset());
    *abs_offset = offset();
    *v = data_.substr(pos_, static_cast<size_t>(len));
    pos_ += static_cast<size_t>(len);
    return Status::Ok();
  }

  Status Fixed32(uint32_t* v) {
    if (data_.size() - pos_ < 4) return Malformed("truncated 32-bit field", offset());
    uint32_t r = 0;
    for (int i = 0; i < 4; ++i) r |= static_cast<uint32_t>(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
    pos_ += 4;
    *v = r;
    return Status::Ok();
  }

  Status Skip(uint32_t wire_type) {
    switch (wire_type) {
      case kVarint: {
        uint64_t v;
        return Varint(&v);
      }
      case kFixed64:
        if (data_.size() - pos_ < 8) return Malformed("truncated 64-bit field", offset());
        pos_ += 8;
        return Status::Ok();
      case kLengthDelimited: {
        std::string_view v;
        size_t at;
        return Bytes(&v, &at);
      }
      case kFixed32: {
        uint32_t v;
        return Fixed32(&v);
      }
      default:  // 3/4 (groups, unused by sentencepiece) and 6/7 (invalid)
        return Malformed("unsupported wire type " + std::to_string(wire_type), offset());
    }
  }

 private:
  std::string_view data_;
  size_t base_;
  size_t pos_ = 0;
};

Status Expect(uint32_t wire_type, uint32_t expected, uint32_t field_number, const char* message,
              size_t offset) {
  if (wire_type == expected) return Status::Ok();
  return Malformed(std::string(message) + " field " + std::to_string(field_number) +
                       " has wire type " + std::to_string(wire_type) + ", expected " +
                       std::to_string(expected),
                   offset);
}

// int32/enum/bool fields are varints; negative int32 values are sign-extended to 64 bits.
Status ReadInt(Reader& r, uint32_t wire_type, uint32_t fn, const char* msg, int* out) {
  Status s = Expect(wire_type, kVarint, fn, msg, r.offset());
  if (!s.ok()) return s;
  uint64_t v = 0;
  s = r.Varint(&v);
  if (!s.ok()) return s;
  *out = static_cast<int>(static_cast<int32_t>(static_cast<uint32_t>(v)));
  return Status::Ok();
}

Status ReadBool(Reader& r, uint32_t wire_type, uint32_t fn, const char* msg, bool* out) {
  Status s = Expect(wire_type, kVarint, fn, msg, r.offset());
  if (!s.ok()) return s;
  uint64_t v = 0;
  s = r.Varint(&v);
  if (!s.ok()) return s;
  *out = v != 0;
  return Status::Ok();
}

Status ReadString(Reader& r, uint32_t wire_type, uint32_t fn, const char* msg, std::string* out) {
  Status s = Expect(wire_type, kLengthDelimited, fn, msg, r.offset());
  if (!s.ok()) return s;
  std::string_view v;
  size_t at;
  s = r.Bytes(&v, &at);
  if (!s.ok()) return s;
  out->assign(v.data(), v.size());
  return Status::Ok();
}

Status ParsePiece(std::string_view bytes, size_t base, SpmPiece* p) {
  Reader r(bytes, base);
  while (!r.done()) {
    uint32_t fn = 0, wt = 0;
    Status s = r.Tag(&fn, &wt);
    if (!s.ok()) return s;
    if (fn == field::kPiece) {
      s = ReadString(r, wt, fn, "SentencePiece", &p->piece);
    } else if (fn == field::kScore) {
      s = Expect(wt, kFixed32, fn, "SentencePiece", r.offset());
      uint32_t bits = 0;
      if (s.ok()) s = r.Fixed32(&bits);
      if (s.ok()) std::memcpy(&p->score, &bits, sizeof(bits));
    } else if (fn == field::kType) {
      s = ReadInt(r, wt, fn, "SentencePiece", &p->type);
    } else {
      s = r.Skip(wt);
    }
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status ParseTrainerSpec(std::string_view bytes, size_t base, SpmProto* out) {
  Reader r(bytes, base);
  const char* msg = "TrainerSpec";
  while (!r.done()) {
    uint32_t fn = 0, wt = 0;
    Status s = r.Tag(&fn, &wt);
    if (!s.ok()) return s;
    switch (fn) {
      case field::kModelType: s = ReadInt(r, wt, fn, msg, &out->model_type); break;
      case field::kUnkId: s = ReadInt(r, wt, fn, msg, &out->unk_id); break;
      case field::kBosId: s = ReadInt(r, wt, fn, msg, &out->bos_id); break;
      case field::kEosId: s = ReadInt(r, wt, fn, msg, &out->eos_id); break;
      case field::kPadId: s = ReadInt(r, wt, fn, msg, &out->pad_id); break;
      case field::kByteFallback: s = ReadBool(r, wt, fn, msg, &out->byte_fallback); break;
      case field::kTreatWhitespaceAsSuffix:
        s = ReadBool(r, wt, fn, msg, &out->treat_whitespace_as_suffix);
        break;
      default: s = r.Skip(wt); break;
    }
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status ParseNormalizerSpec(std::string_view bytes, size_t base, SpmProto* out) {
  Reader r(bytes, base);
  const char* msg = "NormalizerSpec";
  while (!r.done()) {
    uint32_t fn = 0, wt = 0;
    Status s = r.Tag(&fn, &wt);
    if (!s.ok()) return s;
    switch (fn) {
      case field::kName: s = ReadString(r, wt, fn, msg, &out->normalizer_name); break;
      case field::kPrecompiledCharsmap:
        s = ReadString(r, wt, fn, msg, &out->precompiled_charsmap);
        break;
      case field::kAddDummyPrefix: s = ReadBool(r, wt, fn, msg, &out->add_dummy_prefix); break;
      case field::kRemoveExtraWhitespaces:
        s = ReadBool(r, wt, fn, msg, &out->remove_extra_whitespaces);
        break;
      case field::kEscapeWhitespaces: s = ReadBool(r, wt, fn, msg, &out->escape_whitespaces); break;
      default: s = r.Skip(wt); break;
    }
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace

Status ParseSpmProto(std::string_view bytes, SpmProto* out) {
  if (out == nullptr) return Status(StatusCode::kInvalidArgument, "ParseSpmProto: null output");
  *out = SpmProto();
  Reader r(bytes, 0);
  while (!r.done()) {
    uint32_t fn = 0, wt = 0;
    Status s = r.Tag(&fn, &wt);
    if (!s.ok()) return s;
    if (fn == field::kPieces || fn == field::kTrainerSpec || fn == field::kNormalizerSpec) {
      s = Expect(wt, kLengthDelimited, fn, "ModelProto", r.offset());
      if (!s.ok()) return s;
      std::string_view sub;
      size_t at = 0;
      s = r.Bytes(&sub, &at);
      if (!s.ok()) return s;
      if (fn == field::kPieces) {
        out->pieces.emplace_back();
        s = ParsePiece(sub, at, &out->pieces.back());
      } else if (fn == field::kTrainerSpec) {
        s = ParseTrainerSpec(sub, at, out);  // repeated occurrences merge, as in protobuf
      } else {
        s = ParseNormalizerSpec(sub, at, out);
      }
    } else {
      s = r.Skip(wt);  // self_test_data, denormalizer_spec, unknown fields
    }
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

namespace {

// "<0xHH>" (upper-case hex, as sentencepiece writes and reads byte pieces) -> 0..255, else -1.
int BytePieceValue(const std::string& piece) {
  if (piece.size() != 6 || piece.compare(0, 3, "<0x") != 0 || piece[5] != '>') return -1;
  int v = 0;
  for (size_t i = 3; i < 5; ++i) {
    const char c = piece[i];
    if (c >= '0' && c <= '9') {
      v = v * 16 + (c - '0');
    } else if (c >= 'A' && c <= 'F') {
      v = v * 16 + (c - 'A' + 10);
    } else {
      return -1;
    }
  }
  return v;
}

Status Inconsistent(const std::string& what, const std::string& message) {
  return Status(StatusCode::kInvalidModel, what + ": not a valid SentencePiece model: " + message);
}

}  // namespace

Status ValidateSpmProto(const SpmProto& proto, const std::string& what) {
  enum : int { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };
  if (proto.model_type != 1 && proto.model_type != 2) {
    return Status(StatusCode::kInvalidModel, what + ": SentencePiece model_type " + std::to_string(proto.model_type) +
                                                 " is not supported (1 unigram and 2 BPE are; 3 WORD and 4 CHAR are not)");
  }
  const size_t n = proto.pieces.size();
  if (n == 0) return Inconsistent(what, "it has no pieces");
  std::unordered_set<std::string_view> normal, reserved;
  normal.reserve(n);
  std::vector<bool> byte_seen(256, false);
  int unknown = -1;
  for (size_t i = 0; i < n; ++i) {
    const SpmPiece& p = proto.pieces[i];
    const auto at = [i] { return "piece " + std::to_string(i); };  // only on the way to an error
    if (p.piece.empty()) return Inconsistent(what, at() + " is empty");
    if (p.type < kNormal || p.type > kByte) {
      return Inconsistent(what, at() + " has type " + std::to_string(p.type) + " (1..6 are defined)");
    }
    const bool is_normal = p.type == kNormal || p.type == kUserDefined || p.type == kUnused;
    if (!(is_normal ? normal : reserved).insert(p.piece).second) {
      return Inconsistent(what, at() + " '" + p.piece + "' is defined twice");
    }
    if (p.type == kUnknown) {
      if (unknown >= 0) {
        return Inconsistent(what, "pieces " + std::to_string(unknown) + " and " + std::to_string(i) +
                                      " are both of type UNKNOWN");
      }
      unknown = int(i);
    }
    if (p.type == kByte) {
      if (!proto.byte_fallback) return Inconsistent(what, at() + " is a BYTE piece but byte_fallback is off");
      const int b = BytePieceValue(p.piece);
      if (b < 0) return Inconsistent(what, at() + " '" + p.piece + "' is a BYTE piece but not <0xHH>");
      byte_seen[size_t(b)] = true;
    }
  }
  if (unknown < 0) return Inconsistent(what, "no piece is of type UNKNOWN");
  if (proto.byte_fallback) {
    for (int b = 0; b < 256; ++b) {
      if (!byte_seen[size_t(b)]) {
        char name[8];
        std::snprintf(name, sizeof(name), "<0x%02X>", b);
        return Inconsistent(what, std::string("byte_fallback is on but the BYTE piece ") + name + " is missing");
      }
    }
  }
  if (proto.unk_id != unknown) {
    return Inconsistent(what, "TrainerSpec.unk_id is " + std::to_string(proto.unk_id) +
                                  " but the UNKNOWN piece is " + std::to_string(unknown));
  }
  const std::string& cm = proto.precompiled_charsmap;
  if (const char* problem = detail::tokenizer_text::CharsmapProblem(
          reinterpret_cast<const uint8_t*>(cm.data()), cm.size())) {
    return Inconsistent(what, problem);
  }
  return Status::Ok();
}

}  // namespace converter
}  // namespace mtlite

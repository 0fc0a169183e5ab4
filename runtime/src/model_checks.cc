// Checksums and the size profile of a loaded model: every byte of a .mtlite file is covered by
// a CRC32C (the FlatBuffer structure, each data buffer) or must be zero (alignment padding).
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "crc32c.h"
#include "marian_layout.h"
#include "model_internal.h"
#include "status_macros.h"

namespace mtlite {
namespace {

using layout::Part;

Status ChecksumMismatch(const std::string& name, uint32_t stored, uint32_t computed) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " (stored %08x, computed %08x)", unsigned(stored), unsigned(computed));
  return Status(StatusCode::kChecksumMismatch, "checksum mismatch in '" + name + "'" + buf);
}

// Model.structure_crc32c: CRC32C of the FlatBuffer with that field's 4 bytes read as zero.
Status VerifyStructure(const detail::ModelData& md) {
  const uint8_t* field = detail::StructureCrcField(fb::GetSizePrefixedModel(md.base));
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

}  // namespace

Status detail::VerifyBuffers(const detail::ModelData& md) {
  MTLITE_RETURN_IF_ERROR(VerifyStructure(md));
  for (const detail::BufferCheck& c : md.checks) {
    const uint32_t got = Crc32c(c.data, c.size);
    if (got != c.crc32c) return ChecksumMismatch(c.Label(), c.crc32c, got);
  }
  return VerifyPadding(md);
}

namespace {

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

Status Model::VerifyChecksums() const { return detail::VerifyBuffers(*data_); }

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

}  // namespace mtlite

#include "lex_binary.h"

#include <cstring>

namespace mtlite {
namespace converter {
namespace {

constexpr size_t kHeaderWords = 6;

uint64_t Word(const std::string& b, size_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | uint8_t(b[at + size_t(i)]);
  return v;
}

Status Bad(const std::string& name, const std::string& what) {
  return Status(StatusCode::kInvalidArgument, name + ": binary lexical shortlist: " + what);
}

}  // namespace

bool IsBinaryLex(const std::string& bytes) { return bytes.size() >= 8 && Word(bytes, 0) == kBinaryLexMagic; }

uint64_t BinaryLexChecksum(const std::string& bytes) {
  uint64_t seed = 0;
  for (size_t at = 16; at + 8 <= bytes.size(); at += 8) {
    seed ^= Word(bytes, at) + 0x9e3779b9ull + (seed << 6) + (seed >> 2);
  }
  return seed;
}

Status ParseBinaryLex(const std::string& bytes, const std::string& name, BinaryLex* out) {
  *out = BinaryLex();
  if (bytes.size() < kHeaderWords * 8) return Bad(name, "file of " + std::to_string(bytes.size()) + " bytes is shorter than the header");
  if (!IsBinaryLex(bytes)) return Bad(name, "wrong magic");
  const uint64_t first = Word(bytes, 16), best = Word(bytes, 24), n_offsets = Word(bytes, 32), n_targets = Word(bytes, 40);
  const uint64_t body = bytes.size() - kHeaderWords * 8;
  if (n_offsets < 1 || n_offsets > body / 8 || n_targets > (body - n_offsets * 8) / 4 ||
      n_offsets * 8 + n_targets * 4 != body) {
    return Bad(name, "the header's sizes (" + std::to_string(n_offsets) + " offsets, " + std::to_string(n_targets) +
                         " targets) do not match the file size " + std::to_string(bytes.size()));
  }
  if (BinaryLexChecksum(bytes) != Word(bytes, 8)) return Bad(name, "checksum mismatch (the file is damaged)");
  out->first_num = first;
  out->best_num = best;
  out->offsets.resize(size_t(n_offsets));
  for (size_t i = 0; i < out->offsets.size(); ++i) {
    out->offsets[i] = Word(bytes, kHeaderWords * 8 + 8 * i);
    if (i > 0 ? out->offsets[i] < out->offsets[i - 1] : out->offsets[i] != 0) return Bad(name, "offsets are not non-decreasing from 0");
  }
  if (out->offsets.back() != n_targets) return Bad(name, "the last offset is not the number of targets");
  out->targets.resize(size_t(n_targets));
  if (n_targets) std::memcpy(out->targets.data(), bytes.data() + kHeaderWords * 8 + n_offsets * 8, size_t(n_targets) * 4);
  return Status::Ok();
}

}  // namespace converter
}  // namespace mtlite

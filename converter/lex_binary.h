// Marian's binary lexical shortlist (`lex.*.s2t.bin`, as Firefox Translations ship them), read
// by `mtlite shortlist --lex` and by `mtlite convert` of a release folder.
//
// Layout (little-endian): a header of six uint64 {magic 0xF11A48D5013417F5, checksum, firstNum,
// bestNum, wordToOffsetSize, shortListsSize}, then uint64 wordToOffset[wordToOffsetSize] and
// uint32 shortLists[shortListsSize]. Source id s allows the target ids
// shortLists[wordToOffset[s] .. wordToOffset[s + 1]); wordToOffsetSize = source vocabulary + 1.
// firstNum: Marian always allows target ids 0..firstNum-1; bestNum: the most targets kept per
// source id when the file was made. checksum: over the uint64 words from firstNum to the end of
// the file (a trailing partial word ignored), seed = 0, then for each word w:
//   seed ^= w + 0x9e3779b9 + (seed << 6) + (seed >> 2).
// Ids are the model's vocabulary ids (Marian's: the .spm's, or the YAML vocabulary's).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace converter {

constexpr uint64_t kBinaryLexMagic = 0xF11A48D5013417F5ull;

struct BinaryLex {
  uint64_t first_num = 0, best_num = 0;
  std::vector<uint64_t> offsets;  // [sources + 1]
  std::vector<uint32_t> targets;  // [offsets.back()]
};

// True when `bytes` starts with the magic (no text lexicon does: it is not valid UTF-8).
bool IsBinaryLex(const std::string& bytes);
// The checksum of a whole file's bytes (see above); the file must hold at least the header.
uint64_t BinaryLexChecksum(const std::string& bytes);
// Checks the magic, the size the header implies, the checksum and that the offsets are
// non-decreasing and end at shortListsSize. Errors name `name`.
Status ParseBinaryLex(const std::string& bytes, const std::string& name, BinaryLex* out);

}  // namespace converter
}  // namespace mtlite

// Byte spans of the text layer (sentence splitting, markup, text translation): offsets into one
// UTF-8 buffer, [begin, end). Plain structs so that every buffer of a text call is a fixed array
// in the translator's arena.
#pragma once

#include <cstdint>

#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace text {

struct ByteSpan {
  uint32_t begin = 0, end = 0;
  uint32_t size() const { return end - begin; }
  bool empty() const { return end == begin; }
};

// How text is cut into sentences: mtlite::SplitMode of the public API (kNone, kSentence,
// kParagraph, kWrapped; see mtlite.hpp).
using SplitMode = ::mtlite::SplitMode;

}  // namespace text
}  // namespace mtlite

// Upper bounds of TranslatorLimits that fixed-size tables are sized by, in one place: the loader
// refuses a model whose default beam no translator could run, CheckLimits refuses limits above
// them, and the search and the streamer size their per-beam / per-sentence tables with them.
#pragma once

namespace mtlite {
namespace detail {

// Beam width (TranslatorLimits::max_beam, ModelConfig::default_beam): the beam search keeps a
// sentence's candidates in stack arrays of this size (search.cc).
constexpr int kMaxBeam = 64;
// Sentences of one call (TranslatorLimits::max_batch): per-sentence tables of the translator
// and the streamer (translator_impl.h, streamer.h).
constexpr int kMaxBatch = 4096;

}  // namespace detail
}  // namespace mtlite

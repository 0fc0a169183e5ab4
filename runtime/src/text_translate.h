// The text layer of a Translator (Translator::TranslateText): text in, text out.
//   text (or HTML: html_markup.h parses it into text content + markup items, and block items cut
//   it into segments) -> sentences (sentence_split.h, the language's rules) -> pieces (a sentence
//   longer than max_input_bytes or max_length_break tokens is cut at whitespace / token
//   boundaries) -> batches of max_batch pieces through the translator -> the translations put
//   back in place, with the source's whitespace between sentences (HTML: the markup re-inserted
//   around the target tokens aligned to the source tokens it wrapped).
// Every buffer is a persistent buffer of the arena plan, sized by TextCapacities from
// TranslatorLimits::max_text_bytes: a text call allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "mtlite/mtlite.hpp"
#include "text_span.h"
#include "model_data.h"
#include "tokenizer.h"

namespace mtlite {

class TranslatorImpl;

namespace text {
struct MarkupItem;
struct AlignedToken;
struct SentencePair;
}  // namespace text

namespace detail {

class ArenaPlan;

// Capacities of the text layer's buffers for the limits (all 0 when max_text_bytes is 0).
struct TextCapacities {
  size_t text_bytes = 0;    // input bytes per call
  size_t sentences = 0;     // sentences per call
  size_t output_bytes = 0;  // translated text (plain; with markup: the HTML)
  size_t piece_bytes = 0;   // per batch slot: a piece with its line breaks made spaces
  size_t batch = 0;         // pieces per translate call (max_batch)
  size_t pieces = 0;        // pieces translated (sorted by length) at a time
  size_t words = 0;         // quality: words of the translation
  size_t source_tokens = 0; // one piece's source ids
  size_t target_tokens = 0;
  size_t pivot_source_tokens = 0;  // a pivot's second model: source tokens of the first's output
  // HTML (reserved only with TranslatorLimits::alignments, which it needs)
  size_t markup_items = 0, segments = 0, tokens = 0, render_scratch = 0;
};
TextCapacities TextCapacitiesFor(const TranslatorLimits& limits);

// One piece of a sentence: the unit the translator gets.
struct TextPiece {
  uint32_t sentence = 0;  // index into the call's sentences
  text::ByteSpan span;    // in the source (plain) text
  uint32_t tokens = 0;    // source tokens (the batches' sort key)
  uint32_t out_begin = 0, out_len = 0;        // its translation in the pieces' output
  uint32_t first_token = 0, num_tokens = 0;   // html: its aligned target tokens
  uint32_t first_word = 0, num_words = 0;     // quality: its words
  float score = 0;
  StatusCode status = StatusCode::kOk;
  bool first = true, last = false;  // first / last piece of its sentence
};

class TextLayer {
 public:
  // Binds the text buffers of `plan` in `arena` (the plan's kBufText* buffers).
  void Bind(const ArenaPlan& plan, uint8_t* arena, const TranslatorLimits& limits);
  Status Run(TranslatorImpl* tr, std::string_view text, const TextOptions& text_options,
             const TranslateOptions& options, const TextResultView** out, TextSentenceCallback on_sentence,
             void* on_sentence_user);

 private:
  Status CutSentence(TranslatorImpl* tr, std::string_view src, uint32_t index, int max_tokens);
  Status AddPiece(TranslatorImpl* tr, std::string_view src, const TextPiece& piece);
  Status ProcessPieces(TranslatorImpl* tr, std::string_view src);
  std::string_view View(std::string_view src, const TextPiece& piece, size_t slot);
  Status Append(std::string_view bytes);
  void EndSentence(std::string_view src, uint32_t index, uint32_t tokens_end);
  Status AlignPiece(TranslatorImpl* tr, std::string_view view, TextPiece* piece, const HypothesisView& hyp,
                    const HypothesisView* hyp1);
  void TargetSpans(const SpmTokenizer& tok, const HypothesisView& hyp, text::ByteSpan* spans);
  void RecordError(const TextPiece& piece, const Status& s);
  void ScoreWords(TranslatorImpl* tr, TextPiece* piece, const HypothesisView& hyp);

  TextCapacities cap_;
  size_t max_input_bytes_ = 0;
  int batch_ = 1;
  // buffers
  text::ByteSpan* spans_ = nullptr;
  TextSentenceView* sentences_ = nullptr;
  char* output_ = nullptr;          // plain mode: the result; markup: the target text content
  char* piece_out_ = nullptr;       // the pieces' translations, in the order translated
  char* html_out_ = nullptr;        // markup: the result
  char* plain_ = nullptr;           // markup: the source text content
  char* piece_text_ = nullptr;      // [batch][piece_bytes]
  TextPiece* pieces_ = nullptr;     // [pieces]
  uint32_t* order_ = nullptr;       // [pieces]
  std::string_view* batch_views_ = nullptr;  // [batch]
  text::MarkupItem* items_ = nullptr;
  text::ByteSpan* segments_ = nullptr;
  text::AlignedToken* tokens_ = nullptr;
  text::SentencePair* pairs_ = nullptr;
  uint8_t* render_scratch_ = nullptr;
  int32_t* ids_ = nullptr;                 // one piece's source ids
  text::ByteSpan* token_spans_ = nullptr;  // one piece's source, then target, token spans
  TextWordView* words_ = nullptr;          // [words]
  char* decode_scratch_ = nullptr;         // one hypothesis' text, decoded token by token
  size_t decode_cap_ = 0;

  // state of one call
  TranslateOptions opt_;
  bool html_ = false, quality_ = false, words_truncated_ = false;
  size_t num_words_ = 0;
  size_t num_pieces_ = 0, out_len_ = 0, num_tokens_ = 0, gap_from_ = 0, piece_end_ = 0;
  TextResultView result_;
  size_t failed_ = 0;
  char first_error_[256] = {};
  size_t first_error_len_ = 0;
  uint32_t first_error_sentence_ = 0;
  TextSentenceCallback on_sentence_ = nullptr;
  void* on_sentence_user_ = nullptr;
};

// Byte spans in `text` of the source tokens `ids` it was encoded to (no allocation): each piece's
// surface (U+2581 as a space, byte pieces as their byte) is found at the current position after
// skipping whitespace; a piece whose surface is not there (NFKC changed the text, <unk>) takes
// the next code point.
void SourceTokenSpans(const VocabView& vocab, std::string_view text, const int32_t* ids, int n,
                      text::ByteSpan* spans);

}  // namespace detail
}  // namespace mtlite

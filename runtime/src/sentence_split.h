// Language-aware sentence splitting of UTF-8 text into byte spans (the text layer's first step).
// No allocation, no recursion, O(n): one forward pass over the text with bounded look-back.
//
// Modes (text_span.h): kNone: the whole text, trimmed, is one span. kSentence: each line ('\n';
// "\r\n" too) is one sentence. kParagraph: each line is a paragraph split into sentences; a
// sentence never crosses a line break. kWrapped: blank lines (only whitespace) separate
// paragraphs, a single line break is a space inside a sentence.
// Whitespace: ASCII space \t \n \r \f \v and U+00A0 U+1680 U+2000-U+200A U+2028 U+2029 U+202F
// U+205F U+3000 (UTF-8). Only '\n' ends a line. Bytes that are not valid UTF-8 are ordinary
// non-whitespace bytes.
//
// Where a sentence ends (kParagraph, kWrapped):
//  - after a terminator run (. ! ? ‽ … and runs like ?! !! ...; also ؟ । ॥ ۔), then optional
//    closing quotes/brackets (" ' ” ’ “ ‘ » « › ‹ ) ] } and the fullwidth/CJK ones), then
//    whitespace, when the next word starts (after opening quotes, brackets, ¿ ¡, dashes) with
//    an uppercase letter, a digit or a letter of a caseless script (Arabic, Hebrew, Han, ...).
//    Before a lowercase letter or other punctuation there is never a break, for ! and ? too
//    ("Yahoo! is", "¿Qué? no sé": quoted exclamations are kept whole).
//  - CJK terminators (。 ！ ？ ． ｡) end a sentence whatever follows and need no whitespace:
//    "你好。我很好" is two sentences; inside a word, a closing bracket followed by hiragana
//    (「行く。」と言った) is a quotation and no break; ． before a digit is a decimal point.
//    ASCII . ! ? between two Han/kana characters also break ("你好!我").
//  - after a single '.', no break when the word before it is
//      an abbreviation of the language (or of the generic set): titles and always-inside ones
//        (Dr. Mr. z. B. d. h. p. ex. e.g. Jan.), matched with or without the spaces between
//        their parts ("z.B." = "z. B."); "numeric" ones (No. Art. pp. Vol.) only before a
//        digit; "weak" ones (etc. usw. a.m. и т. д.) do break before an uppercase word;
//      a single letter (initials "J. K. Rowling", "U. S.") or dotted single letters ("U.S.",
//        "e.g."): known limitation, "plan B. Then" and "the U.S. The" are not split;
//      a number that is the first word of its sentence (list items "1. Buy milk.");
//      in German a number before a month name or after an article/preposition (ordinals:
//        "am 1. Januar", "der 3. Platz", "im 19. Jahrhundert").
//  - A '.' inside a word never ends a sentence (3.5, 1,000.50, 10.30, v1.2.3, example.com/a.b,
//    https://x.y/z?q=1, a.b@c.de, report.pdf): only a terminator before whitespace counts.
// Limitations: no statistical model; abbreviations not in the tables that end a sentence, or
// sentences that start lowercase, are not split; an abbreviation at the end of a sentence in the
// "always" class hides the boundary ("... by Dr. Then"); lines without terminal punctuation
// never split.
#pragma once

#include <cstddef>
#include <string_view>

#include "mtlite/mtlite.hpp"
#include "text_span.h"

namespace mtlite {
namespace text {

struct SplitterLanguage;  // the tables of one language (opaque outside sentence_split.cc)

// Rules for a language code: ISO 639-1 ("en"), 639-3 ("eng", "deu", "ger"), BCP-47-ish
// ("en-US", "pt_BR"), NLLB-style ("eng_Latn"), M2M-style ("__de__"), any case. Languages with
// tables: en de fr es it nl pt ru. Unknown or empty: the generic rules (always valid).
const SplitterLanguage& SplitterLanguageFor(std::string_view code);
const char* SplitterLanguageName(const SplitterLanguage& lang);  // "en", "de", ..., "generic"

// Splits text into sentences by `mode`. Writes spans[0, *count) in text order, non-overlapping;
// each span starts and ends with a non-whitespace byte; every non-whitespace byte is in exactly
// one span; bytes between spans are whitespace only. Empty or whitespace-only text: 0 spans.
// kOutOfRange when more than `capacity` spans are needed: spans[0, capacity) then hold the first
// ones, *count is the number needed, and the message says it (spans may be null when capacity
// is 0: a counting call). kOutOfRange also for a text of 4 GiB or more (ByteSpan is 32-bit).
// kInvalidArgument for a null count, or null spans with capacity > 0. Never allocates on success.
Status SplitSentences(std::string_view text, SplitMode mode, const SplitterLanguage& lang, ByteSpan* spans,
                      size_t capacity, size_t* count);

// Bytes of the whitespace character (as defined above) at text[i], 0 when it is not whitespace.
size_t WhitespaceLength(std::string_view text, size_t i);

}  // namespace text
}  // namespace mtlite

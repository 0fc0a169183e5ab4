// Inline markup of the text layer: an HTML snippet becomes plain text plus markup items
// (ParseMarkup); after translation the items are put back into the translated plain text by the
// word alignment (RenderMarkup). No heap allocation, no recursion; the caller owns every buffer.
//
// Classification (tag names are ASCII case-insensitive):
//   void    area base br col embed hr img input keygen link meta param source track wbr basefont
//           bgsound frame, and any self-closed start tag <x ... />.
//   opaque  copied verbatim as one item, never translated:
//           - comments <!-- -->, <!...> (DOCTYPE), <![CDATA[ ]]>, <?...?> (not block);
//           - raw-text elements, start tag to end tag: script style textarea xmp iframe noembed
//             noframes noscript, and plaintext (to the end of the input) (block);
//           - elements whose content is not translated, with all their nested content:
//             translate="no", class with the word "notranslate", and code svg math
//             (block when the element's name is a block name, so <span translate="no"> and
//             <code> are inline opaques that stay inside their sentence);
//           - an unterminated construct at the end of the input (a tag without '>', a comment
//             without "-->", a raw-text element without its end tag): from its '<' to the end.
//   block   the items that break sentences: open/close/void of p div li ul ol dl dt dd h1-h6 td
//           th tr table thead tbody tfoot caption col colgroup section article header footer nav
//           aside blockquote pre figure figcaption main form fieldset legend address hr br title
//           option optgroup select details summary dialog menu html head body center hgroup
//           frameset, and the raw-text opaques. Everything else (b i em strong a span u s sub sup
//           code small mark abbr cite q kbd var time label font big ..., comments) is inline.
//   <code>  opaque: it holds identifiers and commands, which must not be translated. <pre> is a
//           block translated like <p>: it is only a presentation; preformatted code is nearly
//           always <pre><code>, which the <code> rule covers, and poetry in <pre> gets translated.
//   <title> its content is text (character references decoded, '<' literal) up to </title>.
//
// Text: character references &name; (a fixed table: the XML five, nbsp, typographic quotes and
// dashes, Latin-1 letters and signs) and &#N; &#xH; (U+0001..U+10FFFF, no surrogates; the ';' is
// required) are decoded; any other '&' is literal. A '<' not followed by a letter, '/'+letter,
// '!' or '?' is literal text. Decoding never grows: text_cap >= html.size() always suffices.
// Bytes, including invalid UTF-8 and NUL, pass through.
//
// Repair (the items always nest; every kOpen has its kClose):
//   1. A close tag closes the innermost open element of that name if it is at most
//      kMaxCloseSearch levels up; the elements above it are closed first by synthetic closes at
//      the close tag (<b><i>x</b>y</i> -> <b><i>x</i></b>y, the later </i> dropped).
//   2. A close tag without such an open element is dropped (counted in *dropped).
//   3. Optional end tags, judged on the innermost open element only: a start tag of a block
//      that closes a paragraph (address article aside blockquote details dialog div dl dd dt
//      fieldset figcaption figure footer form h1-h6 header hgroup hr li main menu nav ol p pre
//      section table ul) closes an open p; li closes an li; dt/dd close a dt/dd; option and
//      optgroup close an option; tr closes a td/th and then a tr; td/th close a td/th.
//   4. Elements still open at the end are closed by synthetic closes at the end.
//   A synthetic close has an empty source span at the html offset where it was made and
//   synthetic = true; RenderMarkup writes it as "</name>" with the name spelled as in its start
//   tag. The items of an opaque element's content are parsed (so nesting is respected) and then
//   removed; while it is open, item_cap must also hold its open descendants.
//   item_cap >= html.size() always suffices.
//
// Cost: O(n * kMaxCloseSearch) time worst case (a close tag searches at most that many levels),
// no limit on depth.
//
// Placement (RenderMarkup):
//   - Gaps (source text outside the sentences) are equal in source and target; an item whose
//     text_pos is in a gap or on a sentence edge goes to the same offset in the target gap.
//   - An element <x>..</x> over source [os, cs) takes the hull of the target tokens aligned to
//     source tokens overlapping [os, cs) in the sentences it partly covers, the whole target
//     sentence for a sentence it fully covers, and the gap offset for an end in a gap. An end
//     inside a source token copied unchanged keeps its offset inside the target token; an end in
//     whitespace before/after the first/last token keeps its distance within the target
//     whitespace. When no aligned token overlaps (or os == cs), each end is placed like a void.
//   - A void or opaque item strictly inside a sentence: inside the aligned token containing it
//     (at the same offset when the token was copied unchanged, else before it), else before the
//     target token aligned to the first source token after it (keeping the whitespace distance),
//     else after the sentence's last target token. A sentence without tokens is a verbatim copy:
//     positions map by byte offset.
//   - Repair, in document order: a child is clamped into its parent's range and starts no earlier
//     than the end of its previous sibling; items at one position keep their input order.
//     Cost: O(items * tokens of the (at most two) sentences an item touches + sentences log).
// Text is escaped on output: & < > and U+00A0 become &amp; &lt; &gt; &nbsp;. Identity render of
// a parse therefore gives the input up to: entity spelling, literal '>'/'<' escaped, dropped stray
// closes, synthetic closes written out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "mtlite/mtlite.hpp"
#include "text_span.h"

namespace mtlite {
namespace text {

// How far up the open-element stack a close tag looks for its start tag (repair rule 1).
inline constexpr size_t kMaxCloseSearch = 256;

enum class MarkupKind : uint8_t {
  kOpen,    // an element's start tag
  kClose,   // its end tag (or a synthetic one)
  kVoid,    // void element, self-closed tag
  kOpaque,  // comment, doctype, PI, CDATA, raw-text or untranslated element: verbatim, one unit
};

struct MarkupItem {
  ByteSpan source;            // the item's bytes in html (kOpaque: all of it); empty when synthetic
  uint32_t text_pos = 0;      // stands before plain-text byte text_pos
  MarkupKind kind = MarkupKind::kOpen;
  bool block = false;         // breaks sentences
  bool synthetic = false;     // kClose made by the repair: written as "</name>"
  int32_t partner = -1;       // kOpen <-> kClose index; -1 otherwise
  int32_t parent = -1;        // the innermost enclosing kOpen; -1 at top level
  uint32_t depth = 0;         // number of enclosing elements
  ByteSpan name;              // tag name in html (elements, voids, element opaques); else empty
};

Status ParseMarkup(std::string_view html, char* text, size_t text_cap, size_t* text_len, MarkupItem* items,
                   size_t item_cap, size_t* num_items, size_t* dropped);

// One target token of the translated plain text and the source token it is aligned to.
struct AlignedToken {
  ByteSpan target;  // in target_plain
  ByteSpan source;  // in source_plain; empty when unaligned
};

// One translated sentence; tokens[first_token, first_token + num_tokens) in target order. No
// tokens: the target is a verbatim copy of the source.
struct SentencePair {
  ByteSpan source, target;
  uint32_t first_token = 0, num_tokens = 0;
};

// Scratch RenderMarkup needs for num_items items (num_tokens is not used at present).
size_t RenderScratchBytes(size_t num_items, size_t num_tokens);

// Validates its input (kInvalidArgument: items not nested/partnered as ParseMarkup makes them,
// spans out of bounds, sentences unsorted or overlapping, tokens outside their sentence).
// kOutOfRange when out_cap or scratch_bytes is too small (the message says how much is needed).
Status RenderMarkup(std::string_view html, const MarkupItem* items, size_t num_items, std::string_view source_plain,
                    std::string_view target_plain, const SentencePair* sentences, size_t num_sentences,
                    const AlignedToken* tokens, size_t num_tokens, char* out, size_t out_cap, size_t* out_len,
                    void* scratch, size_t scratch_bytes);

// Maximal non-empty ranges of [0, text_len) not interrupted by a block item's text_pos.
Status MarkupSegments(const MarkupItem* items, size_t num_items, size_t text_len, ByteSpan* segments, size_t cap,
                      size_t* count);

}  // namespace text
}  // namespace mtlite

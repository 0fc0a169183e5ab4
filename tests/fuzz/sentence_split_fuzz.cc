// libFuzzer target: the sentence splitter (runtime/src/sentence_split.h) on arbitrary bytes, in
// every mode and with a few languages. Needs no model.
// Properties:
//   - OK with enough capacity; spans in text order, non-empty, non-overlapping, inside the
//     text; each starts and ends with a non-whitespace byte (whitespace as the header defines
//     it, checked by an independent table here); every non-whitespace byte is in a span;
//   - kNone gives at most one span; kSentence and kParagraph spans hold no '\n'; kSentence
//     spans are separated by a '\n'; kWrapped spans hold no blank line;
//   - deterministic (a second call gives the same spans), the spans of kParagraph refine
//     those of kSentence (every line span is a union of paragraph spans);
//   - a capacity one short is kOutOfRange with the needed count and a message, the spans
//     written before it equal to the first ones of the full call; a counting call (no spans)
//     gives the same count.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "sentence_split.h"

namespace mtlite {
namespace {

using fuzz::Fail;
using text::ByteSpan;
using text::SplitMode;

// 0: other byte, 1: first byte of a whitespace character, 2: a later byte of one.
std::vector<uint8_t> WhitespaceMap(std::string_view s) {
  static const char* const kMulti[] = {
      "\xc2\xa0",     "\xe1\x9a\x80", "\xe2\x80\x80", "\xe2\x80\x81", "\xe2\x80\x82", "\xe2\x80\x83",
      "\xe2\x80\x84", "\xe2\x80\x85", "\xe2\x80\x86", "\xe2\x80\x87", "\xe2\x80\x88", "\xe2\x80\x89",
      "\xe2\x80\x8a", "\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xaf", "\xe2\x81\x9f", "\xe3\x80\x80"};
  std::vector<uint8_t> kind(s.size(), 0);
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    size_t len = 0;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      len = 1;
    } else {
      for (const char* m : kMulti) {
        const size_t l = std::strlen(m);
        if (s.substr(i, l) == std::string_view(m, l)) len = l;
      }
    }
    if (len == 0) {
      ++i;
      continue;
    }
    kind[i] = 1;
    for (size_t k = 1; k < len; ++k) kind[i + k] = 2;
    i += len;
  }
  return kind;
}

void CheckSpans(std::string_view input, std::string_view s, SplitMode mode, const std::vector<uint8_t>& kind,
                const ByteSpan* spans, size_t n) {
  size_t pos = 0;
  for (size_t k = 0; k < n; ++k) {
    const ByteSpan sp = spans[k];
    if (sp.begin >= sp.end || sp.end > s.size())
      Fail(input, "mode %d: span %zu [%u, %u) empty or past the text (%zu bytes)", int(mode), k, sp.begin, sp.end,
           s.size());
    if (sp.begin < pos) Fail(input, "mode %d: span %zu overlaps or is out of order", int(mode), k);
    for (size_t i = pos; i < sp.begin; ++i)
      if (kind[i] == 0) Fail(input, "mode %d: byte %zu is outside the spans and not whitespace", int(mode), i);
    if (kind[sp.begin] != 0 || kind[sp.end - 1] != 0)
      Fail(input, "mode %d: span %zu [%u, %u) starts or ends with whitespace", int(mode), k, sp.begin, sp.end);
    const std::string_view body = s.substr(sp.begin, sp.size());
    if ((mode == SplitMode::kSentence || mode == SplitMode::kParagraph) && body.find('\n') != std::string_view::npos)
      Fail(input, "mode %d: span %zu crosses a line break", int(mode), k);
    if (mode == SplitMode::kWrapped) {
      // no line holding only whitespace inside a span
      size_t last_nl = std::string_view::npos;
      for (size_t i = sp.begin; i < sp.end; ++i) {
        if (s[i] == '\n') {
          if (last_nl != std::string_view::npos) {
            bool blank = true;
            for (size_t j = last_nl + 1; j < i; ++j) blank = blank && kind[j] != 0;
            if (blank) Fail(input, "mode wrapped: span %zu holds a blank line", k);
          }
          last_nl = i;
        } else if (kind[i] == 0) {
          last_nl = std::string_view::npos;
        }
      }
    }
    if (mode == SplitMode::kSentence && k > 0 &&
        s.substr(spans[k - 1].end, sp.begin - spans[k - 1].end).find('\n') == std::string_view::npos)
      Fail(input, "mode sentence: spans %zu and %zu are on one line", k - 1, k);
    pos = sp.end;
  }
  for (size_t i = pos; i < s.size(); ++i)
    if (kind[i] == 0) Fail(input, "mode %d: byte %zu after the last span is not whitespace", int(mode), i);
  if (mode == SplitMode::kNone && n > 1) Fail(input, "mode none: %zu spans", n);
}

std::vector<ByteSpan> SplitChecked(std::string_view input, std::string_view s, SplitMode mode,
                                   const text::SplitterLanguage& lang, const std::vector<uint8_t>& kind) {
  std::vector<ByteSpan> spans(s.size() + 1);
  size_t n = 0;
  const Status st = text::SplitSentences(s, mode, lang, spans.data(), spans.size(), &n);
  if (!st.ok()) Fail(input, "mode %d lang %s: %s", int(mode), text::SplitterLanguageName(lang), st.ToString().c_str());
  if (n > spans.size()) Fail(input, "count %zu beyond capacity %zu", n, spans.size());
  spans.resize(n);
  CheckSpans(input, s, mode, kind, spans.data(), n);

  std::vector<ByteSpan> again(s.size() + 1);
  size_t n2 = 0;
  if (!text::SplitSentences(s, mode, lang, again.data(), again.size(), &n2).ok() || n2 != n)
    Fail(input, "mode %d: a second call differs", int(mode));
  for (size_t k = 0; k < n; ++k)
    if (again[k].begin != spans[k].begin || again[k].end != spans[k].end)
      Fail(input, "mode %d: a second call differs at span %zu", int(mode), k);

  size_t counted = 0;
  const Status c = text::SplitSentences(s, mode, lang, nullptr, 0, &counted);
  if (counted != n || (n == 0 ? !c.ok() : c.code() != StatusCode::kOutOfRange))
    Fail(input, "mode %d: counting call gave %zu (%s), expected %zu", int(mode), counted, c.ToString().c_str(), n);
  if (n > 0) {
    std::vector<ByteSpan> short_spans(n - 1);
    size_t n3 = 0;
    const Status t = text::SplitSentences(s, mode, lang, short_spans.data(), n - 1, &n3);
    if (t.code() != StatusCode::kOutOfRange || t.message().empty() || n3 != n)
      Fail(input, "mode %d: capacity %zu for %zu spans gave %s, count %zu", int(mode), n - 1, n, t.ToString().c_str(),
           n3);
    for (size_t k = 0; k + 1 < n; ++k)
      if (short_spans[k].begin != spans[k].begin || short_spans[k].end != spans[k].end)
        Fail(input, "mode %d: span %zu differs with a short capacity", int(mode), k);
  }
  return spans;
}

}  // namespace
}  // namespace mtlite

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mtlite;
  if (size > 8192) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  // the first byte picks the language, the rest is the text
  static const char* const kLangs[] = {"en", "de", "fr", "es", "ru", "it", "nl", "pt", "", "zho_Hans"};
  const std::string_view s = size > 0 ? input.substr(1) : input;
  const text::SplitterLanguage& lang =
      text::SplitterLanguageFor(size > 0 ? kLangs[data[0] % (sizeof(kLangs) / sizeof(kLangs[0]))] : "");
  const std::vector<uint8_t> kind = WhitespaceMap(s);
  SplitChecked(input, s, text::SplitMode::kNone, lang, kind);
  const std::vector<text::ByteSpan> lines = SplitChecked(input, s, text::SplitMode::kSentence, lang, kind);
  const std::vector<text::ByteSpan> sentences = SplitChecked(input, s, text::SplitMode::kParagraph, lang, kind);
  SplitChecked(input, s, text::SplitMode::kWrapped, lang, kind);
  // paragraph spans refine the line spans
  size_t k = 0;
  for (const text::ByteSpan& line : lines) {
    if (k >= sentences.size() || sentences[k].begin != line.begin)
      fuzz::Fail(input, "line [%u, %u) does not start a sentence", line.begin, line.end);
    while (k < sentences.size() && sentences[k].end < line.end) ++k;
    if (k >= sentences.size() || sentences[k].end != line.end)
      fuzz::Fail(input, "line [%u, %u) does not end a sentence", line.begin, line.end);
    ++k;
  }
  if (k != sentences.size()) fuzz::Fail(input, "sentences outside the lines");
  return 0;
}

// mtlite split: the sentence splitter of the text layer (runtime/src/sentence_split.h) on stdin.
// Plain output: one sentence a line (line breaks inside a --split wrapped sentence become
// spaces). --json: one JSON line per input unit (a line; a paragraph of lines for wrapped; the
// whole input for none) with its text and the sentence byte spans, relative to that text:
//   {"text": "Hi. Bye.", "spans": [[0, 3], [4, 8]]}
// With --split paragraph or sentence every input line gives one JSON line, blank ones too.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "json_writer.h"
#include "line_input.h"
#include "sentence_split.h"

namespace mtlite {
namespace cli {
namespace {

constexpr const char kSummary[] =
    "Cuts the text of stdin into sentences with the rules of a language and prints one sentence\n"
    "a line, or with --json one JSON line per input line (a paragraph with --split wrapped) with\n"
    "the sentences' byte spans.";

text::SplitMode ModeOf(const std::string& s) {
  if (s == "none") return text::SplitMode::kNone;
  if (s == "sentence") return text::SplitMode::kSentence;
  if (s == "wrapped") return text::SplitMode::kWrapped;
  return text::SplitMode::kParagraph;
}

bool IsBlank(std::string_view line) {
  for (char c : line)
    if (!(c == ' ' || (c >= '\t' && c <= '\r'))) return false;
  return true;
}

// Splits one unit and prints it; false on an error (printed).
bool PrintUnit(const std::string& unit, text::SplitMode mode, const text::SplitterLanguage& lang, bool json,
               std::vector<text::ByteSpan>* spans) {
  spans->resize(unit.size() + 1);
  size_t n = 0;
  const Status s = text::SplitSentences(unit, mode, lang, spans->data(), spans->size(), &n);
  if (!s.ok()) {
    std::fprintf(stderr, "mtlite split: %s\n", s.ToString().c_str());
    return false;
  }
  if (json) {
    JsonWriter w;
    w.BeginObject(JsonWriter::kInline).Key("text").String(unit).Key("spans").BeginArray(JsonWriter::kInline);
    for (size_t k = 0; k < n; ++k) {
      w.BeginArray(JsonWriter::kInline).Uint((*spans)[k].begin).Uint((*spans)[k].end).EndArray();
    }
    w.EndArray().EndObject();
    std::fwrite(w.str().data(), 1, w.str().size(), stdout);
    std::fputc('\n', stdout);
    return true;
  }
  for (size_t k = 0; k < n; ++k) {
    std::string sentence = unit.substr((*spans)[k].begin, (*spans)[k].size());
    for (char& c : sentence)
      if (c == '\n' || c == '\r') c = ' ';
    std::fwrite(sentence.data(), 1, sentence.size(), stdout);
    std::fputc('\n', stdout);
  }
  return true;
}

}  // namespace

ParseResult ParseSplitArgs(int argc, const char* const* argv, SplitArgs* a) {
  ArgParser p("mtlite split", kSummary);
  p.Choice("--split", {"paragraph", "sentence", "wrapped", "none"}, &a->split,
           "paragraph: a line is a paragraph; sentence: a line is a sentence; wrapped: blank lines separate "
           "paragraphs, single line breaks are soft; none: the whole input is one sentence");
  p.String("--lang", "CODE", &a->lang,
           "the language's rules (en, de, fr, es, it, nl, pt, ru; also eng, en-US, eng_Latn, __en__; "
           "default: generic)");
  p.Flag("--json", &a->json, "one JSON line per input unit: {\"text\": ..., \"spans\": [[begin, end], ...]}");
  return p.Parse(argc, argv);
}

int SplitMain(int argc, char** argv) {
  SplitArgs a;
  const ParseResult parsed = ParseSplitArgs(argc, argv, &a);
  if (!parsed.ok()) return PrintParseResult(parsed, "mtlite split");
  const text::SplitMode mode = ModeOf(a.split);
  const text::SplitterLanguage& lang = text::SplitterLanguageFor(a.lang);
  std::vector<text::ByteSpan> spans;
  std::string line, unit;
  bool have_unit = false;
  auto flush = [&] {
    const bool ok = !have_unit || PrintUnit(unit, mode, lang, a.json, &spans);
    unit.clear();
    have_unit = false;
    return ok;
  };
  while (ReadTextLine(stdin, &line)) {
    if (mode == text::SplitMode::kParagraph || mode == text::SplitMode::kSentence) {
      if (!PrintUnit(line, mode, lang, a.json, &spans)) return 1;
      continue;
    }
    if (mode == text::SplitMode::kWrapped && IsBlank(line)) {
      if (!flush()) return 1;
      continue;
    }
    if (have_unit) unit += '\n';
    unit += line;
    have_unit = true;
  }
  if (std::ferror(stdin)) {
    std::fprintf(stderr, "mtlite split: reading stdin failed\n");
    return 1;
  }
  return flush() ? 0 : 1;
}

}  // namespace cli
}  // namespace mtlite

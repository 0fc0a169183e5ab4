// mtlite translate -m MODEL [options] [TEXT ...]
// Reads UTF-8 lines from stdin (or takes each argument as one sentence) and writes one
// translation per line to stdout, in order. Errors name the input line.
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "line_input.h"
#include "model_data.h"
#include "mtlite/mtlite.hpp"
#include "output_file.h"
#include "tokenizer.h"

namespace mtlite {
namespace cli {

// `mtlite translate --help`: what the command does.
constexpr char kSummary[] =
    "Translates text from stdin (or each TEXT argument) and writes the translation, line for\n"
    "line. By default (--split paragraph) a line is a paragraph: it is cut into sentences, each\n"
    "is translated, and they are put back on the line with its own spaces between them.\n"
    "--split sentence: a line is one sentence; --split wrapped: blank lines separate paragraphs and\n"
    "single line breaks are soft; --split none: a line is given to the model as it is (the\n"
    "default when --n-best, --scores, --alignments, --output-ids, --input-ids or --stream ask for\n"
    "per-line output). --html: the whole input is one HTML document (markup kept in place).\n"
    "A sentence that fails is kept untranslated and reported on stderr with its line number and\n"
    "the exit code is 1 (with --split none: its output line is left empty).\n"
    "\n"
    "With --batch N > 1, a window of --sort-window lines (default 64 x N) is read at a time and\n"
    "translated in batches of sentences of similar length (shortest first; the output is the same\n"
    "as in input order, and is written in input order when the window is done).\n"
    "\n"
    "--stream shows each translation while it is generated, one sentence at a time. On a\n"
    "terminal the partial translation is redrawn in place and replaced by the final line.\n"
    "Otherwise every partial translation is written as a line of its own that starts with a\n"
    "tab, and the final lines follow exactly as without --stream (translations never start\n"
    "with a tab), so `grep -v $'^\\t'` gives the output without --stream.";

namespace {

bool ParseIds(const std::string& line, std::vector<int32_t>* ids) {
  ids->clear();
  const char* p = line.c_str();
  while (*p) {
    while (*p == ' ' || *p == '\t' || *p == '\r') ++p;
    if (!*p) break;
    char* end = nullptr;
    long v = std::strtol(p, &end, 10);
    if (end == p || v < 0 || v > 0x7fffffff) return false;
    ids->push_back(int32_t(v));
    p = end;
  }
  return true;
}

void PrintHyp(const TranslateArgs& a, const HypothesisView& h, size_t line_index, std::string* out) {
  std::string s;
  if (a.n_best > 1) s += std::to_string(line_index) + " ||| ";
  if (a.output_ids) {
    for (int i = 0; i < h.num_ids; ++i) {
      if (i) s += ' ';
      s += std::to_string(h.ids[i]);
    }
  } else {
    s.append(h.text.data(), h.text.size());
  }
  if (a.scores || a.n_best > 1) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6f", h.score);
    s += " ||| ";
    s += buf;
  }
  if (a.alignments && h.alignment) {
    s += " |||";
    for (int t = 0; t < h.num_ids; ++t) {
      const float* row = h.alignment + size_t(t) * h.source_tokens;
      int best = 0;
      for (int j = 1; j < h.source_tokens; ++j)
        if (row[j] > row[best]) best = j;
      s += ' ' + std::to_string(best) + '-' + std::to_string(t);
    }
  }
  s += '\n';
  *out += s;
}

// Display width of a code point on a terminal, estimated: 0 for combining marks and zero-width
// characters, 2 for the East Asian wide / fullwidth blocks and the common emoji blocks, else 1.
// An over-estimate only shortens the partial line shown by --stream.
int CodePointWidth(uint32_t c) {
  if ((c >= 0x300 && c <= 0x36F) || (c >= 0x200B && c <= 0x200F)) return 0;
  if ((c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0xA4CF) || (c >= 0xAC00 && c <= 0xD7A3) ||
      (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF60) ||
      (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1F64F) || (c >= 0x1F900 && c <= 0x1F9FF) ||
      (c >= 0x20000 && c <= 0x3FFFD))
    return 2;
  return 1;
}

// The code point of the UTF-8 sequence s[begin, end) (an invalid one counts as U+FFFD).
uint32_t CodePoint(const std::string& s, size_t begin, size_t end) {
  const auto b = [&](size_t i) { return uint32_t(static_cast<unsigned char>(s[i])); };
  const size_t n = end - begin;
  if (n == 1 && b(begin) < 0x80) return b(begin);
  if (n == 2 && (b(begin) & 0xE0) == 0xC0) return ((b(begin) & 0x1F) << 6) | (b(begin + 1) & 0x3F);
  if (n == 3 && (b(begin) & 0xF0) == 0xE0)
    return ((b(begin) & 0x0F) << 12) | ((b(begin + 1) & 0x3F) << 6) | (b(begin + 2) & 0x3F);
  if (n == 4 && (b(begin) & 0xF8) == 0xF0)
    return ((b(begin) & 0x07) << 18) | ((b(begin + 1) & 0x3F) << 12) | ((b(begin + 2) & 0x3F) << 6) |
           (b(begin + 3) & 0x3F);
  return 0xFFFD;
}

// The end of `s` that fits in `width` terminal columns: all of it, or "…" and the longest tail
// of whole code points that fits in the remaining columns.
std::string FitTail(const std::string& s, int width) {
  int used = 0;
  size_t end = s.size(), begin = s.size();
  while (begin > 0) {
    size_t start = begin - 1;
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80 && begin - start < 4) --start;
    const int w = CodePointWidth(CodePoint(s, start, begin));
    if (used + w > width) break;
    used += w;
    begin = start;
  }
  if (begin == 0) return s;
  // Cut: make room for the ellipsis (one column).
  while (used + 1 > width && begin < end) {
    size_t next = begin + 1;
    while (next < end && (static_cast<unsigned char>(s[next]) & 0xC0) == 0x80) ++next;
    used -= CodePointWidth(CodePoint(s, begin, next));
    begin = next;
  }
  return "\u2026" + s.substr(begin);
}

// --stream (see kSummary): shows the partial translations of the sentence being translated.
// The final event is not printed: the final lines come from the call's result, formatted as
// without --stream.
class StreamPrinter {
 public:
  StreamPrinter(const TranslateArgs& a, OutputFile* out) : args_(a), out_(out), tty_(isatty(STDOUT_FILENO) == 1) {
    struct winsize ws = {};
    if (tty_ && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1) columns_ = ws.ws_col;
  }

  static void OnEvent(const StreamEvent& e, void* user) { static_cast<StreamPrinter*>(user)->Show(e); }

  // Before a sentence's final lines (or its error): removes its partial line from the terminal.
  void EndSentence() {
    if (drawn_) out_->Write("\r\x1b[K");
    drawn_ = false;
  }

 private:
  void Show(const StreamEvent& e) {
    if (e.final) return;
    line_.clear();
    if (args_.output_ids) {
      for (int i = 0; i < e.num_ids; ++i) line_ += (i ? " " : "") + std::to_string(e.ids[i]);
    } else {
      line_.assign(e.text.data(), e.text.size());
    }
    if (tty_) {  // redraw in place, on one line: the terminal must not wrap it
      const std::string shown = FitTail(line_, columns_ - 1);
      out_->Write("\r\x1b[K");
      out_->Write(shown);
      drawn_ = true;
    } else {
      out_->Write("\t");
      out_->Write(line_);
      out_->Write("\n");
    }
    out_->Flush();
  }

  const TranslateArgs& args_;
  OutputFile* out_;
  const bool tty_;
  int columns_ = 80;
  bool drawn_ = false;
  std::string line_;
};

// The input lines: the TEXT arguments, or stdin read one line at a time (a `\r` before the
// `\n` is dropped), so that memory is bounded by the window, never the whole input.
class LineReader {
 public:
  LineReader(const std::vector<std::string>& texts, OutputFile* out) : texts_(texts), out_(out) {}
  bool Next(std::string* line) {
    if (!texts_.empty()) {
      if (next_ == texts_.size()) return false;
      *line = texts_[next_++];
      return true;
    }
    out_->Flush();  // what is translated goes out before waiting for more input
    return ReadTextLine(stdin, line);
  }

 private:
  const std::vector<std::string>& texts_;
  OutputFile* out_;
  size_t next_ = 0;
};

// Source tokens of a line as the translator counts them (ids + </s>; 0 for an empty line), for
// sorting a window by length: the model's source tokenizer, built once (the Model-level
// EncodeSource builds and validates one per call). A line the translator rejects (invalid UTF-8
// or ids, more bytes or tokens than the limits) counts 0 too: such lines sort to the front of
// the window, where they fail their batch together and are retried alone as in any order.
class SourceLength {
 public:
  SourceLength(const Model& model, const TranslateArgs& a, int max_source_tokens)
      : tok_(model.data().source_spm, model.data().source_vocab),
        input_ids_(a.input_ids),
        source_eos_(model.config().source_eos),
        max_bytes_(size_t(a.max_input_bytes)),
        max_tokens_(max_source_tokens),
        workspace_(input_ids_ ? 0 : SpmTokenizer::WorkspaceBytes(max_bytes_)),
        ids_(size_t(max_source_tokens)) {}

  int operator()(const std::string& line) {
    int n = 0;
    if (input_ids_) {  // the ids end with </s>
      n = ParseIds(line, &ids_) ? int(ids_.size()) : 0;
      return n <= max_tokens_ ? n : 0;
    }
    // Room for </s>, as in the translator.
    if (line.size() > max_bytes_ || max_tokens_ < 2 ||
        !tok_.Encode(line, workspace_.data(), workspace_.size(), ids_.data(), max_tokens_ - 1, &n).ok())
      return 0;
    return n ? n + (source_eos_ ? 1 : 0) : 0;
  }

 private:
  SpmTokenizer tok_;
  const bool input_ids_;
  const bool source_eos_;  // the translator appends </s> (ModelConfig::source_eos)
  const size_t max_bytes_;
  const int max_tokens_;
  std::vector<uint8_t> workspace_;
  std::vector<int32_t> ids_;
};

// --forced-logits: the file is written only when every pair was scored (a failure leaves no
// file, or the previous one, behind).
int RunForced(const TranslateArgs& a, Translator* tr, const Model& model) {
  OutputFile out;
  if (!out.Open(a.forced_logits)) {
    std::fprintf(stderr, "mtlite translate: %s\n", out.error().c_str());
    return 1;
  }
  std::string src_line, tgt_line;
  std::vector<int32_t> src, tgt;
  std::vector<float> logits;
  size_t pair = 0;
  while (ReadLine(stdin, &src_line) && !out.failed()) {
    ++pair;
    if (!ReadLine(stdin, &tgt_line) || !ParseIds(src_line, &src) || !ParseIds(tgt_line, &tgt)) {
      std::fprintf(stderr, "mtlite translate: pair %zu: expected a line of source ids and a line of target ids\n", pair);
      return 1;
    }
    logits.resize(tgt.size() * size_t(model.config().target_vocab_size));
    Status s = tr->ForcedLogits(src.data(), int(src.size()), tgt.data(), int(tgt.size()), logits.data());
    if (!s.ok()) {
      std::fprintf(stderr, "mtlite translate: pair %zu: %s\n", pair, s.ToString().c_str());
      return 1;
    }
    out.Write(logits.data(), logits.size() * sizeof(float));
  }
  if (!out.Close()) {
    std::fprintf(stderr, "mtlite translate: %s\n", out.error().c_str());
    return 1;
  }
  return 0;
}

// The text layer's path (Translator::TranslateText): lines (--split paragraph / sentence) in
// windows of whole lines, joined by '\n' into one text; blocks of lines ended at a blank line
// (--split wrapped); or the whole input (--html). A sentence that fails is kept untranslated in
// its place and reported with its line number.
class TextRunner {
 public:
  TextRunner(const TranslateArgs& a, Translator* tr, const TranslateOptions& opt, OutputFile* out)
      : a_(a), tr_(tr), opt_(opt), out_(out) {
    to_.split = EffectiveSplit(a);
    to_.html = a.html;
    to_.max_length_break = a.max_length_break;
  }

  int Run() {
    if (a_.html) return RunWhole();
    LineReader reader(a_.texts, out_);
    const bool wrapped = to_.split == SplitMode::kWrapped;
    const size_t max_text = size_t(a_.max_text_bytes);
    // paragraph / sentence: windows of --sort-window lines (default 64 x --batch; one line at a
    // time with --batch 1), whose pieces are translated sorted by length; wrapped: blocks that
    // end at a blank line once half of --max-text-bytes is reached
    const size_t max_lines = wrapped ? SIZE_MAX : size_t(SortWindowLines(a_));
    std::string line;
    bool pending = false, eof = false;  // pending: `line` is read and belongs to the next window
    while (!eof || pending) {
      text_.clear();
      starts_.clear();
      size_t n = 0;
      while (n < max_lines) {  // a full window is translated before the next line is read
        if (!pending && !reader.Next(&line)) {
          eof = true;
          break;
        }
        pending = false;
        if (n && text_.size() + 1 + line.size() > max_text) {  // the next window's first line
          pending = true;
          break;
        }
        starts_.push_back(n ? text_.size() + 1 : 0);
        if (n) text_ += '\n';
        text_ += line;
        ++n;
        if (wrapped && IsBlank(line) && text_.size() >= max_text / 2) break;
      }
      if (n) Window(n);
      if (out_->failed()) break;
    }
    return rc_;
  }

  size_t lines() const { return lines_done_; }

 private:
  static bool IsBlank(const std::string& s) {
    for (char c : s)
      if (c != ' ' && c != '\t' && c != '\r') return false;
    return true;
  }

  // --html: the whole input is one document.
  int RunWhole() {
    if (!a_.texts.empty()) {
      for (size_t i = 0; i < a_.texts.size(); ++i) text_ += (i ? "\n" : "") + a_.texts[i];
    } else {
      char buf[65536];
      size_t got;
      while ((got = std::fread(buf, 1, sizeof buf, stdin)) > 0) {
        text_.append(buf, got);
        if (text_.size() > size_t(a_.max_text_bytes)) break;
      }
    }
    if (text_.size() > size_t(a_.max_text_bytes)) {
      std::fprintf(stderr, "mtlite translate: the input is more than --max-text-bytes %d bytes (raise it)\n",
                   a_.max_text_bytes);
      return 1;
    }
    starts_.assign(1, 0);
    for (size_t i = 0; i < text_.size(); ++i)
      if (text_[i] == '\n') starts_.push_back(i + 1);
    const TextResultView* r = nullptr;
    Status s = tr_->TranslateText(text_, to_, opt_, &r);
    if (!s.ok()) {
      std::fprintf(stderr, "mtlite translate: %s: %s\n", StatusCodeName(s.code()), s.message().c_str());
      return 1;
    }
    Report(*r);
    out_->Write(std::string(r->text));
    if (!a_.texts.empty() && (r->text.empty() || r->text.back() != '\n')) out_->Write("\n");
    lines_done_ = starts_.size();
    return rc_;
  }

  // The 1-based input line of byte `pos` of text_ (text_ starts at line first_line_ + 1).
  size_t LineOf(size_t pos) const {
    const size_t k = size_t(std::upper_bound(starts_.begin(), starts_.end(), pos) - starts_.begin());
    return first_line_ + k;
  }

  void Report(const TextResultView& r) {
    if (!r.failed_sentences) return;
    rc_ = 1;
    bool first = true;
    for (size_t i = 0; i < r.num_sentences; ++i) {
      const TextSentenceView& sv = r.sentences[i];
      if (sv.status == StatusCode::kOk) continue;
      std::fprintf(stderr, "mtlite translate: line %zu: %s: a sentence was kept untranslated%s%.*s%s\n",
                   LineOf(sv.source_begin), StatusCodeName(sv.status), first ? " (" : "",
                   first ? int(r.first_error.size()) : 0, r.first_error.data(), first ? ")" : "");
      first = false;
    }
  }

  // Translates text_ (n lines) and writes n output lines.
  void Window(size_t n) {
    const TextResultView* r = nullptr;
    Status s = tr_->TranslateText(text_, to_, opt_, &r);
    if (s.ok()) {
      const std::string_view t = r->text;
      if (size_t(std::count(t.begin(), t.end(), '\n')) == n - 1) {
        Report(*r);
        out_->Write(std::string(t));
        out_->Write("\n");
        first_line_ += n;
        lines_done_ += n;
        return;
      }
    }
    // The window as a whole failed (or a translation held a line break): line by line.
    const std::string all = text_;
    const std::vector<size_t> starts = starts_;
    for (size_t i = 0; i < n; ++i) {
      const size_t b = starts[i], e = i + 1 < n ? starts[i + 1] - 1 : all.size();
      text_ = all.substr(b, e - b);
      starts_.assign(1, 0);
      Status si = tr_->TranslateText(text_, to_, opt_, &r);
      std::string o;
      if (si.ok()) {
        Report(*r);
        o.assign(r->text.data(), r->text.size());
        for (char& c : o)
          if (c == '\n' && to_.split != SplitMode::kWrapped) c = ' ';
      } else {
        std::fprintf(stderr, "mtlite translate: line %zu: %s: %s (kept untranslated)\n", first_line_ + 1,
                     StatusCodeName(si.code()), si.message().c_str());
        rc_ = 1;
        o = text_;
      }
      out_->Write(o);
      out_->Write("\n");
      ++first_line_;
      ++lines_done_;
    }
  }

  const TranslateArgs& a_;
  Translator* tr_;
  TranslateOptions opt_;
  OutputFile* out_;
  TextOptions to_;
  std::string text_;
  std::vector<size_t> starts_;  // byte offset of each line of text_
  size_t first_line_ = 0;       // lines before text_
  size_t lines_done_ = 0;
  int rc_ = 0;
};

}  // namespace

namespace {
// Options that describe one model output per line (--split none's).
bool PerLineOutput(const TranslateArgs& a) {
  return a.n_best > 1 || a.scores || a.alignments || a.output_ids || a.input_ids || a.stream ||
         !a.forced_logits.empty();
}
}  // namespace

SplitMode EffectiveSplit(const TranslateArgs& a) {
  SplitMode m = SplitMode::kParagraph;
  if (!a.split.empty()) {
    ParseSplitMode(a.split, &m);
    return m;
  }
  if (a.html) return SplitMode::kWrapped;  // line breaks in HTML are soft
  return PerLineOutput(a) ? SplitMode::kNone : SplitMode::kParagraph;
}

int SortWindowLines(const TranslateArgs& a) {
  if (a.stream || a.batch <= 1) return 1;
  return a.sort_window < 0 ? kDefaultSortWindowBatches * a.batch : std::max(a.sort_window, 1);
}

std::vector<uint32_t> LengthOrder(const int* lengths, size_t n) {
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = uint32_t(i);
  std::stable_sort(order.begin(), order.end(), [lengths](uint32_t x, uint32_t y) { return lengths[x] < lengths[y]; });
  return order;
}

void BatchPadding::Add(const int* lengths, const std::vector<uint32_t>& order, size_t batch) {
  for (size_t k0 = 0; k0 < order.size(); k0 += batch) {
    const size_t n = std::min(order.size() - k0, batch);
    int sorted_max = 0, input_max = 0;
    for (size_t j = 0; j < n; ++j) {
      sorted_max = std::max(sorted_max, lengths[order[k0 + j]]);
      input_max = std::max(input_max, lengths[k0 + j]);
      tokens += uint64_t(lengths[k0 + j]);
    }
    sorted_cells += uint64_t(sorted_max) * n;
    input_order_cells += uint64_t(input_max) * n;
    ++batches;
  }
}

double BatchPadding::SortedPercent() const {
  return sorted_cells ? 100.0 * double(sorted_cells - tokens) / double(sorted_cells) : 0.0;
}

double BatchPadding::InputOrderPercent() const {
  return input_order_cells ? 100.0 * double(input_order_cells - tokens) / double(input_order_cells) : 0.0;
}

void AddTranslationOptions(ArgParser* p, TranslationArgs* a, int max_batch, bool pivot) {
  if (pivot) {
    auto given = std::make_shared<int>(0);  // -m options of this parse
    p->Custom(
         "-m,--model", "MODEL",
         [a, given](const std::string& v) -> std::string {
           if (v.empty()) return "must not be empty";
           if (*given == 2) return "is given more than twice (one model, or two chained through a pivot language)";
           (*given == 0 ? a->model : a->second_model) = v;
           if (*given == 0) a->second_model.clear();
           ++*given;
           return "";
         },
         "the .mtlite model file; twice: two models chained through a pivot language (de-en, then en-fr)")
        .Required();
  } else {
    p->String("-m,--model", "MODEL", &a->model, "the .mtlite model file").Required();
  }
  p->Int("--beam", "N", 1, 64, &a->beam, "beam size; 1 = greedy (default: the model's decoding default, else 1)")
      .Given(&a->beam_given);
  p->Int("--batch", "N", 1, max_batch, &a->batch, "sentences per translate call");
  p->Int("--threads", "N", 1, 256, &a->threads, "worker threads");
  p->Int("--max-length", "N", 1, 65536, &a->max_length, "generated tokens per sentence, including </s>")
      .Given(&a->max_length_given);
  p->Int("--max-source-tokens", "N", 1, 65536, &a->max_source_tokens, "source tokens per sentence, including </s>");
}

TranslatorLimits TranslationLimits(const TranslationArgs& a, const ModelConfig& config) {
  TranslatorLimits lim;
  lim.max_batch = a.batch;
  lim.max_beam = a.beam;
  lim.max_n_best = 1;
  lim.max_target_tokens = a.max_length;
  lim.max_source_tokens = a.max_source_tokens;
  if (config.positions == mtlite::PositionKind::kTable) {
    lim.max_target_tokens = std::min(lim.max_target_tokens, config.max_positions);
    lim.max_source_tokens = std::min(lim.max_source_tokens, config.max_positions);
  }
  lim.num_threads = a.threads;
  return lim;
}

ParseResult ParseTranslateArgs(int argc, const char* const* argv, TranslateArgs* a) {
  ArgParser p("mtlite translate", kSummary);
  p.Rest("TEXT", &a->texts, "sentences to translate (default: read stdin)");
  AddTranslationOptions(&p, a, 1024, true);
  p.Int("--n-best", "N", 1, 64, &a->n_best, "hypotheses per sentence, at most --beam; Moses n-best lines when > 1");
  p.Int("--max-input-bytes", "N", 1, 1 << 24, &a->max_input_bytes, "UTF-8 bytes per input line");
  p.Float("--max-length-ratio", "F", &a->max_length_ratio,
          "if > 0, also cap the output at F x source tokens + --max-length-offset")
      .Given(&a->max_length_ratio_given);
  p.Int("--max-length-offset", "N", 0, 65536, &a->max_length_offset,
        "added to the --max-length-ratio cap (10); Marian's max-length-factor F is --max-length-ratio F --max-length-offset 1")
      .Given(&a->max_length_offset_given);
  p.Float("--length-penalty", "F", &a->length_penalty, "beam score = log-probability / length^F")
      .Given(&a->length_penalty_given);
  p.Flag("--scores", &a->scores, "append ' ||| ' and the length-penalised log-probability");
  p.Flag("--alignments", &a->alignments,
         "append ' |||' and src-tgt pairs (argmax of the last decoder layer's cross-attention, mean over heads)");
  p.Flag("--output-ids", &a->output_ids, "print target ids (space-separated, without the final </s>)");
  p.Flag("--input-ids", &a->input_ids, "lines are space-separated source ids ending with </s>");
  p.Flag("--verify", &a->verify, "check every checksum of the model at load");
  p.Flag("--shortlist", &a->shortlist,
         "restrict the output vocabulary to the batch's candidates (the model's shortlist section, made by "
         "`mtlite shortlist`)");
  p.Flag("-q,--quiet", &a->quiet, "no progress line on stderr");
  p.String("--forced-logits", "FILE", &a->forced_logits,
           "stdin holds pairs of lines 'source ids' / 'target ids'; writes each pair's raw float32 "
           "logits [target_len][vocab] to FILE");
  p.Int("--sort-window", "N", 0, 1 << 20, &a->sort_window,
        "lines read at a time and translated sorted by source length, written in input order (default "
        "64 x --batch; 0 or 1: in input order; no sorting with --batch 1 or --stream)");
  p.Flag("--stream", &a->stream,
         "show each translation while it is generated (a redrawn line on a terminal, else partial lines "
         "starting with a tab before the final line)");
  p.Choice("--split", {"paragraph", "sentence", "wrapped", "none"}, &a->split,
           "how text is cut into sentences (default: paragraph; none with a per-line option)");
  p.Flag("--html", &a->html, "the input is one HTML document: tags, entities and comments kept in place");
  p.Int("--max-length-break", "N", 1, 65536, &a->max_length_break,
        "a sentence of more source tokens is cut at token boundaries and translated in pieces");
  p.Int("--max-text-bytes", "N", 1, 1 << 24, &a->max_text_bytes,
        "UTF-8 bytes of text per call of the text layer (a line, a paragraph block, the --html document)");
  p.Check([a] {
    if (PerLineOutput(*a) && ((!a->split.empty() && a->split != "none") || a->html))
      return std::string("--split ") + (a->split.empty() ? "wrapped" : a->split) + (a->html ? " / --html" : "") +
             " cannot be combined with --n-best, --scores, --alignments, --output-ids, --input-ids, --stream or "
             "--forced-logits (use --split none)";
    return std::string();
  });
  p.Check([a] {  // without --beam: checked against the model's beam (ApplyModelDefaults)
    if (!a->beam_given || a->n_best <= a->beam) return std::string();
    return "--n-best (" + std::to_string(a->n_best) + ") cannot exceed --beam (" + std::to_string(a->beam) + ")";
  });
  p.Check([a] {
    return a->stream && !a->forced_logits.empty() ? std::string("--stream cannot be combined with --forced-logits")
                                                  : std::string();
  });
  return p.Parse(argc, argv);
}

bool ApplyModelDefaults(const Model& model, TranslateArgs* a, std::string* error) {
  const DecodingDefaults& d = model.decoding_defaults();
  if (d.beam_size && !a->beam_given) a->beam = *d.beam_size;
  if (d.max_length && !a->max_length_given) a->max_length = *d.max_length;
  if (d.max_length_ratio && !a->max_length_ratio_given) a->max_length_ratio = *d.max_length_ratio;
  if (d.max_length_offset && !a->max_length_offset_given) a->max_length_offset = *d.max_length_offset;
  if (d.length_penalty && !a->length_penalty_given) a->length_penalty = *d.length_penalty;
  if (a->n_best > a->beam) {
    *error = "--n-best (" + std::to_string(a->n_best) + ") cannot exceed the beam (" + std::to_string(a->beam) +
             (a->beam_given ? ")" : ", the model's default; give --beam)");
    return false;
  }
  return true;
}

int TranslateMain(int argc, char** argv) {
  TranslateArgs a;
  const ParseResult parsed = ParseTranslateArgs(argc, argv, &a);
  if (!parsed.ok()) return PrintParseResult(parsed, "mtlite translate");
  LoadOptions lo;
  lo.verify_checksums = a.verify;
  auto model = Model::Load(a.model, lo);
  if (!model.ok()) {
    std::fprintf(stderr, "mtlite translate: %s: %s\n", a.model.c_str(), model.status().ToString().c_str());
    return 1;
  }
  if (std::string error; !ApplyModelDefaults(*model.value(), &a, &error)) {
    std::fprintf(stderr, "mtlite translate: %s\n", error.c_str());
    return 2;
  }
  if (a.shortlist && !model.value()->has_shortlist()) {
    std::fprintf(stderr, "mtlite translate: %s has no shortlist section (add one with `mtlite shortlist`)\n",
                 a.model.c_str());
    return 1;
  }
  std::shared_ptr<const Model> second;
  if (!a.second_model.empty()) {
    auto m2 = Model::Load(a.second_model, lo);
    if (!m2.ok()) {
      std::fprintf(stderr, "mtlite translate: %s: %s\n", a.second_model.c_str(), m2.status().ToString().c_str());
      return 1;
    }
    second = m2.value();
    if (a.shortlist && !second->has_shortlist()) {
      std::fprintf(stderr, "mtlite translate: %s has no shortlist section (add one with `mtlite shortlist`)\n",
                   a.second_model.c_str());
      return 1;
    }
    if (!a.forced_logits.empty()) {
      std::fprintf(stderr, "mtlite translate: --forced-logits takes one model\n");
      return 1;
    }
  }
  TranslatorLimits lim = TranslationLimits(a, model.value()->config());
  lim.max_n_best = a.n_best;
  lim.max_input_bytes = a.max_input_bytes;
  lim.alignments = a.alignments || a.html;
  const bool text_mode = a.html || EffectiveSplit(a) != SplitMode::kNone;
  lim.max_text_bytes = text_mode ? a.max_text_bytes : 0;
  if (second && second->config().positions == mtlite::PositionKind::kTable) {  // the chain's limits fit both models
    lim.max_target_tokens = std::min(lim.max_target_tokens, second->config().max_positions);
    lim.max_source_tokens = std::min(lim.max_source_tokens, second->config().max_positions);
  }
  auto tr = second ? Translator::Create(model.value(), second, lim) : Translator::Create(model.value(), lim);
  if (!tr.ok()) {
    std::fprintf(stderr, "mtlite translate: %s\n", tr.status().ToString().c_str());
    return 1;
  }
  Translator& translator = *tr.value();
  if (!a.forced_logits.empty()) return RunForced(a, &translator, *model.value());

  TranslateOptions opt;
  opt.beam_size = a.beam;
  opt.n_best = a.n_best;
  opt.max_length = lim.max_target_tokens;
  opt.max_length_ratio = a.max_length_ratio;
  opt.max_length_offset = a.max_length_offset;
  opt.length_penalty = a.length_penalty;
  opt.return_scores = a.scores || a.n_best > 1;
  opt.return_alignments = a.alignments;
  opt.use_shortlist = a.shortlist;

  OutputFile out;
  out.OpenStdout();
  if (text_mode) {
    const auto t0 = std::chrono::steady_clock::now();
    TextRunner runner(a, &translator, opt, &out);
    int rc = runner.Run();
    if (!a.quiet && runner.lines() >= 200) {
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "mtlite: %zu lines (%.1f lines/s)\n", runner.lines(), runner.lines() / std::max(secs, 1e-9));
    }
    if (!out.Close()) {
      std::fprintf(stderr, "mtlite translate: %s\n", out.error().c_str());
      return 1;
    }
    return rc;
  }
  std::optional<StreamPrinter> printer;
  if (a.stream) {  // one sentence per call, so that its events are shown before the next begins
    printer.emplace(a, &out);
    opt.stream = &StreamPrinter::OnEvent;
    opt.stream_user = &*printer;
  }
  const size_t per_call = a.stream ? 1 : size_t(a.batch);
  // Lines read (and sorted by length) at a time; no sorting with --stream or --batch 1.
  const size_t window = std::max(per_call, size_t(SortWindowLines(a)));
  std::optional<SourceLength> source_length;
  if (window > per_call) source_length.emplace(*model.value(), a, lim.max_source_tokens);

  const auto t0 = std::chrono::steady_clock::now();
  int rc = 0;
  std::vector<std::vector<int32_t>> ids(per_call);
  std::vector<const int32_t*> id_ptrs(per_call);
  std::vector<int> id_lens(per_call);
  std::vector<std::string_view> views(per_call);
  // One window: its lines, their order of translation, and per line its output and error lines.
  std::vector<std::string> lines(window), outs(window), errs(window);
  std::vector<int> lengths(window);
  std::vector<uint32_t> order;
  BatchPadding padding;
  // Translates the lines at order[k0, k0+n) in one call.
  auto run = [&](size_t k0, size_t n, const SentenceResultView** res) -> Status {
    if (a.input_ids) {
      for (size_t j = 0; j < n; ++j) {
        if (!ParseIds(lines[order[k0 + j]], &ids[j]))
          return Status(StatusCode::kInvalidArgument, "not a line of non-negative integer ids");
        id_ptrs[j] = ids[j].data();
        id_lens[j] = int(ids[j].size());
      }
      return translator.TranslateIdsViews(id_ptrs.data(), id_lens.data(), n, opt, res);
    }
    for (size_t j = 0; j < n; ++j) views[j] = lines[order[k0 + j]];
    return translator.TranslateViews(views.data(), n, opt, res);
  };
  LineReader reader(a.texts, &out);
  size_t first = 0;  // input index (0-based) of the window's first line
  bool progress_shown = false;
  double shown_at = -1;  // seconds after t0 of the last progress line
  for (;;) {
    size_t m = 0;
    while (m < window && reader.Next(&lines[m])) ++m;
    if (m == 0) break;
    if (source_length && m > per_call) {
      for (size_t i = 0; i < m; ++i) lengths[i] = (*source_length)(lines[i]);
      order = LengthOrder(lengths.data(), m);
      padding.Add(lengths.data(), order, per_call);
    } else {
      order.resize(m);
      for (size_t i = 0; i < m; ++i) order[i] = uint32_t(i);
    }
    for (size_t k0 = 0; k0 < m; k0 += per_call) {
      const size_t n = std::min(m - k0, per_call);
      const SentenceResultView* res = nullptr;
      Status s = run(k0, n, &res);
      if (printer) printer->EndSentence();
      for (size_t j = 0; j < n; ++j) {
        const size_t i = order[k0 + j];  // the line's place in the window
        outs[i].clear();
        errs[i].clear();
        // On failure, retry line by line to name the line (a call of one line failed for it).
        const Status sj = s.ok() || n == 1 ? s : run(k0 + j, 1, &res);
        if (sj.ok()) {
          const SentenceResultView& r = res[s.ok() ? j : 0];
          for (int h = 0; h < r.num_hypotheses; ++h) PrintHyp(a, r.hypotheses[h], first + i, &outs[i]);
        } else {
          // The line was retried alone: the translator's "sentence 0: " adds nothing to "line N".
          std::string msg = sj.message();
          if (msg.compare(0, 12, "sentence 0: ") == 0) msg.erase(0, 12);
          errs[i] = "mtlite translate: line " + std::to_string(first + i + 1) + ": " + StatusCodeName(sj.code()) +
                    ": " + msg + "\n";
          outs[i] = "\n";  // keep output lines aligned with input lines
          rc = 1;
        }
      }
      if (a.stream) {  // window == 1
        std::fputs(errs[0].c_str(), stderr);
        out.Write(outs[0]);
        out.Flush();
      }
    }
    if (!a.stream) {
      for (size_t i = 0; i < m; ++i) {  // in input order
        std::fputs(errs[i].c_str(), stderr);
        out.Write(outs[i]);
      }
    }
    first += m;
    if (out.failed()) break;  // the rest would be lost too
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!a.quiet && !a.stream && first >= 200 && secs >= shown_at + 0.25) {  // a few updates a second
      std::fprintf(stderr, "\rmtlite: %zu lines (%.1f lines/s)", first, first / std::max(secs, 1e-9));
      progress_shown = true;
      shown_at = secs;
    }
  }
  if (progress_shown) {  // the final count
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "\rmtlite: %zu lines (%.1f lines/s)", first, first / std::max(secs, 1e-9));
    if (padding.batches)
      std::fprintf(stderr, "; source padding %.1f %% sorted by length, %.1f %% in input order",
                   padding.SortedPercent(), padding.InputOrderPercent());
    std::fprintf(stderr, "\n");
  }
  if (!out.Close()) {
    std::fprintf(stderr, "mtlite translate: %s\n", out.error().c_str());
    return 1;
  }
  return rc;
}

}  // namespace cli
}  // namespace mtlite

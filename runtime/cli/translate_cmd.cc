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
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace cli {

// `mtlite translate --help`: what the command does.
constexpr char kSummary[] =
    "Translates one sentence per line from stdin (or each TEXT argument) and writes one\n"
    "translation per line, in order. A line that fails is reported on stderr with its line\n"
    "number, its output line is left empty and the exit code is 1.\n"
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
  explicit StreamPrinter(const TranslateArgs& a) : args_(a), tty_(isatty(STDOUT_FILENO) == 1) {
    struct winsize ws = {};
    if (tty_ && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1) columns_ = ws.ws_col;
  }

  static void OnEvent(const StreamEvent& e, void* user) { static_cast<StreamPrinter*>(user)->Show(e); }

  // Before a sentence's final lines (or its error): removes its partial line from the terminal.
  void EndSentence() {
    if (drawn_) std::fputs("\r\x1b[K", stdout);
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
      std::fputs("\r\x1b[K", stdout);
      std::fwrite(shown.data(), 1, shown.size(), stdout);
      drawn_ = true;
    } else {
      std::fputc('\t', stdout);
      std::fwrite(line_.data(), 1, line_.size(), stdout);
      std::fputc('\n', stdout);
    }
    std::fflush(stdout);
  }

  const TranslateArgs& args_;
  const bool tty_;
  int columns_ = 80;
  bool drawn_ = false;
  std::string line_;
};

int RunForced(const TranslateArgs& a, Translator* tr, const Model& model) {
  FILE* f = std::fopen(a.forced_logits.c_str(), "wb");
  if (!f) {
    std::fprintf(stderr, "mtlite translate: cannot write %s\n", a.forced_logits.c_str());
    return 1;
  }
  std::string src_line, tgt_line;
  std::vector<int32_t> src, tgt;
  std::vector<float> logits;
  size_t pair = 0;
  int rc = 0;
  while (std::getline(std::cin, src_line)) {
    ++pair;
    if (!std::getline(std::cin, tgt_line) || !ParseIds(src_line, &src) || !ParseIds(tgt_line, &tgt)) {
      std::fprintf(stderr, "mtlite translate: pair %zu: expected a line of source ids and a line of target ids\n", pair);
      rc = 1;
      break;
    }
    logits.resize(tgt.size() * size_t(model.config().target_vocab_size));
    Status s = tr->ForcedLogits(src.data(), int(src.size()), tgt.data(), int(tgt.size()), logits.data());
    if (!s.ok()) {
      std::fprintf(stderr, "mtlite translate: pair %zu: %s\n", pair, s.ToString().c_str());
      rc = 1;
      break;
    }
    std::fwrite(logits.data(), sizeof(float), logits.size(), f);
  }
  if (std::fclose(f) != 0) rc = 1;
  return rc;
}

}  // namespace

void AddTranslationOptions(ArgParser* p, TranslationArgs* a, int max_batch) {
  p->String("-m,--model", "MODEL", &a->model, "the .mtlite model file").Required();
  p->Int("--beam", "N", 1, 64, &a->beam, "beam size; 1 = greedy");
  p->Int("--batch", "N", 1, max_batch, &a->batch, "sentences per translate call");
  p->Int("--threads", "N", 1, 256, &a->threads, "worker threads");
  p->Int("--max-length", "N", 1, 65536, &a->max_length, "generated tokens per sentence, including </s>");
  p->Int("--max-source-tokens", "N", 1, 65536, &a->max_source_tokens, "source tokens per sentence, including </s>");
}

TranslatorLimits TranslationLimits(const TranslationArgs& a, const ModelConfig& config) {
  TranslatorLimits lim;
  lim.max_batch = a.batch;
  lim.max_beam = a.beam;
  lim.max_n_best = 1;
  lim.max_target_tokens = a.max_length;
  lim.max_source_tokens = a.max_source_tokens;
  if (config.positions_stored) {
    lim.max_target_tokens = std::min(lim.max_target_tokens, config.max_positions);
    lim.max_source_tokens = std::min(lim.max_source_tokens, config.max_positions);
  }
  lim.num_threads = a.threads;
  return lim;
}

ParseResult ParseTranslateArgs(int argc, const char* const* argv, TranslateArgs* a) {
  ArgParser p("mtlite translate", kSummary);
  p.Rest("TEXT", &a->texts, "sentences to translate (default: read stdin)");
  AddTranslationOptions(&p, a, 1024);
  p.Int("--n-best", "N", 1, 64, &a->n_best, "hypotheses per sentence, at most --beam; Moses n-best lines when > 1");
  p.Int("--max-input-bytes", "N", 1, 1 << 24, &a->max_input_bytes, "UTF-8 bytes per input line");
  p.Float("--max-length-ratio", "F", &a->max_length_ratio,
          "if > 0, also cap the output at F x source tokens + 10");
  p.Float("--length-penalty", "F", &a->length_penalty, "beam score = log-probability / length^F");
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
  p.Flag("--stream", &a->stream,
         "show each translation while it is generated (a redrawn line on a terminal, else partial lines "
         "starting with a tab before the final line)");
  p.Check([a] {
    if (a->n_best <= a->beam) return std::string();
    return "--n-best (" + std::to_string(a->n_best) + ") cannot exceed --beam (" + std::to_string(a->beam) + ")";
  });
  p.Check([a] {
    return a->stream && !a->forced_logits.empty() ? std::string("--stream cannot be combined with --forced-logits")
                                                  : std::string();
  });
  return p.Parse(argc, argv);
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
  if (a.shortlist && !model.value()->has_shortlist()) {
    std::fprintf(stderr, "mtlite translate: %s has no shortlist section (add one with `mtlite shortlist`)\n",
                 a.model.c_str());
    return 1;
  }
  TranslatorLimits lim = TranslationLimits(a, model.value()->config());
  lim.max_n_best = a.n_best;
  lim.max_input_bytes = a.max_input_bytes;
  lim.alignments = a.alignments;
  auto tr = Translator::Create(model.value(), lim);
  if (!tr.ok()) {
    std::fprintf(stderr, "mtlite translate: %s\n", tr.status().ToString().c_str());
    return 1;
  }
  Translator& translator = *tr.value();
  if (!a.forced_logits.empty()) return RunForced(a, &translator, *model.value());

  std::vector<std::string> lines = a.texts;
  if (lines.empty()) {
    std::string line;
    while (std::getline(std::cin, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines.push_back(std::move(line));
    }
  }
  TranslateOptions opt;
  opt.beam_size = a.beam;
  opt.n_best = a.n_best;
  opt.max_length = lim.max_target_tokens;
  opt.max_length_ratio = a.max_length_ratio;
  opt.length_penalty = a.length_penalty;
  opt.return_scores = a.scores || a.n_best > 1;
  opt.return_alignments = a.alignments;
  opt.use_shortlist = a.shortlist;

  std::optional<StreamPrinter> printer;
  if (a.stream) {  // one sentence per call, so that its events are shown before the next begins
    printer.emplace(a);
    opt.stream = &StreamPrinter::OnEvent;
    opt.stream_user = &*printer;
  }
  const size_t per_call = a.stream ? 1 : size_t(a.batch);
  const bool progress = !a.quiet && !a.stream && lines.size() >= 200;
  const auto t0 = std::chrono::steady_clock::now();
  int rc = 0;
  std::vector<std::vector<int32_t>> ids(size_t(a.batch));
  std::vector<const int32_t*> id_ptrs(size_t(a.batch));
  std::vector<int> id_lens(size_t(a.batch));
  std::vector<std::string_view> views(size_t(a.batch));
  std::string out;
  // Translates lines [i0, i0+n); on failure of a batch, retries line by line to name the line.
  auto run = [&](size_t i0, size_t n, const SentenceResultView** res) -> Status {
    if (a.input_ids) {
      for (size_t j = 0; j < n; ++j) {
        if (!ParseIds(lines[i0 + j], &ids[j]))
          return Status(StatusCode::kInvalidArgument, "not a line of non-negative integer ids");
        id_ptrs[j] = ids[j].data();
        id_lens[j] = int(ids[j].size());
      }
      return translator.TranslateIdsViews(id_ptrs.data(), id_lens.data(), n, opt, res);
    }
    for (size_t j = 0; j < n; ++j) views[j] = lines[i0 + j];
    return translator.TranslateViews(views.data(), n, opt, res);
  };
  for (size_t i0 = 0; i0 < lines.size(); i0 += per_call) {
    const size_t n = std::min(lines.size() - i0, per_call);
    const SentenceResultView* res = nullptr;
    out.clear();
    Status s = run(i0, n, &res);
    if (printer) printer->EndSentence();
    if (s.ok()) {
      for (size_t j = 0; j < n; ++j)
        for (int k = 0; k < res[j].num_hypotheses; ++k) PrintHyp(a, res[j].hypotheses[k], i0 + j, &out);
    } else {
      for (size_t j = 0; j < n; ++j) {
        Status sj = n == 1 ? s : run(i0 + j, 1, &res);  // a call of one line failed for that line
        if (sj.ok()) {
          for (int k = 0; k < res[0].num_hypotheses; ++k) PrintHyp(a, res[0].hypotheses[k], i0 + j, &out);
        } else {
          // The line was retried alone: the translator's "sentence 0: " adds nothing to "line N".
          std::string msg = sj.message();
          if (msg.compare(0, 12, "sentence 0: ") == 0) msg.erase(0, 12);
          std::fprintf(stderr, "mtlite translate: line %zu: %s: %s\n", i0 + j + 1, StatusCodeName(sj.code()),
                       msg.c_str());
          out += '\n';  // keep output lines aligned with input lines
          rc = 1;
        }
      }
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    if (a.stream) std::fflush(stdout);
    if (progress && ((i0 / a.batch) % 50 == 0 || i0 + n == lines.size())) {
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "\rmtlite: %zu/%zu lines (%.1f lines/s)", i0 + n, lines.size(), (i0 + n) / std::max(secs, 1e-9));
      if (i0 + n == lines.size()) std::fprintf(stderr, "\n");
    }
  }
  std::fflush(stdout);
  return rc;
}

}  // namespace cli
}  // namespace mtlite

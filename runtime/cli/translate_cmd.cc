// mtlite translate -m MODEL [options] [TEXT ...]
// Reads UTF-8 lines from stdin (or takes each argument as one sentence) and writes one
// translation per line to stdout, in order. Errors name the input line.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
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
    "number, its output line is left empty and the exit code is 1.";

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
  p.Check([a] {
    if (a->n_best <= a->beam) return std::string();
    return "--n-best (" + std::to_string(a->n_best) + ") cannot exceed --beam (" + std::to_string(a->beam) + ")";
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

  const bool progress = !a.quiet && lines.size() >= 200;
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
  for (size_t i0 = 0; i0 < lines.size(); i0 += size_t(a.batch)) {
    const size_t n = std::min(lines.size() - i0, size_t(a.batch));
    const SentenceResultView* res = nullptr;
    out.clear();
    Status s = run(i0, n, &res);
    if (s.ok()) {
      for (size_t j = 0; j < n; ++j)
        for (int k = 0; k < res[j].num_hypotheses; ++k) PrintHyp(a, res[j].hypotheses[k], i0 + j, &out);
    } else {
      for (size_t j = 0; j < n; ++j) {
        Status sj = run(i0 + j, 1, &res);
        if (sj.ok()) {
          for (int k = 0; k < res[0].num_hypotheses; ++k) PrintHyp(a, res[0].hypotheses[k], i0 + j, &out);
        } else {
          std::fprintf(stderr, "mtlite translate: line %zu: %s\n", i0 + j + 1, sj.ToString().c_str());
          out += '\n';  // keep output lines aligned with input lines
          rc = 1;
        }
      }
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
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

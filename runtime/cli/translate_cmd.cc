// mtlite translate -m model.mtlite [options] [text ...]
// Reads UTF-8 lines from stdin (or takes each argument as one sentence) and writes one
// translation per line to stdout, in order. Errors name the input line.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace cli {
namespace {

struct Args {
  std::string model;
  int beam = 1, batch = 1, threads = 1, n_best = 1, max_length = 256;
  int max_source_tokens = 256, max_input_bytes = 16384;
  float length_penalty = 1.0f, max_length_ratio = 0;
  bool alignments = false, output_ids = false, input_ids = false, scores = false, verify = false;
  bool quiet = false;
  std::string forced_logits;
  std::vector<std::string> texts;
};

int Usage() {
  std::fprintf(stderr,
               "usage: mtlite translate -m model.mtlite [--beam N] [--batch N] [--threads N] [--n-best N]\n"
               "         [--max-length N] [--max-length-ratio F] [--length-penalty F] [--scores]\n"
               "         [--alignments] [--output-ids] [--input-ids] [--verify] [--quiet]\n"
               "         [--forced-logits FILE] [text ...]\n"
               "  Without text arguments, reads one sentence per line from stdin.\n"
               "  --input-ids: lines are space-separated source ids ending with </s>.\n"
               "  --output-ids: print target ids (space-separated, without the final </s>).\n"
               "  --alignments: append ' ||| ' and src-tgt pairs (argmax of the last decoder layer's\n"
               "                cross-attention, averaged over heads).\n"
               "  --forced-logits FILE: stdin holds pairs of lines 'source ids' / 'target ids'; writes\n"
               "                raw float32 logits [target_len][vocab] of each pair to FILE.\n");
  return 2;
}

bool ParseInt(const char* s, int lo, int hi, int* out) {
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (!s[0] || *end || v < lo || v > hi) return false;
  *out = int(v);
  return true;
}

bool ParseFloat(const char* s, float* out) {
  char* end = nullptr;
  float v = std::strtof(s, &end);
  if (!s[0] || *end || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

int ParseArgs(int argc, char** argv, Args* a) {
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto need = [&](const char* what) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "mtlite translate: %s needs a value\n", what);
        return nullptr;
      }
      return argv[++i];
    };
    auto int_opt = [&](int lo, int hi, int* out) {
      const char* v = need(k.c_str());
      if (!v) return false;
      if (!ParseInt(v, lo, hi, out)) {
        std::fprintf(stderr, "mtlite translate: %s must be an integer in [%d, %d], got '%s'\n", k.c_str(), lo, hi, v);
        return false;
      }
      return true;
    };
    auto float_opt = [&](float* out) {
      const char* v = need(k.c_str());
      if (!v) return false;
      if (!ParseFloat(v, out)) {
        std::fprintf(stderr, "mtlite translate: %s must be a number, got '%s'\n", k.c_str(), v);
        return false;
      }
      return true;
    };
    if (k == "-m" || k == "--model") {
      const char* v = need("-m");
      if (!v) return 2;
      a->model = v;
    } else if (k == "--beam") { if (!int_opt(1, 64, &a->beam)) return 2;
    } else if (k == "--batch") { if (!int_opt(1, 1024, &a->batch)) return 2;
    } else if (k == "--threads") { if (!int_opt(1, 256, &a->threads)) return 2;
    } else if (k == "--n-best") { if (!int_opt(1, 64, &a->n_best)) return 2;
    } else if (k == "--max-length") { if (!int_opt(1, 65536, &a->max_length)) return 2;
    } else if (k == "--max-source-tokens") { if (!int_opt(1, 65536, &a->max_source_tokens)) return 2;
    } else if (k == "--max-input-bytes") { if (!int_opt(1, 1 << 24, &a->max_input_bytes)) return 2;
    } else if (k == "--length-penalty") { if (!float_opt(&a->length_penalty)) return 2;
    } else if (k == "--max-length-ratio") { if (!float_opt(&a->max_length_ratio)) return 2;
    } else if (k == "--alignments") { a->alignments = true;
    } else if (k == "--output-ids") { a->output_ids = true;
    } else if (k == "--input-ids") { a->input_ids = true;
    } else if (k == "--scores") { a->scores = true;
    } else if (k == "--verify") { a->verify = true;
    } else if (k == "--quiet" || k == "-q") { a->quiet = true;
    } else if (k == "--forced-logits") {
      const char* v = need("--forced-logits");
      if (!v) return 2;
      a->forced_logits = v;
    } else if (k == "-h" || k == "--help") {
      Usage();
      return 1;
    } else if (k.size() > 1 && k[0] == '-' && k != "-") {
      std::fprintf(stderr, "mtlite translate: unknown option '%s'\n", k.c_str());
      return Usage();
    } else {
      a->texts.push_back(k);
    }
  }
  if (a->model.empty()) {
    std::fprintf(stderr, "mtlite translate: -m model.mtlite is required\n");
    return Usage();
  }
  if (a->n_best > a->beam) {
    std::fprintf(stderr, "mtlite translate: --n-best (%d) cannot exceed --beam (%d)\n", a->n_best, a->beam);
    return 2;
  }
  return 0;
}

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

void PrintHyp(const Args& a, const HypothesisView& h, size_t line_index, std::string* out) {
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

int RunForced(const Args& a, Translator* tr, const Model& model) {
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

int TranslateMain(int argc, char** argv) {
  Args a;
  if (int rc = ParseArgs(argc, argv, &a)) return rc == 1 ? 0 : rc;
  LoadOptions lo;
  lo.verify_checksums = a.verify;
  auto model = Model::Load(a.model, lo);
  if (!model.ok()) {
    std::fprintf(stderr, "mtlite translate: %s: %s\n", a.model.c_str(), model.status().ToString().c_str());
    return 1;
  }
  const ModelConfig& cfg = model.value()->config();
  TranslatorLimits lim;
  lim.max_batch = a.batch;
  lim.max_beam = a.beam;
  lim.max_n_best = a.n_best;
  lim.max_target_tokens = a.max_length;
  lim.max_source_tokens = a.max_source_tokens;
  if (cfg.positions_stored) {
    lim.max_target_tokens = std::min(lim.max_target_tokens, cfg.max_positions);
    lim.max_source_tokens = std::min(lim.max_source_tokens, cfg.max_positions);
  }
  lim.max_input_bytes = a.max_input_bytes;
  lim.alignments = a.alignments;
  lim.num_threads = a.threads;
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

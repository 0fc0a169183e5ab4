// `mtlite shortlist -m MODEL -o OUT (--source SRC --target TGT ... | --lex FILE [--target TGT ...])
//                   [--top-k K] [--frequent N] [--score dice|conditional] [--keep-row-order] [--quiet]`
// Writes OUT = MODEL plus an output-vocabulary shortlist section (converter/shortlist_builder.h). The
// parser is in every build; the build itself only where the converter (a host tool) is built.
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#ifdef MTLITE_HAS_CONVERTER
#include "io.h"
#include "shortlist_builder.h"
#endif

namespace mtlite {
namespace cli {

// `mtlite shortlist --help`: what the command does.
constexpr char kSummary[] =
    "Writes OUT: MODEL with an output-vocabulary shortlist section (an existing one is replaced).\n"
    "The weights are copied unchanged, except that an int8 model's output projection rows (and\n"
    "final_logits_bias) are stored in an order that puts the ids the same sentences select side\n"
    "by side, so a sentence's candidates fill few 8-row blocks (--keep-row-order: token order;\n"
    "a reordered file is format version 2). Built from parallel text tokenized with the model's\n"
    "tokenizers (per source token, the top-k target tokens by co-occurrence: Dice 2c(s,t)/(c(s)+c(t))\n"
    "or p(t|s) = c(s,t)/c(s) over sentence pairs), or imported from Marian's lex.s2t text format\n"
    "(\"TARGET SOURCE PROB\" per line) or its binary form (lex.*.s2t.bin, vocabulary ids: for\n"
    "models converted from Marian checkpoints); plus the N most frequent target tokens, always allowed.";

ParseResult ParseShortlistArgs(int argc, const char* const* argv, ShortlistArgs* a) {
  ArgParser p("mtlite shortlist", kSummary);
  p.String("-m,--model", "MODEL", &a->model, "the .mtlite model file").Required();
  p.String("-o,--output", "OUT", &a->output, "the .mtlite file to write (may be MODEL itself)").Required();
  // --source / --target: repeatable, appended in order.
  auto append_to = [](std::vector<std::string>* files) {
    return [files](const std::string& v) {
      if (v.empty()) return std::string("must not be empty");
      files->push_back(v);
      return std::string();
    };
  };
  p.Custom("--source", "FILE", append_to(&a->sources),
           "source side of a parallel text, one sentence per line (repeatable; paired with the --target of the same rank)");
  p.Custom("--target", "FILE", append_to(&a->targets),
           "target side, line N translating line N of its --source (repeatable); with --lex: text for --frequent");
  p.String("--lex", "FILE", &a->lex, "import Marian's lex.s2t (TARGET SOURCE PROB per line) or binary lex.*.s2t.bin instead of counting");
  p.Int("--top-k", "K", 0, 10000000, &a->top_k, "target tokens kept per source token");
  p.Int("--frequent", "N", 0, 10000000, &a->frequent,
        "most frequent target tokens, always allowed (with --lex and no --target: highest target spm unigram scores)");
  p.Choice("--score", {"dice", "conditional"}, &a->score, "co-occurrence score: Dice or p(t|s)");
  p.Flag("--keep-row-order", &a->keep_order,
         "keep the output projection's rows in token order (the file stays format version 1; the shortlist "
         "then reads more blocks per sentence)");
  p.Flag("-q,--quiet", &a->quiet, "no report");
  p.Check([a] {
    if (!a->lex.empty()) return a->sources.empty() ? std::string() : std::string("--source is not used with --lex");
    if (a->sources.empty()) return std::string("needs --source and --target files, or --lex");
    if (a->sources.size() != a->targets.size()) {
      return "needs one --target per --source (got " + std::to_string(a->sources.size()) + " and " +
             std::to_string(a->targets.size()) + ")";
    }
    return std::string();
  });
  return p.Parse(argc, argv);
}

#ifdef MTLITE_HAS_CONVERTER
namespace {

void PrintReport(const ShortlistArgs& a, const converter::ShortlistReport& r, const converter::ShortlistSpec& sl,
                 uint64_t model_bytes, uint64_t out_bytes) {
  if (a.lex.empty()) {
    std::printf("read %" PRIu64 " sentence pairs (%" PRIu64 " skipped: a side without tokens), %" PRIu64
                " source and %" PRIu64 " target tokens\n",
                r.pairs, r.skipped_pairs, r.source_tokens, r.target_tokens);
  } else if (r.lex_binary) {
    std::printf("read %" PRIu64 " binary lex entries (firstNum %" PRIu64 ", bestNum %" PRIu64 "): %" PRIu64
                " with a target id outside the vocabulary (skipped)\n",
                r.lex_entries, r.lex_first_num, r.lex_best_num, r.lex_unknown_target);
  } else {
    std::printf("read %" PRIu64 " lex entries: %" PRIu64 " with NULL, %" PRIu64 " unknown source and %" PRIu64
                " unknown target pieces (skipped), %" PRIu64 " with PROB <= 0 (dropped)\n",
                r.lex_entries, r.lex_null, r.lex_unknown_source, r.lex_unknown_target, r.lex_not_positive);
    if (!a.targets.empty()) std::printf("read %" PRIu64 " target tokens for --frequent\n", r.target_tokens);
  }
  std::printf("shortlist: %zu frequent ids (%s), %" PRIu64 " source ids with %" PRIu64
              " targets (at most %d each), source ids allowed: %s\n",
              sl.frequent.size(), r.frequent_rule.c_str(), r.sources_with_targets, r.total_targets, sl.top_k,
              sl.include_source_ids ? "yes (shared vocabulary)" : "no");
  std::printf("output projection rows: %s\n",
              sl.row_order.empty() ? "token order" : "grouped by the shortlist (format version 2)");
  std::printf("%s: %" PRIu64 " bytes (%s: %" PRIu64 " bytes)\n", a.output.c_str(), out_bytes, a.model.c_str(),
              model_bytes);
}

}  // namespace

int ShortlistMain(int argc, char** argv) {
  ShortlistArgs a;
  const ParseResult parsed = ParseShortlistArgs(argc, argv, &a);
  if (!parsed.ok()) return PrintParseResult(parsed, "mtlite shortlist");
  auto fail = [](const Status& s) {
    std::fprintf(stderr, "mtlite shortlist: %s\n", s.ToString().c_str());
    return 1;
  };
  auto loaded = Model::Load(a.model, LoadOptions{true});
  if (!loaded.ok()) return fail(loaded.status());
  const Model& model = **loaded;
  converter::ShortlistOptions options;
  options.top_k = a.top_k;
  options.frequent = a.frequent;
  options.score = a.score == "dice" ? converter::ShortlistScore::kDice : converter::ShortlistScore::kConditional;
  options.row_order = !a.keep_order;
  converter::ShortlistSpec shortlist;
  converter::ShortlistReport report;
  Status s = a.lex.empty()
                 ? converter::BuildCorpusShortlist(model, a.sources, a.targets, options, &shortlist, &report)
                 : converter::ImportLexShortlist(model, a.lex, a.targets, options, &shortlist, &report);
  if (!s.ok()) return fail(s);
  const converter::ShortlistSpec kept = shortlist;
  converter::AlignedBytes bytes;
  s = converter::AddShortlist(model, std::move(shortlist), &bytes);
  if (s.ok()) s = converter::WriteFileAtomic(a.output, bytes.data(), bytes.size());
  if (!s.ok()) return fail(s);
  if (!a.quiet) PrintReport(a, report, kept, model.file_size(), bytes.size());
  return 0;
}

#else

int ShortlistMain(int, char**) {
  std::fprintf(stderr, "mtlite: this build has no converter (shortlist is a host tool)\n");
  return 2;
}

#endif

}  // namespace cli
}  // namespace mtlite

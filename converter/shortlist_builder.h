// Output-vocabulary shortlist, offline side (`mtlite shortlist`): built from a parallel corpus
// tokenized with the model's own tokenizers, or imported from Marian's lex.s2t text format, and
// written into a copy of the model as the optional Shortlist section (schema/mtlite.fbs).
//
// At run time a sentence may produce: the `frequent` target ids, the list of each of its source
// ids, the source ids themselves when the vocabulary is shared (include_source_ids), and </s>.
// Because all of those are allowed anyway, a source id's list never repeats a frequent id or the
// source id itself: its top-k slots go to ids that are not allowed already. Ids the model never
// generates (config.bad_word_ids, <pad> among them) are left out everywhere. Every choice is
// deterministic: ties go to the lower id.
//
// Corpus statistics (docs/format.md "Output-vocabulary shortlist" has the measurements):
//   c(s), c(t)  number of sentence pairs whose source side contains s / target side contains t
//   c(s, t)     number of pairs containing both (each pair counts once, however often they repeat)
//   score       Dice(s, t) = 2 c(s, t) / (c(s) + c(t))   (ShortlistScore::kDice, the default), or
//               p(t | s) = c(s, t) / c(s)                 (ShortlistScore::kConditional)
//   frequent    the N target ids with the most occurrences in the target text
// Scores are compared exactly (integer cross-multiplication), not as rounded floats.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model_writer.h"
#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace converter {

enum class ShortlistScore { kDice, kConditional };
const char* ShortlistScoreName(ShortlistScore s);  // "dice", "conditional"

struct ShortlistOptions {
  int top_k = 100;    // targets kept per source id (Marian deployments often use 50 50: see docs/format.md)
  int frequent = 200; // always-allowed target ids
  ShortlistScore score = ShortlistScore::kDice;
  // int8 models: store the output projection's rows in an order that groups the ids the same
  // sentences select (ShortlistSpec::row_order; the file becomes format_version 2); false (or an
  // f32/f16 model): token order, format_version 1.
  bool row_order = true;
};

// What a build read and kept (printed by `mtlite shortlist`, checked by tests).
struct ShortlistReport {
  // Text (corpus build; with --lex only the target side, for --frequent).
  uint64_t pairs = 0;           // sentence pairs read (lines of the source files)
  uint64_t skipped_pairs = 0;   // pairs with no token on one side (empty lines)
  uint64_t source_tokens = 0, target_tokens = 0;
  // Marian lex import.
  uint64_t lex_entries = 0;          // lines "TARGET SOURCE PROB"
  uint64_t lex_null = 0;             // entries with a NULL side (skipped, as Marian does)
  uint64_t lex_unknown_source = 0;   // source piece not in the source vocabulary (skipped)
  uint64_t lex_unknown_target = 0;   // target piece not in the target vocabulary (skipped)
  uint64_t lex_not_positive = 0;     // PROB <= 0 (dropped, as Marian's threshold 0 does)
  // Marian's binary lex (lex_binary.h): entries = listed (source, target) ids, unknown target = an
  // id outside the target vocabulary; firstNum and bestNum of its header.
  bool lex_binary = false;
  uint64_t lex_first_num = 0, lex_best_num = 0;
  std::string frequent_rule;         // how `frequent` was chosen
  // Result.
  uint64_t sources_with_targets = 0, total_targets = 0;
};

// Reads one or more parallel files (source_paths[i] pairs with target_paths[i], one sentence per
// line, UTF-8, a trailing '\r' ignored) and builds the shortlist. Errors name the file and line
// (invalid UTF-8, line counts that differ, unreadable files); text with no pair that has tokens on
// both sides (empty files) is an error too.
Status BuildCorpusShortlist(const Model& model, const std::vector<std::string>& source_paths,
                            const std::vector<std::string>& target_paths, const ShortlistOptions& options,
                            ShortlistSpec* out, ShortlistReport* report);

// Imports Marian's lex.s2t, or its binary form (lex_binary.h, told apart by content: source id ->
// target ids, each counted as probability 1, so ties keep the lower ids; Marian's firstNum is
// reported, `frequent` is chosen as below). The text form: one entry per line, "TARGET SOURCE PROB" separated by spaces or tabs
// (what marian-dev src/data/shortlist.h LexicalShortlistGenerator::load reads: `in >> trg >> src
// >> prob`; entries with a NULL side are skipped; a repeated (source, target) pair keeps its last
// probability; prune() keeps, per source, the best `bestNum` with PROB > threshold 0). Tokens are
// vocabulary piece strings; unknown pieces are skipped and counted (Marian would map them to
// <unk>). Per source id the top_k most probable targets are kept (ties: lower id first).
// `frequent`: the N most frequent target ids of `target_text_paths` when given; otherwise (Marian
// takes the first N vocabulary ids, which assumes a frequency-sorted vocabulary, and HF
// vocabularies are not) the N normal pieces of the target SentencePiece model with the highest
// unigram score (log-probability), ties to the lower id. A file with no entry whose pieces are both
// in the vocabularies (empty, or made for another model) is an error.
Status ImportLexShortlist(const Model& model, const std::string& lex_path,
                          const std::vector<std::string>& target_text_paths, const ShortlistOptions& options,
                          ShortlistSpec* out, ShortlistReport* report);

// `model`'s file with `shortlist` as its Shortlist section (an existing one is replaced): the
// model is re-read (ReadModelSpec) and re-serialized. Self-checks, like the converter: the result
// loads with checksums verified and every data buffer other than the shortlist's has the bytes it
// had in `model`.
Status AddShortlist(const Model& model, ShortlistSpec shortlist, AlignedBytes* out);

}  // namespace converter
}  // namespace mtlite

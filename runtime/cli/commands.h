// Subcommands of the `mtlite` CLI. Each command has an argument struct, a parser that fills
// it (no I/O, no process exit: tests and the cli_args fuzz target call them directly) and a
// main that returns the process exit code (0 success, 1 failure, 2 bad arguments) and prints
// its own errors to stderr.
//
// Adding a command: an XxxArgs struct and ParseXxxArgs here, runtime/cli/xxx_cmd.cc with the
// parser (an ArgParser over the struct's fields) and XxxMain, and a row in main.cc's table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "args.h"
#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace cli {

// mtlite convert HF_DIR -o MODEL [--quantize int8|fp16|fp32] [--quiet]
struct ConvertArgs {
  std::string input, output;          // input: HF directory, Marian folder or Marian model file
  std::string quantize = "int8";
  std::vector<std::string> vocabs;    // --vocab, repeatable (Marian models)
  std::string semantics;              // "", "marian", "hf"
  std::string source_lang, target_lang;  // --source-lang / --target-lang ("": from the input)
  std::string decoding_defaults = "auto";  // --decoding-defaults auto|record|none
  bool quiet = false;
};
ParseResult ParseConvertArgs(int argc, const char* const* argv, ConvertArgs* out);
int ConvertMain(int argc, char** argv);  // "no converter in this build" (exit 2) in cross builds

// mtlite shortlist -m MODEL -o OUT (--source SRC --target TGT ... | --lex FILE [--target TGT ...])
//                  [--top-k K] [--frequent N] [--score dice|conditional] [--quiet]
struct ShortlistArgs {
  std::string model, output, lex;
  std::vector<std::string> sources, targets;  // --source / --target, repeatable, paired in order
  int top_k = 100, frequent = 200;
  std::string score = "dice";
  bool keep_order = false;  // --keep-row-order
  bool quiet = false;
};
ParseResult ParseShortlistArgs(int argc, const char* const* argv, ShortlistArgs* out);
int ShortlistMain(int argc, char** argv);  // host builds (it is part of the converter)

// mtlite info MODEL [--json] [--verify] [--limits BATCH,SRC,TGT,BEAM [--threads N] [--header FILE]]
struct InfoArgs {
  std::string path;
  bool json = false, verify = false;
  bool limits_given = false;
  TranslatorLimits limits;
  std::string header;  // --header: write the RAM budget as C macros (needs --limits)
  std::string board;   // --board: where the parts go on a bare-metal board, and whether they fit (needs --limits)
  bool quiet = false;  // print nothing but errors (e.g. with --header in a build)
};
ParseResult ParseInfoArgs(int argc, const char* const* argv, InfoArgs* out);
int InfoMain(int argc, char** argv);

// mtlite embed MODEL -o model_data.S|.c [--symbol NAME] [--section NAME]
struct EmbedArgs {
  std::string model, output;
  std::string symbol = "mtlite_model_data";
  std::string section = ".rodata";
};
ParseResult ParseEmbedArgs(int argc, const char* const* argv, EmbedArgs* out);
int EmbedMain(int argc, char** argv);

// Options of everything that translates with a model (translate, bench/e2e_bench).
struct TranslationArgs {
  std::string model;
  std::string second_model;  // translate: a second -m (the pivot chain's second model)
  int beam = 1, batch = 1, threads = 1, max_length = 256, max_source_tokens = 256;
  bool beam_given = false, max_length_given = false;  // on the command line (else: the model's default)
};
// Adds -m/--model (required; with `pivot`, given once or twice: the second is second_model),
// --beam, --batch (1..max_batch), --threads, --max-length and --max-source-tokens.
void AddTranslationOptions(ArgParser* p, TranslationArgs* a, int max_batch, bool pivot = false);
// Translator limits for these options (max_n_best 1): the token limits are capped at the
// length of a stored position table.
TranslatorLimits TranslationLimits(const TranslationArgs& a, const ModelConfig& config);

// mtlite translate -m MODEL [options] [TEXT ...]
struct TranslateArgs : TranslationArgs {
  int n_best = 1, max_input_bytes = 16384;
  float length_penalty = 1.0f, max_length_ratio = 0;
  int max_length_offset = 10;
  bool length_penalty_given = false, max_length_ratio_given = false, max_length_offset_given = false;
  bool alignments = false, output_ids = false, input_ids = false, scores = false, verify = false;
  bool shortlist = false;
  bool quiet = false, stream = false;
  int sort_window = -1;  // --sort-window: lines sorted by length at a time; -1: the default
  std::string forced_logits;
  // Text layer (Translator::TranslateText): --split ("" = the default: paragraph, or none when a
  // per-line option such as --n-best or --output-ids asks for today's line-as-one-sentence output),
  // --html (the whole input is one HTML document), --max-length-break, --max-text-bytes.
  std::string split;
  bool html = false;
  int max_length_break = 128, max_text_bytes = 65536;
  std::vector<std::string> texts;
};
ParseResult ParseTranslateArgs(int argc, const char* const* argv, TranslateArgs* out);
// The decoding options the command line does not give (beam, max length, ratio and offset,
// length penalty) take the model's recorded defaults (Model::decoding_defaults); false with
// *error set when --n-best then exceeds the beam.
bool ApplyModelDefaults(const Model& model, TranslateArgs* a, std::string* error);
int TranslateMain(int argc, char** argv);
// The split mode of these arguments: --split, else the default (see TranslateArgs::split).
SplitMode EffectiveSplit(const TranslateArgs& a);

// Batching of `mtlite translate`: it reads a window of lines at a time, translates them in
// batches of --batch sorted by source length (so a batch holds sentences of similar length:
// less source padding in cross-attention, and the decoder rows finish together instead of one
// long sentence stepping alone), and writes the window in input order. Batch composition does
// not change a translation (kernel contract), so the output equals the unsorted one.
constexpr int kDefaultSortWindowBatches = 64;
// Lines per window for these options: --sort-window (default kDefaultSortWindowBatches x
// --batch); 1 (no sorting) with --stream, --batch 1 or --sort-window 0 or 1.
int SortWindowLines(const TranslateArgs& a);
// The order in which a window's lines are translated: by length, ties by input position.
std::vector<uint32_t> LengthOrder(const int* lengths, size_t n);
// Source padding of the batches of a window: cells of the [rows x longest source] matrices,
// in the sorted order and in input order, and the real tokens among them.
struct BatchPadding {
  uint64_t tokens = 0, sorted_cells = 0, input_order_cells = 0, batches = 0;
  void Add(const int* lengths, const std::vector<uint32_t>& order, size_t batch);
  double SortedPercent() const;      // padding cells / cells, in %
  double InputOrderPercent() const;
};

// mtlite profile -m MODEL [--input FILE | TEXT ...] [options]   (docs/profiling.md)
struct ProfileArgs : TranslationArgs {
  std::string input, trace, json;
  std::vector<std::string> texts;
  int repeat = 1;
  bool layers = false, roofline = false, quiet = false, shortlist = false;
  int roofline_mib = 256;
};
ParseResult ParseProfileArgs(int argc, const char* const* argv, ProfileArgs* out);
int ProfileMain(int argc, char** argv);

// mtlite attention -m MODEL TEXT [TEXT ...] [-o MAP.svg|MAP.json] [--json FILE] [options]
// The TEXTs are translated as one batch (TranslationArgs::batch = their number); --sentence
// picks the one drawn, so a longer sentence beside it shows the padding columns.
struct AttentionArgs : TranslationArgs {
  std::string output, json;
  std::vector<std::string> texts;
  int sentence = 0, layer = -1;
  bool crop = false;
};
ParseResult ParseAttentionArgs(int argc, const char* const* argv, AttentionArgs* out);
int AttentionMain(int argc, char** argv);

// The size profile as a table (component, bytes, % of `file_bytes`, dtypes) and a total line:
// what `mtlite info` and `mtlite convert` print.
void PrintSizeTable(const std::vector<SizeComponent>& profile, uint64_t file_bytes);
std::string JoinDTypes(const std::vector<std::string>& dtypes);  // "f32+int8"

// mtlite split [--split MODE] [--lang CODE] [--json]: stdin cut into sentences (sentence_split.h).
struct SplitArgs {
  std::string split = "paragraph", lang;
  bool json = false;
};
ParseResult ParseSplitArgs(int argc, const char* const* argv, SplitArgs* out);
int SplitMain(int argc, char** argv);

}  // namespace cli
}  // namespace mtlite

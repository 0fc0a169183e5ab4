// `mtlite convert` for Marian's own models: a checkpoint file (.npz or Marian .bin, float32 or
// intgemm8) with its vocabularies, or a folder laid out as OPUS-MT and Firefox Translations ship
// them; and the dispatch between those and an HF MarianMT directory (converter/hf_convert.h).
//
// Semantics. A model computes what its trainer computed only with the trainer's conventions; the
// model format expresses both (docs/marian.md):
//   marian  layer_norm_eps 1e-6, Marian's sinusoid (stored as the position tables), the first
//           decoder input a zero vector: a zero row appended to every embedding table as <pad>
//           (id V; 0 in final_logits_bias), pad_id = decoder_start_id = V, never generated.
//   hf      what the transformers port of the same checkpoint computes (convert_marian_to_pytorch
//           appends the same zero <pad> row): layer_norm_eps 1e-5 and the sinusoid the runtime
//           computes (positions not stored). Useful to reproduce an HF port's outputs.
// Both scale the embeddings by sqrt(d) and map swish -> SiLU, relu -> ReLU. A Marian checkpoint
// defaults to marian; an HF directory to hf (marian there: Marian's sinusoid, eps and zero start
// for an HF port of a Marian-trained model). The choice is recorded as metadata "semantics".
//
// Vocabularies: each --vocab is a SentencePiece model (.spm) or Marian's YAML vocabulary (.yml),
// told apart by content. One .spm: shared by both sides; two: source then target. Ids are the
// .spm's piece ids, or, when a .yml is given too (one: shared; two: source then target), the
// YAML's ids (an .spm piece missing from it maps to <unk>). mtlite tokenizes with the .spm, so a
// .yml alone is not enough.
#pragma once

#include <string>
#include <vector>

#include "hf_convert.h"
#include "marian_checkpoint.h"
#include "model_writer.h"
#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace converter {

enum class Semantics { kDefault, kMarian, kHf };  // kDefault: marian for Marian input, hf for HF
bool ParseSemantics(const std::string& s, Semantics* out);  // "marian", "hf"
const char* SemanticsName(Semantics s);                     // "marian", "hf", "default"

// Which decoding settings of the input `mtlite convert` records in the file (schema table
// DecodingDefaults; they become every interface's defaults for the model):
//   kAuto    a Marian release folder's decoder.yml / config*.yml and a CTranslate2 / Argos
//            package's settings; an HF directory's generation_config.json is read and reported
//            only (HF conversions have always decoded with mtlite's own defaults);
//   kRecord  also generation_config.json;
//   kNone    nothing.
enum class DecodingDefaultsMode { kAuto, kRecord, kNone };
bool ParseDecodingDefaultsMode(const std::string& s, DecodingDefaultsMode* out);  // "auto", "record", "none"

struct ConvertOptions {
  Quantization quantize = Quantization::kInt8;
  std::vector<std::string> vocabs;  // --vocab files, in order
  Semantics semantics = Semantics::kDefault;
  // The model's languages (--source-lang / --target-lang): written to the file's metadata; empty:
  // what the input says (an HF tokenizer_config.json), else what its names say (LanguagesFromName).
  std::string source_lang, target_lang;
  DecodingDefaultsMode decoding_defaults = DecodingDefaultsMode::kAuto;  // --decoding-defaults
};

// The language pair a release's names give: "opus-mt-en-de" (and "opus-mt-tc-big-en-de"), a
// Firefox Translations folder "enit" or file "model.enit.intgemm.alphas.bin" / "vocab.enit.spm".
// False when the name says nothing.
bool LanguagesFromName(const std::string& path, std::string* source, std::string* target);

// A release folder's decoder options (OPUS-MT's decoder.yml, a Firefox Translations config*.yml):
// what the release translates with. Marian's defaults (marian-decoder's) where the file is silent.
struct DecoderOptions {
  std::string file;              // empty: the folder has none
  int beam_size = 12;
  float normalize = 0.0f;        // length normalisation exponent (mtlite's length_penalty)
  float word_penalty = 0.0f;     // not applied by mtlite (every known release uses 0)
  float max_length_factor = 3.0f;  // cap: factor x source tokens words
  // Settings of the file that mtlite does not record as decoding defaults, each "key value: why"
  // (a word-penalty other than 0, max-length, n-best).
  std::vector<std::string> ignored;
};


// Applies `mode` to what a loader put in spec->decoding_defaults (`hf`: it came from an HF
// generation_config.json): what was read goes to inputs->decoding (printed by `mtlite convert`),
// each ignored setting becomes a warning, and the spec keeps the settings only when recorded.
struct ConvertInputs;
void ApplyDecodingDefaultsMode(DecodingDefaultsMode mode, bool hf, ModelSpec* spec, ConversionReport* report,
                               ConvertInputs* inputs);

// What a conversion read (printed by `mtlite convert`).
struct ConvertInputs {
  std::string kind;                 // "hf", "marian"
  std::string model;                // the checkpoint file (Marian) or directory (HF)
  std::vector<std::string> vocabs;  // the vocabularies used (Marian)
  std::string lex;                  // the lexical shortlist built in (folders), or empty
  Semantics semantics = Semantics::kDefault;  // resolved
  bool intgemm8_as_is = false;      // int8 weights taken from intgemm8 items unchanged
  DecoderOptions decoder;           // folders: their decoder options (default_beam, metadata)
  DecodingDefaultsSpec decoding;    // the decoding settings read (ApplyDecodingDefaultsMode)
  bool decoding_recorded = false;   // ... and recorded in the file
};

// The decoder options of a Marian config file (decoder.yml): beam-size, normalize, word-penalty,
// max-length-factor; a value that is no number, or a beam outside [1, 64], is an error naming it.
Status ReadDecoderOptions(const std::string& path, DecoderOptions* out);

// The positions Marian adds: [positions][d] row-major, float32 as Marian computes them:
// inc = log(10000) / (d/2 - 1), sin(p·exp(-i·inc)) in columns [0, d/2), cos in [d/2, 2·(d/2)).
std::vector<float> MarianNativeSinusoid(int positions, int d);

// A Marian checkpoint file + vocabularies -> ModelSpec (options.vocabs must be non-empty).
// intgemm8 items with quantize int8: their int8 values and multiplier are stored as they are
// (scale 1/multiplier on every row), not quantized again.
Status ConvertMarianModel(const std::string& model_path, const ConvertOptions& options, ModelSpec* spec,
                          ConversionReport* report, ConvertInputs* inputs);

// Any input: an HF directory (config.json), a Marian release folder (a model file, its
// vocabularies, optionally one lex.* shortlist, which is built in), or a Marian checkpoint file.
// The result is self-checked like ConvertToBytes.
Status ConvertInput(const std::string& input, const ConvertOptions& options, AlignedBytes* out,
                    ConversionReport* report, ConvertInputs* inputs);

}  // namespace converter
}  // namespace mtlite

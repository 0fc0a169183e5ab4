// `mtlite convert INPUT [--vocab V.spm|V.yml ...] -o MODEL [--quantize int8|fp16|fp32]
//                 [--semantics marian|hf] [--quiet]`
// The parser is in every build; the conversion itself only where the converter (a host tool)
// is built.
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "marian_layout.h"
#ifdef MTLITE_HAS_CONVERTER
#include "ct2_convert.h"
#include "hf_convert.h"
#include "marian_convert.h"
#include "io.h"
#endif

namespace mtlite {
namespace cli {

// `mtlite convert --help`: what the command does.
constexpr char kSummary[] =
    "Converts a model into one .mtlite file and prints a report: every tensor with its encoding\n"
    "error, then the file's size profile. INPUT is one of\n"
    "  a HuggingFace MarianMT directory (config.json, model.safetensors, source.spm, target.spm,\n"
    "    vocab.json);\n"
    "  a Marian model file (.npz, or Marian .bin: float32 or intgemm8, told apart by content) with\n"
    "    --vocab: one .spm (shared) or source and target .spm, optionally Marian's .yml vocabulary\n"
    "    (then the ids are the YAML's);\n"
    "  a folder as OPUS-MT and Firefox Translations ship models: one model file, its vocabularies\n"
    "    (vocab.*.spm, srcvocab/trgvocab *.spm, or source.spm/target.spm with *vocab.yml) and\n"
    "    optionally a lex.* shortlist, which is built in;\n"
    "  a CTranslate2 model directory (model.bin, config.json, shared_vocabulary or source/target\n"
    "    _vocabulary .json/.txt) with --vocab: its SentencePiece model(s) (a sentencepiece.model or\n"
    "    source.spm in the directory is used without); an Argos Translate package (.argosmodel).\n"
    "Marian models keep Marian's semantics (layer-norm eps 1e-6, Marian's sinusoid, a zero first\n"
    "decoder input); intgemm8 weights keep their int8 values with --quantize int8 (docs/marian.md).";

ParseResult ParseConvertArgs(int argc, const char* const* argv, ConvertArgs* a) {
  ArgParser p("mtlite convert", kSummary);
  p.Positional("INPUT", &a->input, "HF directory, Marian model file or Marian model folder");
  p.String("-o,--output", "MODEL", &a->output, "the .mtlite file to write").Required();
  p.Choice("--quantize", {"int8", "fp16", "fp32"}, &a->quantize, "weight type of the model file");
  p.Custom("--vocab", "FILE",
           [a](const std::string& v) {
             if (v.empty()) return std::string("must not be empty");
             a->vocabs.push_back(v);
             return std::string();
           },
           "a Marian model's vocabulary, .spm or .yml (repeatable: source, then target)");
  p.Choice("--semantics", {"marian", "hf"}, &a->semantics,
           "compute as Marian or as the transformers port (default: marian for Marian models, hf for HF)");
  p.String("--source-lang", "CODE", &a->source_lang,
           "the model's source language (default: the input's config, else its name: opus-mt-en-de, enit)");
  p.String("--target-lang", "CODE", &a->target_lang, "the model's target language (likewise)");
  p.Choice("--decoding-defaults", {"auto", "record", "none"}, &a->decoding_defaults,
           "record the input's decoding settings as the model's defaults: auto = a Marian folder's "
           "decoder.yml / config*.yml (an HF generation_config.json is only reported), record = also "
           "generation_config.json, none = nothing");
  p.Flag("-q,--quiet", &a->quiet, "no report (warnings are still printed)");
  return p.Parse(argc, argv);
}

#ifdef MTLITE_HAS_CONVERTER
namespace {

std::string Shape(const std::vector<int64_t>& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
  return out;
}

void PrintReport(const converter::ConversionReport& r, const converter::ConvertInputs& in, const std::string& out_path,
                 const char* quant) {
  if (in.kind == "marian") {
    std::string vocabs;
    for (const std::string& v : in.vocabs) vocabs += (vocabs.empty() ? "" : ", ") + v;
    std::printf("Marian model %s, vocabularies %s%s%s\n", in.model.c_str(), vocabs.c_str(),
                in.lex.empty() ? "" : ", shortlist ", in.lex.c_str());
  }
  if (in.kind == "ct2" || in.kind == "argos") {
    std::string vocabs;
    for (const std::string& v : in.vocabs) vocabs += (vocabs.empty() ? "" : ", ") + v;
    std::printf("CTranslate2 model %s%s, SentencePiece %s\n", in.model.c_str(),
                in.kind == "argos" ? " (Argos package)" : "", vocabs.c_str());
  } else {
    std::printf("semantics: %s%s\n", converter::SemanticsName(in.semantics),
                in.intgemm8_as_is ? "; intgemm8 weights stored as in the file" : "");
  }
  if (const converter::DecodingDefaultsSpec& d = in.decoding; !d.empty()) {
    // the release's decoding settings as mtlite translate flags (ignored ones: the warnings)
    std::string v;
    const auto add = [&v](const char* name, const std::string& value) { v += std::string(" --") + name + " " + value; };
    char buf[32];
    const auto num = [&buf](float f) { std::snprintf(buf, sizeof buf, "%g", double(f)); return std::string(buf); };
    if (d.beam_size) add("beam", std::to_string(*d.beam_size));
    if (d.length_penalty) add("length-penalty", num(*d.length_penalty));
    if (d.max_length) add("max-length", std::to_string(*d.max_length));
    if (d.max_length_ratio) add("max-length-ratio", num(*d.max_length_ratio));
    if (d.max_length_offset) add("max-length-offset", std::to_string(*d.max_length_offset));
    std::printf("decoding defaults (%s):%s: %s\n", d.source.c_str(), v.c_str(),
                in.decoding_recorded ? "recorded, the model's defaults (flags override them)"
                : in.kind == "hf"    ? "not recorded (--decoding-defaults record records them)"
                                     : "not recorded (--decoding-defaults none)");
  }
  std::printf("%-56s %-5s %-10s %10s %12s %12s\n", "tensor", "dtype", "shape", "bytes", "max_abs_err", "rel_rms_err");
  for (const auto& t : r.tensors) {
    std::printf("%-56s %-5s %-10s %10llu", t.name.c_str(), layout::DTypeName(t.dtype), Shape(t.shape).c_str(),
                static_cast<unsigned long long>(t.bytes));
    if (t.encoded) std::printf(" %12.3e %12.3e", t.max_abs_error, t.rel_rms_error);
    std::printf("\n");
  }
  PrintSizeTable(r.size_profile, r.file_bytes);
  std::printf("\n%s (%s): %llu bytes = %.2f%% of %s (%llu bytes)\n", out_path.c_str(), quant,
              static_cast<unsigned long long>(r.file_bytes), 100.0 * double(r.file_bytes) / double(r.safetensors_bytes),
              r.source_file.c_str(),
              static_cast<unsigned long long>(r.safetensors_bytes));
}

}  // namespace

int ConvertMain(int argc, char** argv) {
  ConvertArgs a;
  const ParseResult parsed = ParseConvertArgs(argc, argv, &a);
  if (!parsed.ok()) return PrintParseResult(parsed, "mtlite convert");
  converter::Quantization q;
  if (!converter::ParseQuantization(a.quantize, &q)) {  // the parser accepts only these names
    std::fprintf(stderr, "mtlite convert: --quantize must be %s (got '%s')\n", layout::kQuantizationChoices,
                 a.quantize.c_str());
    return 2;
  }
  converter::ConvertOptions options;
  options.quantize = q;
  options.vocabs = a.vocabs;
  options.source_lang = a.source_lang;
  options.target_lang = a.target_lang;
  if (!a.semantics.empty()) converter::ParseSemantics(a.semantics, &options.semantics);  // the parser checked it
  converter::ParseDecodingDefaultsMode(a.decoding_defaults, &options.decoding_defaults);  // likewise
  converter::AlignedBytes bytes;
  converter::ConversionReport report;
  converter::ConvertInputs inputs;
  Status s = converter::IsCt2Input(a.input) ? converter::ConvertCt2Input(a.input, options, &bytes, &report, &inputs)
                                            : converter::ConvertInput(a.input, options, &bytes, &report, &inputs);
  if (s.ok()) s = converter::WriteFileAtomic(a.output, bytes.data(), bytes.size());
  if (!s.ok()) {
    std::fprintf(stderr, "mtlite convert: %s\n", s.ToString().c_str());
    return 1;
  }
  for (const std::string& w : report.warnings) std::fprintf(stderr, "mtlite convert: warning: %s\n", w.c_str());
  if (!a.quiet) PrintReport(report, inputs, a.output, converter::QuantizationName(q));
  return 0;
}

#else

int ConvertMain(int, char**) {
  std::fprintf(stderr, "mtlite: this build has no converter (it is a host tool)\n");
  return 2;
}

#endif

}  // namespace cli
}  // namespace mtlite

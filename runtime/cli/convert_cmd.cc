// `mtlite convert HF_DIR -o MODEL [--quantize int8|fp16|fp32] [--quiet]`
// The parser is in every build; the conversion itself only where the converter (a host tool)
// is built.
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "marian_layout.h"
#ifdef MTLITE_HAS_CONVERTER
#include "hf_convert.h"
#include "io.h"
#endif

namespace mtlite {
namespace cli {

// `mtlite convert --help`: what the command does.
constexpr char kSummary[] =
    "Converts a HuggingFace MarianMT checkpoint directory (config.json, model.safetensors,\n"
    "source.spm, target.spm, vocab.json) into one .mtlite file and prints a report: every\n"
    "tensor with its encoding error, then the file's size profile.";

ParseResult ParseConvertArgs(int argc, const char* const* argv, ConvertArgs* a) {
  ArgParser p("mtlite convert", kSummary);
  p.Positional("HF_DIR", &a->hf_dir, "the checkpoint directory");
  p.String("-o,--output", "MODEL", &a->output, "the .mtlite file to write").Required();
  p.Choice("--quantize", {"int8", "fp16", "fp32"}, &a->quantize, "weight type of the model file");
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

void PrintReport(const converter::ConversionReport& r, const std::string& out_path, const char* quant) {
  std::printf("%-56s %-5s %-10s %10s %12s %12s\n", "tensor", "dtype", "shape", "bytes", "max_abs_err", "rel_rms_err");
  for (const auto& t : r.tensors) {
    std::printf("%-56s %-5s %-10s %10llu", t.name.c_str(), layout::DTypeName(t.dtype), Shape(t.shape).c_str(),
                static_cast<unsigned long long>(t.bytes));
    if (t.encoded) std::printf(" %12.3e %12.3e", t.max_abs_error, t.rel_rms_error);
    std::printf("\n");
  }
  PrintSizeTable(r.size_profile, r.file_bytes);
  std::printf("\n%s (%s): %llu bytes = %.2f%% of model.safetensors (%llu bytes)\n", out_path.c_str(), quant,
              static_cast<unsigned long long>(r.file_bytes), 100.0 * double(r.file_bytes) / double(r.safetensors_bytes),
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
  converter::AlignedBytes bytes;
  converter::ConversionReport report;
  Status s = converter::ConvertToBytes(a.hf_dir, q, &bytes, &report);
  if (s.ok()) s = converter::WriteFileAtomic(a.output, bytes.data(), bytes.size());
  if (!s.ok()) {
    std::fprintf(stderr, "mtlite convert: %s\n", s.ToString().c_str());
    return 1;
  }
  for (const std::string& w : report.warnings) std::fprintf(stderr, "mtlite convert: warning: %s\n", w.c_str());
  if (!a.quiet) PrintReport(report, a.output, converter::QuantizationName(q));
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

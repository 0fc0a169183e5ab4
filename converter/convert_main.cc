// `mtlite convert <hf_dir> -o model.mtlite [--quantize int8|fp16|fp32] [--quiet]`
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "commands.h"
#include "hf_convert.h"
#include "io.h"

namespace mtlite {
namespace cli {
namespace {

int Usage() {
  std::fprintf(stderr, "usage: mtlite convert <hf_dir> -o model.mtlite [--quantize int8|fp16|fp32] [--quiet]\n");
  return 2;
}

const char* WeightTypeName(WeightType t) {
  switch (t) {
    case WeightType::kF32: return "f32";
    case WeightType::kF16: return "f16";
    case WeightType::kInt8: return "int8";
  }
  return "?";
}

std::string Shape(const std::vector<int64_t>& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
  return out;
}

void PrintReport(const converter::ConversionReport& r, const std::string& out_path, const char* quant) {
  std::printf("%-56s %-5s %-10s %10s %12s %12s\n", "tensor", "dtype", "shape", "bytes", "max_abs_err", "rel_rms_err");
  std::map<std::string, uint64_t> components;
  uint64_t buffers = 0;
  for (const auto& t : r.tensors) {
    std::printf("%-56s %-5s %-10s %10llu", t.name.c_str(), WeightTypeName(t.dtype), Shape(t.shape).c_str(),
                static_cast<unsigned long long>(t.bytes));
    if (t.encoded) std::printf(" %12.3e %12.3e", t.max_abs_error, t.rel_rms_error);
    std::printf("\n");
    components[t.component] += t.bytes;
    buffers += t.bytes;
  }
  components["tokenizer (scores, charsmap)"] = r.tokenizer_data_bytes;
  components["flatbuffer (structure, tokenizer strings, metadata)"] = r.flatbuffer_bytes;
  buffers += r.tokenizer_data_bytes;
  components["padding (64-byte alignment)"] = r.file_bytes - r.flatbuffer_bytes - buffers;
  std::printf("\n%-52s %12s %7s\n", "component", "bytes", "%");
  for (const auto& [name, bytes] : components) {
    std::printf("%-52s %12llu %6.2f%%\n", name.c_str(), static_cast<unsigned long long>(bytes),
                100.0 * double(bytes) / double(r.file_bytes));
  }
  std::printf("%-52s %12llu\n", "total", static_cast<unsigned long long>(r.file_bytes));
  std::printf("\n%s (%s): %llu bytes = %.2f%% of model.safetensors (%llu bytes)\n", out_path.c_str(), quant,
              static_cast<unsigned long long>(r.file_bytes), 100.0 * double(r.file_bytes) / double(r.safetensors_bytes),
              static_cast<unsigned long long>(r.safetensors_bytes));
}

}  // namespace

int ConvertMain(int argc, char** argv) {
  std::string hf_dir, out_path, quant = "int8";
  bool quiet = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "-o" || a == "--output") && i + 1 < argc) out_path = argv[++i];
    else if (a == "--quantize" && i + 1 < argc) quant = argv[++i];
    else if (a == "--quiet" || a == "-q") quiet = true;
    else if (a == "-h" || a == "--help") return Usage(), 0;
    else if (!a.empty() && a[0] != '-' && hf_dir.empty()) hf_dir = a;
    else {
      std::fprintf(stderr, "mtlite convert: unexpected argument '%s'\n", a.c_str());
      return Usage();
    }
  }
  if (hf_dir.empty() || out_path.empty()) return Usage();
  converter::Quantization q;
  if (!converter::ParseQuantization(quant, &q)) {
    std::fprintf(stderr, "mtlite convert: --quantize must be int8, fp16 or fp32 (got '%s')\n", quant.c_str());
    return 2;
  }
  converter::AlignedBytes bytes;
  converter::ConversionReport report;
  Status s = converter::ConvertToBytes(hf_dir, q, &bytes, &report);
  if (s.ok()) s = converter::WriteFileAtomic(out_path, bytes.data(), bytes.size());
  if (!s.ok()) {
    std::fprintf(stderr, "mtlite convert: %s\n", s.ToString().c_str());
    return 1;
  }
  for (const std::string& w : report.warnings) std::fprintf(stderr, "mtlite convert: warning: %s\n", w.c_str());
  if (!quiet) PrintReport(report, out_path, converter::QuantizationName(q));
  return 0;
}

}  // namespace cli
}  // namespace mtlite

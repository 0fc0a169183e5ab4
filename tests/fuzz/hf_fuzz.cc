// libFuzzer target: an HF MarianMT checkpoint's config.json and model.safetensors
// (converter/hf_convert.*, converter/safetensors.*) on arbitrary bytes: the text before the first
// NUL byte is config.json, the bytes after it model.safetensors (absent: the config alone). The
// config goes through ParseHfConfig; the safetensors file through Safetensors::Parse and ReadF32
// of every tensor; both, when accepted, through ConvertHfTensors (int8, fp16 or fp32, chosen by
// the last byte), which checks every tensor's shape against the config. Everything returns a
// Status, never crashes, hangs or trips a sanitizer; every rejection has a message; allocation
// stays within 64 x the input + 4 MiB (JSON documents take up to ~40 bytes per input byte).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "alloc_meter.h"
#include "fuzz_util.h"
#include "hf_convert.h"
#include "model_writer.h"
#include "safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mtlite;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const size_t nul = bytes.find('\0');
  const std::string config = bytes.substr(0, nul);
  fuzz::AllocMeter meter;
  {
    converter::ModelSpec spec;
    std::vector<std::string> warnings;
    Status cs = converter::ParseHfConfig(config, "", &spec.config, &warnings);
    if (!cs.ok() && cs.message().empty()) fuzz::Fail(bytes, "ParseHfConfig: rejection without a message");
    if (nul != std::string::npos) {
      converter::Safetensors st;
      Status s = converter::Safetensors::Parse(bytes.substr(nul + 1), "model.safetensors", &st);
      if (!s.ok() && s.message().empty()) fuzz::Fail(bytes, "Safetensors::Parse: rejection without a message");
      if (s.ok()) {
        for (const auto& [name, e] : st.entries()) {
          std::vector<float> v;
          s = st.ReadF32(name, &v);
          if (!s.ok() && s.message().empty()) fuzz::Fail(bytes, "ReadF32: rejection without a message");
          if (s.ok() && v.size() * (e.dtype == "F32" ? 4 : 2) != e.end - e.begin) {
            fuzz::Fail(bytes, "tensor %s: %zu values from %llu bytes", name.c_str(), v.size(),
                       static_cast<unsigned long long>(e.end - e.begin));
          }
        }
        if (cs.ok()) {
          const uint8_t pick = uint8_t(bytes.back()) % 3;
          const converter::Quantization q = pick == 0   ? converter::Quantization::kInt8
                                            : pick == 1 ? converter::Quantization::kFp16
                                                        : converter::Quantization::kFp32;
          converter::ConversionReport report;
          s = converter::ConvertHfTensors(st, q, &spec, &report);
          if (!s.ok() && s.message().empty()) fuzz::Fail(bytes, "ConvertHfTensors: rejection without a message");
        }
      }
    }
  }
  meter.Check(bytes, 64, 4u << 20, "the HF readers");
  return 0;
}

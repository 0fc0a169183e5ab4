// HF MarianMT checkpoint directory -> ModelSpec -> .mtlite bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model_writer.h"
#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace converter {

// The weight type of the converted model (`mtlite convert --quantize int8|fp16|fp32`).
enum class Quantization {
  kInt8 = int(WeightType::kInt8),
  kFp16 = int(WeightType::kF16),
  kFp32 = int(WeightType::kF32),
};
inline WeightType WeightTypeOf(Quantization q) { return WeightType(int(q)); }
const char* QuantizationName(Quantization q);  // "int8", "fp16", "fp32"
bool ParseQuantization(const std::string& s, Quantization* q);

struct TensorReport {
  std::string name;
  WeightType dtype = WeightType::kF32;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;     // stored bytes (data + scales)
  bool encoded = false;   // int8 / f16 encoding applied (error fields meaningful)
  double max_abs_error = 0, rel_rms_error = 0;
};

struct ConversionReport {
  std::vector<TensorReport> tensors;
  std::vector<std::string> warnings;
  uint64_t safetensors_bytes = 0;
  uint64_t file_bytes = 0;                  // filled by ConvertToBytes
  std::vector<SizeComponent> size_profile;  // filled by ConvertToBytes (Model::SizeProfile)
};

// Reads and validates the HF directory (config.json, model.safetensors, source.spm,
// target.spm, vocab.json, optional target_vocab.json / tokenizer_config.json /
// generation_config.json). Every rejection names the file and field or tensor.
Status ConvertHfDir(const std::string& hf_dir, Quantization q, ModelSpec* spec, ConversionReport* report);

// ConvertHfDir + SerializeModel + a self-check: the bytes must load with Model::FromBuffer
// (checksums verified), so the converter never writes a file the runtime rejects.
Status ConvertToBytes(const std::string& hf_dir, Quantization q, AlignedBytes* out, ConversionReport* report);

}  // namespace converter
}  // namespace mtlite

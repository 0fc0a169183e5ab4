// HF MarianMT checkpoint directory -> ModelSpec -> .mtlite bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model_writer.h"
#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace converter {

enum class Quantization { kInt8, kFp16, kFp32 };
const char* QuantizationName(Quantization q);
bool ParseQuantization(const std::string& s, Quantization* q);

struct TensorReport {
  std::string name;
  std::string component;  // "embeddings/output", "encoder", "decoder", "positions", "final_logits_bias"
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
  uint64_t file_bytes = 0;       // filled by ConvertToBytes
  uint64_t flatbuffer_bytes = 0; // size-prefixed FlatBuffer (structure, tokenizer strings, metadata)
  uint64_t tokenizer_data_bytes = 0;  // spm scores + charsmaps in the data segment
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

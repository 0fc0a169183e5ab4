// HF MarianMT checkpoint directory -> ModelSpec -> .mtlite bytes.
#pragma once

#include <cstdint>
#include <functional>
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
  uint64_t safetensors_bytes = 0;          // bytes of the checkpoint file
  std::string source_file = "model.safetensors";  // its name
  uint64_t file_bytes = 0;                  // filled by ConvertToBytes
  std::vector<SizeComponent> size_profile;  // filled by ConvertToBytes (Model::SizeProfile)
};

class Safetensors;

// Called after config.json and the tokenizer are read and before the tensors are converted: may
// edit the config and replace the checkpoint (marian_convert.h: Marian's semantics).
using HfTensorHook = std::function<Status(ModelConfig* config, Safetensors* checkpoint)>;

// The decoding settings of the directory's generation_config.json (none without one):
// num_beams, max_new_tokens or max_length (HF's max_length counts the decoder start: mtlite's is
// one less), length_penalty; other generation settings the runtime does not implement (n-gram
// blocking, sampling, repetition penalty, ...) are listed in out->ignored. ConvertHfDir does not
// record them; ConvertInput does as its DecodingDefaultsMode says (marian_convert.h).
Status ReadHfDecodingDefaults(const std::string& hf_dir, DecodingDefaultsSpec* out);

// Reads and validates the HF directory (config.json, model.safetensors, source.spm,
// target.spm, vocab.json, optional target_vocab.json / tokenizer_config.json /
// generation_config.json). Every rejection names the file and field or tensor.
Status ConvertHfDir(const std::string& hf_dir, Quantization q, ModelSpec* spec, ConversionReport* report,
                    const HfTensorHook& hook = {});

// config.json (and generation_config.json, when not empty) text -> the config fields
// ConvertHfDir reads from them; rejections name the file and field.
Status ParseHfConfig(const std::string& config_json, const std::string& generation_json, ModelConfig* config,
                     std::vector<std::string>* warnings);

// The tensors of a checkpoint in HF MarianMT names (which HF M2M100 / MBart share, final norms
// "model.encoder.layer_norm.*" / "model.decoder.layer_norm.*" included) -> spec->tensors, for
// spec->config (filled by the caller). config.positions preset to anything but kSinusoidMarian
// is kept (kTable stores both position tables even when they are a sinusoid the runtime
// computes); encoder_final_norm / decoder_final_norm preset to true require those tensors, and are
// set when the checkpoint has them.
Status ConvertHfTensors(const Safetensors& st, Quantization q, ModelSpec* spec, ConversionReport* report);

// SerializeModel + the self-check of ConvertToBytes; fills report->file_bytes and size_profile.
Status SpecToBytes(const ModelSpec& spec, AlignedBytes* out, ConversionReport* report);

// ConvertHfDir + SerializeModel + a self-check: the bytes must load with Model::FromBuffer
// (checksums verified), so the converter never writes a file the runtime rejects.
Status ConvertToBytes(const std::string& hf_dir, Quantization q, AlignedBytes* out, ConversionReport* report);

}  // namespace converter
}  // namespace mtlite

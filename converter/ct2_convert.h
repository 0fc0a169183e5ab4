// `mtlite convert` for CTranslate2 models: a CTranslate2 model directory (model.bin, config.json,
// its vocabulary files) with the SentencePiece model(s) of its tokens, and an Argos Translate
// package (.argosmodel: a zip holding such a directory as model/, sentencepiece.model and
// metadata.json with the languages).
//
// What is read (docs/ctranslate2.md has the details):
//   spec       TransformerSpec (OpenNMT-py / OpenNMT-tf / OPUS-MT conversions): encoder and decoder
//              layer scopes, pre- or post-norm, relu / gelu / gelu-tanh / swish, stored position
//              tables or CTranslate2's built-in sinusoid, shared or separate embeddings, an output
//              projection with or without bias, float32 / float16 / bfloat16 / int8 / int16
//              weights. Anything else (other specs, alibi, rotary or relative positions, RMS norm,
//              multi-query attention, extra source features, layer-norm after the embeddings, a
//              zero start embedding, source BOS) is an error naming it.
//   vocabulary the ids (shared_vocabulary, or source_vocabulary + target_vocabulary, .json or .txt);
//              the SentencePiece model gives the text: each .spm piece is mapped onto the id of the
//              same token (pieces missing from the vocabulary map to its unknown token, counted in a
//              warning; vocabulary tokens the .spm lacks keep their ids and decode as their text).
//   config     decoder_start_token, eos_token, unk_token, add_source_bos/eos, layer_norm_epsilon.
#pragma once

#include <string>

#include "ct2_model.h"
#include "hf_convert.h"
#include "marian_convert.h"
#include "model_writer.h"

namespace mtlite {
namespace converter {

// True when `input` is a CTranslate2 model directory or an Argos package (a .argosmodel file).
bool IsCt2Input(const std::string& input);

// A loaded CTranslate2 model + SentencePiece models (serialized ModelProto bytes: one shared, or
// source then target) -> ModelSpec.
Status ConvertCt2Model(const Ct2Model& model, const std::vector<std::string>& spm_bytes,
                       const std::vector<std::string>& spm_names, const ConvertOptions& options, ModelSpec* spec,
                       ConversionReport* report);

// IsCt2Input's inputs -> model bytes, self-checked like ConvertToBytes. options.vocabs: the .spm
// files (a directory without sentencepiece.model / source.spm needs them; a package has its own).
Status ConvertCt2Input(const std::string& input, const ConvertOptions& options, AlignedBytes* out,
                       ConversionReport* report, ConvertInputs* inputs);

}  // namespace converter
}  // namespace mtlite

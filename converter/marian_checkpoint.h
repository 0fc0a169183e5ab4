// Reader for Marian's own checkpoints: a numpy `.npz` archive (OPUS-MT) or a Marian binary `.bin`
// (float32 and intgemm8 items), with the model options in the embedded `special:model.yml` item.
//
// Marian binary format: uint64 version (1), uint64 item count, per item {uint64 name length
// (with the NUL), uint64 type, uint64 shape length, uint64 data length}, the NUL-terminated names,
// the int32 shapes, a uint64 padding count and that many bytes (to a 256-byte boundary), then
// the data of every item back to back. Types: float32 0x0404, int8 0x0101 (the YAML text),
// intgemm8 0x4101 (int8 of the transposed [in, out] matrix, i.e. [out][in] row-major, followed by
// the float32 quantization multiplier: w = q / multiplier).
// `.npz`: a zip archive of `.npy` entries (converter/zip_reader.h), stored (Marian and numpy's
// savez) or deflate (numpy's savez_compressed); the entries may inflate to at most 16 times the
// archive's size plus 1 MiB together.
//
// The network is Marian's transformer: weights [in, out] (x·W), biases [1, out], post-norm
// ("dan"), embeddings scaled by sqrt(dim-emb), Marian's sinusoid, layer-norm eps 1e-6, decoding
// from a zero vector; decoder layers self-attention or SSRU (MarianOptions::decoder_ssru). Every
// option this reader does not support is refused by name.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace converter {

// Marian's flat model YAML: `key: value`, `key: [a, b]`, `key:` followed by `  - item` lines,
// quoted strings, `#` comments. Values are kept as written (quotes removed).
struct MarianYamlValue {
  bool is_list = false;
  std::string scalar;
  std::vector<std::string> list;
};
using MarianYaml = std::map<std::string, MarianYamlValue>;
// `source` names the text in messages ("special:model.yml").
Status ParseMarianYaml(const std::string& text, const std::string& source, MarianYaml* out);

// A Marian YAML vocabulary (`piece: id` lines, pieces plain or quoted): pieces[id]. Ids must be
// 0..n-1, each once. With .spm vocabularies Marian uses the SentencePiece ids instead.
Status ParseMarianYamlVocab(const std::string& text, const std::string& source, std::vector<std::string>* pieces);

// How the embedding tables are tied (Marian's tied-embeddings* options).
enum class MarianTying {
  kAll,     // tied-embeddings-all: one `Wemb` for source, target and output
  kSrc,     // tied-embeddings-src: one `Wemb` for source and target; output untied
  kTied,    // tied-embeddings: `encoder_Wemb`, `decoder_Wemb`, output = decoder_Wemb
  kUntied,  // `encoder_Wemb`, `decoder_Wemb`, `decoder_ff_logit_out_Wt` (or legacy `_W`)
};
const char* MarianTyingName(MarianTying t);

struct MarianOptions {
  int dim_emb = 0, enc_depth = 0, dec_depth = 0, heads = 0;
  int dim_ffn = 0, dec_dim_ffn = 0;  // transformer-dim-ffn, transformer-decoder-dim-ffn (0: dim_ffn)
  int src_vocab = 0, tgt_vocab = 0;  // dim-vocabs
  std::string activation;            // "swish" or "relu"
  MarianTying tying = MarianTying::kUntied;
  // transformer-decoder-autoreg: rnn with dec-cell: ssru. Each decoder layer's self-attention is
  // then Marian's SSRU cell, prefix decoder_l<i>_rnn: _W [d, d] (no bias), _Wf [d, d], _bf [1, d],
  // and the post-norm _ffn_ln_scale / _ffn_ln_bias (mapped to HF-style names
  // model.decoder.layers.<i>.ssru.in_proj.weight, .ssru.forget_proj.{weight,bias},
  // .ssru_layer_norm.{weight,bias}).
  bool decoder_ssru = false;
};
// Checks the options against what mtlite implements; every refusal names the option and value.
Status ReadMarianOptions(const MarianYaml& yaml, MarianOptions* out);

struct MarianTensor {
  std::vector<int64_t> shape;  // as stored (Marian layout: [in, out] weights, [1, n] vectors)
  std::vector<float> values;   // row-major over `shape`; intgemm8 items dequantized
  float quant_mult = 0;        // intgemm8 multiplier (w = q / quant_mult); 0 for float32 items
};

struct MarianCheckpoint {
  std::string yaml_text;  // special:model.yml
  MarianYaml yaml;
  MarianOptions options;
  std::map<std::string, MarianTensor> tensors;  // every numeric item, by Marian name
};

// Reads `path` (.npz or Marian .bin, told apart by content), parses and checks the options, and
// checks that every tensor the transformer needs is present with its shape. Items named
// `*_QuantMultA` (activation multipliers of Marian's int8shiftAlphaAll, float32 or intgemm8
// scalars) are skipped: mtlite quantizes activations per row at run time.
Status ReadMarianCheckpoint(const std::string& path, MarianCheckpoint* out);
// Same, from bytes in memory; `name` is used in messages.
Status ParseMarianCheckpoint(const std::string& bytes, const std::string& name, MarianCheckpoint* out);

// The checkpoint's tensors in HF MarianMT names and layout (weights [out, in], biases and
// layer-norm vectors [n], embeddings [vocab, d], final_logits_bias [1, V]): the embedding tables
// as `model.shared.weight` (kAll, kSrc) or `model.encoder.embed_tokens.weight` +
// `model.decoder.embed_tokens.weight`, and `lm_head.weight` when the output is untied. Ids are
// Marian's (no <pad> row): positions, decoder start and vocabulary stay the caller's to map.
struct HfTensor {
  std::vector<int64_t> shape;
  std::vector<float> values;
  float quant_mult = 0;  // the Marian item's intgemm8 multiplier (values = q / quant_mult); 0: float32
};
Status MarianToHfTensors(const MarianCheckpoint& ckpt, std::map<std::string, HfTensor>* out);

}  // namespace converter
}  // namespace mtlite

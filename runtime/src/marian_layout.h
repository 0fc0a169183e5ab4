// The Marian layout: facts about HF MarianMT checkpoints and the .mtlite format that the
// converter, the loader and the CLI share, kept in one place: format constants, tensor names,
// the sinusoidal position table, binary16 / bfloat16 conversion, the names of weight types and
// activations (and their codes in schema/mtlite.fbs), and the components of the size profile.
// No generated FlatBuffers types appear here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace layout {

// ---- format ---------------------------------------------------------------------------------
// Model.format_version: files are written as version 1, or as version 2 when their shortlist
// stores the output projection's rows in its own order (Shortlist.row_order), which a version-1
// reader would take for token order; this code reads both.
inline constexpr uint32_t kFormatVersion1 = 1;
inline constexpr uint32_t kFormatVersionRowOrder = 2;
// Version 3: decoder layers of Config.decoder_layer_kind SSRU (older files stay version 1 or 2).
inline constexpr uint32_t kFormatVersionSsru = 3;
// Version 4: Config.search Marian (older files stay version 1 to 3).
inline constexpr uint32_t kFormatVersionMarianSearch = 4;
// Version 5: Config.norm Pre, a final norm, or position_kind SinusoidalM2M100 / SinusoidalCT2.
inline constexpr uint32_t kFormatVersionLayers = 5;
// Version 5 too: a SentencePiece model of type BPE (SentencePieceModel.model_type), which an
// older reader would cut into pieces as a unigram model.
inline constexpr uint32_t kFormatVersionBpeTokenizer = 5;
inline constexpr uint32_t kFormatVersion = kFormatVersionLayers;  // the newest this code reads
inline constexpr uint64_t kDataAlignment = 64; // file offset alignment of every data buffer

// ---- HF MarianMT tensor names ---------------------------------------------------------------
inline constexpr char kSharedEmbedding[] = "model.shared.weight";
inline constexpr char kEncoderEmbedding[] = "model.encoder.embed_tokens.weight";
inline constexpr char kDecoderEmbedding[] = "model.decoder.embed_tokens.weight";
inline constexpr char kOutputProjection[] = "lm_head.weight";
inline constexpr char kFinalLogitsBias[] = "final_logits_bias";
inline constexpr char kEncoderPositions[] = "model.encoder.embed_positions.weight";
inline constexpr char kDecoderPositions[] = "model.decoder.embed_positions.weight";
// The layer norms after the last layer of each stack (Config.encoder_final_norm /
// decoder_final_norm; HF M2M100 and MBart names), + kWeight / kBias.
inline constexpr char kEncoderFinalNorm[] = "model.encoder.layer_norm";
inline constexpr char kDecoderFinalNorm[] = "model.decoder.layer_norm";

// Within a layer (appended to LayerPrefix): attention blocks, their projections, norms, FFN.
inline constexpr char kSelfAttention[] = ".self_attn";
inline constexpr char kCrossAttention[] = ".encoder_attn";
inline constexpr char kSelfAttentionNorm[] = ".self_attn_layer_norm";
inline constexpr char kCrossAttentionNorm[] = ".encoder_attn_layer_norm";
inline constexpr const char* kAttentionProjections[4] = {".q_proj", ".k_proj", ".v_proj", ".out_proj"};
inline constexpr char kFc1[] = ".fc1";
inline constexpr char kFc2[] = ".fc2";
inline constexpr char kFinalNorm[] = ".final_layer_norm";
// SSRU decoder layers (Config.decoder_layer_kind SSRU) instead of kSelfAttention/kSelfAttentionNorm:
// W (x projection, no bias), Wf and bf (forget gate), the norm after the residual add.
inline constexpr char kSsruInProj[] = ".ssru.in_proj";
inline constexpr char kSsruForgetProj[] = ".ssru.forget_proj";
inline constexpr char kSsruNorm[] = ".ssru_layer_norm";
inline constexpr char kWeight[] = ".weight";
inline constexpr char kBias[] = ".bias";

enum class Side { kEncoder, kDecoder };
// "model.encoder.layers.<layer>" / "model.decoder.layers.<layer>"
std::string LayerPrefix(Side side, int layer);

// ---- sinusoidal positions (HF MarianSinusoidalPositionalEmbedding) ----------------------------
// Row p: sin in columns [0, s), cos in [s, d), s = ceil(d / 2) (d/2 + 1 for odd d); column j of
// either half uses the frequency index i = its offset within the half:
//   angle = p / 10000^(2 i / d), computed in double and rounded to float (as HF's numpy table).
// MarianSinusoidRow writes row `pos` (d floats); MarianSinusoid writes positions x d floats
// (row-major). Neither allocates.
void MarianSinusoidRow(int pos, int d, float* row);
void MarianSinusoid(int positions, int d, float* out);
std::vector<float> MarianSinusoidTable(int positions, int d);
// Tolerance of the converter's "this table is the sinusoid, do not store it" check.
inline constexpr float kSinusoidTolerance = 1e-5f;
// True when table[positions x d] equals MarianSinusoid within `tolerance` everywhere.
bool IsMarianSinusoid(const float* table, int positions, int d, float tolerance = kSinusoidTolerance);

// ---- the sinusoids of every PositionKind (schema/mtlite.fbs gives the formulas) -----------------
// Row `index` (the token's index in its sentence) of kind's sinusoid: d floats. kSinusoidM2M100
// is at position index + pad_id + 1 (HF M2M100's padding offset), kSinusoidCT2 at index + 1; both
// in float arithmetic, as torch and CTranslate2 compute them (d >= 4; CTranslate2: d even).
// False for kTable, which has no formula. Neither allocates.
bool SinusoidRow(PositionKind kind, int index, int d, int pad_id, float* row);
bool Sinusoid(PositionKind kind, int rows, int d, int pad_id, float* out);
// True when table[rows x d] equals kind's sinusoid within `tolerance` everywhere (the float kinds:
// plus 2 float ulps of row i's largest angle, what one ulp of exp moves it by between libms).
bool IsSinusoid(PositionKind kind, const float* table, int rows, int d, int pad_id,
                float tolerance = kSinusoidTolerance);

// ---- binary16 / bfloat16 <-> binary32 (bit exact, round to nearest even) --------------------
inline float BitsToF32(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint32_t F32ToBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

inline float F16ToF32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
  if (exp == 0x1F) return BitsToF32(sign | 0x7F800000u | (mant << 13));  // inf / NaN
  if (exp == 0) {                                                        // zero / subnormal
    const float v = float(mant) * (1.0f / 16777216.0f);                  // mant * 2^-24, exact
    return sign ? -v : v;
  }
  return BitsToF32(sign | ((exp + 112u) << 23) | (mant << 13));
}

uint16_t F32ToF16(float f);

inline float Bf16ToF32(uint16_t b) { return BitsToF32(uint32_t(b) << 16); }
uint16_t F32ToBf16(float f);

// ---- names and file codes of the enums ------------------------------------------------------
// Weight types: dtype names ("f32", "f16", "int8": `mtlite info`, tensor reports) and
// quantization names ("fp32", "fp16", "int8": `mtlite convert --quantize`, file metadata).
const char* DTypeName(WeightType t);
const char* QuantizationName(WeightType t);
bool ParseQuantization(std::string_view name, WeightType* out);
inline constexpr char kQuantizationChoices[] = "int8, fp16 or fp32";
// Activations: runtime names ("silu", "relu", "gelu", "gelu_tanh") and HF config names.
const char* ActivationName(ActivationKind a);
bool ActivationFromHfName(std::string_view hf_name, ActivationKind* out);
inline constexpr char kHfActivationNames[] = "swish, silu, relu, gelu, gelu_new, gelu_pytorch_tanh";
// Codes of schema/mtlite.fbs `DType` and `Activation` (model.cc and the writer static_assert
// that they match the generated enums). False for a code this runtime does not know.
int WeightTypeCode(WeightType t);
bool WeightTypeFromCode(int code, WeightType* out);
int ActivationCode(ActivationKind a);
bool ActivationFromCode(int code, ActivationKind* out);

// ---- size profile components ----------------------------------------------------------------
// What a byte of the file belongs to (Model::SizeProfile): the loader tags every data buffer
// when it binds it; the FlatBuffer and the padding are measured.
enum class Part : uint8_t {
  kEmbeddings,             // "embeddings/output" (source/target embeddings, lm_head)
  kPositions,              // "positions" (stored tables)
  kFinalLogitsBias,        // "final_logits_bias"
  kEncoderLayer,           // "encoder.layer.<i>"
  kDecoderSelfAttention,   // "decoder.layer.<i>.self_attn" (with its layer norm)
  kDecoderCrossAttention,  // "decoder.layer.<i>.cross_attn" (with its layer norm)
  kDecoderFfn,             // "decoder.layer.<i>.ffn" (with the final layer norm)
  kOtherTensors,           // "other tensors" (in the file, not used by the model)
  kTokenizer,              // "tokenizer" (scores, charsmaps, strings)
  kStructure,              // "flatbuffer structure/config/metadata"
  kPadding,                // "padding (64-byte alignment)"
  kShortlist,              // "shortlist" (the optional output-vocabulary shortlist's arrays)
};
struct Component {
  Part part = Part::kOtherTensors;
  int layer = 0;  // the layer of kEncoderLayer / kDecoder*
};
std::string ComponentName(Component c);

}  // namespace layout
}  // namespace mtlite

#include "marian_layout.h"

#include <cmath>

namespace mtlite {
namespace layout {
namespace {

struct WeightTypeNames {
  WeightType type;
  int code;  // schema DType
  const char* dtype;
  const char* quantization;
};
constexpr WeightTypeNames kWeightTypes[] = {
    {WeightType::kF32, 0, "f32", "fp32"},
    {WeightType::kF16, 1, "f16", "fp16"},
    {WeightType::kInt8, 2, "int8", "int8"},
};

struct ActivationNames {
  ActivationKind kind;
  int code;  // schema Activation
  const char* name;
};
constexpr ActivationNames kActivations[] = {
    {ActivationKind::kSiLU, 0, "silu"},
    {ActivationKind::kReLU, 1, "relu"},
    {ActivationKind::kGELU, 2, "gelu"},
    {ActivationKind::kGELUTanh, 3, "gelu_tanh"},
};

// HF `activation_function` values (transformers ACT2FN) that Marian configs use.
struct HfActivation {
  const char* hf_name;
  ActivationKind kind;
};
constexpr HfActivation kHfActivations[] = {
    {"swish", ActivationKind::kSiLU}, {"silu", ActivationKind::kSiLU},
    {"relu", ActivationKind::kReLU},  {"gelu", ActivationKind::kGELU},
    {"gelu_new", ActivationKind::kGELUTanh}, {"gelu_pytorch_tanh", ActivationKind::kGELUTanh},
};

// The first row of `table` that `match` accepts, or null.
template <class Row, size_t N, class Match>
const Row* FindRow(const Row (&table)[N], Match match) {
  for (const Row& r : table) {
    if (match(r)) return &r;
  }
  return nullptr;
}

// *out = `field` of the first row that `match` accepts; false when there is none.
template <class Row, size_t N, class Match, class T>
bool Lookup(const Row (&table)[N], Match match, T Row::*field, T* out) {
  const Row* r = FindRow(table, match);
  if (r) *out = r->*field;
  return r != nullptr;
}

const WeightTypeNames* Find(WeightType t) {
  return FindRow(kWeightTypes, [t](const WeightTypeNames& r) { return r.type == t; });
}

const ActivationNames* Find(ActivationKind a) {
  return FindRow(kActivations, [a](const ActivationNames& r) { return r.kind == a; });
}

}  // namespace

std::string LayerPrefix(Side side, int layer) {
  return std::string(side == Side::kEncoder ? "model.encoder.layers." : "model.decoder.layers.") +
         std::to_string(layer);
}

// ---- sinusoid -------------------------------------------------------------------------------

void MarianSinusoidRow(int pos, int d, float* row) {
  const int sentinel = (d + 1) / 2;  // HF: d // 2 for even d, d // 2 + 1 for odd d
  for (int j = 0; j < d; ++j) {
    const int i = j < sentinel ? j : j - sentinel;  // frequency index within the half
    const double angle = pos / std::pow(10000.0, 2.0 * i / d);
    row[j] = float(j < sentinel ? std::sin(angle) : std::cos(angle));
  }
}

void MarianSinusoid(int positions, int d, float* out) {
  for (int pos = 0; pos < positions; ++pos) MarianSinusoidRow(pos, d, out + size_t(pos) * size_t(d));
}

std::vector<float> MarianSinusoidTable(int positions, int d) {
  std::vector<float> t(size_t(positions) * size_t(d));
  MarianSinusoid(positions, d, t.data());
  return t;
}

bool IsMarianSinusoid(const float* table, int positions, int d, float tolerance) {
  std::vector<float> want(static_cast<size_t>(d));
  for (int pos = 0; pos < positions; ++pos) {
    MarianSinusoidRow(pos, d, want.data());
    const float* got = table + size_t(pos) * size_t(d);
    for (int j = 0; j < d; ++j) {
      if (!(std::fabs(want[size_t(j)] - got[j]) <= tolerance)) return false;  // NaN: not the sinusoid
    }
  }
  return true;
}

// Fairseq's sinusoid (HF M2M100SinusoidalPositionalEmbedding.get_embedding, CTranslate2's
// SinusoidalPositionEncoder): h = d/2 frequencies f_j = exp(j * -(ln(10000) / (h - 1))), then
// [sin(p f_j)] ++ [cos(p f_j)] (++ a zero for odd d), every product and function in float, as
// torch and CTranslate2 compute them. M2M100 takes ln(10000) / (h - 1) in double (Python), CTranslate2
// in float.
static void FairseqSinusoidRow(int pos, int d, bool float_log, float* row) {
  const int h = d / 2;
  const float step = float_log ? std::log(10000.0f) / float(h - 1) : float(std::log(10000.0) / double(h - 1));
  for (int j = 0; j < h; ++j) {
    const float f = std::exp(float(j) * -step);
    const float angle = float(pos) * f;
    row[j] = std::sin(angle);
    row[h + j] = std::cos(angle);
  }
  if (d % 2) row[d - 1] = 0.0f;
}

bool SinusoidRow(PositionKind kind, int index, int d, int pad_id, float* row) {
  switch (kind) {
    case PositionKind::kSinusoidMarian: MarianSinusoidRow(index, d, row); return true;
    case PositionKind::kSinusoidM2M100: FairseqSinusoidRow(index + pad_id + 1, d, false, row); return true;
    case PositionKind::kSinusoidCT2: FairseqSinusoidRow(index + 1, d, true, row); return true;
    case PositionKind::kTable: break;
  }
  return false;
}

bool Sinusoid(PositionKind kind, int rows, int d, int pad_id, float* out) {
  for (int i = 0; i < rows; ++i)
    if (!SinusoidRow(kind, i, d, pad_id, out + size_t(i) * size_t(d))) return false;
  return true;
}

bool IsSinusoid(PositionKind kind, const float* table, int rows, int d, int pad_id, float tolerance) {
  std::vector<float> want(static_cast<size_t>(d));
  const bool in_float = kind == PositionKind::kSinusoidM2M100 || kind == PositionKind::kSinusoidCT2;
  for (int i = 0; i < rows; ++i) {
    if (!SinusoidRow(kind, i, d, pad_id, want.data())) return false;
    // The float kinds' angles p * f_j differ by an ulp of exp (or of the product) between libms:
    // up to 2 * 2^-23 * p, on top of the tolerance.
    const float row_tolerance =
        in_float ? tolerance + 2.0f * 1.1920929e-7f * float(i + (kind == PositionKind::kSinusoidM2M100 ? pad_id + 1 : 1))
                 : tolerance;
    const float* got = table + size_t(i) * size_t(d);
    for (int j = 0; j < d; ++j) {
      if (!(std::fabs(want[size_t(j)] - got[j]) <= row_tolerance)) return false;  // NaN: not the sinusoid
    }
  }
  return true;
}

// ---- half precision -------------------------------------------------------------------------

uint16_t F32ToF16(float f) {
  const uint32_t x = F32ToBits(f);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) return uint16_t(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u : 0u));
  if (abs >= 0x477FF000u) return uint16_t(sign | 0x7C00u);  // >= 65520 rounds to infinity
  if (abs < 0x38800000u) {                                   // below 2^-14: subnormal or zero
    // |f| * 2^24 is exact; nearbyint rounds half to even (default rounding mode).
    return uint16_t(sign | uint16_t(std::nearbyint(BitsToF32(abs) * 16777216.0f)));
  }
  // Rebias the exponent (127 -> 15) and round the mantissa to 10 bits, half to even.
  const uint32_t rounded = abs + 0xC8000FFFu + ((abs >> 13) & 1u);
  return uint16_t(sign | (rounded >> 13));
}

uint16_t F32ToBf16(float f) {
  const uint32_t x = F32ToBits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return uint16_t((x >> 16) | 0x40u);  // NaN stays a (quiet) NaN
  return uint16_t((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

// ---- names ----------------------------------------------------------------------------------

const char* DTypeName(WeightType t) {
  const WeightTypeNames* w = Find(t);
  return w ? w->dtype : "?";
}

const char* QuantizationName(WeightType t) {
  const WeightTypeNames* w = Find(t);
  return w ? w->quantization : "?";
}

bool ParseQuantization(std::string_view name, WeightType* out) {
  return Lookup(kWeightTypes, [name](const WeightTypeNames& r) { return name == r.quantization; },
                &WeightTypeNames::type, out);
}

int WeightTypeCode(WeightType t) {
  const WeightTypeNames* w = Find(t);
  return w ? w->code : -1;
}

bool WeightTypeFromCode(int code, WeightType* out) {
  return Lookup(kWeightTypes, [code](const WeightTypeNames& r) { return r.code == code; }, &WeightTypeNames::type, out);
}

const char* ActivationName(ActivationKind a) {
  const ActivationNames* n = Find(a);
  return n ? n->name : "?";
}

int ActivationCode(ActivationKind a) {
  const ActivationNames* n = Find(a);
  return n ? n->code : -1;
}

bool ActivationFromCode(int code, ActivationKind* out) {
  return Lookup(kActivations, [code](const ActivationNames& r) { return r.code == code; }, &ActivationNames::kind, out);
}

bool ActivationFromHfName(std::string_view hf_name, ActivationKind* out) {
  return Lookup(kHfActivations, [hf_name](const HfActivation& r) { return hf_name == r.hf_name; }, &HfActivation::kind,
                out);
}

// ---- components -----------------------------------------------------------------------------

std::string ComponentName(Component c) {
  const std::string layer = std::to_string(c.layer);
  switch (c.part) {
    case Part::kEmbeddings: return "embeddings/output";
    case Part::kPositions: return "positions";
    case Part::kFinalLogitsBias: return "final_logits_bias";
    case Part::kEncoderLayer: return "encoder.layer." + layer;
    case Part::kDecoderSelfAttention: return "decoder.layer." + layer + ".self_attn";
    case Part::kDecoderCrossAttention: return "decoder.layer." + layer + ".cross_attn";
    case Part::kDecoderFfn: return "decoder.layer." + layer + ".ffn";
    case Part::kOtherTensors: return "other tensors";
    case Part::kTokenizer: return "tokenizer";
    case Part::kStructure: return "flatbuffer structure/config/metadata";
    case Part::kPadding: return "padding (64-byte alignment)";
    case Part::kShortlist: return "shortlist";
  }
  return "?";
}

}  // namespace layout
}  // namespace mtlite

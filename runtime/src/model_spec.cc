// The architecture config's table (model_spec.h), what a field's value shows as, and the
// loader's reading and checking of schema `table Config` through it.
#include "model_spec.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "marian_layout.h"
#include "model_internal.h"
#include "mtlite_generated.h"
#include "status_macros.h"

namespace mtlite {
namespace detail {
namespace {

// ---- bounds and relations that involve other fields -------------------------------------------
int DModel(const ModelConfig& c) { return c.d_model; }
// pad, eos and unk index both vocabularies; the decoder start id only the target one
int LastCommonId(const ModelConfig& c) { return std::min(c.source_vocab_size, c.target_vocab_size) - 1; }
int LastTargetId(const ModelConfig& c) { return c.target_vocab_size - 1; }

Status HeadsDivideDModel(const ModelConfig& c) {
  if (c.d_model % c.encoder_heads || c.d_model % c.decoder_heads) {
    return InvalidModel("config.d_model " + std::to_string(c.d_model) + " is not a multiple of the head count");
  }
  return Status::Ok();
}

Status SharedEmbeddingsHaveOneSize(const ModelConfig& c) {
  if (c.shared_embeddings && c.source_vocab_size != c.target_vocab_size) {
    return InvalidModel("config.shared_embeddings is set but source_vocab_size " + std::to_string(c.source_vocab_size) +
                        " != target_vocab_size " + std::to_string(c.target_vocab_size));
  }
  return Status::Ok();
}

// ---- one constructor a kind (it takes the member of that kind's type) ----------------------
using C = ModelConfig;
using Relation = Status (*)(const C&);
constexpr ConfigField Make(FieldKind kind, const char* name, const char* schema, FieldMember m, uint16_t slot,
                           Bound lo = 0, Bound hi = 0, Relation relation = nullptr, const EnumValues* values = nullptr,
                           bool omit_default = false) {
  return {name, schema, kind, m, slot, lo, hi, relation, values, omit_default};
}
constexpr ConfigField Int(const char* name, int C::*m, uint16_t slot, Bound lo, Bound hi, Relation relation = nullptr) {
  return Make(FieldKind::kInt, name, name, m, slot, lo, hi, relation);
}
constexpr ConfigField Positive(const char* name, float C::*m, uint16_t slot) {
  return Make(FieldKind::kPositive, name, name, m, slot);
}
constexpr ConfigField Flag(const char* name, bool C::*m, uint16_t slot, bool omit_default = false) {
  return Make(FieldKind::kBool, name, name, m, slot, 0, 0, nullptr, nullptr, omit_default);
}
constexpr ConfigField Activation(const char* name, ActivationKind C::*m, uint16_t slot) {
  return Make(FieldKind::kActivation, name, name, m, slot);
}
// an enum member (Member: &ModelConfig::x) and its values
template <auto Member>
constexpr ConfigField Enum(const char* name, const char* schema, uint16_t slot, const EnumValues& values,
                           bool omit_default = false) {
  return Make(FieldKind::kEnum, name, schema, EnumAccess{&GetEnumCode<Member>, &SetEnumCode<Member>}, slot, 0, 0,
              nullptr, &values, omit_default);
}
constexpr ConfigField BannedIds(const char* name, std::vector<int> C::*m, uint16_t slot) {
  return Make(FieldKind::kBannedIds, name, name, m, slot);
}
// not in the Config table
constexpr ConfigField Dtype(const char* name, WeightType C::*m) {
  return Make(FieldKind::kWeightType, name, nullptr, m, 0);
}
constexpr ConfigField Text(const char* name, std::string C::*m) { return Make(FieldKind::kText, name, nullptr, m, 0); }

// The enums' values: schema code and the name shown. A model family's new value is a line here
// (and in the schema enum and the ModelConfig enum, whose codes are the schema's).
template <class E, class S>
constexpr bool SameCode(E e, S s) {
  return int(e) == int(s);
}
static_assert(SameCode(PositionKind::kSinusoidMarian, fb::PositionKind::SinusoidalMarian) &&
              SameCode(PositionKind::kTable, fb::PositionKind::Table) &&
              SameCode(PositionKind::kSinusoidM2M100, fb::PositionKind::SinusoidalM2M100) &&
              SameCode(PositionKind::kSinusoidCT2, fb::PositionKind::SinusoidalCT2) &&
              SameCode(DecoderLayerKind::kSelfAttention, fb::DecoderLayerKind::SelfAttention) &&
              SameCode(DecoderLayerKind::kSsru, fb::DecoderLayerKind::SSRU) &&
              SameCode(SearchKind::kHF, fb::SearchKind::HF) && SameCode(SearchKind::kMarian, fb::SearchKind::Marian) &&
              SameCode(SearchKind::kCT2, fb::SearchKind::CTranslate2) &&
              SameCode(NormPlacement::kPost, fb::NormPlacement::Post) &&
              SameCode(NormPlacement::kPre, fb::NormPlacement::Pre),
              "ModelConfig's enums carry the schema's codes");
constexpr EnumValue kPositionKindValues[] = {{int8_t(PositionKind::kSinusoidMarian), "sinusoidal"},
                                             {int8_t(PositionKind::kTable), "table"},
                                             {int8_t(PositionKind::kSinusoidM2M100), "sinusoidal_m2m100"},
                                             {int8_t(PositionKind::kSinusoidCT2), "sinusoidal_ct2"}};
constexpr EnumValue kDecoderLayerValues[] = {{int8_t(DecoderLayerKind::kSelfAttention), "self_attention"},
                                             {int8_t(DecoderLayerKind::kSsru), "ssru"}};
constexpr EnumValue kSearchValues[] = {{int8_t(SearchKind::kHF), "hf"},
                                       {int8_t(SearchKind::kMarian), "marian"},
                                       {int8_t(SearchKind::kCT2), "ctranslate2"}};
constexpr EnumValue kNormValues[] = {{int8_t(NormPlacement::kPost), "post"}, {int8_t(NormPlacement::kPre), "pre"}};
template <size_t N>
constexpr EnumValues Values(const EnumValue (&v)[N]) {
  return {v, N};
}
constexpr EnumValues kPositionKinds = Values(kPositionKindValues);
constexpr EnumValues kDecoderLayerKinds = Values(kDecoderLayerValues);
constexpr EnumValues kSearchKinds = Values(kSearchValues);
constexpr EnumValues kNormPlacements = Values(kNormValues);

// The sinusoids of the M2M100 / CTranslate2 kinds divide by d/2 - 1; CTranslate2's has no odd d.
Status PositionsFitDModel(const ModelConfig& c) {
  const bool m2m100 = c.positions == PositionKind::kSinusoidM2M100, ct2 = c.positions == PositionKind::kSinusoidCT2;
  if ((m2m100 || ct2) && c.d_model < 4) {
    return InvalidModel("config.position_kind " + std::string(m2m100 ? "SinusoidalM2M100" : "SinusoidalCT2") +
                        " needs d_model >= 4 (it is " + std::to_string(c.d_model) + ")");
  }
  if (ct2 && c.d_model % 2) {
    return InvalidModel("config.position_kind SinusoidalCT2 needs an even d_model (it is " + std::to_string(c.d_model) + ")");
  }
  return Status::Ok();
}

// In the order of schema `table Config` (the writer adds them in this order; `info` and Python
// list them so), then the fields stored elsewhere. A line: the name (also the schema field's
// unless given), the ModelConfig member, the schema field's slot, the valid range of an int, a
// relation to the fields before it.
using F = fb::Config;
constexpr ConfigField kConfigFields[] = {
    Int("d_model", &C::d_model, F::VT_D_MODEL, 1, kMaxDModel),
    Int("encoder_layers", &C::encoder_layers, F::VT_ENCODER_LAYERS, 1, kMaxLayers),
    Int("decoder_layers", &C::decoder_layers, F::VT_DECODER_LAYERS, 1, kMaxLayers),
    Int("encoder_heads", &C::encoder_heads, F::VT_ENCODER_HEADS, 1, DModel),
    Int("decoder_heads", &C::decoder_heads, F::VT_DECODER_HEADS, 1, DModel, HeadsDivideDModel),
    Int("encoder_ffn_dim", &C::encoder_ffn_dim, F::VT_ENCODER_FFN_DIM, 1, kMaxFfn),
    Int("decoder_ffn_dim", &C::decoder_ffn_dim, F::VT_DECODER_FFN_DIM, 1, kMaxFfn),
    Activation("activation", &C::activation, F::VT_ACTIVATION),
    Positive("embed_scale", &C::embed_scale, F::VT_EMBED_SCALE),
    Enum<&C::positions>("positions", "position_kind", F::VT_POSITION_KIND, kPositionKinds),
    Int("max_positions", &C::max_positions, F::VT_MAX_POSITIONS, 1, kMaxPositions, PositionsFitDModel),
    Positive("layer_norm_eps", &C::layer_norm_eps, F::VT_LAYER_NORM_EPS),
    Flag("shared_embeddings", &C::shared_embeddings, F::VT_SHARED_EMBEDDINGS),
    Flag("tied_output", &C::tied_output, F::VT_TIED_OUTPUT),
    Flag("has_final_logits_bias", &C::has_final_logits_bias, F::VT_HAS_FINAL_LOGITS_BIAS),
    Int("source_vocab_size", &C::source_vocab_size, F::VT_SOURCE_VOCAB_SIZE, 1, kMaxVocab),
    Int("target_vocab_size", &C::target_vocab_size, F::VT_TARGET_VOCAB_SIZE, 1, kMaxVocab, SharedEmbeddingsHaveOneSize),
    Int("pad_id", &C::pad_id, F::VT_PAD_ID, 0, LastCommonId),
    Int("eos_id", &C::eos_id, F::VT_EOS_ID, 0, LastCommonId),
    Int("unk_id", &C::unk_id, F::VT_UNK_ID, 0, LastCommonId),
    Int("decoder_start_id", &C::decoder_start_id, F::VT_DECODER_START_ID, 0, LastTargetId),
    BannedIds("bad_word_ids", &C::bad_word_ids, F::VT_BAD_WORD_IDS),
    Int("default_beam", &C::default_beam, F::VT_DEFAULT_BEAM, 1, kMaxBeam),
    Int("default_max_length", &C::default_max_length, F::VT_DEFAULT_MAX_LENGTH, 1, kMaxPositions),
    Enum<&C::decoder_layer>("decoder_layer", "decoder_layer_kind", F::VT_DECODER_LAYER_KIND, kDecoderLayerKinds),
    Enum<&C::search>("search", "search", F::VT_SEARCH, kSearchKinds),
    // format_version 5 (MinFormatVersion): written only when not the default
    Enum<&C::norm>("norm", "norm", F::VT_NORM, kNormPlacements, /*omit_default=*/true),
    Flag("encoder_final_norm", &C::encoder_final_norm, F::VT_ENCODER_FINAL_NORM, /*omit_default=*/true),
    Flag("decoder_final_norm", &C::decoder_final_norm, F::VT_DECODER_FINAL_NORM, /*omit_default=*/true),
    Flag("source_eos", &C::source_eos, F::VT_SOURCE_EOS, /*omit_default=*/true),
    Dtype("weight_type", &C::weight_type),  // bound with the weights (model.cc)
    Text("source_lang", &C::source_lang),   // metadata
    Text("target_lang", &C::target_lang),
};

// The enum kinds are schema bytes.
static_assert(std::is_same_v<std::underlying_type_t<fb::Activation>, int8_t> &&
              std::is_same_v<std::underlying_type_t<fb::PositionKind>, int8_t> &&
              std::is_same_v<std::underlying_type_t<fb::DecoderLayerKind>, int8_t> &&
              std::is_same_v<std::underlying_type_t<fb::SearchKind>, int8_t> &&
              std::is_same_v<std::underlying_type_t<fb::NormPlacement>, int8_t>, "EnumCode is a byte");

Status UnknownCode(const Name& field, int code) {
  return InvalidModel(field.str() + " " + std::to_string(code) + " is unknown");
}

}  // namespace

ConfigFieldList ConfigFields() { return {kConfigFields, sizeof kConfigFields / sizeof kConfigFields[0]}; }

int EnumCode(const ConfigField& field, const ModelConfig& c) {
  if (field.kind == FieldKind::kActivation) return layout::ActivationCode(c.*field.member.activation);
  return field.member.enumeration.get(c);  // kEnum
}

FieldValue ValueOf(const ConfigField& field, const ModelConfig& c) {
  using T = FieldValue::Type;
  const FieldMember& m = field.member;
  FieldValue v;
  switch (field.kind) {
    case FieldKind::kInt: v.type = T::kInt; v.i = c.*m.i; break;
    case FieldKind::kPositive: v.type = T::kFloat; v.f = c.*m.f; break;
    case FieldKind::kBool: v.type = T::kBool; v.b = c.*m.b; break;
    case FieldKind::kActivation: v.type = T::kString; v.s = layout::ActivationName(c.*m.activation); break;
    case FieldKind::kEnum: {
      const EnumValue* e = field.values->Find(m.enumeration.get(c));
      v.type = T::kString;
      v.s = e ? e->name : "?";
      break;
    }
    case FieldKind::kBannedIds: v.type = T::kIntList; v.ids = &(c.*m.ids); break;
    case FieldKind::kWeightType: v.type = T::kString; v.s = layout::DTypeName(c.*m.weight_type); break;
    case FieldKind::kText: v.type = T::kString; v.s = c.*m.text; break;
  }
  return v;
}

// A field absent from the file reads as ModelConfig's default, which is the schema's
// (model_spec_test checks that they agree).
Status LoadConfigField(const ConfigField& field, const fb::Config& config, bool caller_storage, ModelConfig* out) {
  if (!field.slot) return Status::Ok();  // not in the Config table
  const auto& t = reinterpret_cast<const flatbuffers::Table&>(config);
  const ModelConfig defaults;
  const FieldMember& m = field.member;
  const Name name = Name("config.") + field.schema;
  switch (field.kind) {
    case FieldKind::kInt: {
      const int v = t.GetField<int32_t>(field.slot, defaults.*m.i);
      MTLITE_RETURN_IF_ERROR(CheckRange(name, v, field.lo(*out), field.hi(*out)));
      out->*m.i = v;
      break;
    }
    case FieldKind::kPositive: {
      const float v = t.GetField<float>(field.slot, defaults.*m.f);
      if (!(std::isfinite(v) && v > 0)) return InvalidModel(name.str() + " is not a positive number");
      out->*m.f = v;
      break;
    }
    case FieldKind::kBool: out->*m.b = t.GetField<uint8_t>(field.slot, defaults.*m.b) != 0; break;
    case FieldKind::kActivation: {
      const int code = t.GetField<int8_t>(field.slot, int8_t(EnumCode(field, defaults)));
      if (!layout::ActivationFromCode(code, &(out->*m.activation))) return UnknownCode(name, code);
      break;
    }
    case FieldKind::kEnum: {
      const int code = t.GetField<int8_t>(field.slot, int8_t(EnumCode(field, defaults)));
      if (!field.values->Find(code)) return UnknownCode(name, code);
      m.enumeration.set(out, code);
      break;
    }
    case FieldKind::kBannedIds: {
      std::vector<int>& ids = out->*m.ids;
      ids.clear();
      if (const auto* v = t.GetPointer<const flatbuffers::Vector<int32_t>*>(field.slot)) {
        for (flatbuffers::uoffset_t i = 0; i < v->size(); ++i) {
          const int id = v->Get(i);
          if (id < 0 || id >= out->target_vocab_size) {
            return InvalidModel(name.str() + " contains " + std::to_string(id) + ", outside the target vocabulary");
          }
          if (caller_storage && id == out->pad_id) continue;
          ids.push_back(id);
        }
      }
      break;
    }
    case FieldKind::kWeightType:
    case FieldKind::kText: break;
  }
  return field.relation ? field.relation(*out) : Status::Ok();
}

// What needs a format version above 1, from the oldest need to the newest (the shortlist's
// row_order, version 2, is not in the config: the loader checks it).
struct VersionNeed {
  uint32_t version;
  bool (*needs)(const ModelConfig&);
  const char* what;  // the loader's message
};
constexpr VersionNeed kVersionNeeds[] = {
    {layout::kFormatVersionSsru, [](const C& c) { return c.decoder_layer == DecoderLayerKind::kSsru; },
     "config.decoder_layer_kind SSRU"},
    {layout::kFormatVersionMarianSearch, [](const C& c) { return c.search == SearchKind::kMarian; },
     "config.search Marian"},
    {layout::kFormatVersionLayers, [](const C& c) { return c.norm == NormPlacement::kPre; }, "config.norm Pre"},
    {layout::kFormatVersionLayers, [](const C& c) { return c.encoder_final_norm; }, "config.encoder_final_norm"},
    {layout::kFormatVersionLayers, [](const C& c) { return c.decoder_final_norm; }, "config.decoder_final_norm"},
    {layout::kFormatVersionLayers, [](const C& c) { return c.positions == PositionKind::kSinusoidM2M100; },
     "config.position_kind SinusoidalM2M100"},
    {layout::kFormatVersionLayers, [](const C& c) { return c.positions == PositionKind::kSinusoidCT2; },
     "config.position_kind SinusoidalCT2"},
    {layout::kFormatVersionLayers, [](const C& c) { return c.search == SearchKind::kCT2; }, "config.search CTranslate2"},
    {layout::kFormatVersionLayers, [](const C& c) { return !c.source_eos; }, "config.source_eos false"},
};

uint32_t MinFormatVersion(const ModelConfig& c) {
  uint32_t v = layout::kFormatVersion1;
  for (const VersionNeed& n : kVersionNeeds)
    if (n.needs(c)) v = std::max(v, n.version);
  return v;
}

Status CheckFormatVersion(const ModelConfig& c, uint32_t version) {
  for (const VersionNeed& n : kVersionNeeds) {
    if (n.needs(c) && version < n.version) {
      return InvalidModel(std::string(n.what) + " needs format_version " + std::to_string(n.version) +
                          " (the file says " + std::to_string(version) + ")");
    }
  }
  return Status::Ok();
}

Status LoadConfig(const fb::Config& config, bool caller_storage, ModelConfig* out) {
  for (const ConfigField& field : ConfigFields()) {
    MTLITE_RETURN_IF_ERROR(LoadConfigField(field, config, caller_storage, out));
  }
  return Status::Ok();
}

}  // namespace detail
}  // namespace mtlite

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
                           Bound lo = 0, Bound hi = 0, Relation relation = nullptr, const Choice* choice = nullptr) {
  return {name, schema, kind, m, slot, lo, hi, relation, choice};
}
constexpr ConfigField Int(const char* name, int C::*m, uint16_t slot, Bound lo, Bound hi, Relation relation = nullptr) {
  return Make(FieldKind::kInt, name, name, m, slot, lo, hi, relation);
}
constexpr ConfigField Positive(const char* name, float C::*m, uint16_t slot) {
  return Make(FieldKind::kPositive, name, name, m, slot);
}
constexpr ConfigField Flag(const char* name, bool C::*m, uint16_t slot) {
  return Make(FieldKind::kBool, name, name, m, slot);
}
constexpr ConfigField Activation(const char* name, ActivationKind C::*m, uint16_t slot) {
  return Make(FieldKind::kActivation, name, name, m, slot);
}
constexpr ConfigField TwoValues(const char* name, const char* schema, bool C::*m, uint16_t slot, const Choice& choice) {
  return Make(FieldKind::kChoice, name, schema, m, slot, 0, 0, nullptr, &choice);
}
constexpr ConfigField BannedIds(const char* name, std::vector<int> C::*m, uint16_t slot) {
  return Make(FieldKind::kBannedIds, name, name, m, slot);
}
// not in the Config table
constexpr ConfigField Dtype(const char* name, WeightType C::*m) {
  return Make(FieldKind::kWeightType, name, nullptr, m, 0);
}
constexpr ConfigField Text(const char* name, std::string C::*m) { return Make(FieldKind::kText, name, nullptr, m, 0); }

// The two-valued enums: codes of false and true, and the names shown.
constexpr Choice kPositionKinds{{int8_t(fb::PositionKind::SinusoidalMarian), int8_t(fb::PositionKind::Table)},
                                {"sinusoidal", "table"}};
constexpr Choice kDecoderLayerKinds{{int8_t(fb::DecoderLayerKind::SelfAttention), int8_t(fb::DecoderLayerKind::SSRU)},
                                    {"self_attention", "ssru"}};
constexpr Choice kSearchKinds{{int8_t(fb::SearchKind::HF), int8_t(fb::SearchKind::Marian)}, {"hf", "marian"}};

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
    TwoValues("positions", "position_kind", &C::positions_stored, F::VT_POSITION_KIND, kPositionKinds),
    Int("max_positions", &C::max_positions, F::VT_MAX_POSITIONS, 1, kMaxPositions),
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
    TwoValues("decoder_layer", "decoder_layer_kind", &C::decoder_ssru, F::VT_DECODER_LAYER_KIND, kDecoderLayerKinds),
    TwoValues("search", "search", &C::marian_search, F::VT_SEARCH, kSearchKinds),
    Dtype("weight_type", &C::weight_type),  // bound with the weights (model.cc)
    Text("source_lang", &C::source_lang),   // metadata
    Text("target_lang", &C::target_lang),
};

// The enum kinds are schema bytes.
static_assert(std::is_same_v<std::underlying_type_t<fb::Activation>, int8_t> &&
              std::is_same_v<std::underlying_type_t<fb::PositionKind>, int8_t> &&
              std::is_same_v<std::underlying_type_t<fb::DecoderLayerKind>, int8_t> &&
              std::is_same_v<std::underlying_type_t<fb::SearchKind>, int8_t>, "EnumCode is a byte");

Status UnknownCode(const Name& field, int code) {
  return InvalidModel(field.str() + " " + std::to_string(code) + " is unknown");
}

}  // namespace

ConfigFieldList ConfigFields() { return {kConfigFields, sizeof kConfigFields / sizeof kConfigFields[0]}; }

int EnumCode(const ConfigField& field, const ModelConfig& c) {
  if (field.kind == FieldKind::kActivation) return layout::ActivationCode(c.*field.member.activation);
  return field.choice->codes[c.*field.member.b ? 1 : 0];  // kChoice
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
    case FieldKind::kChoice: v.type = T::kString; v.s = field.choice->names[c.*m.b ? 1 : 0]; break;
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
    case FieldKind::kChoice: {
      const int code = t.GetField<int8_t>(field.slot, int8_t(EnumCode(field, defaults)));
      if (code != field.choice->codes[0] && code != field.choice->codes[1]) return UnknownCode(name, code);
      out->*m.b = code == field.choice->codes[1];
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

Status LoadConfig(const fb::Config& config, bool caller_storage, ModelConfig* out) {
  for (const ConfigField& field : ConfigFields()) {
    MTLITE_RETURN_IF_ERROR(LoadConfigField(field, config, caller_storage, out));
  }
  return Status::Ok();
}

}  // namespace detail
}  // namespace mtlite

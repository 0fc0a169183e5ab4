// The architecture config of a model file as one table, a line a field (kConfigFields in
// model_spec.cc): its name, its ModelConfig member, its field in schema `table Config`, its
// valid range. The converter writes the Config table from it (converter/model_writer.cc), the
// loader checks and fills ModelConfig from it (LoadConfig), and `mtlite info`
// (runtime/cli/info_cmd.cc) and Model.config() in Python (python/src/mtlite_module.cc) show the
// fields in its order, by its names. A new field: a member of ModelConfig, a field at the end of
// schema `table Config` (schema/README.md), and its line in the table.
//
// This header does not need the generated FlatBuffers types; LoadConfig's callers have them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace fb {
struct Config;
}  // namespace fb

namespace detail {

// How a field is stored in the file, checked by the loader and shown.
enum class FieldKind : uint8_t {
  kInt,         // int in [lo, hi]
  kPositive,    // float, finite and > 0
  kBool,        // bool
  kActivation,  // schema Activation <-> ActivationKind; shown by name ("silu")
  kChoice,      // a schema enum of two values <-> bool; codes and names in ConfigField::choice
                // (position_kind, decoder_layer_kind, search)
  kBannedIds,   // [int], target ids never generated; a load into caller storage leaves the pad id
                // out (every search masks it anyway), so that the vector stays unallocated
  kWeightType,  // not in the Config table: the weights' dtype (bound with them); shown by name
  kText,        // not in the Config table: a metadata string
};

// A bound of an int field's range: a constant, or a function of the fields before it in the
// table (the loader goes in table order, so those are checked already).
struct Bound {
  constexpr Bound(int v) : value(v) {}                      // NOLINT: implicit by design
  constexpr Bound(int (*f)(const ModelConfig&)) : of(f) {}  // NOLINT
  int64_t operator()(const ModelConfig& c) const { return of ? of(c) : value; }
  int value = 0;
  int (*of)(const ModelConfig&) = nullptr;
};

// kChoice: the schema codes and the shown names of false and true.
struct Choice {
  int8_t codes[2];
  const char* names[2];
};

// A field's ModelConfig member; the kind says which one is set.
union FieldMember {
  constexpr FieldMember(int ModelConfig::*m) : i(m) {}                  // NOLINT: implicit by design
  constexpr FieldMember(float ModelConfig::*m) : f(m) {}                // NOLINT
  constexpr FieldMember(bool ModelConfig::*m) : b(m) {}                 // NOLINT
  constexpr FieldMember(ActivationKind ModelConfig::*m) : activation(m) {}  // NOLINT
  constexpr FieldMember(std::vector<int> ModelConfig::*m) : ids(m) {}   // NOLINT
  constexpr FieldMember(WeightType ModelConfig::*m) : weight_type(m) {}  // NOLINT
  constexpr FieldMember(std::string ModelConfig::*m) : text(m) {}       // NOLINT
  int ModelConfig::*i;                        // kInt
  float ModelConfig::*f;                      // kPositive
  bool ModelConfig::*b;                       // kBool, kChoice
  ActivationKind ModelConfig::*activation;    // kActivation
  std::vector<int> ModelConfig::*ids;         // kBannedIds
  WeightType ModelConfig::*weight_type;       // kWeightType
  std::string ModelConfig::*text;             // kText
};

struct ConfigField {
  const char* name;    // the key in `mtlite info` and Model.config()
  const char* schema;  // the schema field ("config.<schema>" in the loader's messages); null: none
  FieldKind kind;
  FieldMember member;
  uint16_t slot;       // the schema field's vtable slot (fb::Config::VT_*); 0: not in the table
  Bound lo, hi;        // kInt: the valid range
  // A check of the field against the ones before it, after its own (e.g. heads divide d_model).
  Status (*relation)(const ModelConfig&);
  const Choice* choice;  // kChoice
};

// The table: the fields of schema `table Config` in its order, then the ones stored elsewhere.
struct ConfigFieldList {
  const ConfigField* first;
  size_t count;
  const ConfigField* begin() const { return first; }
  const ConfigField* end() const { return first + count; }
  size_t size() const { return count; }
};
ConfigFieldList ConfigFields();

// A field's value as `mtlite info` and Python show it.
struct FieldValue {
  enum class Type : uint8_t { kInt, kFloat, kBool, kString, kIntList };
  Type type = Type::kInt;
  int64_t i = 0;
  float f = 0;
  bool b = false;
  std::string_view s;                    // kString: a name, or the member's text
  const std::vector<int>* ids = nullptr;  // kIntList: the member itself
};
FieldValue ValueOf(const ConfigField& field, const ModelConfig& c);
// The schema's code (a byte) of an enum kind's value (kActivation, kChoice).
int EnumCode(const ConfigField& field, const ModelConfig& c);

// Reads, checks and stores every field of `config` in table order; the first failure is a
// kInvalidModel naming the field. weight_type and the languages are not in the Config table.
// Allocates only for bad_word_ids (never with caller_storage and Marian's [[pad]]) and errors.
Status LoadConfig(const fb::Config& config, bool caller_storage, ModelConfig* out);
// One field of `config` (one with a slot), checked against the fields of `out` before it.
Status LoadConfigField(const ConfigField& field, const fb::Config& config, bool caller_storage, ModelConfig* out);

}  // namespace detail
}  // namespace mtlite

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
#include <type_traits>
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
  kEnum,        // a schema enum <-> a ModelConfig enum of the same codes; its values' codes and
                // names in ConfigField::values (position_kind, decoder_layer_kind, search, norm)
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

// kEnum: the values a field may hold, each with its schema code and shown name.
struct EnumValue {
  int8_t code;
  const char* name;
};
struct EnumValues {
  const EnumValue* first;
  size_t count;
  const EnumValue* begin() const { return first; }
  const EnumValue* end() const { return first + count; }
  const EnumValue* Find(int code) const {  // null for a code that is not a value
    for (const EnumValue& v : *this)
      if (v.code == code) return &v;
    return nullptr;
  }
};

// kEnum: reads and writes a ModelConfig enum member as its code.
struct EnumAccess {
  int (*get)(const ModelConfig&);
  void (*set)(ModelConfig*, int code);
};
template <auto Member>
int GetEnumCode(const ModelConfig& c) {
  return int(c.*Member);
}
template <auto Member>
void SetEnumCode(ModelConfig* c, int code) {
  using E = std::remove_reference_t<decltype(c->*Member)>;
  c->*Member = E(code);
}

// A field's ModelConfig member; the kind says which one is set.
union FieldMember {
  constexpr FieldMember(int ModelConfig::*m) : i(m) {}                  // NOLINT: implicit by design
  constexpr FieldMember(float ModelConfig::*m) : f(m) {}                // NOLINT
  constexpr FieldMember(bool ModelConfig::*m) : b(m) {}                 // NOLINT
  constexpr FieldMember(ActivationKind ModelConfig::*m) : activation(m) {}  // NOLINT
  constexpr FieldMember(std::vector<int> ModelConfig::*m) : ids(m) {}   // NOLINT
  constexpr FieldMember(WeightType ModelConfig::*m) : weight_type(m) {}  // NOLINT
  constexpr FieldMember(std::string ModelConfig::*m) : text(m) {}       // NOLINT
  constexpr FieldMember(EnumAccess m) : enumeration(m) {}               // NOLINT
  int ModelConfig::*i;                        // kInt
  float ModelConfig::*f;                      // kPositive
  bool ModelConfig::*b;                       // kBool
  ActivationKind ModelConfig::*activation;    // kActivation
  std::vector<int> ModelConfig::*ids;         // kBannedIds
  WeightType ModelConfig::*weight_type;       // kWeightType
  std::string ModelConfig::*text;             // kText
  EnumAccess enumeration;                     // kEnum
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
  const EnumValues* values;  // kEnum
  // Written only when not its default (the fields added with format_version 5), so that files
  // of the older kinds stay byte for byte what they were.
  bool omit_default = false;
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
// The schema's code (a byte) of an enum kind's value (kActivation, kEnum).
int EnumCode(const ConfigField& field, const ModelConfig& c);

// Reads, checks and stores every field of `config` in table order; the first failure is a
// kInvalidModel naming the field. weight_type and the languages are not in the Config table.
// Allocates only for bad_word_ids (never with caller_storage and Marian's [[pad]]) and errors.
Status LoadConfig(const fb::Config& config, bool caller_storage, ModelConfig* out);
// The oldest format_version that describes a file of this config (the writer writes it), and
// the loader's check that a file's version is at least that (kInvalidModel naming the field).
uint32_t MinFormatVersion(const ModelConfig& c);
Status CheckFormatVersion(const ModelConfig& c, uint32_t version);
// One field of `config` (one with a slot), checked against the fields of `out` before it.
Status LoadConfigField(const ConfigField& field, const fb::Config& config, bool caller_storage, ModelConfig* out);

}  // namespace detail
}  // namespace mtlite

// The config's spec table (runtime/src/model_spec.cc) against the schema and through everything
// that uses it: each line names a field of schema `table Config` with its slot, type and default
// (read from the binary schema) and every schema field has a line; what the writer writes the
// loader reads back equal, field by field; an int field outside its range is refused with the
// table's range in the message, by the whole loader too; a field absent from a file reads as the
// schema's default; `mtlite info` prints every field under the table's name, in its order, with
// the loaded value.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <flatbuffers/reflection_generated.h>
#include <nlohmann/json.hpp>

#include "hf_convert.h"
#include "marian_layout.h"
#include "model_internal.h"
#include "model_spec.h"
#include "model_test_helpers.h"
#include "model_writer.h"
#include "mtlite/mtlite.hpp"
#include "mtlite_generated.h"

namespace mtlite {
namespace {

using converter::AlignedBytes;
using detail::ConfigField;
using detail::FieldKind;
using detail::FieldValue;

std::vector<ConfigField> StoredFields() {
  std::vector<ConfigField> out;
  for (const ConfigField& f : detail::ConfigFields())
    if (f.slot) out.push_back(f);
  return out;
}

// A value in a form that compares exactly (floats by their bits).
std::string Repr(const FieldValue& v) {
  char buf[64];
  switch (v.type) {
    case FieldValue::Type::kInt: return "int " + std::to_string(v.i);
    case FieldValue::Type::kFloat: std::snprintf(buf, sizeof buf, "float %a", double(v.f)); return buf;
    case FieldValue::Type::kBool: return v.b ? "bool true" : "bool false";
    case FieldValue::Type::kString: return "string " + std::string(v.s);
    case FieldValue::Type::kIntList: {
      std::string s = "ints";
      for (int id : *v.ids) s += " " + std::to_string(id);
      return s;
    }
  }
  return "?";
}
std::string Repr(const ConfigField& f, const ModelConfig& c) { return Repr(detail::ValueOf(f, c)); }

// The demo model's config, loaded; with separate embeddings, so that each vocabulary size can
// change on its own.
const ModelConfig& Base() {
  static const ModelConfig c = [] {
    auto m = Model::Load(testing::DemoModel("int8"));
    if (!m.ok()) throw std::runtime_error(m.status().ToString());
    ModelConfig out = m.value()->config();
    out.shared_embeddings = false;
    return out;
  }();
  return c;
}

// Writes `c` with the converter's writer (no tensors: only the Config table is read back).
AlignedBytes Write(const ModelConfig& c) {
  converter::ModelSpec spec;
  spec.config = c;
  return converter::SerializeModel(spec);
}
const fb::Config& ConfigTable(const AlignedBytes& bytes) { return *fb::GetSizePrefixedModel(bytes.data())->config(); }

// Writer, FlatBuffers verifier, then the loader's config step.
Status WriteAndLoad(const ModelConfig& c, ModelConfig* out) {
  const AlignedBytes bytes = Write(c);
  uint64_t fb_size = 0;
  const Status envelope = detail::CheckEnvelope(bytes.data(), bytes.size(), &fb_size);
  if (!envelope.ok()) return envelope;
  return detail::LoadConfig(ConfigTable(bytes), false, out);
}

// `base` with field f set to another value the loader accepts; false if there is none.
bool Changed(const ConfigField& f, const ModelConfig& base, ModelConfig* out) {
  std::vector<ModelConfig> candidates;
  const detail::FieldMember& m = f.member;
  ModelConfig c = base;
  switch (f.kind) {
    case FieldKind::kInt: {
      const int v = base.*m.i;
      for (int64_t x : {int64_t(v) + 1, int64_t(v) - 1, 2 * int64_t(v), f.lo(base), f.hi(base)}) {
        if (x == v || x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max()) continue;
        c.*m.i = int(x);
        candidates.push_back(c);
      }
      break;
    }
    case FieldKind::kPositive: c.*m.f = base.*m.f * 2; candidates.push_back(c); break;
    case FieldKind::kBool: c.*m.b = !(base.*m.b); candidates.push_back(c); break;
    case FieldKind::kEnum:  // every other value
      for (const detail::EnumValue& e : *f.values) {
        if (e.code == m.enumeration.get(base)) continue;
        m.enumeration.set(&c, e.code);
        candidates.push_back(c);
      }
      break;
    case FieldKind::kActivation:
      for (int code = 0; layout::ActivationFromCode(code, &(c.*m.activation)); ++code) {
        if (c.*m.activation != base.*m.activation) candidates.push_back(c);
      }
      break;
    case FieldKind::kBannedIds: c.*m.ids = {1, 2}; candidates.push_back(c); break;
    case FieldKind::kWeightType:
    case FieldKind::kText: break;
  }
  for (const ModelConfig& candidate : candidates) {
    ModelConfig loaded;
    if (WriteAndLoad(candidate, &loaded).ok()) {
      *out = candidate;
      return true;
    }
  }
  return false;
}

TEST(ModelSpec, NamesTheSchemaFieldsWithTheirSlotsTypesAndDefaults) {
  const std::string bfbs = testing::ReadText(MTLITE_SCHEMA_BFBS);
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(bfbs.data()), bfbs.size());
  ASSERT_TRUE(reflection::VerifySchemaBuffer(verifier)) << MTLITE_SCHEMA_BFBS;
  const reflection::Object* config = reflection::GetSchema(bfbs.data())->objects()->LookupByKey("mtlite.fb.Config");
  ASSERT_NE(config, nullptr);
  std::set<std::string> schema_fields;
  for (const reflection::Field* f : *config->fields())
    if (!f->deprecated()) schema_fields.insert(f->name()->str());
  const ModelConfig defaults;
  std::set<std::string> table_fields;
  std::set<uint16_t> slots;
  for (const ConfigField& f : StoredFields()) {
    SCOPED_TRACE(f.name);
    EXPECT_TRUE(table_fields.insert(f.schema).second) << "twice in the table";
    EXPECT_TRUE(slots.insert(f.slot).second) << "slot twice in the table";
    const reflection::Field* s = config->fields()->LookupByKey(f.schema);
    ASSERT_NE(s, nullptr) << "not a field of schema table Config";
    EXPECT_EQ(f.slot, s->offset());
    const reflection::BaseType type = s->type()->base_type();
    switch (f.kind) {
      case FieldKind::kInt:
        EXPECT_EQ(type, reflection::Int);
        EXPECT_EQ(s->default_integer(), defaults.*f.member.i);
        break;
      case FieldKind::kPositive:
        EXPECT_EQ(type, reflection::Float);
        EXPECT_EQ(float(s->default_real()), defaults.*f.member.f);
        break;
      case FieldKind::kBool:
        EXPECT_EQ(type, reflection::Bool);
        EXPECT_EQ(s->default_integer() != 0, defaults.*f.member.b);
        break;
      case FieldKind::kActivation:
        EXPECT_EQ(type, reflection::Byte);
        EXPECT_EQ(s->default_integer(), detail::EnumCode(f, defaults));
        break;
      case FieldKind::kEnum: {
        EXPECT_EQ(type, reflection::Byte);
        EXPECT_EQ(s->default_integer(), detail::EnumCode(f, defaults));
        // the table's values are exactly the schema enum's, each with a distinct name
        ASSERT_GE(s->type()->index(), 0) << "not an enum field";
        const reflection::Enum* e = reflection::GetSchema(bfbs.data())->enums()->Get(uint32_t(s->type()->index()));
        std::set<int64_t> want, got;
        std::set<std::string> names;
        for (const reflection::EnumVal* v : *e->values()) want.insert(v->value());
        for (const detail::EnumValue& v : *f.values) {
          got.insert(v.code);
          EXPECT_TRUE(names.insert(v.name).second) << v.name;
        }
        EXPECT_EQ(got, want) << e->name()->str();
        break;
      }
      case FieldKind::kBannedIds:
        EXPECT_EQ(type, reflection::Vector);
        EXPECT_EQ(s->type()->element(), reflection::Int);
        break;
      case FieldKind::kWeightType:
      case FieldKind::kText: ADD_FAILURE() << "a kind stored elsewhere has a slot"; break;
    }
  }
  EXPECT_EQ(table_fields, schema_fields) << "every field of schema table Config has one line in the table";
}

// A Config table as flatbuffers builds it: `all`: every field at its schema default (the
// generated CreateConfig's defaults), else none.
std::vector<uint8_t> DefaultConfigTable(bool all) {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.ForceDefaults(true);
  fbb.Finish(all ? fb::CreateConfig(fbb) : flatbuffers::Offset<fb::Config>(fbb.EndTable(fbb.StartTable())));
  return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

TEST(ModelSpec, AnAbsentFieldReadsAsTheSchemasDefault) {
  const std::vector<uint8_t> written = DefaultConfigTable(true), absent = DefaultConfigTable(false);
  const fb::Config& w = *flatbuffers::GetRoot<fb::Config>(written.data());
  const fb::Config& a = *flatbuffers::GetRoot<fb::Config>(absent.data());
  for (const ConfigField& f : StoredFields()) {
    SCOPED_TRACE(f.name);
    ModelConfig from_written = Base(), from_absent = Base();
    const Status sw = detail::LoadConfigField(f, w, false, &from_written);
    const Status sa = detail::LoadConfigField(f, a, false, &from_absent);
    EXPECT_EQ(sa.message(), sw.message());
    EXPECT_EQ(Repr(f, from_absent), Repr(f, from_written));
  }
}

TEST(ModelSpec, EveryFieldTheWriterWritesTheLoaderReadsBackEqual) {
  const std::vector<ConfigField> stored = StoredFields();
  ModelConfig loaded;
  ASSERT_TRUE(WriteAndLoad(Base(), &loaded).ok());
  for (const ConfigField& g : stored) EXPECT_EQ(Repr(g, loaded), Repr(g, Base())) << g.name;
  // Each field changed on its own: a writer and a loader that disagreed on where a field lives
  // would move the change to another field or lose it.
  for (const ConfigField& f : stored) {
    SCOPED_TRACE(f.name);
    ModelConfig changed;
    ASSERT_TRUE(Changed(f, Base(), &changed)) << "no other value of the field loads";
    ASSERT_NE(Repr(f, changed), Repr(f, Base()));
    ASSERT_TRUE(WriteAndLoad(changed, &loaded).ok());
    for (const ConfigField& g : stored) EXPECT_EQ(Repr(g, loaded), Repr(g, changed)) << g.name;
  }
}

TEST(ModelSpec, TheVersion5FieldsAreWrittenOnlyWhenNotTheirDefaults) {
  // A file of an older kind keeps its bytes: no norm fields, the version it had.
  const AlignedBytes old = Write(Base());
  const auto& t = reinterpret_cast<const flatbuffers::Table&>(ConfigTable(old));
  for (uint16_t slot : {fb::Config::VT_NORM, fb::Config::VT_ENCODER_FINAL_NORM, fb::Config::VT_DECODER_FINAL_NORM})
    EXPECT_EQ(t.GetOptionalFieldOffset(slot), 0) << slot;
  EXPECT_EQ(fb::GetSizePrefixedModel(old.data())->format_version(), layout::kFormatVersion1);
  // Each version-5 choice on its own makes a version-5 file, and a file that says less is refused
  // with the field's name.
  struct Case {
    void (*set)(ModelConfig*);
    const char* what;
  };
  const Case cases[] = {
      {[](ModelConfig* c) { c->norm = NormPlacement::kPre; }, "config.norm Pre"},
      {[](ModelConfig* c) { c->encoder_final_norm = true; }, "config.encoder_final_norm"},
      {[](ModelConfig* c) { c->decoder_final_norm = true; }, "config.decoder_final_norm"},
      {[](ModelConfig* c) { c->positions = PositionKind::kSinusoidM2M100; }, "config.position_kind SinusoidalM2M100"},
      {[](ModelConfig* c) { c->positions = PositionKind::kSinusoidCT2; }, "config.position_kind SinusoidalCT2"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    ModelConfig c = Base();
    k.set(&c);
    EXPECT_EQ(detail::MinFormatVersion(c), layout::kFormatVersionLayers);
    EXPECT_EQ(fb::GetSizePrefixedModel(Write(c).data())->format_version(), layout::kFormatVersionLayers);
    const Status s = detail::CheckFormatVersion(c, layout::kFormatVersionMarianSearch);
    EXPECT_NE(s.message().find(std::string(k.what) + " needs format_version 5 (the file says 4)"), std::string::npos)
        << s.ToString();
    EXPECT_TRUE(detail::CheckFormatVersion(c, layout::kFormatVersionLayers).ok());
  }
}

TEST(ModelSpec, AWholeModelRoundTripsEveryField) {
  // The demo checkpoint converted in process, serialized, loaded: the fields stored outside the
  // Config table (weight type, languages) too.
  converter::ModelSpec spec;
  converter::ConversionReport report;
  ASSERT_TRUE(converter::ConvertHfDir(testing::DemoHfDir(), converter::Quantization::kInt8, &spec, &report).ok());
  const AlignedBytes bytes = converter::SerializeModel(spec);
  auto model = Model::FromBuffer(bytes.data(), bytes.size());
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ModelConfig want = spec.config;
  want.weight_type = WeightType::kInt8;  // a ModelSpec's weight type is its tensors'
  for (const ConfigField& f : detail::ConfigFields()) {
    EXPECT_EQ(Repr(f, model.value()->config()), Repr(f, want)) << f.name;
  }
}

// "config.<schema> = <v> is outside [<lo>, <hi>]" from the table's bounds.
std::string RangeMessage(const ConfigField& f, int64_t v, const ModelConfig& c) {
  return "config." + std::string(f.schema) + " = " + std::to_string(v) + " is outside [" + std::to_string(f.lo(c)) +
         ", " + std::to_string(f.hi(c)) + "]";
}

TEST(ModelSpec, AnIntFieldOutsideItsRangeIsRefusedWithTheTablesRange) {
  const AlignedBytes demo = testing::ReadAligned(testing::DemoModel("int8"));
  int cases = 0;
  for (const ConfigField& f : StoredFields()) {
    if (f.kind != FieldKind::kInt) continue;
    for (const int64_t v : {f.lo(Base()) - 1, f.hi(Base()) + 1}) {
      if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) continue;
      SCOPED_TRACE(std::string(f.name) + " = " + std::to_string(v));
      ++cases;
      ModelConfig bad = Base(), loaded;
      bad.*f.member.i = int(v);
      const Status s = WriteAndLoad(bad, &loaded);
      EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
      EXPECT_EQ(s.message(), RangeMessage(f, v, Base()));
      // The whole loader, on the demo file with the field patched in place (every scalar of the
      // Config table is stored, see the writer).
      AlignedBytes patched = demo;
      const auto* config = fb::GetSizePrefixedModel(patched.data())->config();
      const auto* table = reinterpret_cast<const flatbuffers::Table*>(config);
      const uint8_t* field = table->GetAddressOf(f.slot);
      ASSERT_NE(field, nullptr);
      flatbuffers::WriteScalar<int32_t>(patched.data() + (field - patched.data()), int32_t(v));
      auto m = Model::FromBuffer(patched.data(), patched.size());
      ASSERT_FALSE(m.ok());
      EXPECT_EQ(m.status().code(), StatusCode::kInvalidModel);
      EXPECT_EQ(m.status().message(), RangeMessage(f, v, Base()));  // the bounds are the demo's
    }
  }
  EXPECT_GE(cases, 30);
}

TEST(ModelSpec, InfoPrintsEveryFieldUnderTheTablesNameInItsOrder) {
  const std::string path = testing::DemoModel("int8");
  auto model = Model::Load(path);
  ASSERT_TRUE(model.ok());
  const ModelConfig& c = model.value()->config();

  const testing::CommandResult json = testing::RunCli("info --json '" + path + "'");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const nlohmann::ordered_json printed = nlohmann::ordered_json::parse(json.output)["config"];
  std::vector<std::string> keys;
  for (const auto& item : printed.items()) keys.push_back(item.key());
  std::vector<std::string> names;
  for (const ConfigField& f : detail::ConfigFields()) names.push_back(f.name);
  EXPECT_EQ(keys, names);
  for (const ConfigField& f : detail::ConfigFields()) {
    SCOPED_TRACE(f.name);
    const nlohmann::ordered_json& p = printed.at(f.name);
    const FieldValue v = detail::ValueOf(f, c);
    switch (v.type) {
      case FieldValue::Type::kInt: EXPECT_EQ(p.get<int64_t>(), v.i); break;
      case FieldValue::Type::kFloat: EXPECT_EQ(p.get<float>(), v.f); break;  // %.9g round-trips a float
      case FieldValue::Type::kBool: EXPECT_EQ(p.get<bool>(), v.b); break;
      case FieldValue::Type::kString: EXPECT_EQ(p.get<std::string>(), v.s); break;
      case FieldValue::Type::kIntList: EXPECT_EQ(p.get<std::vector<int>>(), *v.ids); break;
    }
  }

  // The text form: "config:", then a line a field, "  <name padded to 24> <JSON value>".
  const testing::CommandResult text = testing::RunCli("info '" + path + "'");
  ASSERT_EQ(text.exit_code, 0) << text.output;
  const size_t begin = text.output.find("\nconfig:\n");
  ASSERT_NE(begin, std::string::npos) << text.output;
  size_t at = begin + 9;
  for (const ConfigField& f : detail::ConfigFields()) {
    const size_t eol = text.output.find('\n', at);
    ASSERT_NE(eol, std::string::npos);
    char name[64];
    std::snprintf(name, sizeof name, "  %-24s ", f.name);
    EXPECT_EQ(text.output.substr(at, eol - at).rfind(name, 0), 0u) << text.output.substr(at, eol - at);
    at = eol + 1;
  }
}

}  // namespace
}  // namespace mtlite

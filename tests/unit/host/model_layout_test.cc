// Model::SizeProfile (the loader's component tags against byte counts computed from the config)
// and the converter's position handling for odd d_model (the HF sinusoid puts the extra column in
// the sin half).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hf_convert.h"
#include "kernels.h"
#include "marian_layout.h"
#include "model_data.h"
#include "model_test_helpers.h"
#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace {

// Stored bytes of a [rows][cols] weight (data + int8 per-row scales).
uint64_t WeightBytes(int rows, int cols, WeightType t) {
  switch (t) {
    case WeightType::kInt8: return kernels::BlockedN8K4Bytes(rows, cols) + 4ull * uint64_t(rows);
    case WeightType::kF16: return 2ull * uint64_t(rows) * uint64_t(cols);
    case WeightType::kF32: return 4ull * uint64_t(rows) * uint64_t(cols);
  }
  return 0;
}

// Bytes of every model component, from the config alone.
std::map<std::string, uint64_t> ExpectedComponentBytes(const ModelConfig& c) {
  const WeightType t = c.weight_type;
  const int d = c.d_model;
  auto linear = [&](int rows, int cols) { return WeightBytes(rows, cols, t) + 4ull * uint64_t(rows); };
  const uint64_t norm = 8ull * uint64_t(d);
  const uint64_t attention = 4 * linear(d, d) + norm;
  std::map<std::string, uint64_t> want;
  want["embeddings/output"] = WeightBytes(c.source_vocab_size, d, t) +
                              (c.shared_embeddings ? 0 : WeightBytes(c.target_vocab_size, d, t)) +
                              (c.tied_output ? 0 : WeightBytes(c.target_vocab_size, d, t));
  want["positions"] = c.positions == PositionKind::kTable ? 2 * 4ull * uint64_t(c.max_positions) * uint64_t(d) : 0;
  want["final_logits_bias"] = c.has_final_logits_bias ? 4ull * uint64_t(c.target_vocab_size) : 0;
  for (int i = 0; i < c.encoder_layers; ++i) {
    want["encoder.layer." + std::to_string(i)] =
        attention + linear(c.encoder_ffn_dim, d) + linear(d, c.encoder_ffn_dim) + norm;
  }
  for (int i = 0; i < c.decoder_layers; ++i) {
    const std::string p = "decoder.layer." + std::to_string(i);
    want[p + ".self_attn"] = attention;
    want[p + ".cross_attn"] = attention;
    want[p + ".ffn"] = linear(c.decoder_ffn_dim, d) + linear(d, c.decoder_ffn_dim) + norm;
  }
  return want;
}

void ExpectProfileMatchesConfig(const Model& model) {
  const ModelConfig& c = model.config();
  const std::vector<SizeComponent> profile = model.SizeProfile();
  const std::map<std::string, uint64_t> want = ExpectedComponentBytes(c);
  // Model components first, in model order, then tokenizer, structure, padding.
  ASSERT_EQ(profile.size(), want.size() + 3);
  std::vector<std::string> order = {"embeddings/output", "positions", "final_logits_bias"};
  for (int i = 0; i < c.encoder_layers; ++i) order.push_back("encoder.layer." + std::to_string(i));
  for (int i = 0; i < c.decoder_layers; ++i) {
    for (const char* part : {".self_attn", ".cross_attn", ".ffn"}) order.push_back("decoder.layer." + std::to_string(i) + part);
  }
  order.insert(order.end(), {"tokenizer", "flatbuffer structure/config/metadata", "padding (64-byte alignment)"});
  uint64_t sum = 0;
  const std::string weight_dtype = layout::DTypeName(c.weight_type);
  for (size_t i = 0; i < profile.size(); ++i) {
    const SizeComponent& row = profile[i];
    EXPECT_EQ(row.name, order[i]);
    sum += row.bytes;
    EXPECT_TRUE(std::is_sorted(row.dtypes.begin(), row.dtypes.end())) << row.name;
    auto it = want.find(row.name);
    if (it == want.end()) continue;
    EXPECT_EQ(row.bytes, it->second) << row.name;
    if (row.bytes == 0) {
      EXPECT_TRUE(row.dtypes.empty()) << row.name;
    } else if (row.name == "positions" || row.name == "final_logits_bias") {
      EXPECT_EQ(row.dtypes, std::vector<std::string>{"f32"}) << row.name;
    } else if (c.weight_type == WeightType::kF32 || (row.name == "embeddings/output" && c.weight_type == WeightType::kF16)) {
      // (f16 embedding tables have no f32 part: no bias, no scales)
      EXPECT_EQ(row.dtypes, std::vector<std::string>{weight_dtype}) << row.name;
    } else {  // int8 scales, biases and norms are f32
      EXPECT_EQ(row.dtypes, (std::vector<std::string>{std::min<std::string>("f32", weight_dtype),
                                                       std::max<std::string>("f32", weight_dtype)}))
          << row.name;
    }
  }
  EXPECT_EQ(sum, model.file_size());
  const SizeComponent& tok = profile[profile.size() - 3];
  const bool charsmap = model.data().source_spm.charsmap_size > 0 || model.data().target_spm.charsmap_size > 0;
  const std::vector<std::string> tok_dtypes =
      charsmap ? std::vector<std::string>{"bytes", "f32", "strings"}  // charsmap, scores, pieces
               : std::vector<std::string>{"f32", "strings"};
  EXPECT_EQ(tok.dtypes, tok_dtypes);
  EXPECT_GT(tok.bytes, 4ull * uint64_t(model.data().source_spm.num_pieces));
  EXPECT_GT(profile[profile.size() - 2].bytes, 0u);
  EXPECT_LT(profile.back().bytes, 64 * (model.data().checks.size() + 1));  // alignment padding only
}

TEST(SizeProfile, DemoModelsMatchTheirConfig) {
  for (const char* q : {"int8", "fp16", "fp32"}) {
    SCOPED_TRACE(q);
    auto model = Model::Load(testing::DemoModel(q));
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    ExpectProfileMatchesConfig(**model);
  }
}

converter::AlignedBytes Convert(const testing::TinyHf& hf, converter::Quantization q, converter::ModelSpec* spec) {
  testing::TempDir dir;
  hf.Write(dir.path());
  converter::ConversionReport report;
  const Status s = converter::ConvertHfDir(dir.path(), q, spec, &report);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return converter::SerializeModel(*spec);
}

TEST(SizeProfile, TinyLayoutsMatchTheirConfig) {
  testing::TinyOptions o = testing::UncommonTinyOptions();
  o.decoder_layers = 3;
  for (converter::Quantization q :
       {converter::Quantization::kInt8, converter::Quantization::kFp16, converter::Quantization::kFp32}) {
    SCOPED_TRACE(converter::QuantizationName(q));
    converter::ModelSpec spec;
    const converter::AlignedBytes bytes = Convert(testing::MakeTinyHf(o), q, &spec);
    auto model = Model::FromBuffer(bytes.data(), bytes.size());
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    ASSERT_EQ(model.value()->config().positions, PositionKind::kTable);
    ExpectProfileMatchesConfig(**model);
  }
}

TEST(SizeProfile, TensorsTheModelDoesNotUseAreOtherTensors) {
  converter::ModelSpec spec;
  Convert(testing::MakeTinyHf(), converter::Quantization::kInt8, &spec);
  converter::TensorSpec extra;
  extra.name = "model.encoder.layers.7.extra.weight";  // a layer the config does not have
  extra.shape = {5};
  extra.data.assign(20, 0);
  spec.tensors.push_back(extra);
  const converter::AlignedBytes bytes = converter::SerializeModel(spec);
  auto model = Model::FromBuffer(bytes.data(), bytes.size(), LoadOptions{true});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const std::vector<SizeComponent> profile = model.value()->SizeProfile();
  uint64_t sum = 0;
  for (const SizeComponent& c : profile) sum += c.bytes;
  EXPECT_EQ(sum, bytes.size());
  auto other = std::find_if(profile.begin(), profile.end(), [](const SizeComponent& c) { return c.name == "other tensors"; });
  ASSERT_NE(other, profile.end());
  EXPECT_EQ(other->bytes, 20u);
  EXPECT_EQ(other->dtypes, std::vector<std::string>{"f32"});
  EXPECT_EQ(std::next(other)->name, "tokenizer");
  for (const SizeComponent& c : profile) EXPECT_EQ(c.name.find("layer.7"), std::string::npos) << c.name;
}

TEST(SizeProfile, InfoJsonPrintsTheLibraryProfile) {
  const std::string path = testing::DemoModel("int8");
  auto model = Model::Load(path);
  ASSERT_TRUE(model.ok());
  const auto r = testing::RunCli("info '" + path + "' --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  const std::vector<SizeComponent> profile = model.value()->SizeProfile();
  ASSERT_EQ(j["components"].size(), profile.size());
  for (size_t i = 0; i < profile.size(); ++i) {
    const auto& c = j["components"][i];
    EXPECT_EQ(c["name"], profile[i].name);
    EXPECT_EQ(c["bytes"].get<uint64_t>(), profile[i].bytes);
    std::string dtype;
    for (const std::string& d : profile[i].dtypes) dtype += (dtype.empty() ? "" : "+") + d;
    EXPECT_EQ(c["dtype"], dtype);
  }
}

// ---- odd d_model ----------------------------------------------------------------------------

testing::TinyOptions OddOptions() {
  testing::TinyOptions o;
  o.d_model = 9;
  o.heads = 3;
  o.max_positions = 24;
  return o;
}

// Greedy ids and teacher-forced logits of a few source sequences.
struct Outputs {
  std::vector<std::vector<int32_t>> ids;
  std::vector<float> logits;
};

Outputs Translate(const converter::AlignedBytes& bytes) {
  Outputs out;
  auto model = Model::FromBuffer(bytes.data(), bytes.size(), LoadOptions{true});
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (!model.ok()) return out;
  TranslatorLimits lim;
  lim.max_source_tokens = lim.max_target_tokens = 20;
  lim.max_batch = 3;
  auto tr = Translator::Create(model.value(), lim);
  EXPECT_TRUE(tr.ok()) << tr.status().ToString();
  if (!tr.ok()) return out;
  const ModelConfig& c = model.value()->config();
  const std::vector<std::vector<int32_t>> sources = {{3, 4, 5, c.eos_id}, {7, c.eos_id}, {10, 11, 12, 13, 14, 15, c.eos_id}};
  TranslateOptions opt;
  opt.max_length = 20;
  std::vector<TranslationResult> res;
  const Status s = tr.value()->TranslateIds(sources, opt, &res);
  EXPECT_TRUE(s.ok()) << s.ToString();
  for (const TranslationResult& r : res) out.ids.push_back(r.hypotheses.at(0).ids);
  for (const auto& src : sources) {
    const std::vector<int32_t> target = {5, 6, 7, c.eos_id};
    std::vector<float> logits(target.size() * size_t(c.target_vocab_size));
    const Status f = tr.value()->ForcedLogits(src.data(), int(src.size()), target.data(), int(target.size()), logits.data());
    EXPECT_TRUE(f.ok()) << f.ToString();
    out.logits.insert(out.logits.end(), logits.begin(), logits.end());
  }
  return out;
}

TEST(OddDModel, SinusoidTablesAreRecognisedAndTranslateAsStoredTables) {
  for (converter::Quantization q : {converter::Quantization::kFp32, converter::Quantization::kInt8}) {
    SCOPED_TRACE(converter::QuantizationName(q));
    converter::ModelSpec spec;
    const converter::AlignedBytes computed = Convert(testing::MakeTinyHf(OddOptions()), q, &spec);
    EXPECT_EQ(spec.config.positions, PositionKind::kSinusoidMarian) << "HF's odd-d sinusoid tables were not recognised";
    // What the converter wrote before it knew the odd-d sinusoid: the checkpoint's tables.
    spec.config.positions = PositionKind::kTable;
    const std::vector<float> table = testing::Sinusoid(spec.config.max_positions, spec.config.d_model);
    for (const char* name : {layout::kEncoderPositions, layout::kDecoderPositions}) {
      converter::TensorSpec t;
      t.name = name;
      t.shape = {spec.config.max_positions, spec.config.d_model};
      t.data.resize(table.size() * 4);
      std::memcpy(t.data.data(), table.data(), t.data.size());
      spec.tensors.push_back(t);
    }
    const converter::AlignedBytes stored = converter::SerializeModel(spec);
    EXPECT_LT(computed.size(), stored.size());
    const Outputs a = Translate(computed), b = Translate(stored);
    ASSERT_FALSE(a.ids.empty());
    EXPECT_EQ(a.ids, b.ids);
    ASSERT_EQ(a.logits.size(), b.logits.size());
    EXPECT_EQ(std::memcmp(a.logits.data(), b.logits.data(), a.logits.size() * 4), 0);
  }
}

TEST(OddDModel, AMissingTableIsFilledWithTheHfSinusoid) {
  testing::TinyHf hf = testing::MakeTinyHf(OddOptions());
  hf.tensors.erase(layout::kDecoderPositions);
  auto& enc = hf.tensors[layout::kEncoderPositions].values;
  for (size_t i = 0; i < enc.size(); i += 5) enc[i] += 0.25f;  // learned: not the sinusoid
  converter::ModelSpec spec;
  const converter::AlignedBytes bytes = Convert(hf, converter::Quantization::kFp32, &spec);
  auto model = Model::FromBuffer(bytes.data(), bytes.size(), LoadOptions{true});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const detail::ModelData& md = model.value()->data();
  ASSERT_EQ(md.config.positions, PositionKind::kTable);
  ASSERT_NE(md.decoder_positions.data, nullptr);
  const std::vector<float> want = testing::Sinusoid(md.config.max_positions, md.config.d_model);
  ASSERT_EQ(size_t(md.decoder_positions.size), want.size());
  EXPECT_EQ(std::memcmp(md.decoder_positions.data, want.data(), want.size() * 4), 0);
  // The last column is a cos column: 1 at position 0, never the zero an even split leaves.
  const int d = md.config.d_model;
  EXPECT_EQ(md.decoder_positions.data[d - 1], 1.0f);
  EXPECT_EQ(std::memcmp(md.encoder_positions.data, enc.data(), enc.size() * 4), 0);
}

}  // namespace
}  // namespace mtlite

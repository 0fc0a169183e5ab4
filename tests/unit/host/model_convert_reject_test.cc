// `mtlite convert` rejects broken HF directories: non-zero exit, a message naming the field or
// tensor, no crash, no output file. Also unit tests of the safetensors reader, f16 conversion
// and int8 quantization used by the converter.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "hf_convert.h"
#include "io.h"
#include "kernels.h"
#include "model_test_helpers.h"
#include "quantize.h"
#include "safetensors.h"
#include "translator_bounds.h"

namespace mtlite {
namespace {

using testing::TinyHf;

struct RejectCase {
  RejectCase(const char* n, std::function<void(TinyHf*)> e, std::vector<const char*> x,
             std::function<void(const std::string&)> a = nullptr)
      : name(n), edit(std::move(e)), expect(std::move(x)), after(std::move(a)) {}
  const char* name;
  std::function<void(TinyHf*)> edit;                  // before the directory is written
  std::vector<const char*> expect;                    // substrings of the error message
  std::function<void(const std::string& dir)> after;  // file-level damage after writing
};

std::string Header(const std::string& json, uint64_t claimed_len) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char((claimed_len >> (8 * i)) & 0xFF);
  return out + json;
}

const std::vector<RejectCase>& Cases() {
  static const std::vector<RejectCase> cases = {
      {"unknown_activation", [](TinyHf* h) { h->config["activation_function"] = "mish"; },
       {"activation_function", "mish"}},
      {"pre_norm_not_a_bool", [](TinyHf* h) { h->config["normalize_before"] = "yes"; }, {"normalize_before", "true or false"}},
      {"final_norm_without_bias",
       [](TinyHf* h) {
         h->config["normalize_before"] = true;
         h->tensors["model.encoder.layer_norm.weight"] = h->tensors["model.encoder.layers.0.final_layer_norm.weight"];
       },
       {"model.encoder.layer_norm.bias", "missing"}},
      {"add_bias_logits", [](TinyHf* h) { h->config["add_bias_logits"] = true; }, {"add_bias_logits"}},
      {"normalize_embedding", [](TinyHf* h) { h->config["normalize_embedding"] = true; },
       {"normalize_embedding"}},
      {"not_marian", [](TinyHf* h) { h->config["model_type"] = "bart"; }, {"model_type"}},
      {"missing_d_model", [](TinyHf* h) { h->config.erase("d_model"); }, {"config.json", "d_model"}},
      {"string_d_model", [](TinyHf* h) { h->config["d_model"] = "8"; }, {"d_model"}},
      {"negative_layers", [](TinyHf* h) { h->config["encoder_layers"] = -1; }, {"encoder_layers"}},
      {"heads_do_not_divide", [](TinyHf* h) { h->config["encoder_attention_heads"] = 3; },
       {"d_model", "head"}},
      {"max_positions_beyond_runtime_limit",
       [](TinyHf* h) {
         // Consistent tensors, but beyond the runtime's limit: refused as config.json is read.
         h->config["max_position_embeddings"] = 2000000;
         for (const char* n : {"model.encoder.embed_positions.weight", "model.decoder.embed_positions.weight"}) h->tensors.erase(n);
       },
       {"config.json", "max_position_embeddings", "1000000"}},
      {"missing_tensor", [](TinyHf* h) { h->tensors.erase("model.encoder.layers.0.fc1.weight"); },
       {"model.encoder.layers.0.fc1.weight", "missing"}},
      {"missing_embeddings", [](TinyHf* h) { h->tensors.erase("model.shared.weight"); },
       {"model.shared.weight"}},
      {"shape_mismatch",
       [](TinyHf* h) {
         auto& t = h->tensors["model.decoder.layers.0.encoder_attn.k_proj.weight"];
         t.shape = {8, 7};
         t.values.resize(56);
       },
       {"model.decoder.layers.0.encoder_attn.k_proj.weight", "shape"}},
      // a default beam no translator runs: refused here, not by the loader of the written file
      {"num_beams_above_the_search", [](TinyHf* h) { h->generation["num_beams"] = detail::kMaxBeam + 1; }, {"num_beams"}},
      {"ffn_config_disagrees", [](TinyHf* h) { h->config["decoder_ffn_dim"] = 32; },
       {"model.decoder.layers.0.fc1.weight", "shape"}},
      {"nan_weight",
       [](TinyHf* h) {
         h->tensors["model.encoder.layers.0.fc2.weight"].values[5] = std::numeric_limits<float>::quiet_NaN();
       },
       {"model.encoder.layers.0.fc2.weight", "NaN"}},
      {"unsupported_dtype",
       [](TinyHf* h) {
         // A valid header whose final_logits_bias is I32.
         h->safetensors_override = testing::SafetensorsBytes(h->tensors);
         const std::string key = "\"final_logits_bias\":{\"data_offsets\":[";
         const size_t at = h->safetensors_override.find(key);
         ASSERT_NE(at, std::string::npos);
         const size_t dtype = h->safetensors_override.find("\"F32\"", at);
         h->safetensors_override.replace(dtype, 5, "\"I32\"");
       },
       {"final_logits_bias", "I32"}},
      {"vocab_size_disagrees", [](TinyHf* h) { h->config["vocab_size"] = h->config["vocab_size"].get<int>() + 1; h->config["decoder_vocab_size"] = h->config["vocab_size"]; },
       {"vocab/spm disagreement", "vocab_size"}},
      {"vocab_not_dense", [](TinyHf* h) { h->vocab["<pad>"] = 1000; }, {"vocab.json", "dense"}},
      {"vocab_duplicate_id", [](TinyHf* h) { h->vocab["<pad>"] = 3; }, {"vocab.json"}},
      {"separate_vocab_missing", [](TinyHf* h) { h->tokenizer_config["separate_vocabs"] = true; },
       {"separate_vocabs", "target_vocab.json"}},
      {"corrupt_spm", [](TinyHf* h) { h->source_spm = h->source_spm.substr(0, h->source_spm.size() / 2); },
       {"source.spm"}},
      // A second TrainerSpec merges into the first: unk_id 70000 (libsentencepiece loads this file).
      {"spm_unk_id_past_the_end", [](TinyHf* h) { h->source_spm += std::string("\x12\x05\xc0\x02\xf0\xa2\x04", 7); },
       {"source.spm", "unk_id is 70000"}},
      {"config_not_json", [](TinyHf*) {}, {"config.json"},
       [](const std::string& dir) { testing::WriteText(dir + "/config.json", "{ nope"); }},
      {"no_safetensors", [](TinyHf*) {}, {"model.safetensors", "missing"},
       [](const std::string& dir) { std::remove((dir + "/model.safetensors").c_str()); }},
      {"safetensors_header_length_past_end",
       [](TinyHf* h) { h->safetensors_override = Header("{}", 1u << 30); },
       {"model.safetensors", "header length"}},
      {"safetensors_header_not_json",
       [](TinyHf* h) { h->safetensors_override = Header("{\"a\": [", 7); },
       {"model.safetensors", "JSON"}},
      {"safetensors_offsets_past_end",
       [](TinyHf* h) {
         const std::string j = R"({"final_logits_bias":{"dtype":"F32","shape":[2],"data_offsets":[0,8000]}})";
         h->safetensors_override = Header(j, j.size()) + std::string(8, '\0');
       },
       {"model.safetensors", "final_logits_bias", "data_offsets"}},
      {"safetensors_size_disagrees_with_shape",
       [](TinyHf* h) {
         const std::string j = R"({"final_logits_bias":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})";
         h->safetensors_override = Header(j, j.size()) + std::string(8, '\0');
       },
       {"model.safetensors", "final_logits_bias", "data_offsets"}},
      {"safetensors_too_small", [](TinyHf* h) { h->safetensors_override = "abc"; },
       {"model.safetensors"}},
  };
  return cases;
}

class ConvertReject : public ::testing::TestWithParam<size_t> {};

TEST_P(ConvertReject, NonZeroExitAndAMessageNamingTheField) {
  const RejectCase& c = Cases()[GetParam()];
  testing::TempDir dir;
  TinyHf hf = testing::MakeTinyHf();
  c.edit(&hf);
  hf.Write(dir.path());
  if (c.after) c.after(dir.path());
  const std::string out = dir / "out.mtlite";
  const auto r = testing::RunCli("convert '" + dir.path() + "' -o '" + out + "' --quiet");
  std::printf("%s -> %s", c.name, r.output.c_str());
  EXPECT_EQ(r.exit_code, 1) << r.output;  // 1 = rejected input (not a crash, not usage)
  for (const char* s : c.expect) EXPECT_NE(r.output.find(s), std::string::npos) << "'" << s << "' not in: " << r.output;
  EXPECT_FALSE(converter::FileExists(out));
  EXPECT_FALSE(converter::FileExists(out + ".tmp"));
}

INSTANTIATE_TEST_SUITE_P(Cases, ConvertReject, ::testing::Range(size_t(0), Cases().size()),
                         [](const auto& info) { return std::string(Cases()[info.param].name); });

TEST(ConvertCli, UsageErrorsExitWith2) {
  testing::TempDir dir;
  testing::MakeTinyHf().Write(dir.path());
  EXPECT_EQ(testing::RunCli("convert '" + dir.path() + "' -o '" + (dir / "x.mtlite") + "' --quantize int4").exit_code, 2);
  EXPECT_EQ(testing::RunCli("convert '" + dir.path() + "'").exit_code, 2);
  EXPECT_EQ(testing::RunCli("convert").exit_code, 2);
}

TEST(ConvertCli, WritesAReportAndALoadableFile) {
  testing::TempDir dir;
  testing::MakeTinyHf().Write(dir.path());
  const auto r = testing::RunCli("convert '" + dir.path() + "' -o '" + (dir / "m.mtlite") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("model.encoder.layers.0.fc1.weight"), std::string::npos);
  EXPECT_NE(r.output.find("rel_rms_err"), std::string::npos);
  EXPECT_NE(r.output.find("% of model.safetensors"), std::string::npos);
  auto m = Model::Load(dir / "m.mtlite", LoadOptions{true});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ((*m)->config().weight_type, WeightType::kInt8);  // the default
}

// ---- building blocks --------------------------------------------------------------------------

TEST(Quantize, PerRowSymmetricRoundHalfEven) {
  // Row 0: max 2 -> s = 2/127; row 1: all zero -> s = 1, q = 0; row 2: values on exact ties.
  const float s2 = 2.0f / 127.0f;
  std::vector<float> w = {2.0f, -2.0f, 1.0f, 0.5f * s2,  // 0.5 -> 0 (even)
                          0, 0, 0, 0,
                          1.5f, 2.5f, -2.5f, 127.0f};    // s = 1: 1.5 -> 2, 2.5 -> 2, -2.5 -> -2
  std::vector<uint8_t> packed;
  std::vector<float> scales;
  const converter::EncodeError err = converter::QuantizeInt8(w.data(), 3, 4, &packed, &scales);
  ASSERT_EQ(packed.size(), kernels::BlockedN8K4Bytes(3, 4));
  ASSERT_EQ(scales.size(), 3u);
  EXPECT_FLOAT_EQ(scales[0], s2);
  EXPECT_EQ(scales[1], 1.0f);
  EXPECT_EQ(scales[2], 1.0f);
  int8_t row[4];
  kernels::UnpackBlockedRow(reinterpret_cast<const int8_t*>(packed.data()), 3, 4, 0, row);
  EXPECT_EQ(std::vector<int>(row, row + 4), (std::vector<int>{127, -127, 64, 0}));
  kernels::UnpackBlockedRow(reinterpret_cast<const int8_t*>(packed.data()), 3, 4, 1, row);
  EXPECT_EQ(std::vector<int>(row, row + 4), (std::vector<int>{0, 0, 0, 0}));
  kernels::UnpackBlockedRow(reinterpret_cast<const int8_t*>(packed.data()), 3, 4, 2, row);
  EXPECT_EQ(std::vector<int>(row, row + 4), (std::vector<int>{2, 2, -2, 127}));
  EXPECT_NEAR(err.max_abs, 0.5, 1e-6);
  EXPECT_GT(err.rel_rms, 0);
}

TEST(Safetensors, ReadsF32F16Bf16AndValidatesOffsets) {
  std::map<std::string, testing::TestTensor> t;
  t["a"] = {{2, 2}, {1.0f, -2.0f, 0.5f, 3.0f}, "F32"};
  t["b"] = {{3}, {1.0f, -0.25f, 65504.0f}, "F16"};
  t["c"] = {{2}, {1.0f, -3.0f}, "BF16"};
  converter::Safetensors st;
  ASSERT_TRUE(converter::Safetensors::Parse(testing::SafetensorsBytes(t), "x.safetensors", &st).ok());
  std::vector<float> v;
  for (const auto& [name, tt] : t) {
    ASSERT_TRUE(st.ReadF32(name, &v).ok()) << name;
    EXPECT_EQ(v, tt.values) << name;
    EXPECT_EQ(st.Find(name)->shape, tt.shape);
  }
  const Status missing = st.ReadF32("zzz", &v);
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("zzz"), std::string::npos);

  // Overflowing offsets and shapes are rejected, not wrapped.
  const std::vector<std::string> bad = {
      R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[18446744073709551615,7]}})",
      R"({"x":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,0]}})",
      R"({"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})",
      R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[4]}})",
      R"({"x":{"dtype":"Q4","shape":[1],"data_offsets":[0,1]}})",
      R"({"x":{"shape":[1],"data_offsets":[0,4]}})",
      R"([1,2,3])",
  };
  for (const std::string& j : bad) {
    converter::Safetensors s;
    const Status status = converter::Safetensors::Parse(Header(j, j.size()) + std::string(16, '\0'), "bad", &s);
    EXPECT_FALSE(status.ok()) << j;
    EXPECT_NE(status.message().find("bad"), std::string::npos) << status.message();
  }
}

}  // namespace
}  // namespace mtlite

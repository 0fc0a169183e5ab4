// Converter -> file -> loader round trips: every tensor matches the checkpoint (exact for f32,
// f16 rounding for fp16, |w - q*s| <= s/2 for int8), tokenizer tables match libsentencepiece
// and vocab.json, `mtlite info --json` sums to the file size, and the int8 size target holds.
#include <gtest/gtest.h>
#include <sentencepiece_processor.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hf_convert.h"
#include "kernels.h"
#include "marian_layout.h"
#include "model_data.h"
#include "mtlite/mtlite.hpp"
#include "safetensors.h"
#include "model_test_helpers.h"

namespace mtlite {
namespace {

using converter::Safetensors;
using testing::DemoHfDir;
using testing::DemoModel;

using NamedWeight = std::pair<std::string, const detail::WeightView*>;
using NamedVector = std::pair<std::string, const detail::VectorView*>;

// The loader's views under their HF names (an independent statement of the naming contract).
void CollectViews(const detail::ModelData& md, std::vector<NamedWeight>* w, std::vector<NamedVector>* v) {
  const ModelConfig& c = md.config;
  if (c.shared_embeddings) {
    w->push_back({"model.shared.weight", &md.source_embed});
  } else {
    w->push_back({"model.encoder.embed_tokens.weight", &md.source_embed});
    w->push_back({"model.decoder.embed_tokens.weight", &md.target_embed});
  }
  if (!c.tied_output) w->push_back({"lm_head.weight", &md.output_proj});
  if (c.has_final_logits_bias) v->push_back({"final_logits_bias", &md.final_logits_bias});
  if (c.positions == PositionKind::kTable) {
    v->push_back({"model.encoder.embed_positions.weight", &md.encoder_positions});
    v->push_back({"model.decoder.embed_positions.weight", &md.decoder_positions});
  }
  auto attn = [&](const std::string& p, const detail::AttentionView& a) {
    w->push_back({p + ".q_proj.weight", &a.q});
    w->push_back({p + ".k_proj.weight", &a.k});
    w->push_back({p + ".v_proj.weight", &a.v});
    w->push_back({p + ".out_proj.weight", &a.o});
    v->push_back({p + ".q_proj.bias", &a.q_bias});
    v->push_back({p + ".k_proj.bias", &a.k_bias});
    v->push_back({p + ".v_proj.bias", &a.v_bias});
    v->push_back({p + ".out_proj.bias", &a.o_bias});
  };
  auto norm = [&](const std::string& p, const detail::LayerNormView& n) {
    v->push_back({p + ".weight", &n.gamma});
    v->push_back({p + ".bias", &n.beta});
  };
  auto ffn = [&](const std::string& p, const auto& l) {
    w->push_back({p + ".fc1.weight", &l.ffn.fc1});
    w->push_back({p + ".fc2.weight", &l.ffn.fc2});
    v->push_back({p + ".fc1.bias", &l.ffn.fc1_bias});
    v->push_back({p + ".fc2.bias", &l.ffn.fc2_bias});
    norm(p + ".final_layer_norm", l.ffn.ln);
  };
  for (size_t i = 0; i < md.encoder.size(); ++i) {
    const std::string p = "model.encoder.layers." + std::to_string(i);
    attn(p + ".self_attn", md.encoder[i].self_attn);
    norm(p + ".self_attn_layer_norm", md.encoder[i].self_attn.ln);
    ffn(p, md.encoder[i]);
  }
  for (size_t i = 0; i < md.decoder.size(); ++i) {
    const std::string p = "model.decoder.layers." + std::to_string(i);
    attn(p + ".self_attn", md.decoder[i].self_attn);
    norm(p + ".self_attn_layer_norm", md.decoder[i].self_attn.ln);
    attn(p + ".encoder_attn", md.decoder[i].cross_attn);
    norm(p + ".encoder_attn_layer_norm", md.decoder[i].cross_attn.ln);
    ffn(p, md.decoder[i]);
  }
}

// Number of mismatching elements (reports the first few).
int CompareWeight(const std::string& name, const detail::WeightView& w, const std::vector<float>& ref) {
  EXPECT_EQ(ref.size(), size_t(w.rows) * size_t(w.cols)) << name;
  if (ref.size() != size_t(w.rows) * size_t(w.cols)) return 1;
  int bad = 0;
  auto fail = [&](int r, int k, float got) {
    if (bad++ < 3) ADD_FAILURE() << name << "[" << r << "][" << k << "]: " << ref[size_t(r) * w.cols + k] << " -> " << got;
  };
  std::vector<int8_t> row(size_t(w.cols));
  for (int r = 0; r < w.rows; ++r) {
    const float* ref_row = ref.data() + size_t(r) * size_t(w.cols);
    if (w.dtype == WeightType::kInt8) {
      EXPECT_TRUE(w.blocked) << name;
      kernels::UnpackBlockedRow(static_cast<const int8_t*>(w.data), w.rows, w.cols, r, row.data());
      float max_abs = 0;
      for (int k = 0; k < w.cols; ++k) max_abs = std::max(max_abs, std::fabs(ref_row[k]));
      const float s = w.scales[r];
      if (max_abs == 0) {
        EXPECT_EQ(s, 1.0f) << name << " zero row " << r;
      } else {
        EXPECT_NEAR(s, max_abs / 127.0f, max_abs * 1e-6f) << name << " row " << r;
      }
      for (int k = 0; k < w.cols; ++k) {
        const float got = float(row[size_t(k)]) * s;
        if (row[size_t(k)] < -127 || std::fabs(ref_row[k] - got) > s * 0.5f * (1 + 1e-5f) + 1e-30f) fail(r, k, got);
      }
    } else if (w.dtype == WeightType::kF16) {
      const uint16_t* h = static_cast<const uint16_t*>(w.data) + size_t(r) * size_t(w.cols);
      for (int k = 0; k < w.cols; ++k) {
        const float got = layout::F16ToF32(h[k]);
        // binary16 round-to-nearest: relative error <= 2^-11, absolute <= 2^-25 below 2^-14.
        if (std::fabs(ref_row[k] - got) > std::max(std::fabs(ref_row[k]) * 0x1p-11f, 0x1p-25f)) fail(r, k, got);
      }
    } else {
      const float* f = static_cast<const float*>(w.data) + size_t(r) * size_t(w.cols);
      if (std::memcmp(f, ref_row, size_t(w.cols) * 4) != 0) fail(r, 0, f[0]);
    }
  }
  return bad;
}

// Every tensor of the loaded model against the checkpoint.
void ExpectMatchesCheckpoint(const Model& model, const Safetensors& st) {
  const detail::ModelData& md = model.data();
  std::vector<NamedWeight> weights;
  std::vector<NamedVector> vectors;
  CollectViews(md, &weights, &vectors);
  std::vector<float> ref;
  for (const auto& [name, w] : weights) {
    ASSERT_TRUE(st.ReadF32(name, &ref).ok()) << name;
    EXPECT_EQ(w->dtype, md.config.weight_type) << name;
    EXPECT_EQ(CompareWeight(name, *w, ref), 0) << name;
  }
  for (const auto& [name, v] : vectors) {
    ASSERT_TRUE(st.ReadF32(name, &ref).ok()) << name;
    ASSERT_EQ(size_t(v->size), ref.size()) << name;
    EXPECT_EQ(std::memcmp(v->data, ref.data(), ref.size() * 4), 0) << name;
  }
  if (md.config.positions != PositionKind::kTable) {
    EXPECT_EQ(md.encoder_positions.data, nullptr);
    const std::vector<float> sin = testing::Sinusoid(md.config.max_positions, md.config.d_model);
    for (const char* name : {"model.encoder.embed_positions.weight", "model.decoder.embed_positions.weight"}) {
      if (!st.Has(name)) continue;
      ASSERT_TRUE(st.ReadF32(name, &ref).ok());
      ASSERT_EQ(ref.size(), sin.size());
      float worst = 0;
      for (size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, std::fabs(ref[i] - sin[i]));
      EXPECT_LE(worst, 1e-5f) << name << " is not the sinusoid, but no table was stored";
    }
  }
  if (md.config.shared_embeddings) {
    EXPECT_EQ(md.target_embed.data, md.source_embed.data);
  }
  if (md.config.tied_output) {
    EXPECT_EQ(md.output_proj.data, md.target_embed.data);
  }
}

void ExpectTokenizerMatches(const detail::SpmView& spm, const detail::VocabView& vocab, const std::string& spm_bytes,
                            const nlohmann::json& vocab_json) {
  sentencepiece::SentencePieceProcessor sp;
  ASSERT_TRUE(sp.LoadFromSerializedProto(spm_bytes).ok());
  ASSERT_EQ(spm.num_pieces, sp.GetPieceSize());
  EXPECT_EQ(spm.unk_id, sp.unk_id());
  EXPECT_EQ(spm.eos_id, sp.eos_id());
  EXPECT_EQ(spm.bos_id, sp.bos_id());
  EXPECT_EQ(spm.pad_id, sp.pad_id());
  const int unk = vocab_json.contains(sp.IdToPiece(sp.unk_id())) ? vocab_json[sp.IdToPiece(sp.unk_id())].get<int>()
                                                                  : vocab_json["<unk>"].get<int>();
  for (int i = 0; i < spm.num_pieces; ++i) {
    const std::string piece = sp.IdToPiece(i);
    ASSERT_EQ(spm.pieces[size_t(i)], piece) << i;
    EXPECT_EQ(spm.scores[i], sp.GetScore(i)) << i;
    using K = detail::PieceKind;
    const K want = sp.IsUnknown(i) ? K::kUnknown : sp.IsControl(i) ? K::kControl : sp.IsUnused(i) ? K::kUnused
                   : sp.IsByte(i) ? K::kByte : spm.types[i] == K::kUserDefined ? K::kUserDefined : K::kNormal;
    EXPECT_EQ(int(spm.types[i]), int(want)) << i;
    EXPECT_EQ(spm.to_vocab[i], vocab_json.contains(piece) ? vocab_json[piece].get<int>() : unk) << piece;
    if (i > 0) {
      EXPECT_LT(spm.pieces[size_t(spm.sorted_pieces[i - 1])], spm.pieces[size_t(spm.sorted_pieces[i])]);
    }
  }
  ASSERT_EQ(vocab.id_to_piece.size(), vocab_json.size());
  for (const auto& [piece, id] : vocab_json.items()) EXPECT_EQ(vocab.id_to_piece[size_t(id.get<int>())], piece);
}

nlohmann::json ReadJson(const std::string& path) { return nlohmann::json::parse(testing::ReadText(path)); }

class DemoRoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(DemoRoundTrip, EveryTensorMatchesTheCheckpoint) {
  auto model = Model::Load(DemoModel(GetParam()), LoadOptions{true});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  Safetensors st;
  ASSERT_TRUE(Safetensors::Open(DemoHfDir() + "/model.safetensors", &st).ok());
  ExpectMatchesCheckpoint(**model, st);
  const WeightType want = std::string(GetParam()) == "int8"   ? WeightType::kInt8
                          : std::string(GetParam()) == "fp16" ? WeightType::kF16
                                                              : WeightType::kF32;
  EXPECT_EQ((*model)->config().weight_type, want);
}

TEST_P(DemoRoundTrip, TokenizerAndConfigMatchTheHfFiles) {
  auto model = Model::Load(DemoModel(GetParam()));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const detail::ModelData& md = (*model)->data();
  const nlohmann::json vocab = ReadJson(DemoHfDir() + "/vocab.json");
  const std::string spm = testing::ReadText(DemoHfDir() + "/source.spm");
  ExpectTokenizerMatches(md.source_spm, md.source_vocab, spm, vocab);
  // target.spm == source.spm and one vocab: the target side is the source side.
  EXPECT_EQ(md.target_spm.scores, md.source_spm.scores);
  EXPECT_EQ(md.target_vocab.id_to_piece, md.source_vocab.id_to_piece);
  EXPECT_GT(md.source_spm.charsmap_size, 0u);  // nmt_nfkc

  const nlohmann::json cfg = ReadJson(DemoHfDir() + "/config.json");
  const ModelConfig& c = md.config;
  EXPECT_EQ(c.d_model, cfg["d_model"].get<int>());
  EXPECT_EQ(c.encoder_layers, cfg["encoder_layers"].get<int>());
  EXPECT_EQ(c.decoder_layers, cfg["decoder_layers"].get<int>());
  EXPECT_EQ(c.encoder_heads, cfg["encoder_attention_heads"].get<int>());
  EXPECT_EQ(c.decoder_ffn_dim, cfg["decoder_ffn_dim"].get<int>());
  EXPECT_EQ(c.activation, ActivationKind::kSiLU);
  EXPECT_EQ(c.embed_scale, 16.0f);
  EXPECT_EQ(c.positions, PositionKind::kSinusoidMarian);
  EXPECT_EQ(c.max_positions, 256);
  EXPECT_TRUE(c.shared_embeddings);
  EXPECT_TRUE(c.tied_output);
  EXPECT_TRUE(c.has_final_logits_bias);
  EXPECT_EQ(c.source_vocab_size, 8001);
  EXPECT_EQ(c.target_vocab_size, 8001);
  EXPECT_EQ(c.pad_id, 8000);
  EXPECT_EQ(c.eos_id, 0);
  EXPECT_EQ(c.unk_id, 1);
  EXPECT_EQ(c.decoder_start_id, 8000);
  EXPECT_EQ(c.bad_word_ids, std::vector<int>{8000});
  EXPECT_EQ(c.default_beam, 4);
  EXPECT_EQ(c.default_max_length, 256);
  EXPECT_EQ(c.source_lang, "en");
  EXPECT_EQ(c.target_lang, "de");
}

TEST_P(DemoRoundTrip, InfoJsonComponentsSumToTheFileSize) {
  const std::string path = DemoModel(GetParam());
  const auto r = testing::RunCli("info '" + path + "' --json --verify");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  const uint64_t file_size = testing::ReadText(path).size();
  EXPECT_EQ(j["file_size"].get<uint64_t>(), file_size);
  EXPECT_EQ(j["checksums"], "ok");
  uint64_t sum = 0;
  std::vector<std::string> names;
  for (const auto& c : j["components"]) {
    sum += c["bytes"].get<uint64_t>();
    names.push_back(c["name"]);
  }
  EXPECT_EQ(sum, file_size);
  for (const char* want : {"embeddings/output", "encoder.layer.0", "encoder.layer.5", "decoder.layer.1.self_attn",
                           "decoder.layer.1.cross_attn", "decoder.layer.1.ffn", "tokenizer",
                           "flatbuffer structure/config/metadata", "padding (64-byte alignment)"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
  EXPECT_EQ(j["config"]["d_model"], 256);
  EXPECT_EQ(j["metadata"]["quantization"], GetParam());
  // The human-readable table ends with the same total.
  const auto table = testing::RunCli("info '" + path + "'");
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("total"), std::string::npos);
  EXPECT_NE(table.output.find(std::to_string(file_size)), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Modes, DemoRoundTrip, ::testing::Values("int8", "fp16", "fp32"));

TEST(DemoSize, Int8FileIsAtMost27PercentOfTheSafetensors) {
  const double st = double(testing::ReadText(DemoHfDir() + "/model.safetensors").size());
  const double int8 = double(testing::ReadText(DemoModel("int8")).size());
  const double fp16 = double(testing::ReadText(DemoModel("fp16")).size());
  const double fp32 = double(testing::ReadText(DemoModel("fp32")).size());
  std::printf("sizes: int8 %.0f (%.2f%%), fp16 %.0f (%.2f%%), fp32 %.0f (%.2f%%) of %.0f\n", int8, 100 * int8 / st, fp16,
              100 * fp16 / st, fp32, 100 * fp32 / st, st);
  EXPECT_LE(int8, 0.27 * st);
  EXPECT_LE(fp16, 0.52 * st);
  EXPECT_LE(fp32, 1.01 * st);
}

// ---- tiny random checkpoints: the other layouts ---------------------------------------------

struct Converted {
  converter::AlignedBytes bytes;
  std::shared_ptr<const Model> model;
  Safetensors st;
};

Converted ConvertTiny(const testing::TinyHf& hf, converter::Quantization q, const testing::TempDir& dir) {
  hf.Write(dir.path());
  Converted c;
  converter::ConversionReport report;
  const Status s = converter::ConvertToBytes(dir.path(), q, &c.bytes, &report);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) return c;
  auto m = Model::FromBuffer(c.bytes.data(), c.bytes.size(), LoadOptions{true});
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (m.ok()) c.model = *m;
  EXPECT_TRUE(Safetensors::Open(dir / "model.safetensors", &c.st).ok());
  return c;
}

class TinyRoundTrip : public ::testing::TestWithParam<converter::Quantization> {};

TEST_P(TinyRoundTrip, HalfPrecisionCheckpoints) {
  for (const char* dtype : {"F16", "BF16"}) {
    testing::TinyOptions o;
    o.dtype = dtype;
    testing::TempDir dir;
    Converted c = ConvertTiny(testing::MakeTinyHf(o), GetParam(), dir);
    ASSERT_TRUE(c.model) << dtype;
    ExpectMatchesCheckpoint(*c.model, c.st);
  }
}

TEST_P(TinyRoundTrip, SeparateEmbeddingsUntiedOutputLearnedPositions) {
  const testing::TinyOptions o = testing::UncommonTinyOptions();
  testing::TempDir dir;
  Converted c = ConvertTiny(testing::MakeTinyHf(o), GetParam(), dir);
  ASSERT_TRUE(c.model);
  const detail::ModelData& md = c.model->data();
  EXPECT_FALSE(md.config.shared_embeddings);
  EXPECT_FALSE(md.config.tied_output);
  EXPECT_EQ(md.config.positions, PositionKind::kTable);
  EXPECT_NE(md.source_embed.data, md.target_embed.data);
  EXPECT_NE(md.output_proj.data, md.target_embed.data);
  ExpectMatchesCheckpoint(*c.model, c.st);
}

TEST_P(TinyRoundTrip, SeparateTargetVocabularyIsStoredAndMapped) {
  testing::TinyHf hf = testing::MakeTinyHf();
  // Target vocab: the same pieces with ids reversed (pad stays last).
  nlohmann::json target = nlohmann::json::object();
  const int V = int(hf.vocab.size());
  for (const auto& [piece, id] : hf.vocab.items()) target[piece] = id.get<int>() == V - 1 ? V - 1 : V - 2 - id.get<int>();
  hf.tokenizer_config["separate_vocabs"] = true;
  testing::TempDir dir;
  testing::WriteText(dir / "target_vocab.json", target.dump());
  Converted c = ConvertTiny(hf, GetParam(), dir);
  ASSERT_TRUE(c.model);
  const detail::ModelData& md = c.model->data();
  ExpectTokenizerMatches(md.source_spm, md.source_vocab, hf.source_spm, hf.vocab);
  ExpectTokenizerMatches(md.target_spm, md.target_vocab, hf.target_spm, target);
  EXPECT_NE(md.target_spm.to_vocab, md.source_spm.to_vocab);
}

TEST_P(TinyRoundTrip, ConversionIsDeterministic) {
  testing::TempDir a, b;
  Converted x = ConvertTiny(testing::MakeTinyHf(), GetParam(), a);
  Converted y = ConvertTiny(testing::MakeTinyHf(), GetParam(), b);
  ASSERT_TRUE(x.model && y.model);
  EXPECT_TRUE(x.bytes == y.bytes);
  // Every buffer (and the data segment) is 64-byte aligned.
  for (const auto& check : x.model->data().checks) {
    EXPECT_EQ((check.data - x.bytes.data()) % 64, 0) << check.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, TinyRoundTrip,
                         ::testing::Values(converter::Quantization::kInt8, converter::Quantization::kFp16,
                                           converter::Quantization::kFp32),
                         [](const auto& info) { return std::string(converter::QuantizationName(info.param)); });

}  // namespace
}  // namespace mtlite

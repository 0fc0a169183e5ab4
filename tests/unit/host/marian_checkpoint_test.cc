// Marian's own checkpoints (converter/marian_checkpoint.*): the .npz and .bin containers, the
// special:model.yml options, the tying layouts and the mapping to HF names. The files under
// tests/data/marian were written by tests/reference/make_marian_testdata.py (numpy's zip writer,
// the exporter's binary writer) from the random HF checkpoint in tests/data/marian/hf, which is
// the oracle of the values here.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "marian_checkpoint.h"
#include "model_test_helpers.h"
#include "safetensors.h"

namespace mtlite {
namespace {

using converter::HfTensor;
using converter::MarianCheckpoint;
using converter::MarianTensor;
using converter::MarianTying;
using converter::MarianYaml;
using testing::ReadText;

std::string DataPath(const std::string& name) { return std::string(MTLITE_SOURCE_DIR) + "/tests/data/marian/" + name; }

MarianCheckpoint Read(const std::string& name) {
  MarianCheckpoint c;
  Status s = converter::ReadMarianCheckpoint(DataPath(name), &c);
  EXPECT_TRUE(s.ok()) << name << ": " << s.ToString();
  return c;
}

Status ParseBytes(const std::string& bytes, MarianCheckpoint* c) {
  return converter::ParseMarianCheckpoint(bytes, "test.bin", c);
}

// ---- a Marian binary writer (test side) -------------------------------------------------------
void PutU64(uint64_t v, std::string* out) {
  for (int i = 0; i < 8; ++i) out->push_back(char(uint8_t(v >> (8 * i))));
}
struct Item {
  std::string name;
  uint64_t type;
  std::vector<int32_t> shape;
  std::string data;
};
std::string WriteBin(const std::vector<Item>& items) {
  std::string out;
  PutU64(1, &out);
  PutU64(items.size(), &out);
  for (const Item& it : items) {
    PutU64(it.name.size() + 1, &out);
    PutU64(it.type, &out);
    PutU64(it.shape.size(), &out);
    PutU64(it.data.size(), &out);
  }
  for (const Item& it : items) out += it.name + '\0';
  for (const Item& it : items) out.append(reinterpret_cast<const char*>(it.shape.data()), 4 * it.shape.size());
  const size_t pad = (out.size() + 8 + 255) / 256 * 256 - out.size() - 8;
  PutU64(pad, &out);
  out.append(pad, '\0');
  for (const Item& it : items) out += it.data;
  return out;
}
// `c`'s float tensors with `yaml` as special:model.yml; `drop` is left out, `extra` added.
std::string Rewrite(const MarianCheckpoint& c, const std::string& yaml, const std::string& drop = "",
                    const std::vector<Item>& extra = {}) {
  std::vector<Item> items = {{"special:model.yml", 0x0101, {int32_t(yaml.size() + 1)}, yaml + '\0'}};
  for (const auto& kv : c.tensors) {
    if (kv.first == drop) continue;
    Item it{kv.first, 0x0404, {}, std::string(kv.second.values.size() * 4, '\0')};
    for (int64_t d : kv.second.shape) it.shape.push_back(int32_t(d));
    std::memcpy(&it.data[0], kv.second.values.data(), it.data.size());
    items.push_back(std::move(it));
  }
  items.insert(items.end(), extra.begin(), extra.end());
  return WriteBin(items);
}
std::string ReplaceLine(std::string yaml, const std::string& key, const std::string& line) {
  const size_t at = yaml.find("\n" + key + ":");
  EXPECT_NE(at, std::string::npos) << key;
  size_t end = yaml.find('\n', at + 1);
  while (end + 1 < yaml.size() && yaml[end + 1] == ' ') end = yaml.find('\n', end + 1);  // its list lines
  return yaml.replace(at + 1, end - at - 1, line);
}

// ---- reading what the exporter wrote ---------------------------------------------------------

TEST(MarianCheckpoint, NpzAndBinHoldTheSameTensorsAndOptions) {
  MarianCheckpoint npz = Read("all.npz"), bin = Read("all.bin");
  ASSERT_FALSE(npz.tensors.empty());
  EXPECT_EQ(npz.yaml_text, bin.yaml_text);
  ASSERT_EQ(npz.tensors.size(), bin.tensors.size());
  for (const auto& kv : npz.tensors) {
    ASSERT_TRUE(bin.tensors.count(kv.first)) << kv.first;
    EXPECT_EQ(kv.second.shape, bin.tensors.at(kv.first).shape) << kv.first;
    EXPECT_EQ(kv.second.values, bin.tensors.at(kv.first).values) << kv.first;
    EXPECT_EQ(kv.second.quant_mult, 0.f);
  }
  const converter::MarianOptions& o = npz.options;
  EXPECT_EQ(o.dim_emb, 8);
  EXPECT_EQ(o.enc_depth, 1);
  EXPECT_EQ(o.dec_depth, 1);
  EXPECT_EQ(o.heads, 2);
  EXPECT_EQ(o.dim_ffn, 16);
  EXPECT_EQ(o.src_vocab, 11);  // the HF <pad> row is not exported
  EXPECT_EQ(o.tgt_vocab, 11);
  EXPECT_EQ(o.activation, "swish");
  EXPECT_EQ(o.tying, MarianTying::kAll);
  EXPECT_EQ(npz.tensors.at("encoder_l1_ffn_W1").shape, (std::vector<int64_t>{8, 16}));  // [in, out]
  EXPECT_EQ(npz.tensors.at("decoder_ff_logit_out_b").shape, (std::vector<int64_t>{1, 11}));
}

// The HF tensors of every layout equal the HF checkpoint the files were exported from (minus
// the <pad> row / column).
TEST(MarianCheckpoint, EveryTyingLayoutMapsBackToTheHfCheckpoint) {
  converter::Safetensors hf;
  ASSERT_TRUE(converter::Safetensors::Open(DataPath("hf/model.safetensors"), &hf).ok());
  const std::map<std::string, MarianTying> layouts = {
      {"all.npz", MarianTying::kAll}, {"all.bin", MarianTying::kAll},
      {"tied.bin", MarianTying::kTied}, {"untied.npz", MarianTying::kUntied}};
  for (const auto& layout : layouts) {
    SCOPED_TRACE(layout.first);
    MarianCheckpoint c = Read(layout.first);
    EXPECT_EQ(c.options.tying, layout.second);
    std::map<std::string, HfTensor> got;
    ASSERT_TRUE(converter::MarianToHfTensors(c, &got).ok());
    std::vector<float> shared;
    ASSERT_TRUE(hf.ReadF32("model.shared.weight", &shared).ok());
    shared.resize(11 * 8);  // drop <pad> (id 11, the last row)
    size_t checked = 0;
    for (const auto& kv : got) {
      std::vector<float> want;
      if (kv.first == "final_logits_bias") {
        ASSERT_TRUE(hf.ReadF32(kv.first, &want).ok());
        want.resize(11);
        EXPECT_EQ(kv.second.shape, (std::vector<int64_t>{1, 11}));
      } else if (kv.first.find("embed_tokens") != std::string::npos || kv.first == "model.shared.weight" ||
                 kv.first == "lm_head.weight") {
        want = shared;
        EXPECT_EQ(kv.second.shape, (std::vector<int64_t>{11, 8}));
      } else {
        ASSERT_TRUE(hf.Has(kv.first)) << kv.first;
        ASSERT_TRUE(hf.ReadF32(kv.first, &want).ok());
        std::vector<int64_t> shape = hf.Find(kv.first)->shape;
        EXPECT_EQ(kv.second.shape, shape) << kv.first;
      }
      EXPECT_EQ(kv.second.values, want) << kv.first;
      ++checked;
    }
    const size_t per_layout = layout.second == MarianTying::kAll ? 1 : layout.second == MarianTying::kTied ? 2 : 3;
    EXPECT_EQ(checked, 16 + 26 + 1 + per_layout);  // encoder + decoder layer, bias, tables
    EXPECT_EQ(got.count("lm_head.weight"), layout.second == MarianTying::kUntied ? 1u : 0u);
  }
}

// intgemm8 items: int8 of the transposed matrix and a multiplier; dequantized to within half a
// step of the float32 model, and exactly to round(w * mult) / mult (so the transposition is right).
TEST(MarianCheckpoint, Intgemm8ItemsAreDequantized) {
  MarianCheckpoint f = Read("all.bin"), q = Read("all.int8.bin");
  int quantized = 0;
  for (const auto& kv : q.tensors) {
    const MarianTensor& fl = f.tensors.at(kv.first);
    ASSERT_EQ(kv.second.shape, fl.shape);
    if (kv.second.quant_mult == 0) {
      EXPECT_EQ(kv.second.values, fl.values) << kv.first;
      continue;
    }
    ++quantized;
    const float m = kv.second.quant_mult;
    for (size_t i = 0; i < fl.values.size(); ++i) {
      EXPECT_EQ(kv.second.values[i], float(std::nearbyint(fl.values[i] * m)) / m) << kv.first << " " << i;
    }
  }
  EXPECT_EQ(quantized, 4 + 2 + 8 + 2);  // attention and FFN weights; not Wemb
  EXPECT_EQ(q.tensors.at("Wemb").quant_mult, 0.f);
}

// ---- the YAML subset ------------------------------------------------------------------------

TEST(MarianYaml, ParsesMariansFlatConfig) {
  MarianYaml y;
  const std::string text =
      "# a comment\n---\ntype: transformer\ndim-vocabs:\n  - 32000\n  - 32001   # trailing\n"
      "empty: \"\"\nquoted: 'it''s # not a comment'\ndq: \"a\\\"b: c\"\nflow: [1, \"x, y\", z]\n"
      "none: []\nbare:\nurl: http://x/y#z\r\nmarian-empty:\n  []\nbert-class-symbol: \"[CLS]\"\n";
  ASSERT_TRUE(converter::ParseMarianYaml(text, "t", &y).ok());
  EXPECT_EQ(y.at("type").scalar, "transformer");
  EXPECT_EQ(y.at("dim-vocabs").list, (std::vector<std::string>{"32000", "32001"}));
  EXPECT_EQ(y.at("empty").scalar, "");
  EXPECT_EQ(y.at("quoted").scalar, "it's # not a comment");
  EXPECT_EQ(y.at("dq").scalar, "a\"b: c");
  EXPECT_EQ(y.at("flow").list, (std::vector<std::string>{"1", "x, y", "z"}));
  EXPECT_TRUE(y.at("none").is_list && y.at("none").list.empty());
  EXPECT_TRUE(y.at("bare").is_list && y.at("bare").list.empty());
  EXPECT_EQ(y.at("url").scalar, "http://x/y#z");
  EXPECT_TRUE(y.at("marian-empty").is_list && y.at("marian-empty").list.empty());
  EXPECT_EQ(y.at("bert-class-symbol").scalar, "[CLS]");
}

TEST(MarianYaml, RejectsWhatItDoesNotReadWithTheLine) {
  const std::pair<const char*, const char*> bad[] = {
      {"a: 1\n  b: 2\n", "line 2: indented mapping"},
      {"a:\n  - 1\n  []\n", "line 3: indented mapping"},
      {"a: \"open\n", "line 1: unterminated quoted string"},
      {"a: 1\na: 2\n", "line 2: duplicate key 'a'"},
      {"- x\n", "line 1: list item without a key"},
      {"a: 1\n- x\n", "line 2: list item under 'a'"},
      {"a: {b: 1}\n", "line 1: unsupported YAML value"},
      {"a: [1, [2]]\n", "line 1: nested flow collections"},
      {"just text\n", "line 1: expected 'key: value'"},
      {"a: \"x\" y\n", "line 1: text after the closing quote"},
      {"a: |\n", "line 1: unsupported YAML value"},
  };
  for (const auto& b : bad) {
    MarianYaml y;
    Status s = converter::ParseMarianYaml(b.first, "special:model.yml", &y);
    ASSERT_FALSE(s.ok()) << b.first;
    EXPECT_NE(s.message().find(std::string("special:model.yml ") + b.second), std::string::npos) << s.message();
  }
}

// The exporter's vocab.yml (JSON-quoted pieces) gives vocab.json's pieces in id order.
TEST(MarianYaml, VocabularyPiecesInIdOrder) {
  std::vector<std::string> pieces;
  ASSERT_TRUE(converter::ParseMarianYamlVocab(ReadText(DataPath("vocab.yml")), "vocab.yml", &pieces).ok());
  const nlohmann::json hf = nlohmann::json::parse(ReadText(DataPath("hf/vocab.json")));
  ASSERT_EQ(pieces.size(), hf.size() - 1);  // without <pad>
  for (const auto& kv : hf.items()) {
    if (kv.key() != "<pad>") {
      EXPECT_EQ(pieces.at(kv.value().get<size_t>()), kv.key());
    }
  }
  ASSERT_TRUE(converter::ParseMarianYamlVocab(
                  "\"\\u2581x\": 2\n'it''s': 1\n\"\\x41\\U0001F600\\\\\": 0  # c\nplain: 3\n", "v", &pieces)
                  .ok());
  EXPECT_EQ(pieces, (std::vector<std::string>{"A\xF0\x9F\x98\x80\\", "it's", "\xE2\x96\x81x", "plain"}));
  const std::pair<const char*, const char*> bad[] = {
      {"a: 0\nb: 0\n", "v line 2: id 0 given twice"},
      {"a: 0\nb: 2\n", "v: no piece has id 1"},
      {"a: x\n", "v line 1: id 'x' is not an integer"},
      {"a 0\n", "v line 1: expected 'piece: id'"},
      {"\"a: 0\n", "v line 1: unterminated quoted string"},
      {"\"\\ud800\": 0\n", "v line 1: escape outside Unicode"},
      {"", "v: empty vocabulary"},
  };
  for (const auto& b : bad) {
    Status s = converter::ParseMarianYamlVocab(b.first, "v", &pieces);
    ASSERT_FALSE(s.ok()) << b.first;
    EXPECT_NE(s.message().find(b.second), std::string::npos) << s.message();
  }
}

// ---- options mtlite does not implement are refused by name ----------------------------------

TEST(MarianCheckpoint, UnsupportedOptionsAreNamed) {
  MarianCheckpoint base = Read("all.bin");
  const std::string yaml = base.yaml_text;
  MarianCheckpoint c;
  ASSERT_TRUE(ParseBytes(Rewrite(base, yaml), &c).ok());  // the writer round-trips
  const std::pair<std::string, std::string> cases[] = {
      {"type: s2s", "unsupported option type: s2s"},
      {"transformer-preprocess: n", "unsupported option transformer-preprocess: n"},
      {"transformer-postprocess: da", "unsupported option transformer-postprocess: da"},
      {"transformer-postprocess-emb: dn", "unsupported option transformer-postprocess-emb: dn"},
      {"transformer-decoder-autoreg: average-attention", "unsupported option transformer-decoder-autoreg: average-attention"},
      {"transformer-decoder-autoreg: rnn", "unsupported option dec-cell: gru"},  // Marian's default cell
      {"transformer-ffn-activation: gelu", "unsupported option transformer-ffn-activation: gelu"},
      {"transformer-ffn-depth: 3", "unsupported option transformer-ffn-depth: 3"},
      {"transformer-train-position-embeddings: true", "transformer-train-position-embeddings: true"},
      {"transformer-tied-layers: [1, 1]", "unsupported option transformer-tied-layers: [1, ...]"},
      {"lemma-dim-emb: 8", "unsupported option lemma-dim-emb: 8"},
      {"right-left: true", "unsupported option right-left: true"},
      {"transformer-heads: 3", "transformer-heads: 3 does not divide dim-emb 8"},
      {"dim-emb: x", "dim-emb: 'x' is not an integer"},
      {"tied-embeddings-all: maybe", "tied-embeddings-all: 'maybe' is not a boolean"},
  };
  for (const auto& k : cases) {
    const std::string key = k.first.substr(0, k.first.find(':'));
    Status s = ParseBytes(Rewrite(base, ReplaceLine(yaml, key, k.first)), &c);
    ASSERT_FALSE(s.ok()) << k.first;
    EXPECT_NE(s.message().find(k.second), std::string::npos) << s.message();
  }
  Status s = ParseBytes(Rewrite(base, yaml + "factors-dim-emb: 4\n"), &c);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("factors-dim-emb: 4"), std::string::npos) << s.message();
  s = ParseBytes(Rewrite(base, ReplaceLine(yaml, "enc-depth", "enc-dpth: 1")), &c);
  EXPECT_NE(s.message().find("enc-depth: missing"), std::string::npos) << s.message();
  s = ParseBytes(Rewrite(base, ReplaceLine(yaml, "dim-vocabs", "dim-vocabs: [11]")), &c);
  EXPECT_NE(s.message().find("dim-vocabs: expected a list of two sizes"), std::string::npos) << s.message();
}

TEST(MarianCheckpoint, TensorsMustMatchTheOptions) {
  MarianCheckpoint base = Read("all.bin");
  MarianCheckpoint c;
  Status s = ParseBytes(Rewrite(base, base.yaml_text, "decoder_l1_context_bk"), &c);
  EXPECT_NE(s.message().find("missing tensor decoder_l1_context_bk [1, 8]"), std::string::npos) << s.message();
  s = ParseBytes(Rewrite(base, ReplaceLine(base.yaml_text, "transformer-dim-ffn", "transformer-dim-ffn: 32")), &c);
  EXPECT_NE(s.message().find("encoder_l1_ffn_W1: shape [8, 16], expected [8, 32]"), std::string::npos) << s.message();
  s = ParseBytes(Rewrite(base, base.yaml_text + "transformer-decoder-dim-ffn: 24\n"), &c);
  EXPECT_NE(s.message().find("decoder_l1_ffn_W1: shape [8, 16], expected [8, 24]"), std::string::npos) << s.message();
  ASSERT_TRUE(ParseBytes(Rewrite(base, base.yaml_text + "transformer-decoder-dim-ffn: 0\n"), &c).ok());
  EXPECT_EQ(c.options.dec_dim_ffn, 16);
  // tied-embeddings without -all: encoder_Wemb / decoder_Wemb expected, and Wemb is unused
  std::string tied = ReplaceLine(ReplaceLine(base.yaml_text, "tied-embeddings-all", "tied-embeddings-all: false"),
                                 "tied-embeddings", "tied-embeddings: true");
  s = ParseBytes(Rewrite(base, tied), &c);
  EXPECT_NE(s.message().find("missing tensor encoder_Wemb [11, 8] (tied-embeddings)"), std::string::npos) << s.message();
  s = ParseBytes(Rewrite(base, base.yaml_text, "", {{"decoder_l1_rnn_W", 0x0404, {1, 1}, std::string(4, '\0')}}), &c);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("does not use: decoder_l1_rnn_W"), std::string::npos) << s.message();
  s = ParseBytes(Rewrite(base, base.yaml_text, "", {{"encoder_l1_self_Wq_QuantMultA", 0x0404, {1, 1}, std::string(4, '\0')}}), &c);
  EXPECT_TRUE(s.ok()) << s.ToString();  // precomputed activation scales are ignored
}

// Activation multipliers of Marian's int8shiftAlphaAll (`<weight>_QuantMultA`) as Marian's tools
// write them: float32 [1] (browsermt's extract_stats.py), padded to 256 bytes, and an intgemm8
// scalar (marian-conv --gemm-type intgemm8 quantizes every item whose name holds "Wemb": one int8
// 127 and its multiplier). They are skipped, not read as weights.
TEST(MarianCheckpoint, ActivationMultipliersAreSkipped) {
  MarianCheckpoint base = Read("all.bin");
  std::string f32(256, '\0'), i8(256, '\0');
  const float alpha = 25.5f, mult = 127.0f / 25.5f;
  std::memcpy(&f32[0], &alpha, 4);
  i8[0] = char(127);
  std::memcpy(&i8[1], &mult, 4);
  MarianCheckpoint c;
  Status s = ParseBytes(Rewrite(base, base.yaml_text, "", {{"encoder_l1_self_Wq_QuantMultA", 0x0404, {1}, f32},
                                                          {"none_QuantMultA", 0x0404, {1}, f32},
                                                          {"Wemb_QuantMultA", 0x4101, {1}, i8}}), &c);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(c.tensors.size(), base.tensors.size());
  for (const auto& kv : c.tensors) EXPECT_EQ(kv.first.find("QuantMultA"), std::string::npos) << kv.first;
  // an alpha does not stand in for a missing tensor
  s = ParseBytes(Rewrite(base, base.yaml_text, "decoder_l1_context_bk", {{"decoder_l1_context_bk_QuantMultA", 0x0404, {1}, f32}}), &c);
  EXPECT_NE(s.message().find("missing tensor decoder_l1_context_bk"), std::string::npos) << s.message();
}

// ---- SSRU decoder layers (transformer-decoder-autoreg: rnn, dec-cell: ssru) -------------------

// `base` with its decoder self-attention replaced by SSRU tensors of distinct values.
std::string SsruRewrite(const MarianCheckpoint& base, const std::string& yaml, bool with_bf = true) {
  MarianCheckpoint c = base;
  for (auto it = c.tensors.begin(); it != c.tensors.end();) {
    if (it->first.rfind("decoder_l1_self", 0) == 0) it = c.tensors.erase(it);
    else ++it;
  }
  const int64_t d = base.options.dim_emb;
  auto put = [&](const std::string& name, std::vector<int64_t> shape, float offset) {
    MarianTensor& t = c.tensors[name];
    t.shape = shape;
    t.values.resize(size_t(shape[0] * shape[1]));
    for (size_t i = 0; i < t.values.size(); ++i) t.values[i] = offset + 0.01f * float(i);
  };
  put("decoder_l1_rnn_W", {d, d}, 1);
  put("decoder_l1_rnn_Wf", {d, d}, 2);
  if (with_bf) put("decoder_l1_rnn_bf", {1, d}, 3);
  put("decoder_l1_rnn_ffn_ln_scale", {1, d}, 4);
  put("decoder_l1_rnn_ffn_ln_bias", {1, d}, 5);
  return Rewrite(c, yaml);
}

TEST(MarianCheckpoint, SsruDecoderLayersAreReadAndMapped) {
  MarianCheckpoint base = Read("all.bin");
  const std::string rnn = ReplaceLine(base.yaml_text, "transformer-decoder-autoreg", "transformer-decoder-autoreg: rnn");
  const std::string yaml = rnn + "dec-cell: ssru\n";
  MarianCheckpoint c;
  Status s = ParseBytes(SsruRewrite(base, yaml), &c);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(c.options.decoder_ssru);
  EXPECT_FALSE(base.options.decoder_ssru);
  std::map<std::string, HfTensor> hf;
  ASSERT_TRUE(converter::MarianToHfTensors(c, &hf).ok());
  EXPECT_EQ(hf.count("model.decoder.layers.0.self_attn.q_proj.weight"), 0u);
  const int d = 8;
  const HfTensor& w = hf.at("model.decoder.layers.0.ssru.in_proj.weight");  // [out, in] = W^T
  ASSERT_EQ(w.shape, (std::vector<int64_t>{d, d}));
  const MarianTensor& mw = c.tensors.at("decoder_l1_rnn_W");  // [in, out]
  for (int o = 0; o < d; ++o)
    for (int i = 0; i < d; ++i) EXPECT_EQ(w.values[size_t(o) * d + i], mw.values[size_t(i) * d + o]);
  const HfTensor& wf = hf.at("model.decoder.layers.0.ssru.forget_proj.weight");
  EXPECT_EQ(wf.values[1], c.tensors.at("decoder_l1_rnn_Wf").values[d]);
  EXPECT_EQ(hf.at("model.decoder.layers.0.ssru.forget_proj.bias").shape, (std::vector<int64_t>{d}));
  EXPECT_EQ(hf.at("model.decoder.layers.0.ssru.forget_proj.bias").values, c.tensors.at("decoder_l1_rnn_bf").values);
  EXPECT_EQ(hf.at("model.decoder.layers.0.ssru_layer_norm.weight").values,
            c.tensors.at("decoder_l1_rnn_ffn_ln_scale").values);
  EXPECT_EQ(hf.at("model.decoder.layers.0.ssru_layer_norm.bias").values,
            c.tensors.at("decoder_l1_rnn_ffn_ln_bias").values);
  // cross-attention and FFN stay
  EXPECT_EQ(hf.count("model.decoder.layers.0.encoder_attn.q_proj.weight"), 1u);

  // a missing SSRU tensor, other cells, the cell's own layer norms, self-attention tensors left
  s = ParseBytes(SsruRewrite(base, yaml, /*with_bf=*/false), &c);
  EXPECT_NE(s.message().find("missing tensor decoder_l1_rnn_bf [1, 8]"), std::string::npos) << s.message();
  s = ParseBytes(SsruRewrite(base, rnn + "dec-cell: lstm\n"), &c);
  EXPECT_NE(s.message().find("unsupported option dec-cell: lstm"), std::string::npos) << s.message();
  s = ParseBytes(SsruRewrite(base, yaml + "layer-normalization: true\n"), &c);
  EXPECT_NE(s.message().find("unsupported option layer-normalization: true"), std::string::npos) << s.message();
  s = ParseBytes(Rewrite(base, yaml), &c);
  EXPECT_NE(s.message().find("missing tensor decoder_l1_rnn_W [8, 8]"), std::string::npos) << s.message();
}

// ---- damaged containers -----------------------------------------------------------------------

TEST(MarianCheckpoint, ContainerDamageIsAnError) {
  MarianCheckpoint base = Read("all.bin");
  const std::string yaml = base.yaml_text;
  MarianCheckpoint c;
  auto expect = [&](const std::string& bytes, StatusCode code, const std::string& text) {
    Status s = ParseBytes(bytes, &c);
    EXPECT_EQ(s.code(), code) << s.ToString();
    EXPECT_NE(s.message().find(text), std::string::npos) << s.message();
  };
  std::string half = Rewrite(base, yaml, "", {{"x_W", 0x0402, {2}, std::string(4, '\0')}});
  expect(half, StatusCode::kUnsupported, "x_W: item type 0x402");
  std::string bin = Rewrite(base, yaml);
  bin[0] = 2;
  expect(bin, StatusCode::kInvalidModel, "neither a numpy .npz archive nor a Marian binary");
  expect(WriteBin({{"Wemb", 0x0404, {1, 1}, std::string(4, '\0')}}), StatusCode::kInvalidModel, "no special:model.yml");
  expect(WriteBin({{"special:model.yml", 0x0101, {4}, "a: 1"}, {"W", 0x0404, {4, 4}, std::string(60, '\0')}}),
         StatusCode::kInvalidModel, "W: 60 data bytes for 16 float32 values");
  expect(WriteBin({{"special:model.yml", 0x0101, {4}, "a: 1"}, {"W", 0x4101, {4, 4}, std::string(19, '\0')}}),
         StatusCode::kInvalidModel, "W: 19 data bytes for 16 int8 values");
  expect(WriteBin({{"special:model.yml", 0x0101, {4}, "a: 1"}, {"W", 0x4101, {2, 2}, std::string(8, '\0')}}),
         StatusCode::kInvalidModel, "W: intgemm8 multiplier 0");
  std::string nan = std::string(4, '\0');
  const float qnan = std::nanf("");
  std::memcpy(&nan[0], &qnan, 4);
  expect(WriteBin({{"special:model.yml", 0x0101, {4}, "a: 1"}, {"W", 0x0404, {1}, nan}}), StatusCode::kInvalidModel,
         "W: non-finite value");

  std::string npz = ReadText(DataPath("all.npz"));
  const size_t cd = npz.find(std::string("PK\1\2", 4));
  ASSERT_NE(cd, std::string::npos);
  std::string deflated = npz;
  deflated[cd + 10] = 8;  // the first central-directory entry says "deflate", its data is not
  expect(deflated, StatusCode::kInvalidModel, "test.bin: zip entry 'Wemb.npy': ");
  std::string bzip2 = npz;
  bzip2[cd + 10] = 12;
  expect(bzip2, StatusCode::kUnsupported, "zip entry 'Wemb.npy': compression method 12 (bzip2)");
}

// Every truncation and a few thousand single-byte changes of both containers give a Status,
// never a crash (the sanitizer builds run this too).
TEST(MarianCheckpoint, TruncationsAndByteFlipsNeverCrash) {
  for (const char* name : {"all.npz", "all.bin", "all.int8.bin"}) {
    const std::string bytes = ReadText(DataPath(name));
    MarianCheckpoint c;
    for (size_t n = 0; n < bytes.size(); n += (n < 600 ? 1 : 97)) {
      EXPECT_FALSE(ParseBytes(bytes.substr(0, n), &c).ok()) << name << " truncated to " << n;
    }
    std::mt19937 rng(11);
    for (int i = 0; i < 1500; ++i) {
      std::string b = bytes;
      const size_t at = rng() % (i % 2 ? b.size() : std::min<size_t>(b.size(), 1200));
      b[at] = char(rng());
      (void)ParseBytes(b, &c);
    }
  }
}

}  // namespace
}  // namespace mtlite

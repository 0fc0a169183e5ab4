// `mtlite convert` of Marian's own models (converter/marian_convert.*): the checkpoint files of
// tests/data/marian (make_marian_testdata.py; ids from their vocab.yml, tokenized with the demo
// model's .spm), release folders, Marian's semantics in the model file, intgemm8 weights kept as
// they are, errors that name the option, and Marian's binary lexical shortlist.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "commands.h"
#include "kernels.h"
#include "lex_binary.h"
#include "marian_convert.h"
#include "marian_layout.h"
#include "model_data.h"
#include "model_reader.h"
#include "archive_test_helpers.h"
#include "model_test_helpers.h"
#include "quantize.h"
#include "shortlist_builder.h"
#include "zip_reader.h"

namespace mtlite {
namespace {

using converter::AlignedBytes;
using converter::ConversionReport;
using converter::ConvertInputs;
using converter::ConvertOptions;
using converter::ModelSpec;
using converter::Quantization;
using testing::ReadText;
using testing::TempDir;
using testing::WriteText;

std::string DataPath(const std::string& name) { return std::string(MTLITE_SOURCE_DIR) + "/tests/data/marian/" + name; }
std::string Spm() { return testing::DemoHfDir() + "/source.spm"; }

Status Convert(const std::string& input, ConvertOptions o, AlignedBytes* out, ConvertInputs* in = nullptr) {
  ConversionReport report;
  ConvertInputs local;
  return converter::ConvertInput(input, o, out, &report, in ? in : &local);
}

ConvertOptions Options(Quantization q, std::vector<std::string> vocabs = {Spm(), DataPath("vocab.yml")}) {
  ConvertOptions o;
  o.quantize = q;
  o.vocabs = std::move(vocabs);
  return o;
}

std::shared_ptr<const Model> Load(const AlignedBytes& b) {
  auto m = Model::FromBuffer(b.data(), b.size(), LoadOptions{true});
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? std::move(m.value()) : nullptr;
}

ModelSpec SpecOf(const Model& m) {
  ModelSpec s;
  Status st = converter::ReadModelSpec(m, &s);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return s;
}

const converter::TensorSpec* Find(const ModelSpec& s, const std::string& name) {
  for (const auto& t : s.tensors) {
    if (t.name == name) return &t;
  }
  ADD_FAILURE() << "no tensor " << name;
  return nullptr;
}

std::vector<float> F32(const converter::TensorSpec& t) {
  std::vector<float> v(t.data.size() / 4);
  std::memcpy(v.data(), t.data.data(), t.data.size());
  return v;
}

std::string Extra(const ModelSpec& s, const std::string& key) {
  for (const auto& kv : s.extra) {
    if (kv.first == key) return kv.second;
  }
  return "";
}

TEST(MarianConvert, EveryContainerAndTyingConvertsWithMarianSemantics) {
  AlignedBytes npz, bin;
  ASSERT_TRUE(Convert(DataPath("all.npz"), Options(Quantization::kFp32), &npz).ok());
  ASSERT_TRUE(Convert(DataPath("all.bin"), Options(Quantization::kFp32), &bin).ok());
  for (const char* f : {"tied.bin", "untied.npz", "all.int8.bin"}) {
    AlignedBytes b;
    Status s = Convert(DataPath(f), Options(Quantization::kInt8), &b);
    ASSERT_TRUE(s.ok()) << f << ": " << s.ToString();
    ASSERT_NE(Load(b), nullptr) << f;
  }
  auto m = Load(bin);
  ASSERT_NE(m, nullptr);
  const ModelConfig& c = m->config();
  EXPECT_EQ(c.source_vocab_size, 12);  // 11 Marian ids + the zero <pad> row
  EXPECT_EQ(c.target_vocab_size, 12);
  EXPECT_EQ(c.pad_id, 11);
  EXPECT_EQ(c.decoder_start_id, 11);
  EXPECT_EQ(c.bad_word_ids, std::vector<int>{11});
  EXPECT_EQ(c.eos_id, 0);
  EXPECT_EQ(c.unk_id, 1);
  EXPECT_FLOAT_EQ(c.layer_norm_eps, 1e-6f);
  EXPECT_FLOAT_EQ(c.embed_scale, std::sqrt(8.0f));
  EXPECT_EQ(c.positions, PositionKind::kTable);
  EXPECT_EQ(c.search, SearchKind::kMarian);
  EXPECT_EQ(c.activation, ActivationKind::kSiLU);
  const ModelSpec spec = SpecOf(*m);
  EXPECT_EQ(Extra(spec, "semantics"), "marian");
  EXPECT_EQ(spec.source_vocab.back(), "<pad>");
  const std::vector<float> emb = F32(*Find(spec, layout::kSharedEmbedding));
  for (int k = 0; k < 8; ++k) EXPECT_EQ(emb[11 * 8 + size_t(k)], 0.0f);  // the zero start vector
  EXPECT_EQ(F32(*Find(spec, layout::kFinalLogitsBias)).back(), 0.0f);
  EXPECT_EQ(F32(*Find(spec, layout::kDecoderPositions)), converter::MarianNativeSinusoid(c.max_positions, 8));
  // Marian's sinusoid: row 1 = sin/cos(exp(-i log(10000) / (d/2 - 1))), i = 0..3
  EXPECT_NEAR(F32(*Find(spec, layout::kEncoderPositions))[8 + 1], std::sin(std::exp(-std::log(10000.0) / 3)), 1e-6);
  // .npz and .bin hold the same model: the same tensors.
  const ModelSpec from_npz = SpecOf(*Load(npz));
  ASSERT_EQ(from_npz.tensors.size(), spec.tensors.size());
  for (size_t i = 0; i < spec.tensors.size(); ++i) EXPECT_EQ(from_npz.tensors[i].data, spec.tensors[i].data) << spec.tensors[i].name;
}

// The test's own reading of a Marian .bin: {name: data} of its intgemm8 items (int8 [out][in], the
// float32 multiplier, padding).
std::map<std::string, std::string> Intgemm8Items(const std::string& b) {
  auto u64 = [&](size_t at) {
    uint64_t v;
    std::memcpy(&v, b.data() + at, 8);
    return v;
  };
  const uint64_t n = u64(8);
  size_t at = 16 + 32 * n;
  std::vector<std::string> names;
  for (uint64_t i = 0; i < n; ++i) {
    names.push_back(b.c_str() + at);
    at += u64(16 + 32 * i);
  }
  for (uint64_t i = 0; i < n; ++i) at += 4 * u64(16 + 32 * i + 16);
  at += 8 + u64(at);
  std::map<std::string, std::string> out;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t type = u64(16 + 32 * i + 8), size = u64(16 + 32 * i + 24);
    if (type == 0x4101) out[names[i]] = b.substr(at, size);
    at += size;
  }
  return out;
}

std::string HfName(const std::string& m) {  // names of the one-layer test model
  const bool enc = m.rfind("encoder_l1_", 0) == 0;
  std::string rest = m.substr(11), layer = enc ? "model.encoder.layers.0." : "model.decoder.layers.0.";
  if (rest.rfind("ffn_W", 0) == 0) return layer + "fc" + rest.substr(5) + ".weight";
  const std::map<char, std::string> proj = {{'q', "q_proj"}, {'k', "k_proj"}, {'v', "v_proj"}, {'o', "out_proj"}};
  const bool self = rest.rfind("self_W", 0) == 0;
  return layer + (self ? "self_attn." : "encoder_attn.") + proj.at(rest.back()) + ".weight";
}

TEST(MarianConvert, Intgemm8WeightsAreStoredAsTheyAre) {
  const auto items = Intgemm8Items(ReadText(DataPath("all.int8.bin")));
  ASSERT_EQ(items.size(), 16u);  // 4 + 2 encoder, 4 + 4 + 2 decoder matrices
  AlignedBytes b;
  ConvertInputs in;
  ASSERT_TRUE(Convert(DataPath("all.int8.bin"), Options(Quantization::kInt8), &b, &in).ok());
  EXPECT_TRUE(in.intgemm8_as_is);
  const ModelSpec spec = SpecOf(*Load(b));
  int requantized_differs = 0;
  for (const auto& [name, item] : items) {
    const converter::TensorSpec* t = Find(spec, HfName(name));
    ASSERT_NE(t, nullptr) << name;
    const int rows = int(t->shape[0]), cols = int(t->shape[1]);
    const size_t n = size_t(rows) * size_t(cols);
    ASSERT_GE(item.size(), n + 4) << name;
    std::vector<int8_t> q(n);
    std::memcpy(q.data(), item.data(), n);
    float mult;
    std::memcpy(&mult, item.data() + n, 4);
    std::vector<uint8_t> packed(kernels::BlockedN8K4Bytes(rows, cols));
    kernels::PackBlockedN8K4(q.data(), rows, cols, reinterpret_cast<int8_t*>(packed.data()));
    EXPECT_EQ(t->data, packed) << name << ": the file's int8 values";
    EXPECT_EQ(t->scales, std::vector<float>(size_t(rows), 1.0f / mult)) << name;
    // Quantizing the dequantized weights again (per row) would change them.
    std::vector<float> w(n);
    for (size_t i = 0; i < n; ++i) w[i] = float(q[i]) / mult;
    std::vector<uint8_t> again;
    std::vector<float> scales;
    converter::QuantizeInt8(w.data(), rows, cols, &again, &scales);
    requantized_differs += again != packed || scales != t->scales;
  }
  EXPECT_GT(requantized_differs, 0);
}

TEST(MarianConvert, SemanticsChoices) {
  AlignedBytes b;
  ConvertOptions o = Options(Quantization::kFp32);
  o.semantics = converter::Semantics::kHf;
  ASSERT_TRUE(Convert(DataPath("all.bin"), o, &b).ok());
  auto m = Load(b);
  EXPECT_FLOAT_EQ(m->config().layer_norm_eps, 1e-5f);
  EXPECT_EQ(m->config().positions, PositionKind::kSinusoidMarian);
  EXPECT_EQ(m->config().search, SearchKind::kHF);
  EXPECT_EQ(Extra(SpecOf(*m), "semantics"), "hf");

  ConvertOptions h;
  h.quantize = Quantization::kFp32;
  ASSERT_TRUE(Convert(testing::DemoHfDir(), h, &b).ok());
  EXPECT_EQ(Extra(SpecOf(*Load(b)), "semantics"), "hf");
  h.semantics = converter::Semantics::kMarian;
  ASSERT_TRUE(Convert(testing::DemoHfDir(), h, &b).ok());
  m = Load(b);
  const ModelConfig& c = m->config();
  EXPECT_FLOAT_EQ(c.layer_norm_eps, 1e-6f);
  EXPECT_EQ(c.positions, PositionKind::kTable);
  EXPECT_EQ(c.search, SearchKind::kMarian);
  const ModelSpec spec = SpecOf(*m);
  EXPECT_EQ(Extra(spec, "semantics"), "marian");
  EXPECT_EQ(F32(*Find(spec, layout::kDecoderPositions)), converter::MarianNativeSinusoid(c.max_positions, c.d_model));
  const std::vector<float> emb = F32(*Find(spec, layout::kSharedEmbedding));
  for (int k = 0; k < c.d_model; ++k) EXPECT_EQ(emb[size_t(c.decoder_start_id) * size_t(c.d_model) + size_t(k)], 0.0f);
}

// ---- binary lexical shortlist -----------------------------------------------------------------

std::string BinaryLexFile(uint64_t first, uint64_t best, const std::vector<std::vector<uint32_t>>& lists) {
  std::vector<uint64_t> words = {converter::kBinaryLexMagic, 0, first, best, lists.size() + 1, 0};
  std::vector<uint32_t> targets;
  std::vector<uint64_t> offsets = {0};
  for (const auto& l : lists) {
    targets.insert(targets.end(), l.begin(), l.end());
    offsets.push_back(targets.size());
  }
  words[5] = targets.size();
  std::string out(reinterpret_cast<const char*>(words.data()), 48);
  out.append(reinterpret_cast<const char*>(offsets.data()), 8 * offsets.size());
  out.append(reinterpret_cast<const char*>(targets.data()), 4 * targets.size());
  uint64_t seed = 0;  // Marian's hash over the words after magic and checksum
  for (size_t at = 16; at + 8 <= out.size(); at += 8) {
    uint64_t w;
    std::memcpy(&w, out.data() + at, 8);
    seed ^= w + 0x9e3779b9ull + (seed << 6) + (seed >> 2);
  }
  std::memcpy(&out[8], &seed, 8);
  return out;
}

TEST(MarianConvert, BinaryLexicalShortlist) {
  AlignedBytes b;
  ASSERT_TRUE(Convert(DataPath("all.bin"), Options(Quantization::kInt8), &b).ok());
  auto m = Load(b);
  TempDir dir;
  // 11 source ids; id 2 -> {3, 9}, id 4 -> {5}, id 7 -> {2, 6, 10}
  std::vector<std::vector<uint32_t>> lists(11);
  lists[2] = {3, 9};
  lists[4] = {5};
  lists[7] = {2, 6, 10};
  WriteText(dir / "lex.bin", BinaryLexFile(4, 50, lists));
  converter::ShortlistOptions o;
  o.frequent = 0;
  converter::ShortlistSpec sl;
  converter::ShortlistReport r;
  Status s = converter::ImportLexShortlist(*m, dir / "lex.bin", {}, o, &sl, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(r.lex_binary);
  EXPECT_EQ(r.lex_first_num, 4u);
  EXPECT_EQ(r.lex_best_num, 50u);
  EXPECT_EQ(r.lex_entries, 6u);
  auto list = [&](int src) { return std::vector<int32_t>(sl.targets.begin() + sl.offsets[size_t(src)], sl.targets.begin() + sl.offsets[size_t(src) + 1]); };
  EXPECT_EQ(list(2), (std::vector<int32_t>{3, 9}));
  EXPECT_EQ(list(4), (std::vector<int32_t>{5}));
  EXPECT_EQ(list(7), (std::vector<int32_t>{2, 6, 10}));
  EXPECT_TRUE(list(3).empty());

  std::string damaged = BinaryLexFile(4, 50, lists);
  damaged[damaged.size() - 8] ^= 1;
  WriteText(dir / "bad.bin", damaged);
  s = converter::ImportLexShortlist(*m, dir / "bad.bin", {}, o, &sl, &r);
  EXPECT_NE(s.message().find("checksum mismatch"), std::string::npos) << s.ToString();
  WriteText(dir / "short.bin", BinaryLexFile(4, 50, lists).substr(0, 60));
  s = converter::ImportLexShortlist(*m, dir / "short.bin", {}, o, &sl, &r);
  EXPECT_NE(s.message().find("do not match the file size"), std::string::npos) << s.ToString();
  WriteText(dir / "big.bin", BinaryLexFile(4, 50, std::vector<std::vector<uint32_t>>(40)));
  s = converter::ImportLexShortlist(*m, dir / "big.bin", {}, o, &sl, &r);
  EXPECT_NE(s.message().find("for 40 source ids; the model has 12"), std::string::npos) << s.ToString();
}

// ---- release folders and errors ---------------------------------------------------------------

TEST(MarianConvert, ReleaseFolders) {
  std::vector<std::vector<uint32_t>> lists(11);
  lists[2] = {3, 9};
  {  // Firefox Translations: model.*.intgemm.alphas.bin, vocab.*.spm, lex.*.s2t.bin (+ the ids' YAML)
    TempDir d;
    WriteText(d / "model.xxyy.intgemm.alphas.bin", ReadText(DataPath("all.int8.bin")));
    WriteText(d / "vocab.xxyy.spm", ReadText(Spm()));
    WriteText(d / "vocab.yml", ReadText(DataPath("vocab.yml")));
    WriteText(d / "lex.50.50.xxyy.s2t.bin", BinaryLexFile(4, 50, lists));
    AlignedBytes b;
    ConvertInputs in;
    ConvertOptions o;
    Status s = Convert(d.path(), o, &b, &in);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(in.model, d / "model.xxyy.intgemm.alphas.bin");
    EXPECT_EQ(in.vocabs, (std::vector<std::string>{d / "vocab.xxyy.spm", d / "vocab.yml"}));
    EXPECT_EQ(in.lex, d / "lex.50.50.xxyy.s2t.bin");
    EXPECT_TRUE(in.intgemm8_as_is);
    EXPECT_TRUE(Load(b)->data().shortlist.present);
    EXPECT_TRUE(in.decoder.file.empty());  // no config: the model's default beam stays
    // Firefox Translations' config: beam 1, normalize 1, factor 2 (flow lists for the file names)
    WriteText(d / "config.intgemm8bitalpha.yml",
              "models: [model.xxyy.intgemm.alphas.bin]\nvocabs: [vocab.xxyy.spm, vocab.xxyy.spm]\nbeam-size: 1\n"
              "normalize: 1.0\nword-penalty: 0\nmax-length-factor: 2.0\nshortlist: [lex.50.50.xxyy.s2t.bin, false]\n"
              "gemm-precision: int8shiftAlphaAll\n");
    s = Convert(d.path(), o, &b, &in);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(in.decoder.file, "config.intgemm8bitalpha.yml");
    EXPECT_EQ(in.decoder.beam_size, 1);
    EXPECT_EQ(in.decoder.normalize, 1.0f);
    EXPECT_EQ(in.decoder.max_length_factor, 2.0f);
    EXPECT_EQ(Load(b)->config().default_beam, 1);
    WriteText(d / "config.yml", "beam-size: 4\n");
    s = Convert(d.path(), o, &b);
    EXPECT_NE(s.message().find("more than one decoder config (config.intgemm8bitalpha.yml, config.yml)"), std::string::npos)
        << s.ToString();
    std::remove((d / "config.yml").c_str());
    for (const char* bad : {"beam-size: 65\n", "beam-size: 2.5\n", "normalize: fast\n", "max-length-factor: [1]\n"}) {
      WriteText(d / "config.intgemm8bitalpha.yml", bad);
      s = Convert(d.path(), o, &b);
      const std::string key = std::string(bad).substr(0, std::string(bad).find(':'));
      EXPECT_NE(s.message().find("config.intgemm8bitalpha.yml: " + key), std::string::npos) << bad << ": " << s.ToString();
    }
    std::remove((d / "config.intgemm8bitalpha.yml").c_str());
    WriteText(d / "model.npz", ReadText(DataPath("all.npz")));
    s = Convert(d.path(), o, &b);
    EXPECT_NE(s.message().find("more than one model file (model.npz, model.xxyy.intgemm.alphas.bin)"), std::string::npos) << s.ToString();
  }
  {  // OPUS-MT: *.npz, source.spm + target.spm, *.vocab.yml, text lex.s2t
    TempDir d;
    WriteText(d / "opus.spm32k-spm32k.transformer.model1.npz", ReadText(DataPath("untied.npz")));
    WriteText(d / "source.spm", ReadText(Spm()));
    WriteText(d / "target.spm", ReadText(Spm()));
    WriteText(d / "opus.spm32k-spm32k.vocab.yml", ReadText(DataPath("vocab.yml")));
    WriteText(d / "decoder.yml", "relative-paths: true\nbeam-size: 6\nnormalize: 0.6\nword-penalty: 0\n");
    WriteText(d / "config.yml", "beam-size: 2\n");  // decoder.yml is the one OPUS-MT's README runs
    WriteText(d / "lex.s2t", "\xe2\x96\x81" "g \xe2\x96\x81" "a 0.5\n");
    AlignedBytes b;
    ConvertInputs in;
    Status s = Convert(d.path(), ConvertOptions(), &b, &in);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(in.vocabs, (std::vector<std::string>{d / "source.spm", d / "target.spm", d / "opus.spm32k-spm32k.vocab.yml"}));
    EXPECT_TRUE(Load(b)->data().shortlist.present);
    EXPECT_EQ(in.decoder.file, "decoder.yml");
    EXPECT_EQ(in.decoder.normalize, 0.6f);
    EXPECT_EQ(in.decoder.max_length_factor, 3.0f);  // Marian's default
    EXPECT_EQ(Load(b)->config().default_beam, 6);
    EXPECT_EQ(Extra(SpecOf(*Load(b)), "marian_decoder"),
              "decoder.yml: beam-size 6, normalize 0.6, word-penalty 0, max-length-factor 3");
  }
  TempDir empty;
  AlignedBytes b;
  EXPECT_NE(Convert(empty.path(), ConvertOptions(), &b).message().find("no model file"), std::string::npos);
}

TEST(MarianConvert, ErrorsNameTheOptionOrFile) {
  TempDir d;
  AlignedBytes b;
  // Options the transformer does not implement, written over the file's special:model.yml (same length).
  const std::pair<std::string, std::string> options[] = {
      {"lemma-dim-emb: 0", "lemma-dim-emb: 8"},
      {"right-left: false", "right-left: true "},
      {"transformer-ffn-activation: swish", "transformer-ffn-activation: gelu "},
      {"transformer-postprocess: dan", "transformer-postprocess: da "},
      {"transformer-decoder-autoreg: self-attention", "transformer-decoder-autoreg: average-att   "},
      {"type: transformer", "type: s2s        "},
  };
  for (const auto& [from, to] : options) {
    std::string bytes = ReadText(DataPath("all.bin"));
    const size_t at = bytes.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    bytes.replace(at, from.size(), to);
    WriteText(d / "option.bin", bytes);
    Status s = Convert(d / "option.bin", Options(Quantization::kInt8), &b);
    std::string want = to;
    while (want.back() == ' ') want.pop_back();
    EXPECT_NE(s.message().find("unsupported option " + want), std::string::npos) << s.ToString();
  }
  std::string bytes = ReadText(DataPath("all.bin"));
  bytes[bytes.find("lemma-dim-emb: 0") + 15] = '8';
  WriteText(d / "lemma.bin", bytes);
  // The CLI prints it and fails.
  const std::string out = d / "x.mtlite", in = d / "lemma.bin", spm = Spm(), yml = DataPath("vocab.yml");
  const char* argv[] = {"convert", in.c_str(), "--vocab", spm.c_str(), "--vocab", yml.c_str(), "-o", out.c_str()};
  ::testing::internal::CaptureStderr();
  const int rc = cli::ConvertMain(8, const_cast<char**>(argv));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 1);
  EXPECT_NE(err.find("lemma-dim-emb: 8"), std::string::npos) << err;

  auto expect = [&](const std::string& input, ConvertOptions o, const std::string& what) {
    Status st = Convert(input, o, &b);
    EXPECT_FALSE(st.ok()) << what;
    EXPECT_NE(st.message().find(what), std::string::npos) << st.ToString();
  };
  expect(DataPath("all.bin"), Options(Quantization::kInt8, {}), "needs its vocabularies: --vocab");
  expect(DataPath("all.bin"), Options(Quantization::kInt8, {DataPath("vocab.yml")}), "no SentencePiece model (.spm) given");
  expect(DataPath("all.bin"), Options(Quantization::kInt8, {Spm()}), "differ from the model's dim-vocabs [11, 11]");
  expect(DataPath("all.bin"), Options(Quantization::kInt8, {DataPath("all.npz")}), "neither a SentencePiece model");
  expect(testing::DemoHfDir(), Options(Quantization::kInt8), "--vocab is not used with an HF directory");
  expect(DataPath("vocab.yml"), Options(Quantization::kInt8), "neither a numpy .npz archive nor a Marian binary model");
}

// ---- compressed inputs ----------------------------------------------------------------------

// np.savez_compressed writes deflate entries: the same checkpoint reads the same as stored.
TEST(MarianConvert, CompressedNpzReadsAsStored) {
  const std::string stored = ReadText(DataPath("all.npz"));
  converter::ZipReader zip;
  ASSERT_TRUE(converter::ZipReader::Open(stored, "all.npz", &zip).ok());
  std::vector<testing::ZipFile> files;
  for (const converter::ZipEntry& e : zip.entries()) {
    ASSERT_EQ(e.method, 0);
    std::string data;
    ASSERT_TRUE(zip.Read(e, &data).ok());
    files.push_back({e.name, data, 8});
  }
  const std::string deflated = testing::MakeZip(files);
  ASSERT_NE(deflated, stored);
  converter::MarianCheckpoint a, b;
  ASSERT_TRUE(converter::ParseMarianCheckpoint(stored, "all.npz", &a).ok());
  Status s = converter::ParseMarianCheckpoint(deflated, "compressed.npz", &b);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(a.yaml_text, b.yaml_text);
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (const auto& [name, t] : a.tensors) {
    ASSERT_TRUE(b.tensors.count(name)) << name;
    EXPECT_EQ(t.shape, b.tensors.at(name).shape) << name;
    EXPECT_EQ(t.values, b.tensors.at(name).values) << name;
  }
  // zip64 records (numpy's force_zip64) read the same too
  ASSERT_TRUE(converter::ParseMarianCheckpoint(testing::MakeZip(files, true), "zip64.npz", &b).ok());
  EXPECT_EQ(a.tensors.at("Wemb").values, b.tensors.at("Wemb").values);
  // a deflate entry whose data is damaged is refused by name
  std::string damaged = deflated;
  const converter::ZipEntry* w = nullptr;
  converter::ZipReader dz;
  ASSERT_TRUE(converter::ZipReader::Open(deflated, "compressed.npz", &dz).ok());
  w = dz.Find("Wemb.npy");
  ASSERT_NE(w, nullptr);
  damaged[size_t(w->data_offset + w->compressed_size / 2)] ^= 0x55;
  s = converter::ParseMarianCheckpoint(damaged, "compressed.npz", &b);
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel) << s.ToString();
  EXPECT_NE(s.message().find("compressed.npz: zip entry 'Wemb.npy': "), std::string::npos) << s.message();
  // a bomb: entries that inflate to more than 16 x the archive + 1 MiB
  files.push_back({"zeros.npy", std::string(3u << 20, '\0'), 8});
  s = converter::ParseMarianCheckpoint(testing::MakeZip(files), "bomb.npz", &b);
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel) << s.ToString();
  EXPECT_TRUE(s.message().find("bomb.npz: zip entry 'zeros.npy': ") != std::string::npos &&
              s.message().find("a decompression bomb?") != std::string::npos)
      << s.ToString();
}

// Firefox Translations' releases are gzipped (model.*.bin.gz, vocab.*.spm.gz, lex.*.s2t.bin.gz):
// the folder converts as it is, to the bytes of the plain folder.
TEST(MarianConvert, GzippedReleaseFolderConvertsToTheSameBytes) {
  std::vector<std::vector<uint32_t>> lists(11);
  lists[2] = {3, 9};
  lists[7] = {2, 6, 10};
  const std::vector<std::pair<std::string, std::string>> files = {
      {"model.xxyy.intgemm.alphas.bin", ReadText(DataPath("all.int8.bin"))},
      {"vocab.xxyy.spm", ReadText(Spm())},
      {"vocab.yml", ReadText(DataPath("vocab.yml"))},
      {"lex.50.50.xxyy.s2t.bin", BinaryLexFile(4, 50, lists)}};
  TempDir plain, gz;
  for (const auto& [name, data] : files) {
    WriteText(plain / name, data);
    WriteText(gz / (name + ".gz"), testing::Gzip(data));
  }
  AlignedBytes a, b;
  ConvertInputs in;
  Status s = Convert(plain.path(), ConvertOptions(), &a);
  ASSERT_TRUE(s.ok()) << s.ToString();
  s = Convert(gz.path(), ConvertOptions(), &b, &in);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(in.model, gz / "model.xxyy.intgemm.alphas.bin.gz");
  EXPECT_EQ(in.vocabs, (std::vector<std::string>{gz / "vocab.xxyy.spm.gz", gz / "vocab.yml.gz"}));
  EXPECT_EQ(in.lex, gz / "lex.50.50.xxyy.s2t.bin.gz");
  EXPECT_TRUE(Load(b)->data().shortlist.present);
  EXPECT_TRUE(a == b) << "the gzipped folder converts to other bytes (" << a.size() << " vs " << b.size() << ")";
  // a single gzipped checkpoint given with --vocab
  AlignedBytes c, d;
  ASSERT_TRUE(Convert(DataPath("all.bin"), Options(Quantization::kInt8), &c).ok());
  WriteText(gz / "single.bin.gz", testing::Gzip(ReadText(DataPath("all.bin"))));
  s = Convert(gz / "single.bin.gz", Options(Quantization::kInt8), &d);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Extra(SpecOf(*Load(d)), "marian_model"), "single.bin");
  // both forms of one file
  WriteText(gz / "vocab.xxyy.spm", ReadText(Spm()));
  s = Convert(gz.path(), ConvertOptions(), &b);
  EXPECT_NE(s.message().find("both vocab.xxyy.spm and vocab.xxyy.spm.gz"), std::string::npos) << s.ToString();
  std::remove((gz / "vocab.xxyy.spm").c_str());
  // a damaged one: refused by name
  const std::string model_gz = testing::Gzip(files[0].second);
  WriteText(gz / "model.xxyy.intgemm.alphas.bin.gz", model_gz.substr(0, model_gz.size() / 2));
  s = Convert(gz.path(), ConvertOptions(), &b);
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel) << s.ToString();
  EXPECT_NE(s.message().find("model.xxyy.intgemm.alphas.bin.gz: truncated gzip data"), std::string::npos) << s.ToString();
}

// `mtlite convert` that fails leaves no output file behind: nothing new, no temporary file, and an
// existing file of that name unchanged.
TEST(MarianConvert, FailedConvertLeavesNoOutput) {
  TempDir d;
  const std::string model_gz = testing::Gzip(ReadText(DataPath("all.int8.bin")));
  WriteText(d / "model.xxyy.intgemm.alphas.bin.gz", model_gz.substr(0, model_gz.size() - 9));
  WriteText(d / "vocab.xxyy.spm.gz", testing::Gzip(ReadText(Spm())));
  WriteText(d / "vocab.yml", ReadText(DataPath("vocab.yml")));
  TempDir out_dir;
  const std::string out = out_dir / "m.mtlite";
  auto r = testing::RunCli("convert '" + d.path() + "' -o '" + out + "' --quiet");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("model.xxyy.intgemm.alphas.bin.gz: truncated gzip data"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_TRUE(std::filesystem::is_empty(out_dir.path()));
  WriteText(out, "an older model");
  r = testing::RunCli("convert '" + d.path() + "' -o '" + out + "' --quiet");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(ReadText(out), "an older model");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(out_dir.path()), std::filesystem::directory_iterator()), 1);
  // and the same folder, repaired, converts over it
  WriteText(d / "model.xxyy.intgemm.alphas.bin.gz", model_gz);
  r = testing::RunCli("convert '" + d.path() + "' -o '" + out + "' --quiet");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Model::Load(out).ok());
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(out_dir.path()), std::filesystem::directory_iterator()), 1);
}

}  // namespace
}  // namespace mtlite

// Helpers for the model-format tests: a tiny random HF MarianMT directory (trained spm,
// random weights), a safetensors writer, temp dirs, and running the mtlite CLI.
#pragma once

#include <gtest/gtest.h>
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "marian_layout.h"
#include "model_writer.h"

namespace mtlite {
namespace testing {

inline std::string DemoModel(const char* quant) {
  return std::string(MTLITE_TEST_MODEL_DIR) + "/demo." + quant + ".mtlite";
}
inline std::string DemoHfDir() { return std::string(MTLITE_SOURCE_DIR) + "/models/marian-en-de-tiny"; }
inline std::string CliPath() { return std::string(MTLITE_BINARY_DIR) + "/mtlite"; }

// A fresh directory under $TMPDIR, removed when the object dies.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/mtlite_test_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed");
    path_ = buf.data();
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string ReadText(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline void WriteText(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary);
  f.write(data.data(), std::streamsize(data.size()));
  if (!f) throw std::runtime_error("cannot write " + path);
}

inline converter::AlignedBytes ReadAligned(const std::string& path) {
  const std::string s = ReadText(path);
  return converter::AlignedBytes(s.begin(), s.end());
}

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

inline CommandResult Run(const std::string& command) {
  CommandResult r;
  std::FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return r;
}

inline CommandResult RunCli(const std::string& args) { return Run("'" + CliPath() + "' " + args); }

// ---- safetensors --------------------------------------------------------------------------
struct TestTensor {
  std::vector<int64_t> shape;
  std::vector<float> values;
  std::string dtype = "F32";  // F32 | F16 | BF16 (written with round-to-nearest-even)
};

inline std::string SafetensorsBytes(const std::map<std::string, TestTensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  header["__metadata__"] = {{"format", "pt"}};
  std::string data;
  for (const auto& [name, t] : tensors) {
    const size_t begin = data.size();
    for (float v : t.values) {
      if (t.dtype == "F32") {
        data.append(reinterpret_cast<const char*>(&v), 4);
      } else {
        const uint16_t h = t.dtype == "F16" ? layout::F32ToF16(v) : layout::F32ToBf16(v);
        data.push_back(char(h & 0xFF));
        data.push_back(char(h >> 8));
      }
    }
    header[name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
  }
  std::string h = header.dump();
  while ((8 + h.size()) % 8) h.push_back(' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char((uint64_t(h.size()) >> (8 * i)) & 0xFF);
  return out + h + data;
}

// ---- tiny HF model ------------------------------------------------------------------------
class SentenceList : public sentencepiece::SentenceIterator {
 public:
  explicit SentenceList(std::vector<std::string> s) : s_(std::move(s)) {}
  bool done() const override { return i_ >= s_.size(); }
  void Next() override { ++i_; }
  const std::string& value() const override { return s_[i_]; }
  sentencepiece::util::Status status() const override { return sentencepiece::util::Status(); }

 private:
  std::vector<std::string> s_;
  size_t i_ = 0;
};

// A small unigram spm (identity normalizer: no charsmap), trained once per process.
inline const std::string& TinySpm() {
  static const std::string spm = [] {
    std::vector<std::string> text;
    const char* words[] = {"the", "cat", "sat", "on", "a", "mat", "dog", "ran", "to", "house",
                           "big", "small", "red", "blue", "tree", "and", "is", "was", "bird", "sings"};
    std::mt19937 rng(3);
    for (int i = 0; i < 200; ++i) {
      std::string s;
      for (int w = 0; w < 6; ++w) s += std::string(w ? " " : "") + words[rng() % 20];
      text.push_back(s);
    }
    SentenceList it(text);
    std::string out;
    const auto st = sentencepiece::SentencePieceTrainer::Train(
        "--model_type=unigram --vocab_size=48 --hard_vocab_limit=false --normalization_rule_name=identity "
        "--num_threads=1 --minloglevel=2 --seed_sentencepiece_size=1000",
        &it, &out);
    if (!st.ok()) throw std::runtime_error("spm training failed: " + st.ToString());
    return out;
  }();
  return spm;
}

// Everything a converter input directory holds; tests edit fields, then Write().
struct TinyHf {
  nlohmann::json config, generation, tokenizer_config, vocab;
  std::map<std::string, TestTensor> tensors;
  std::string source_spm, target_spm;
  std::string safetensors_override;  // when set, written instead of SafetensorsBytes(tensors)

  void Write(const std::string& dir) const {
    WriteText(dir + "/config.json", config.dump(2));
    if (!generation.is_null()) WriteText(dir + "/generation_config.json", generation.dump(2));
    if (!tokenizer_config.is_null()) WriteText(dir + "/tokenizer_config.json", tokenizer_config.dump(2));
    WriteText(dir + "/vocab.json", vocab.dump(2));
    WriteText(dir + "/source.spm", source_spm);
    WriteText(dir + "/target.spm", target_spm);
    WriteText(dir + "/model.safetensors",
              safetensors_override.empty() ? SafetensorsBytes(tensors) : safetensors_override);
  }
};

// HF's sinusoid table (layout::MarianSinusoid; marian_layout_test checks it against HF's
// formulation, odd widths included).
inline std::vector<float> Sinusoid(int positions, int d) { return layout::MarianSinusoidTable(positions, d); }

struct TinyOptions {
  int d_model = 8, heads = 2, encoder_layers = 1, decoder_layers = 1, ffn = 16, max_positions = 16;
  bool shared = true, tied = true;
  bool learned_positions = false;  // random (non-sinusoid) position tables
  std::string dtype = "F32";
  uint32_t seed = 1;
};

// The less common layout: separate embeddings, untied output, learned positions, two encoder
// layers, and rows / columns that are not multiples of 8 / 4.
inline TinyOptions UncommonTinyOptions() {
  TinyOptions o;
  o.shared = false;
  o.tied = false;
  o.learned_positions = true;
  o.encoder_layers = 2;
  o.d_model = 12;
  o.heads = 3;
  o.ffn = 20;
  return o;
}

inline TinyHf MakeTinyHf(const TinyOptions& o = {}) {
  TinyHf hf;
  hf.source_spm = hf.target_spm = TinySpm();
  sentencepiece::SentencePieceProcessor sp;
  if (!sp.LoadFromSerializedProto(hf.source_spm).ok()) throw std::runtime_error("tiny spm does not load");
  const int n = sp.GetPieceSize();
  hf.vocab = nlohmann::json::object();
  for (int i = 0; i < n; ++i) hf.vocab[sp.IdToPiece(i)] = i;
  hf.vocab["<pad>"] = n;
  const int V = n + 1, d = o.d_model;
  hf.config = {{"model_type", "marian"},
               {"vocab_size", V},
               {"decoder_vocab_size", V},
               {"d_model", d},
               {"encoder_layers", o.encoder_layers},
               {"decoder_layers", o.decoder_layers},
               {"encoder_attention_heads", o.heads},
               {"decoder_attention_heads", o.heads},
               {"encoder_ffn_dim", o.ffn},
               {"decoder_ffn_dim", o.ffn},
               {"activation_function", "swish"},
               {"max_position_embeddings", o.max_positions},
               {"scale_embedding", true},
               {"normalize_before", false},
               {"share_encoder_decoder_embeddings", o.shared},
               {"tie_word_embeddings", o.tied},
               {"pad_token_id", V - 1},
               {"eos_token_id", sp.eos_id()},
               {"decoder_start_token_id", V - 1}};
  hf.generation = {{"num_beams", 2}, {"max_length", 32}, {"bad_words_ids", {{V - 1}}}};
  hf.tokenizer_config = {{"source_lang", "xx"}, {"target_lang", "yy"}, {"separate_vocabs", false}};

  std::mt19937 rng(o.seed);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    TestTensor t;
    t.dtype = o.dtype;
    size_t count = 1;
    for (int64_t s : shape) count *= size_t(s);
    t.shape = std::move(shape);
    t.values.resize(count);
    for (float& v : t.values) v = u(rng);
    hf.tensors[name] = std::move(t);
  };
  auto linear = [&](const std::string& p, int rows, int cols) {
    add(p + ".weight", {rows, cols});
    add(p + ".bias", {rows});
  };
  auto norm = [&](const std::string& p) {
    add(p + ".weight", {d});
    add(p + ".bias", {d});
  };
  if (o.shared) {
    add("model.shared.weight", {V, d});
  } else {
    add("model.encoder.embed_tokens.weight", {V, d});
    add("model.decoder.embed_tokens.weight", {V, d});
  }
  if (!o.tied) add("lm_head.weight", {V, d});
  add("final_logits_bias", {1, V});
  for (const char* side : {"encoder", "decoder"}) {
    const std::string name = std::string("model.") + side + ".embed_positions.weight";
    add(name, {o.max_positions, d});
    if (!o.learned_positions) hf.tensors[name].values = Sinusoid(o.max_positions, d);
  }
  for (int i = 0; i < o.encoder_layers; ++i) {
    const std::string p = "model.encoder.layers." + std::to_string(i);
    for (const char* proj : {".q_proj", ".k_proj", ".v_proj", ".out_proj"}) linear(p + ".self_attn" + proj, d, d);
    norm(p + ".self_attn_layer_norm");
    linear(p + ".fc1", o.ffn, d);
    linear(p + ".fc2", d, o.ffn);
    norm(p + ".final_layer_norm");
  }
  for (int i = 0; i < o.decoder_layers; ++i) {
    const std::string p = "model.decoder.layers." + std::to_string(i);
    for (const char* attn : {".self_attn", ".encoder_attn"}) {
      for (const char* proj : {".q_proj", ".k_proj", ".v_proj", ".out_proj"}) linear(p + attn + proj, d, d);
    }
    norm(p + ".self_attn_layer_norm");
    norm(p + ".encoder_attn_layer_norm");
    linear(p + ".fc1", o.ffn, d);
    linear(p + ".fc2", d, o.ffn);
    norm(p + ".final_layer_norm");
  }
  // One all-zero row (int8: scale 1, q 0).
  auto& fc1 = hf.tensors["model.encoder.layers.0.fc1.weight"].values;
  std::fill(fc1.begin(), fc1.begin() + d, 0.0f);
  return hf;
}

}  // namespace testing
}  // namespace mtlite

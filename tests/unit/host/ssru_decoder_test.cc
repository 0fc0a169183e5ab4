// Decoder layers of Marian's SSRU cell (config.decoder_layer kSsru; Marian's transformer-decoder-autoreg:
// rnn with dec-cell: ssru) instead of self-attention: the file format (version 3, the SSRU
// tensors, the loader's checks), the step against a scalar reference of the cell, the beam
// search's reordering of the states (every n-best hypothesis scores what its own token path
// scores when forced), row-parallel steps, the arena plan (a state row per slot instead of a KV
// cache) and every kernel table translating alike.
//
// The models: the tiny HF checkpoint of model_test_helpers.h (d 16, two decoder layers),
// converted, with each decoder layer's self-attention replaced by random SSRU tensors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "hf_convert.h"
#include "kernels.h"
#include "marian_layout.h"
#include "model_test_helpers.h"
#include "model_writer.h"
#include "mtlite/mtlite.hpp"
#include "quantize.h"

namespace mtlite {
namespace {

using converter::ModelSpec;
using converter::Quantization;
using converter::TensorSpec;

constexpr int kD = 16;

struct SsruModel {
  ModelSpec spec;
  std::map<std::string, std::vector<float>> f32;  // every tensor's values before encoding
  converter::AlignedBytes bytes;
  std::shared_ptr<const Model> model;
};

TensorSpec Encode(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& v, Quantization q) {
  TensorSpec t;
  t.name = name;
  t.shape = shape;
  const bool matrix = shape.size() == 2;
  t.dtype = matrix ? converter::WeightTypeOf(q) : WeightType::kF32;
  if (matrix && q == Quantization::kInt8) {
    converter::QuantizeInt8(v.data(), int(shape[0]), int(shape[1]), &t.data, &t.scales);
  } else if (matrix && q == Quantization::kFp16) {
    converter::EncodeF16(v.data(), v.size(), &t.data);
  } else {
    t.data.resize(v.size() * 4);
    std::memcpy(t.data.data(), v.data(), t.data.size());
  }
  return t;
}

// plain: the decoder's cross-attention output and FFN output projections are zero, so a decoder
// layer is SSRU, + x, and three layer norms (what the scalar reference below computes).
// The tiny HF checkpoint's shape here (its decoder self-attention is what SSRU replaces).
testing::TinyOptions Shape(uint32_t seed = 1) {
  testing::TinyOptions o;
  o.d_model = kD;
  o.heads = 2;
  o.decoder_layers = 2;
  o.ffn = 32;
  o.max_positions = 64;
  o.seed = seed;
  return o;
}

SsruModel MakeSsruModel(Quantization q, bool plain, uint32_t seed = 7) {
  const testing::TinyOptions o = Shape(seed);
  testing::TinyHf hf = testing::MakeTinyHf(o);
  if (plain) {
    for (int l = 0; l < o.decoder_layers; ++l) {
      const std::string p = "model.decoder.layers." + std::to_string(l);
      for (const char* n : {".encoder_attn.out_proj.weight", ".encoder_attn.out_proj.bias", ".fc2.weight", ".fc2.bias"})
        std::fill(hf.tensors[p + n].values.begin(), hf.tensors[p + n].values.end(), 0.0f);
    }
  }
  hf.generation["max_length"] = 48;
  // </s> likelier, so that hypotheses end at different lengths well before max_length
  const int eos = hf.config["eos_token_id"].get<int>();
  hf.tensors["final_logits_bias"].values[size_t(eos)] += 0.3f;
  testing::TempDir dir;
  hf.Write(dir.path());
  SsruModel m;
  converter::ConversionReport report;
  Status s = converter::ConvertHfDir(dir.path(), q, &m.spec, &report);
  EXPECT_TRUE(s.ok()) << s.ToString();
  for (const auto& [name, t] : hf.tensors) m.f32[name] = t.values;

  // self-attention out, SSRU in
  auto& ts = m.spec.tensors;
  ts.erase(std::remove_if(ts.begin(), ts.end(),
                          [](const TensorSpec& t) {
                            return t.name.rfind("model.decoder.layers.", 0) == 0 &&
                                   t.name.find(".self_attn") != std::string::npos;
                          }),
           ts.end());
  m.spec.config.decoder_layer = DecoderLayerKind::kSsru;
  std::mt19937 rng(seed + 100);
  std::uniform_real_distribution<float> u(-0.6f, 0.6f);
  auto add = [&](const std::string& name, std::vector<int64_t> shape, float center) {
    std::vector<float> v(size_t(shape[0] * (shape.size() > 1 ? shape[1] : 1)));
    for (float& x : v) x = center + u(rng);
    m.f32[name] = v;
    ts.push_back(Encode(name, shape, v, q));
  };
  for (int l = 0; l < o.decoder_layers; ++l) {
    const std::string p = "model.decoder.layers." + std::to_string(l);
    add(p + ".ssru.in_proj.weight", {kD, kD}, 0);
    add(p + ".ssru.forget_proj.weight", {kD, kD}, 0);
    add(p + ".ssru.forget_proj.bias", {kD}, 1.5f);  // a long memory: the state matters
    add(p + ".ssru_layer_norm.weight", {kD}, 1);
    add(p + ".ssru_layer_norm.bias", {kD}, 0);
  }
  m.bytes = converter::SerializeModel(m.spec);
  auto model = Model::FromBuffer(m.bytes.data(), m.bytes.size());
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (model.ok()) m.model = *model;
  return m;
}

// ---- a scalar reference of a plain model's decoder (teacher forcing) ----------------------------
std::vector<float> Ln(const std::vector<float>& x, const std::vector<float>& g, const std::vector<float>& b, float eps) {
  double mean = 0, var = 0;
  for (float v : x) mean += v;
  mean /= x.size();
  for (float v : x) var += (v - mean) * (v - mean);
  var /= x.size();
  std::vector<float> y(x.size());
  for (size_t j = 0; j < x.size(); ++j) y[j] = float((x[j] - mean) / std::sqrt(var + eps) * g[j] + b[j]);
  return y;
}

// logits[t][V] for the inputs (start, target[0], ..., target[n-2]).
std::vector<std::vector<float>> ReferenceLogits(const SsruModel& m, const std::vector<int32_t>& target) {
  const ModelConfig& c = m.model->config();
  const int V = c.target_vocab_size, L = c.decoder_layers;
  const auto& E = m.f32.at("model.shared.weight");
  const auto& bias = m.f32.at("final_logits_bias");
  auto mat = [](const std::vector<float>& w, const std::vector<float>& x, const std::vector<float>* b) {
    std::vector<float> y(x.size());
    for (size_t o = 0; o < y.size(); ++o) {
      double s = b ? (*b)[o] : 0.0;
      for (size_t i = 0; i < x.size(); ++i) s += double(w[o * x.size() + i]) * x[i];
      y[o] = float(s);
    }
    return y;
  };
  std::vector<std::vector<float>> state(size_t(L), std::vector<float>(kD, 0.0f)), out;
  int32_t token = c.decoder_start_id;
  std::vector<float> pos(kD);
  for (size_t t = 0; t < target.size(); ++t) {
    layout::MarianSinusoidRow(int(t), kD, pos.data());
    std::vector<float> x(kD);
    for (int j = 0; j < kD; ++j) x[j] = E[size_t(token) * kD + j] * c.embed_scale + pos[j];
    for (int l = 0; l < L; ++l) {
      const std::string p = "model.decoder.layers." + std::to_string(l);
      const auto xw = mat(m.f32.at(p + ".ssru.in_proj.weight"), x, nullptr);
      const auto g = mat(m.f32.at(p + ".ssru.forget_proj.weight"), x, &m.f32.at(p + ".ssru.forget_proj.bias"));
      for (int j = 0; j < kD; ++j) {
        const double f = 1.0 / (1.0 + std::exp(-double(g[j])));
        state[l][j] = float(f * state[l][j] + (1 - f) * xw[j]);
        x[j] = std::max(state[l][j], 0.0f) + x[j];
      }
      x = Ln(x, m.f32.at(p + ".ssru_layer_norm.weight"), m.f32.at(p + ".ssru_layer_norm.bias"), c.layer_norm_eps);
      x = Ln(x, m.f32.at(p + ".encoder_attn_layer_norm.weight"), m.f32.at(p + ".encoder_attn_layer_norm.bias"),
             c.layer_norm_eps);
      x = Ln(x, m.f32.at(p + ".final_layer_norm.weight"), m.f32.at(p + ".final_layer_norm.bias"), c.layer_norm_eps);
    }
    std::vector<float> logits(static_cast<size_t>(V));
    for (int v = 0; v < V; ++v) {
      double s = bias[size_t(v)];
      for (int j = 0; j < kD; ++j) s += double(E[size_t(v) * kD + j]) * x[j];
      logits[size_t(v)] = float(s);
    }
    out.push_back(logits);
    token = target[t];
  }
  return out;
}

std::vector<int32_t> Source(const ModelConfig& c, int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> ids;
  for (int i = 0; i < n; ++i) {
    int32_t id = int32_t(rng() % uint32_t(c.source_vocab_size - 1));
    if (id == c.eos_id || id == c.pad_id) id = c.unk_id;
    ids.push_back(id);
  }
  ids.push_back(c.eos_id);
  return ids;
}

std::unique_ptr<Translator> MakeTranslator(const SsruModel& m, int threads = 1, int batch = 8) {
  TranslatorLimits lim;
  lim.max_batch = batch;
  lim.max_beam = 4;
  lim.max_n_best = 4;
  lim.max_source_tokens = 32;
  lim.max_target_tokens = 48;
  lim.num_threads = threads;
  auto t = Translator::Create(m.model, lim);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(*t) : nullptr;
}

// ---- the file ---------------------------------------------------------------------------------

TEST(SsruDecoder, FileRecordsTheLayerKindAsVersion3) {
  SsruModel m = MakeSsruModel(Quantization::kInt8, false);
  ASSERT_TRUE(m.model);
  EXPECT_EQ(m.model->config().decoder_layer, DecoderLayerKind::kSsru);
  // a self-attention model of the same checkpoint is written as before (version 1, kind absent)
  ModelSpec plain = m.spec;
  plain.config.decoder_layer = DecoderLayerKind::kSelfAttention;
  const converter::AlignedBytes a = converter::SerializeModel(plain);
  auto loaded = Model::FromBuffer(a.data(), a.size());
  ASSERT_FALSE(loaded.ok());  // it lacks the self-attention tensors
  EXPECT_NE(loaded.status().message().find("model.decoder.layers.0.self_attn.q_proj.weight"), std::string::npos)
      << loaded.status().message();

  // a missing SSRU tensor is named
  for (const char* missing : {"model.decoder.layers.1.ssru.forget_proj.bias", "model.decoder.layers.0.ssru.in_proj.weight",
                              "model.decoder.layers.1.ssru_layer_norm.weight"}) {
    ModelSpec s = m.spec;
    s.tensors.erase(std::remove_if(s.tensors.begin(), s.tensors.end(),
                                   [&](const TensorSpec& t) { return t.name == missing; }),
                    s.tensors.end());
    const converter::AlignedBytes f = converter::SerializeModel(s);
    auto r = Model::FromBuffer(f.data(), f.size());
    ASSERT_FALSE(r.ok()) << missing;
    EXPECT_NE(r.status().message().find(missing), std::string::npos) << r.status().message();
  }
}

TEST(SsruDecoder, ArenaPlansStatesInsteadOfAKvCache) {
  SsruModel m = MakeSsruModel(Quantization::kInt8, false);
  ASSERT_TRUE(m.model);
  testing::TempDir dir;
  testing::MakeTinyHf(Shape()).Write(dir.path());
  converter::AlignedBytes tf;
  converter::ConversionReport report;
  ASSERT_TRUE(converter::ConvertToBytes(dir.path(), Quantization::kInt8, &tf, &report).ok());
  auto transformer = Model::FromBuffer(tf.data(), tf.size());
  ASSERT_TRUE(transformer.ok());
  TranslatorLimits lim;
  lim.max_batch = 4;
  lim.max_beam = 4;
  lim.max_target_tokens = 48;
  auto ssru_plan = Translator::PlanArena(*m.model, lim);
  auto tf_plan = Translator::PlanArena(**transformer, lim);
  ASSERT_TRUE(ssru_plan.ok() && tf_plan.ok());
  auto bytes = [](const ArenaPlanInfo& p, const std::string& name) {  // 0: not in the plan
    for (const ArenaBufferInfo& b : p.buffers)
      if (b.name == name) return b.bytes;
    return size_t(0);
  };
  const size_t R = 4 * 4, T = 48, L = 2;
  EXPECT_EQ(bytes(*ssru_plan, "decoder.k_cache"), 0u);
  EXPECT_EQ(bytes(*ssru_plan, "decoder.v_cache"), 0u);
  EXPECT_EQ(bytes(*ssru_plan, "decoder.ssru_state"), 2 * L * R * kD * sizeof(float));
  EXPECT_EQ(bytes(*tf_plan, "decoder.k_cache"), L * T * R * kD * sizeof(float));
  EXPECT_EQ(bytes(*tf_plan, "decoder.ssru_state"), 0u);
  EXPECT_LT(ssru_plan->total_bytes, tf_plan->total_bytes);
}

// ---- the step -----------------------------------------------------------------------------------

TEST(SsruDecoder, ForcedLogitsMatchTheScalarReference) {
  for (Quantization q : {Quantization::kFp32}) {
    SsruModel m = MakeSsruModel(q, /*plain=*/true);
    ASSERT_TRUE(m.model);
    auto tr = MakeTranslator(m);
    ASSERT_TRUE(tr);
    const ModelConfig& c = m.model->config();
    const std::vector<int32_t> src = Source(c, 9, 1);
    std::vector<int32_t> target;
    std::mt19937 rng(5);
    for (int i = 0; i < 20; ++i) target.push_back(int32_t(rng() % uint32_t(c.target_vocab_size - 1)));
    std::vector<float> got(target.size() * size_t(c.target_vocab_size));
    ASSERT_TRUE(tr->ForcedLogits(src.data(), int(src.size()), target.data(), int(target.size()), got.data()).ok());
    const auto want = ReferenceLogits(m, target);
    double worst = 0;
    for (size_t t = 0; t < target.size(); ++t)
      for (int v = 0; v < c.target_vocab_size; ++v)
        worst = std::max(worst, double(std::fabs(got[t * c.target_vocab_size + v] - want[t][size_t(v)])));
    EXPECT_LT(worst, 2e-4) << "largest logit difference";
    // the state matters: a different history gives different logits
    std::vector<int32_t> other = target;
    other[0] = (other[0] + 1) % (c.target_vocab_size - 1);
    const auto want_other = ReferenceLogits(m, other);
    double diff = 0;  // position 2: the same input token, another state
    for (int v = 0; v < c.target_vocab_size; ++v)
      diff = std::max(diff, double(std::fabs(want_other[2][size_t(v)] - want[2][size_t(v)])));
    EXPECT_GT(diff, 1e-3);
  }
}

// log-probability of `ids` + </s> under forced logits (the search's log-softmax over the tokens
// that may be generated: bad_word_ids excluded)
double ForcedScore(Translator& tr, const ModelConfig& c, const std::vector<int32_t>& src, std::vector<int32_t> ids,
                   bool eos = true) {
  if (eos) ids.push_back(c.eos_id);
  const int V = c.target_vocab_size;
  std::vector<float> logits(ids.size() * size_t(V));
  EXPECT_TRUE(tr.ForcedLogits(src.data(), int(src.size()), ids.data(), int(ids.size()), logits.data()).ok());
  double total = 0;
  for (size_t t = 0; t < ids.size(); ++t) {
    const float* row = logits.data() + t * V;
    double mx = -1e30, sum = 0;
    auto allowed = [&](int v) { return std::find(c.bad_word_ids.begin(), c.bad_word_ids.end(), v) == c.bad_word_ids.end() && v != c.pad_id; };
    for (int v = 0; v < V; ++v)
      if (allowed(v)) mx = std::max(mx, double(row[v]));
    for (int v = 0; v < V; ++v)
      if (allowed(v)) sum += std::exp(double(row[v]) - mx);
    total += double(row[ids[t]]) - mx - std::log(sum);
  }
  return total;
}

TEST(SsruDecoder, BeamHypothesesScoreTheirOwnPaths) {
  for (Quantization q : {Quantization::kInt8, Quantization::kFp32}) {
    SsruModel m = MakeSsruModel(q, /*plain=*/false);
    ASSERT_TRUE(m.model);
    auto tr = MakeTranslator(m);
    ASSERT_TRUE(tr);
    const ModelConfig& c = m.model->config();
    TranslateOptions opt;
    opt.beam_size = 4;
    opt.n_best = 4;
    opt.length_penalty = 0;  // score = the sum of log-probabilities
    opt.return_scores = true;
    opt.max_length = 14;
    int distinct_lengths = 0, scored = 0;
    for (uint32_t s = 0; s < 6; ++s) {
      const std::vector<int32_t> src = Source(c, 6 + int(s), s + 11);
      std::vector<TranslationResult> out;
      ASSERT_TRUE(tr->TranslateIds({src}, opt, &out).ok());
      ASSERT_EQ(out.size(), 1u);
      ASSERT_GE(out[0].hypotheses.size(), 2u);
      std::vector<size_t> lengths;
      for (const Hypothesis& h : out[0].hypotheses) {
        lengths.push_back(h.ids.size());
        const bool cut = h.ids.size() + 1 >= size_t(opt.max_length);  // at max_length (incl. </s>): no </s>
        scored += !cut;
        EXPECT_NEAR(h.score, ForcedScore(*tr, c, src, h.ids, !cut), 1e-4 * (1 + std::fabs(h.score)))
            << converter::QuantizationName(q) << " sentence " << s << " hypothesis of " << h.ids.size() << " ids";
      }
      std::sort(lengths.begin(), lengths.end());
      distinct_lengths += int(std::unique(lengths.begin(), lengths.end()) - lengths.begin());
      // greedy is beam 1, and the best of beam 4 scores at least as well as greedy's path
      TranslateOptions g = opt;
      g.beam_size = 1;
      g.n_best = 1;
      std::vector<TranslationResult> greedy;
      ASSERT_TRUE(tr->TranslateIds({src}, g, &greedy).ok());
      ASSERT_EQ(greedy[0].hypotheses.size(), 1u);
      const Hypothesis& gh = greedy[0].hypotheses[0];
      EXPECT_NEAR(gh.score, ForcedScore(*tr, c, src, gh.ids, gh.ids.size() + 1 < size_t(opt.max_length)),
                  1e-4 * (1 + std::fabs(gh.score)));
    }
    EXPECT_GT(distinct_lengths, 6) << "the beams should differ";
    EXPECT_GE(scored, 1) << "hypotheses that end with </s>";
  }
}

TEST(SsruDecoder, BatchesAndThreadsTranslateEachSentenceAlike) {
  SsruModel m = MakeSsruModel(Quantization::kInt8, false, 9);
  ASSERT_TRUE(m.model);
  const ModelConfig& c = m.model->config();
  std::vector<std::vector<int32_t>> batch;
  for (uint32_t s = 0; s < 8; ++s) batch.push_back(Source(c, 3 + int(s) * 2, s + 40));
  for (int beam : {1, 4}) {
    TranslateOptions opt;
    opt.beam_size = beam;
    opt.n_best = beam;
    opt.max_length = 40;
    auto one = MakeTranslator(m, 1, 1);
    auto many = MakeTranslator(m, 2, 8);  // row-parallel steps (>= 8 rows per thread at beam 4)
    ASSERT_TRUE(one && many);
    std::vector<TranslationResult> together;
    ASSERT_TRUE(many->TranslateIds(batch, opt, &together).ok());
    ASSERT_EQ(together.size(), batch.size());
    for (size_t i = 0; i < batch.size(); ++i) {
      std::vector<TranslationResult> alone;
      ASSERT_TRUE(one->TranslateIds({batch[i]}, opt, &alone).ok());
      ASSERT_EQ(alone[0].hypotheses.size(), together[i].hypotheses.size()) << i;
      for (size_t h = 0; h < alone[0].hypotheses.size(); ++h) {
        EXPECT_EQ(alone[0].hypotheses[h].ids, together[i].hypotheses[h].ids) << "beam " << beam << " sentence " << i;
        EXPECT_EQ(alone[0].hypotheses[h].score, together[i].hypotheses[h].score);
      }
    }
  }
}

TEST(SsruDecoder, EveryKernelTableTranslatesAlike) {
  SsruModel m = MakeSsruModel(Quantization::kInt8, false, 3);
  ASSERT_TRUE(m.model);
  const kernels::KernelTable* tables[16];
  const int n = kernels::AvailableKernels(tables, 16);
  ASSERT_GE(n, 1);
  if (n == 1) GTEST_SKIP() << "no SIMD kernel table on this CPU: only the reference runs here";
  testing::TempDir dir;
  const std::string model = dir / "ssru.mtlite", input = dir / "in.txt";
  testing::WriteText(model, std::string(m.bytes.begin(), m.bytes.end()));
  testing::WriteText(input, "the cat sat on a mat\nbig red dog ran to the house\na bird sings and the tree is blue\n");
  for (const char* args : {"--beam 4 --n-best 2 --batch 3 --threads 2", "--batch 3"}) {
    std::string want;
    for (int t = 0; t < n; ++t) {
      const auto r = testing::Run(std::string("MTLITE_KERNELS=") + tables[t]->name + " '" + testing::CliPath() +
                                  "' translate -m '" + model + "' " + args + " < '" + input + "' 2>&1");
      ASSERT_EQ(r.exit_code, 0) << tables[t]->name << " " << args << "\n" << r.output;
      if (t == 0) want = r.output;
      else EXPECT_EQ(want, r.output) << tables[t]->name << " " << args;
    }
    EXPECT_FALSE(want.empty());
  }
}

}  // namespace
}  // namespace mtlite

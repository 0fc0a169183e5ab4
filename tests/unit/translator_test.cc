// Translator behaviour: batching == one by one, padding masks, empty input, alignments, limits,
// threads, C API. Needs only the converted demo models (MTLITE_TEST_MODEL_DIR), so it is built in
// cross builds too and runs under qemu (scripts/cross_test.sh), int8 only there.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "kernels.h"
#include "mtlite/mtlite.h"
#include "mtlite/mtlite.hpp"
#include "unit/translator_test_util.h"

namespace mtlite {
namespace {

using testing_util::DevLines;
using testing_util::LoadOrDie;
using testing_util::ModelPath;
using testing_util::TranslatorTest;

TEST_P(TranslatorTest, BatchOfMixedLengthsEqualsOneByOne) {
  auto model = LoadOrDie(GetParam());
  ASSERT_TRUE(model);
  TranslatorLimits lim;
  lim.max_batch = 8;
  lim.max_beam = 4;
  lim.max_target_tokens = 96;
  auto tr = Translator::Create(model, lim);
  ASSERT_TRUE(tr.ok()) << tr.status().ToString();
  auto lines = DevLines(8);
  lines[3] = "Hi.";  // very short next to long ones: lots of padding
  for (int beam : {1, 4}) {
    TranslateOptions opt;
    opt.beam_size = beam;
    opt.return_scores = true;
    std::vector<TranslationResult> batched;
    ASSERT_TRUE(tr.value()->Translate(lines, opt, &batched).ok());
    for (size_t i = 0; i < lines.size(); ++i) {
      std::vector<TranslationResult> one;
      ASSERT_TRUE(tr.value()->Translate({lines[i]}, opt, &one).ok());
      EXPECT_EQ(one[0].hypotheses[0].ids, batched[i].hypotheses[0].ids) << "line " << i << " beam " << beam;
      EXPECT_EQ(one[0].hypotheses[0].text, batched[i].hypotheses[0].text);
      EXPECT_NEAR(one[0].hypotheses[0].score, batched[i].hypotheses[0].score, 1e-4);
      EXPECT_FALSE(batched[i].hypotheses[0].text.empty());
    }
  }
}

TEST_P(TranslatorTest, EmptyInputGivesEmptyOutputAndNoNaN) {
  auto model = LoadOrDie(GetParam());
  ASSERT_TRUE(model);
  TranslatorLimits lim;
  lim.max_batch = 3;
  lim.max_beam = 2;
  lim.max_n_best = 2;
  auto tr = Translator::Create(model, lim);
  ASSERT_TRUE(tr.ok());
  std::vector<TranslationResult> out;
  TranslateOptions opt;
  opt.return_scores = true;
  ASSERT_TRUE(tr.value()->Translate({"", "   ", "A dog runs."}, opt, &out).ok());
  EXPECT_EQ(out[0].hypotheses[0].text, "");
  EXPECT_TRUE(out[0].hypotheses[0].ids.empty());
  EXPECT_EQ(out[1].hypotheses[0].text, "");
  EXPECT_FALSE(out[2].hypotheses[0].text.empty());
  // Zero source tokens through the ids API: every cross-attention key is masked.
  // The fully masked rows give zeros (never NaN): decoding still ends with finite scores.
  for (int beam : {1, 2}) {
    opt.beam_size = beam;
    opt.max_length = 20;
    ASSERT_TRUE(tr.value()->TranslateIds({{}}, opt, &out).ok());
    EXPECT_TRUE(std::isfinite(out[0].hypotheses[0].score)) << "beam " << beam;
    for (int32_t id : out[0].hypotheses[0].ids) EXPECT_LT(id, model->config().target_vocab_size);
  }
}

TEST_P(TranslatorTest, AlignmentRowsSumToOneOverRealSourceTokens) {
  auto model = LoadOrDie(GetParam());
  ASSERT_TRUE(model);
  TranslatorLimits lim;
  lim.max_batch = 2;
  lim.max_beam = 4;
  lim.alignments = true;
  auto tr = Translator::Create(model, lim);
  ASSERT_TRUE(tr.ok());
  std::vector<std::vector<int32_t>> src(2);
  ASSERT_TRUE(EncodeSource(*model, "A man in a blue shirt is standing on a ladder cleaning windows.", &src[0]).ok());
  ASSERT_TRUE(EncodeSource(*model, "Two dogs play.", &src[1]).ok());
  ASSERT_LT(src[1].size(), src[0].size());
  for (int beam : {1, 4}) {
    TranslateOptions opt;
    opt.beam_size = beam;
    opt.return_alignments = true;
    std::vector<TranslationResult> out;
    ASSERT_TRUE(tr.value()->TranslateIds(src, opt, &out).ok());
    for (int s = 0; s < 2; ++s) {
      const Hypothesis& h = out[s].hypotheses[0];
      ASSERT_EQ(h.source_tokens, int(src[0].size()));  // padded to the batch's longest
      ASSERT_EQ(h.alignment.size(), size_t(h.ids.size() + 1) * h.source_tokens);
      for (size_t t = 0; t <= h.ids.size(); ++t) {
        double sum = 0;
        for (int j = 0; j < h.source_tokens; ++j) {
          const float a = h.alignment[t * h.source_tokens + j];
          ASSERT_TRUE(std::isfinite(a));
          if (j >= int(src[s].size())) {
            EXPECT_EQ(a, 0.0f) << "padding column " << j << " has weight";
          }
          sum += a;
        }
        EXPECT_NEAR(sum, 1.0, 1e-4) << "sentence " << s << " row " << t;
      }
    }
  }
}

TEST_P(TranslatorTest, LimitsAreEnforcedWithClearErrors) {
  auto model = LoadOrDie(GetParam());
  ASSERT_TRUE(model);
  TranslatorLimits lim;
  lim.max_batch = 2;
  lim.max_source_tokens = 16;
  lim.max_input_bytes = 200;
  auto tr = Translator::Create(model, lim);
  ASSERT_TRUE(tr.ok());
  auto bytes = Translator::ArenaBytes(*model, lim);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(bytes.value(), tr.value()->arena_bytes());
  std::vector<TranslationResult> out;
  TranslateOptions opt;
  std::string longtext;
  for (int i = 0; i < 30; ++i) longtext += "word ";
  Status s = tr.value()->Translate({longtext}, opt, &out);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s.ToString();
  EXPECT_NE(s.message().find("max_source_tokens"), std::string::npos) << s.message();
  s = tr.value()->Translate({std::string(300, 'a')}, opt, &out);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s.ToString();
  s = tr.value()->Translate({"a", "b", "c"}, opt, &out);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s.ToString();
  s = tr.value()->Translate({std::string("bad \xff utf8")}, opt, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  opt.beam_size = 5;
  s = tr.value()->Translate({"a"}, opt, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  opt.beam_size = 1;
  s = tr.value()->TranslateIds({{5, 999999, 0}}, opt, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  lim.max_beam = 0;
  EXPECT_FALSE(Translator::Create(model, lim).ok());
}

TEST_P(TranslatorTest, TwoThreadsGiveTheSameTranslations) {
  auto model = LoadOrDie(GetParam());
  ASSERT_TRUE(model);
  TranslatorLimits lim;
  lim.max_batch = 16;
  lim.max_beam = 4;
  lim.alignments = true;
  auto t1 = Translator::Create(model, lim);
  lim.num_threads = 2;
  auto t2 = Translator::Create(model, lim);
  lim.num_threads = 3;  // more threads than this machine may have cores: int8 only (f32 spins in XNNPACK)
  auto t3 = Translator::Create(model, lim);
  ASSERT_TRUE(t1.ok() && t2.ok() && t3.ok());
  // 4 sentences, greedy and beam 4; 16 greedy, where the encoder's layers have >= 64 rows and
  // split by rows (linear.cc), not by output columns. With int8 weights, 16 and 64 decoder rows
  // run row-parallel on 2 threads (each thread all layers over its rows, decoder_step.cc), 64 on
  // 3 threads in uneven thirds; 4 rows one op at a time. Ids, scores and alignments the same to
  // the bit.
  const bool int8 = std::string(GetParam()) == "int8";
  for (const auto& [sentences, beam] : {std::pair{4, 1}, std::pair{4, 4}, std::pair{16, 1}, std::pair{16, 4}}) {
    if (!int8 && sentences * beam > 16) continue;  // f32 (XNNPACK): one op at a time at any row count
    SCOPED_TRACE(std::to_string(sentences) + " sentences, beam " + std::to_string(beam));
    auto lines = DevLines(sentences);
    TranslateOptions opt;
    opt.beam_size = beam;
    opt.max_length = 64;
    opt.return_scores = true;
    opt.return_alignments = true;
    std::vector<TranslationResult> a, b, c;
    ASSERT_TRUE(t1.value()->Translate(lines, opt, &a).ok());
    ASSERT_TRUE(t2.value()->Translate(lines, opt, &b).ok());
    if (int8) {
      ASSERT_TRUE(t3.value()->Translate(lines, opt, &c).ok());
    }
    for (size_t i = 0; i < lines.size(); ++i) {
      for (const auto* other : {&b, &c}) {
        if (other->empty()) continue;
        const Hypothesis& x = a[i].hypotheses[0];
        const Hypothesis& y = (*other)[i].hypotheses[0];
        EXPECT_EQ(x.ids, y.ids) << i;
        EXPECT_EQ(x.score, y.score) << i;
        EXPECT_EQ(x.alignment, y.alignment) << i;
        EXPECT_FALSE(x.alignment.empty()) << i;
      }
    }
  }
}

TEST_P(TranslatorTest, NBestIsSortedAndDistinct) {
  auto model = LoadOrDie(GetParam());
  ASSERT_TRUE(model);
  TranslatorLimits lim;
  lim.max_beam = 4;
  lim.max_n_best = 4;
  auto tr = Translator::Create(model, lim);
  ASSERT_TRUE(tr.ok());
  TranslateOptions opt;
  opt.beam_size = 4;
  opt.n_best = 4;
  opt.return_scores = true;
  std::vector<TranslationResult> out;
  ASSERT_TRUE(tr.value()->Translate({"A little girl climbs into a wooden playhouse."}, opt, &out).ok());
  const auto& h = out[0].hypotheses;
  ASSERT_EQ(h.size(), 4u);
  for (size_t i = 1; i < h.size(); ++i) {
    EXPECT_GE(h[i - 1].score, h[i].score);
    EXPECT_NE(h[i - 1].ids, h[i].ids);
  }
}

#ifdef MTLITE_EMULATED_TESTS
// Under qemu the fp32 path (XNNPACK) takes seconds per sentence; scripts/cross_test.sh runs it
// end to end instead. The int8 path here is the one specified bit-identical across ISAs.
INSTANTIATE_TEST_SUITE_P(Models, TranslatorTest, ::testing::Values("int8"));
#else
INSTANTIATE_TEST_SUITE_P(Models, TranslatorTest, ::testing::Values("int8", "fp32"));
#endif

TEST(CApi, LoadTranslateAndErrors) {
  EXPECT_STREQ(mtlite_kernel_table(), kernels::BestKernels().name);
  EXPECT_STREQ(KernelTableName(), mtlite_kernel_table());
  mtlite_model* m = nullptr;
  EXPECT_NE(mtlite_model_load("/nonexistent.mtlite", 0, &m), MTLITE_OK);
  EXPECT_NE(std::strlen(mtlite_last_error()), 0u);
  ASSERT_EQ(mtlite_model_load(ModelPath("int8").c_str(), 1, &m), MTLITE_OK) << mtlite_last_error();
  mtlite_limits lim;
  mtlite_limits_default(&lim);
  lim.max_batch = 2;
  mtlite_translator* t = nullptr;
  ASSERT_EQ(mtlite_translator_create(m, &lim, &t), MTLITE_OK) << mtlite_last_error();
  EXPECT_GT(mtlite_translator_arena_bytes(t), 0u);
  const char* texts[2] = {"A dog runs in the park.", "Hello."};
  mtlite_options opt;
  mtlite_options_default(&opt);
  ASSERT_EQ(mtlite_translate(t, texts, nullptr, 2, &opt), MTLITE_OK) << mtlite_last_error();
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(mtlite_result_count(t, i), 1);
    mtlite_hypothesis h;
    ASSERT_EQ(mtlite_result_get(t, i, 0, &h), MTLITE_OK);
    EXPECT_GT(h.text_len, 0u);
    EXPECT_GT(h.num_ids, 0);
  }
  mtlite_hypothesis h;
  EXPECT_EQ(mtlite_result_get(t, 5, 0, &h), MTLITE_OUT_OF_RANGE);
  const char* bad[1] = {"\xc3"};
  EXPECT_EQ(mtlite_translate(t, bad, nullptr, 1, &opt), MTLITE_INVALID_ARGUMENT);
  mtlite_translator_free(t);
  mtlite_model_free(m);
}

}  // namespace
}  // namespace mtlite

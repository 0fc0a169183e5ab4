// The vocabulary shortlist at run time, on the demo models with shortlist sections set in memory
// (the file section and its builder are tested with the converter).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "model_data.h"
#include "mtlite/mtlite.hpp"
#include "unit/translator_test_util.h"

namespace mtlite {
namespace {

using testing_util::DevLines;
using testing_util::LoadOrDie;
using testing_util::TranslatorTest;

// A shortlist section held by the test: frequent ids only (every source token maps to nothing).
struct TestShortlist {
  std::vector<int32_t> frequent, targets;
  std::vector<uint32_t> offsets;
  void Install(const Model& model) {
    const ModelConfig& c = model.config();
    offsets.assign(size_t(c.source_vocab_size) + 1, 0);
    detail::ShortlistView& v = const_cast<detail::ModelData&>(model.data()).shortlist;
    v.present = true;
    v.frequent = frequent.data();
    v.num_frequent = int(frequent.size());
    v.offsets = offsets.data();
    v.targets = targets.data();
    v.include_source_ids = false;
  }
};

std::vector<TranslationResult> TranslateAll(const std::shared_ptr<const Model>& model, const std::vector<std::string>& lines,
                                            int beam, bool shortlist, Status* status = nullptr) {
  TranslatorLimits lim;
  lim.max_batch = int(lines.size());
  lim.max_beam = 4;
  auto tr = Translator::Create(model, lim);
  EXPECT_TRUE(tr.ok()) << tr.status().ToString();
  TranslateOptions opt;
  opt.beam_size = beam;
  opt.return_scores = true;
  opt.use_shortlist = shortlist;
  std::vector<TranslationResult> out;
  Status s = tr.value()->Translate(lines, opt, &out);
  if (status) *status = s;
  EXPECT_TRUE(status || s.ok()) << s.ToString();
  return out;
}

TEST_P(TranslatorTest, ShortlistNeedsTheSection) {
  auto model = LoadOrDie(GetParam());
  ASSERT_TRUE(model);
  Status s;
  TranslateAll(model, DevLines(1), 1, true, &s);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("shortlist"), std::string::npos);
}

// Every token a candidate: the same logits (the block gather computes the same rows) and the same
// log-softmax (masked columns add exact zeros), so the same translations and scores.
TEST_P(TranslatorTest, ShortlistOfEveryTokenChangesNothing) {
  auto model = LoadOrDie(GetParam());
  ASSERT_TRUE(model);
  const auto lines = DevLines(6);
  const auto full1 = TranslateAll(model, lines, 1, false), full4 = TranslateAll(model, lines, 4, false);
  TestShortlist sl;
  for (int t = 0; t < model->config().target_vocab_size; ++t) sl.frequent.push_back(t);
  sl.Install(*model);
  const auto short1 = TranslateAll(model, lines, 1, true), short4 = TranslateAll(model, lines, 4, true);
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(short1[i].hypotheses[0].ids, full1[i].hypotheses[0].ids) << i;
    EXPECT_EQ(short1[i].hypotheses[0].score, full1[i].hypotheses[0].score) << i;
    EXPECT_EQ(short4[i].hypotheses[0].ids, full4[i].hypotheses[0].ids) << i;
    EXPECT_EQ(short4[i].hypotheses[0].score, full4[i].hypotheses[0].score) << i;
  }
  const_cast<detail::ModelData&>(model->data()).shortlist = detail::ShortlistView();
}

// Greedy picks the argmax; if the full-vocabulary argmax of every step is a candidate, the
// shortlist picks it too (the scores differ: the log-softmax runs over the candidates only).
// Random other candidates make the blocks sparse.
TEST_P(TranslatorTest, ShortlistKeepsGreedyOutputWhenItsTokensAreCandidates) {
  auto model = LoadOrDie(GetParam());
  ASSERT_TRUE(model);
  const auto lines = DevLines(8);
  const auto full = TranslateAll(model, lines, 1, false);
  TestShortlist sl;
  std::set<int32_t> ids = {model->config().eos_id};
  for (const auto& r : full) ids.insert(r.hypotheses[0].ids.begin(), r.hypotheses[0].ids.end());
  std::mt19937 rng(3);
  for (int i = 0; i < 40; ++i) ids.insert(int32_t(rng() % uint32_t(model->config().target_vocab_size)));
  sl.frequent.assign(ids.begin(), ids.end());
  sl.Install(*model);
  const auto restricted = TranslateAll(model, lines, 1, true);
  const auto beam = TranslateAll(model, lines, 4, true);
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(restricted[i].hypotheses[0].ids, full[i].hypotheses[0].ids) << i;
    EXPECT_GE(restricted[i].hypotheses[0].score, full[i].hypotheses[0].score - 1e-4) << i;
    for (int32_t t : beam[i].hypotheses[0].ids) EXPECT_TRUE(ids.count(t)) << "token " << t << " is no candidate";
    EXPECT_TRUE(std::isfinite(beam[i].hypotheses[0].score));
  }
  const_cast<detail::ModelData&>(model->data()).shortlist = detail::ShortlistView();
}

// Forced decoding (ForcedLogits, which scoring is built on) reads every logits column in token
// order, also after a translate call with the shortlist on the same translator. The output
// projection used to keep that call's candidate blocks: the logits came back in block order over
// a fraction of the vocabulary (a reference score of -1.41 read as -58.5).
TEST_P(TranslatorTest, ForcedLogitsAfterAShortlistCallAreTheFullVocabulary) {
  auto model = LoadOrDie(GetParam());
  ASSERT_TRUE(model);
  const auto lines = DevLines(2);
  const auto full = TranslateAll(model, lines, 1, false);
  const int V = model->config().target_vocab_size;
  TestShortlist sl;
  std::set<int32_t> ids = {model->config().eos_id};
  for (const auto& r : full) ids.insert(r.hypotheses[0].ids.begin(), r.hypotheses[0].ids.end());
  std::mt19937 rng(5);
  for (int i = 0; i < 20; ++i) ids.insert(int32_t(rng() % uint32_t(V)));
  sl.frequent.assign(ids.begin(), ids.end());
  sl.Install(*model);
  TranslatorLimits lim;
  lim.max_batch = int(lines.size());
  lim.max_beam = 4;
  std::vector<int32_t> src;
  ASSERT_TRUE(EncodeSource(*model, lines[0], &src).ok());
  const std::vector<int32_t>& tgt = full[0].hypotheses[0].ids;
  const int tgt_len = int(tgt.size());
  ASSERT_GT(tgt_len, 0);
  auto forced = [&](Translator& tr) {
    std::vector<float> logits(size_t(tgt_len) * size_t(V));
    const Status s = tr.ForcedLogits(src.data(), int(src.size()), tgt.data(), tgt_len, logits.data());
    EXPECT_TRUE(s.ok()) << s.ToString();
    return logits;
  };
  auto fresh = Translator::Create(model, lim);
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  const std::vector<float> want = forced(*fresh.value());
  auto used = Translator::Create(model, lim);
  ASSERT_TRUE(used.ok());
  for (int beam : {1, 4}) {
    TranslateOptions opt;
    opt.beam_size = beam;
    opt.use_shortlist = true;
    std::vector<TranslationResult> out;
    const Status s = used.value()->Translate(lines, opt, &out);
    ASSERT_TRUE(s.ok()) << s.ToString();
    const std::vector<float> got = forced(*used.value());
    size_t differ = 0;
    for (size_t i = 0; i < got.size(); ++i) differ += std::memcmp(&got[i], &want[i], sizeof(float)) != 0;
    EXPECT_EQ(differ, 0u) << "beam " << beam << ": " << differ << " of " << got.size() << " logits differ";
  }
  const_cast<detail::ModelData&>(model->data()).shortlist = detail::ShortlistView();
}

INSTANTIATE_TEST_SUITE_P(Models, TranslatorTest, ::testing::Values("int8", "fp32"));

}  // namespace
}  // namespace mtlite

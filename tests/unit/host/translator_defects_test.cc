// Regression tests for defects found by a review of the translator: each failed (or crashed)
// before its fix.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "mtlite/mtlite.hpp"
#include "testing_hooks.h"
#include "unit/translator_test_util.h"

namespace mtlite {
namespace {

using testing_util::DevLines;
using testing_util::LoadOrDie;
using testing_util::TranslatorTest;

// Every input of the batch empty: the search never runs the decoder. The hypothesis counts used
// to be read from the arena without being set (stale or uninitialised memory: here 0x7f7f7f7f,
// which made the result sort run far past the buffer).
TEST_P(TranslatorTest, AllEmptyBatchOnStaleArena) {
  auto model = LoadOrDie(GetParam());
  ASSERT_TRUE(model);
  TranslatorLimits lim;
  lim.max_batch = 3;
  lim.max_beam = 4;
  lim.max_n_best = 2;
  auto tr = Translator::Create(model, lim);
  ASSERT_TRUE(tr.ok()) << tr.status().ToString();
  for (int beam : {1, 4}) {
    detail::FillArenaForTesting(*tr.value(), 0x7f);
    std::vector<std::string_view> in = {"", "   ", ""};
    TranslateOptions opt;
    opt.beam_size = beam;
    opt.n_best = beam == 4 ? 2 : 1;
    const SentenceResultView* res = nullptr;
    Status s = tr.value()->TranslateViews(in.data(), in.size(), opt, &res);
    ASSERT_TRUE(s.ok()) << s.ToString();
    for (size_t i = 0; i < in.size(); ++i) {
      ASSERT_EQ(res[i].num_hypotheses, 1);
      EXPECT_EQ(res[i].hypotheses[0].num_ids, 0);
      EXPECT_TRUE(res[i].hypotheses[0].text.empty());
    }
  }
}

// Null input arrays are an INVALID_ARGUMENT, not a dereference.
TEST_P(TranslatorTest, NullInputsAreInvalidArguments) {
  auto model = LoadOrDie(GetParam());
  ASSERT_TRUE(model);
  TranslatorLimits lim;
  lim.max_batch = 2;
  auto tr = Translator::Create(model, lim);
  ASSERT_TRUE(tr.ok());
  Translator& t = *tr.value();
  TranslateOptions opt;
  const SentenceResultView* res = nullptr;
  EXPECT_EQ(t.TranslateViews(nullptr, 2, opt, &res).code(), StatusCode::kInvalidArgument);
  const int32_t ids[] = {5, 6, 0};
  const int32_t* ptrs[] = {ids};
  const int lens[] = {3};
  EXPECT_EQ(t.TranslateIdsViews(nullptr, lens, 1, opt, &res).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(t.TranslateIdsViews(ptrs, nullptr, 1, opt, &res).code(), StatusCode::kInvalidArgument);
  const int32_t* null_row[] = {nullptr};
  EXPECT_EQ(t.TranslateIdsViews(null_row, lens, 1, opt, &res).code(), StatusCode::kInvalidArgument);
  std::string_view one = "Hello.";
  EXPECT_EQ(t.TranslateViews(&one, 1, opt, nullptr).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(t.TranslateViews(nullptr, 0, opt, &res).ok());  // an empty batch is fine
  EXPECT_TRUE(t.TranslateIdsViews(ptrs, lens, 1, opt, &res).ok());
  std::vector<float> logits(16);
  EXPECT_EQ(t.ForcedLogits(nullptr, 3, ids, 1, logits.data()).code(), StatusCode::kInvalidArgument);
}

// A failure inside the forward pass (an XNNPACK setup/run status, here injected into the n-th
// linear layer) reaches the caller as a Status; the translator stays usable. Beam 4 over 4
// sentences is 16 decoder rows: with int8 weights on 2 threads a row-parallel step, where the
// fault may hit either thread's rows.
TEST_P(TranslatorTest, ForwardFailureReachesTheCaller) {
  auto model = LoadOrDie(GetParam());
  ASSERT_TRUE(model);
  TranslatorLimits lim;
  lim.max_batch = 4;
  lim.num_threads = 2;
  auto tr = Translator::Create(model, lim);
  ASSERT_TRUE(tr.ok());
  Translator& t = *tr.value();
  std::vector<std::string> lines = DevLines(4);
  // mode 1: the row-parallel steps split their larger layers by columns (a team whose members
  // wait for each other at barriers: a member's failure must release the others)
  for (int mode : {0, 1})
    for (int beam : {1, 4}) {
      detail::SetDecoderColumnSplitForTesting(t, mode);
      TranslateOptions opt;
      opt.beam_size = beam;
      std::vector<TranslationResult> want, got;
      ASSERT_TRUE(t.Translate(lines, opt, &want).ok());
      for (long n : {0L, 3L, 37L, 200L, 201L}) {  // in the encoder, the cross K/V, the decoder steps
        detail::InjectLinearFaultForTesting(t, n);
        Status s = t.Translate(lines, opt, &got);
        EXPECT_EQ(s.code(), StatusCode::kInternal) << "fault at linear " << n << " mode " << mode;
        EXPECT_NE(s.message().find("injected"), std::string::npos) << s.message();
        detail::InjectLinearFaultForTesting(t, -1);
        ASSERT_TRUE(t.Translate(lines, opt, &got).ok());
        for (size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(got[i].hypotheses[0].ids, want[i].hypotheses[0].ids);
      }
    }
  detail::SetDecoderColumnSplitForTesting(t, 0);
  detail::InjectLinearFaultForTesting(t, 2);
  const int32_t src[] = {5, 6, 0}, tgt[] = {7, 0};
  std::vector<float> logits(2 * size_t(model->config().target_vocab_size));
  EXPECT_EQ(t.ForcedLogits(src, 3, tgt, 2, logits.data()).code(), StatusCode::kInternal);
  detail::InjectLinearFaultForTesting(t, -1);
}

// Beam search runs position 0 once per sentence; the other beams read it from the sentence's
// first slot instead of receiving copies of its K/V: the cache rows of slots 1.. at position 0
// are never written (they hold whatever the memory held before, here the encoder's activations,
// which share the arena with the cache), so they differ from the first slot's row, which copies
// would not.
TEST_P(TranslatorTest, BeamSearchNeverCopiesTheKVCache) {
  auto model = LoadOrDie(GetParam());
  ASSERT_TRUE(model);
  TranslatorLimits lim;
  lim.max_batch = 2;
  lim.max_beam = 4;
  lim.max_target_tokens = 64;
  auto tr = Translator::Create(model, lim);
  ASSERT_TRUE(tr.ok());
  std::vector<std::string> lines = DevLines(2);
  TranslateOptions opt;
  opt.beam_size = 4;
  opt.max_length = 64;
  std::vector<TranslationResult> out;
  ASSERT_TRUE(tr.value()->Translate(lines, opt, &out).ok());
  const int d = model->config().d_model, W = lim.max_beam;
  for (const char* name : {"decoder.k_cache", "decoder.v_cache"}) {
    size_t bytes = 0;
    const float* cache = static_cast<const float*>(detail::ArenaBufferForTesting(*tr.value(), name, &bytes));
    ASSERT_NE(cache, nullptr) << name;
    // [layer][t][slot][d]: layer 0, position 0
    for (int b = 0; b < 2; ++b) {
      const float* first = cache + size_t(b * W) * d;
      for (int w = 1; w < W; ++w)
        EXPECT_NE(std::memcmp(first, first + size_t(w) * d, sizeof(float) * d), 0)
            << name << ": position 0 of slot " << b * W + w << " is a copy of slot " << b * W;
    }
  }
}

TEST(ResultTest, ValueOfAnErrorIsCheckedNotAnEmptyValue) {
  Result<std::shared_ptr<const Model>> r = Model::Load("/nonexistent/model.mtlite");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.value_or(nullptr), nullptr);
  EXPECT_DEATH((void)r.value(), "Result::value\\(\\) called on an error");
  EXPECT_DEATH((void)*r, "IO_ERROR");
  Result<int> ok = 7;
  EXPECT_EQ(ok.value(), 7);
  EXPECT_EQ(*ok, 7);
  // An OK status without a value is not an OK result.
  Result<int> none = Status::Ok();
  EXPECT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kInternal);
}

INSTANTIATE_TEST_SUITE_P(Models, TranslatorTest, ::testing::Values("int8", "fp32"));

}  // namespace
}  // namespace mtlite

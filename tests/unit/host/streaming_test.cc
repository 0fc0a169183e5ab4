// Token streaming: the events of a translate call, and the final one equals the result.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mtlite/mtlite.h"
#include "mtlite/mtlite.hpp"
#include "unit/translator_test_util.h"

namespace mtlite {
namespace {

using testing_util::DevLines;
using testing_util::LoadOrDie;
using testing_util::TranslatorTest;

struct Recorded {
  size_t sentence;
  std::vector<int32_t> ids;
  std::string text;
  bool final;
};

void Record(const StreamEvent& e, void* user) {
  static_cast<std::vector<Recorded>*>(user)->push_back(
      {e.sentence, std::vector<int32_t>(e.ids, e.ids + e.num_ids), std::string(e.text), e.final});
}

TEST_P(TranslatorTest, StreamedFinalTextEqualsTheResult) {
  auto model = LoadOrDie(GetParam());
  ASSERT_TRUE(model);
  TranslatorLimits lim;
  lim.max_batch = 4;
  lim.max_beam = 4;
  auto tr = Translator::Create(model, lim);
  ASSERT_TRUE(tr.ok());
  std::vector<std::string> lines = DevLines(3);
  lines.insert(lines.begin() + 1, "");  // an empty sentence streams one final, empty event
  for (int beam : {1, 4}) {
    TranslateOptions plain;
    plain.beam_size = beam;
    std::vector<TranslationResult> want, got;
    ASSERT_TRUE(tr.value()->Translate(lines, plain, &want).ok());
    std::vector<Recorded> events;
    TranslateOptions opt = plain;
    opt.stream = &Record;
    opt.stream_user = &events;
    ASSERT_TRUE(tr.value()->Translate(lines, opt, &got).ok());
    for (size_t b = 0; b < lines.size(); ++b) {
      EXPECT_EQ(got[b].hypotheses[0].ids, want[b].hypotheses[0].ids);  // streaming changes nothing
      std::vector<const Recorded*> mine;
      for (const Recorded& r : events)
        if (r.sentence == b) mine.push_back(&r);
      ASSERT_FALSE(mine.empty()) << "sentence " << b;
      const Recorded& last = *mine.back();
      EXPECT_TRUE(last.final);
      EXPECT_EQ(last.ids, want[b].hypotheses[0].ids);
      EXPECT_EQ(last.text, want[b].hypotheses[0].text);
      for (size_t i = 0; i + 1 < mine.size(); ++i) {
        EXPECT_FALSE(mine[i]->final);
        if (i > 0) {
          EXPECT_NE(mine[i]->ids, mine[i - 1]->ids) << "an unchanged hypothesis was reported";
        }
        if (beam == 1) {  // greedy: one event per token, each extending the previous
          EXPECT_EQ(mine[i]->ids.size(), i + 1);
          EXPECT_TRUE(std::equal(mine[i]->ids.begin(), mine[i]->ids.end(), want[b].hypotheses[0].ids.begin()));
        }
      }
      if (lines[b].empty()) {
        EXPECT_EQ(mine.size(), 1u);
      }
      if (beam == 1 && !lines[b].empty()) {
        EXPECT_EQ(mine.size(), want[b].hypotheses[0].ids.size() + 1);
      }
    }
  }
}

TEST(StreamingTest, CApi) {
  mtlite_model* m = nullptr;
  ASSERT_EQ(mtlite_model_load(testing_util::ModelPath("int8").c_str(), 0, &m), MTLITE_OK);
  mtlite_translator* t = nullptr;
  ASSERT_EQ(mtlite_translator_create(m, nullptr, &t), MTLITE_OK);
  mtlite_options opt;
  mtlite_options_default(&opt);
  struct Seen {
    int events = 0, finals = 0;
    std::string last;
  } seen;
  opt.stream = [](void* user, size_t sentence, const int32_t*, int, const char* text, size_t len, int final) {
    Seen& s = *static_cast<Seen*>(user);
    EXPECT_EQ(sentence, 0u);
    ++s.events;
    s.finals += final;
    s.last.assign(text, len);
  };
  opt.stream_user = &seen;
  const char* text = "Two dogs play in the snow.";
  ASSERT_EQ(mtlite_translate(t, &text, nullptr, 1, &opt), MTLITE_OK);
  mtlite_hypothesis h;
  ASSERT_EQ(mtlite_result_get(t, 0, 0, &h), MTLITE_OK);
  EXPECT_EQ(seen.finals, 1);
  EXPECT_EQ(seen.events, h.num_ids + 1);
  EXPECT_EQ(seen.last, std::string(h.text, h.text_len));
  mtlite_translator_free(t);
  mtlite_model_free(m);
}

INSTANTIATE_TEST_SUITE_P(Models, TranslatorTest, ::testing::Values("int8", "fp32"));

}  // namespace
}  // namespace mtlite

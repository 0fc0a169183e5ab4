// Static memory: after Translator creation, translate() performs zero heap allocations.
// Counts every malloc-family call (operator new, C code such as pthreadpool/XNNPACK) by
// interposing glibc's malloc. Sanitizer runtimes own malloc, so this binary is not built
// in sanitizer trees (tests/CMakeLists.txt says so at configure time).
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <string>
#include <vector>

#include "mtlite/mtlite.hpp"
#include "testing_hooks.h"
#include "unit/alloc_counter.h"
#include "unit/translator_test_util.h"

using mtlite::testing_util::g_allocs;
using mtlite::testing_util::g_counting;

namespace mtlite {
namespace {

using testing_util::DevLines;
using testing_util::LoadOrDie;
using testing_util::ModelPath;
using testing_util::TranslatorTest;

TEST_P(TranslatorTest, ZeroHeapAllocationsDuringTranslate) {
  auto model = LoadOrDie(GetParam());
  ASSERT_TRUE(model);
  TranslatorLimits lim;
  lim.max_batch = 4;
  lim.max_beam = 4;
  lim.max_n_best = 2;
  lim.max_source_tokens = 128;
  lim.max_target_tokens = 64;
  lim.alignments = true;
  lim.num_threads = 2;
  lim.profiling = true;  // the profiler's records are planned in the arena too
  auto tr = Translator::Create(model, lim);
  ASSERT_TRUE(tr.ok()) << tr.status().ToString();
  auto lines = DevLines(4);
  std::vector<std::string_view> views(lines.begin(), lines.end());
  // runs 4, 5: the row-parallel steps (beam 4 over 4 sentences: 16 rows) split their larger
  // layers by output columns, as the avx512-amx table asks for
  for (int run = 0; run < 6; ++run) {
    const int beam = run % 2 ? 4 : 1;
    detail::SetDecoderColumnSplitForTesting(*tr.value(), run >= 4 ? 1 : 0);
    TranslateOptions opt;
    opt.profile = run >= 2;
    opt.beam_size = beam;
    opt.n_best = beam == 4 ? 2 : 1;
    opt.return_alignments = true;
    opt.return_scores = true;
    opt.max_length = 64;
    const SentenceResultView* res = nullptr;
    ASSERT_TRUE(tr.value()->TranslateViews(views.data(), views.size(), opt, &res).ok());  // warm-up
    g_allocs = 0;
    g_counting = true;
    const Status batch = tr.value()->TranslateViews(views.data(), views.size(), opt, &res);
    const Status one = tr.value()->TranslateViews(views.data(), 1, opt, &res);
    g_counting = false;
    ASSERT_TRUE(batch.ok()) << batch.ToString();
    ASSERT_TRUE(one.ok()) << one.ToString();
    EXPECT_EQ(g_allocs.load(), 0) << "heap allocations during translate (beam " << beam << ", profile "
                                   << opt.profile << ", run " << run << ")";
    EXPECT_EQ(tr.value()->last_profile() != nullptr, opt.profile);
    EXPECT_GT(res[0].hypotheses[0].num_ids, 0);
  }
  // The counter itself works: a std::string allocation is seen.
  g_allocs = 0;
  g_counting = true;
  std::string* big = new std::string(1000, 'x');
  g_counting = false;
  delete big;
  EXPECT_GE(g_allocs.load(), 1);
}

// The text layer: a paragraph and an HTML snippet, split, translated in batches and put back
// together (and the markup re-inserted) inside the arena.
TEST_P(TranslatorTest, ZeroHeapAllocationsDuringTranslateText) {
  auto model = LoadOrDie(GetParam());
  ASSERT_TRUE(model);
  TranslatorLimits lim;
  lim.max_batch = 2;
  lim.max_target_tokens = 64;
  lim.alignments = true;
  lim.max_text_bytes = 4096;
  auto tr = Translator::Create(model, lim);
  ASSERT_TRUE(tr.ok()) << tr.status().ToString();
  const std::string paragraph =
      "A man is riding a bike. Two dogs play in the snow.\nThe woman, Dr. Smith, is reading a book. It is 3.5 m long!";
  const std::string html =
      "<p>A man is <b>riding</b> a bike.</p><ul><li>Two <i>dogs</i> play.</li><li>A <a href=\"x?a=1&amp;b\">woman</a>"
      " reads.<br><img src=x></li></ul><script>var x = 1;</script><!-- c -->";
  for (int run = 0; run < 2; ++run) {
    TextOptions to;
    to.html = run == 1;
    const std::string& text = to.html ? html : paragraph;
    TranslateOptions opt;
    opt.max_length = 64;
    const TextResultView* res = nullptr;
    ASSERT_TRUE(tr.value()->TranslateText(text, to, opt, &res).ok());  // warm-up
    g_allocs = 0;
    g_counting = true;
    const Status s = tr.value()->TranslateText(text, to, opt, &res);
    g_counting = false;
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(g_allocs.load(), 0) << "heap allocations during TranslateText (html " << to.html << ")";
    EXPECT_GE(res->num_sentences, 3u);
    EXPECT_EQ(res->failed_sentences, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, TranslatorTest, ::testing::Values("int8", "fp32"));

}  // namespace
}  // namespace mtlite

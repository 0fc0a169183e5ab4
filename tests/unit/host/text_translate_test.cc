// The text layer (Translator::TranslateText) on the demo model: a paragraph's translation is its
// sentences' translations with its own whitespace between them; every split mode; nothing is lost
// (long text, a long sentence without punctuation, empty and whitespace-only text, a sentence
// that fails alone); HTML keeps its markup; the limits and the C API.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "mtlite/mtlite.h"
#include "mtlite/mtlite.hpp"
#include "unit/translator_test_util.h"

namespace mtlite {
namespace {

using testing_util::LoadOrDie;
using testing_util::ModelPath;

class TextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = LoadOrDie("int8");
    ASSERT_TRUE(model_);
    TranslatorLimits lim;
    lim.max_batch = 4;
    lim.alignments = true;
    lim.max_text_bytes = 1 << 16;
    auto tr = Translator::Create(model_, lim);
    ASSERT_TRUE(tr.ok()) << tr.status().ToString();
    tr_ = std::move(tr.value());
    opt_.max_length = 96;
  }
  // One sentence, as `mtlite translate --split none` gives it.
  std::string One(std::string_view s) {
    const SentenceResultView* r = nullptr;
    Status st = tr_->TranslateViews(&s, 1, opt_, &r);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return st.ok() ? std::string(r[0].hypotheses[0].text) : std::string();
  }
  const TextResultView* Text(std::string_view text, TextOptions to = {}) {
    const TextResultView* r = nullptr;
    Status st = tr_->TranslateText(text, to, opt_, &r);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return r;
  }
  std::shared_ptr<const Model> model_;
  std::unique_ptr<Translator> tr_;
  TranslateOptions opt_;
};

TEST_F(TextTest, ParagraphIsItsSentencesWithItsOwnWhitespace) {
  const std::string s1 = "A man is riding a bike.", s2 = "Two dogs play in the snow.", s3 = "The woman is reading a book.";
  const std::string want = "  " + One(s1) + "  " + One(s2) + "\t" + One(s3) + " \n";
  const TextResultView* r = Text("  " + s1 + "  " + s2 + "\t" + s3 + " \n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->text, want);
  ASSERT_EQ(r->num_sentences, 3u);
  EXPECT_EQ(r->failed_sentences, 0u);
  // the views index the input and the output
  const std::string input = "  " + s1 + "  " + s2 + "\t" + s3 + " \n";
  EXPECT_EQ(input.substr(r->sentences[1].source_begin, r->sentences[1].source_end - r->sentences[1].source_begin), s2);
  EXPECT_EQ(std::string(r->text.substr(r->sentences[2].target_begin,
                                       r->sentences[2].target_end - r->sentences[2].target_begin)),
            One(s3));
}

TEST_F(TextTest, SplitModes) {
  const std::string a = "A dog runs. A cat sleeps.", b = "Two men talk.";
  const std::string two_lines = a + "\n" + b;
  TextOptions to;
  to.split = SplitMode::kParagraph;  // a line is a paragraph
  EXPECT_EQ(Text(two_lines, to)->num_sentences, 3u);
  to.split = SplitMode::kSentence;   // a line is a sentence
  const TextResultView* r = Text(two_lines, to);
  EXPECT_EQ(r->num_sentences, 2u);
  EXPECT_EQ(r->text, One(a) + "\n" + One(b));
  to.split = SplitMode::kNone;       // the whole text is one sentence
  EXPECT_EQ(Text(two_lines, to)->num_sentences, 1u);
  // wrapped: a single line break is soft, a blank line separates paragraphs
  to.split = SplitMode::kWrapped;
  r = Text("A man is riding\na bike.\n\nTwo dogs play.", to);
  ASSERT_EQ(r->num_sentences, 2u);
  EXPECT_EQ(r->text, One("A man is riding a bike.") + "\n\n" + One("Two dogs play."));
  to.split = SplitMode::kParagraph;  // the same text: the line break ends the sentence
  EXPECT_EQ(Text("A man is riding\na bike.\n\nTwo dogs play.", to)->num_sentences, 3u);
}

TEST_F(TextTest, NothingLost) {
  // empty and whitespace-only text pass through
  EXPECT_EQ(Text("")->text, "");
  EXPECT_EQ(Text(" \n\t\n")->text, " \n\t\n");
  EXPECT_EQ(Text(" \n\t\n")->num_sentences, 0u);
  // a 10,000-character paragraph: every sentence comes back translated
  std::string para;
  std::vector<std::string> sents = {"A man is riding a bike.", "Two dogs play in the snow.", "A girl is singing."};
  size_t k = 0;
  while (para.size() < 10000) para += sents[k++ % 3] + " ";
  const TextResultView* r = Text(para);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->num_sentences, k);
  EXPECT_EQ(r->failed_sentences, 0u);
  std::string want;
  for (size_t i = 0; i < k; ++i) want += One(sents[i % 3]) + " ";
  EXPECT_EQ(r->text, want);
  // a 2,000-word sentence without punctuation: cut into pieces at max_length_break tokens
  std::string longest;
  for (int i = 0; i < 2000; ++i) longest += (i % 2 ? "dog " : "man ");
  TextOptions to;
  to.max_length_break = 128;
  r = Text(longest, to);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->num_sentences, 1u);
  EXPECT_GE(r->sentences[0].pieces, 2000 / 128);
  EXPECT_EQ(r->failed_sentences, 0u);
  EXPECT_GT(r->text.size(), 2000u);
}

TEST_F(TextTest, SentenceThatFailsIsKeptAndReported) {
  const std::string bad = "Der \xff Hund.";  // invalid UTF-8: the tokenizer refuses it
  const std::string text = "A dog runs. " + bad + " A cat sleeps.";
  const TextResultView* r = Text(text);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->num_sentences, 3u);
  EXPECT_EQ(r->failed_sentences, 1u);
  EXPECT_EQ(r->sentences[1].status, StatusCode::kInvalidArgument);
  EXPECT_EQ(r->text, One("A dog runs.") + " " + bad + " " + One("A cat sleeps."));
  EXPECT_NE(r->first_error.find("sentence 2"), std::string_view::npos) << r->first_error;
}

TEST_F(TextTest, HtmlKeepsMarkupAndTranslatesItsText) {
  TextOptions to;
  to.html = true;
  const TextResultView* r = Text("<p>A man is <b>riding</b> a bike.</p>\n<p>Two dogs play in the snow.</p>", to);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->num_sentences, 2u);
  const std::string out(r->text);
  for (const char* tag : {"<p>", "</p>", "<b>", "</b>"}) EXPECT_NE(out.find(tag), std::string::npos) << out;
  // the text content is the plain translation of the text content
  EXPECT_EQ(r->plain_target, One("A man is riding a bike.") + "\n" + One("Two dogs play in the snow."));
  EXPECT_EQ(out.find("<p>"), 0u);
  EXPECT_EQ(out.substr(out.size() - 4), "</p>");
  // entities are decoded for translation and encoded back; script is kept untranslated
  r = Text("<div>Tom &amp; Jerry run.<script>if (a < b) x();</script></div>", to);
  ASSERT_TRUE(r);
  EXPECT_NE(std::string(r->text).find("<script>if (a < b) x();</script>"), std::string::npos) << r->text;
  EXPECT_EQ(std::string(r->text).find(" & "), std::string::npos) << r->text;
  // only markup
  r = Text("<br><img src=\"a.png\"><!-- x -->", to);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->text, "<br><img src=\"a.png\"><!-- x -->");
}

// Tags are put at word boundaries of the translation (a subword token stands for its word), and
// an untranslated inline element that stood between spaces keeps a space on each side.
TEST_F(TextTest, HtmlTagsStayAtWordBoundaries) {
  TextOptions to;
  to.html = true;
  auto letter = [](char c) {
    const unsigned char u = static_cast<unsigned char>(c);
    return u >= 0x80 || (u | 0x20) - 'a' < 26u;
  };
  for (const char* html : {"<p><sub>Which</sub> <strong>side</strong> <b>won?</b></p>",
                           "<p>A <i>man</i> is <b>riding</b> a <em>red</em> bike <u>down</u> the street.</p>",
                           "<p>Two <a href=\"#\">dogs</a> play in the <b>snow</b>.</p>"}) {
    const TextResultView* r = Text(html, to);
    ASSERT_TRUE(r);
    const std::string out(r->text);
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] != '<') continue;
      const size_t close = out.find('>', i);
      ASSERT_NE(close, std::string::npos);
      const bool inside = i > 0 && close + 1 < out.size() && letter(out[i - 1]) && letter(out[close + 1]);
      EXPECT_FALSE(inside) << "a tag between two letters: " << out;
      i = close;
    }
  }
  const TextResultView* r = Text("<p>He cannot stop <span translate=\"no\">Acme Widget</span> him.</p>", to);
  ASSERT_TRUE(r);
  EXPECT_NE(std::string(r->text).find(" <span translate=\"no\">Acme Widget</span> "), std::string::npos) << r->text;
}

TEST_F(TextTest, Limits) {
  TextOptions to;
  const TextResultView* r = nullptr;
  std::string big(tr_->limits().max_text_bytes + 1, 'a');
  EXPECT_EQ(tr_->TranslateText(big, to, opt_, &r).code(), StatusCode::kOutOfRange);
  to.max_length_break = 0;
  EXPECT_EQ(tr_->TranslateText("A dog.", to, opt_, &r).code(), StatusCode::kInvalidArgument);
  to = TextOptions();
  to.split = static_cast<SplitMode>(7);
  EXPECT_EQ(tr_->TranslateText("A dog.", to, opt_, &r).code(), StatusCode::kInvalidArgument);
  // no text buffers, and html without alignments
  TranslatorLimits lim;
  lim.max_text_bytes = 0;
  auto none = Translator::Create(model_, lim);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none.value()->TranslateText("A dog.", TextOptions(), opt_, &r).code(), StatusCode::kUnsupported);
  lim.max_text_bytes = 1024;
  auto plain = Translator::Create(model_, lim);
  ASSERT_TRUE(plain.ok());
  TextOptions html;
  html.html = true;
  const Status s = plain.value()->TranslateText("<b>A dog.</b>", html, opt_, &r);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("alignments"), std::string::npos);
  // the text buffers are in the arena plan
  auto plan = Translator::PlanArena(*model_, lim);
  ASSERT_TRUE(plan.ok());
  bool found = false;
  for (const ArenaBufferInfo& b : plan.value().buffers) found = found || b.name == "text.output";
  EXPECT_TRUE(found);
}

// Token scores (return_scores) are the log-probabilities of the chosen tokens: the log-softmax (pad
// masked, as the search does) of the teacher-forced logits, greedy and beam.
TEST_F(TextTest, TokenScoresAreTheTokensLogProbabilities) {
  const ModelConfig& c = model_->config();
  for (int beam : {1, 4}) {
    TranslateOptions o = opt_;
    o.beam_size = beam;
    o.return_scores = true;
    std::string_view s = "Two dogs play in the snow.";
    const SentenceResultView* r = nullptr;
    ASSERT_TRUE(tr_->TranslateViews(&s, 1, o, &r).ok());
    const HypothesisView& h = r[0].hypotheses[0];
    ASSERT_TRUE(h.token_scores);
    ASSERT_GT(h.num_ids, 2);
    std::vector<int32_t> src;
    ASSERT_TRUE(EncodeSource(*model_, s, &src).ok());
    std::vector<int32_t> tgt(h.ids, h.ids + h.num_ids);
    std::vector<float> logits(tgt.size() * size_t(c.target_vocab_size));
    ASSERT_TRUE(tr_->ForcedLogits(src.data(), int(src.size()), tgt.data(), int(tgt.size()), logits.data()).ok());
    for (int t = 0; t < h.num_ids; ++t) {
      const float* row = logits.data() + size_t(t) * c.target_vocab_size;
      double mx = -1e30, sum = 0;
      for (int v = 0; v < c.target_vocab_size; ++v)
        if (v != c.pad_id) mx = std::max(mx, double(row[v]));
      for (int v = 0; v < c.target_vocab_size; ++v)
        if (v != c.pad_id) sum += std::exp(double(row[v]) - mx);
      const double lp = double(row[tgt[t]]) - mx - std::log(sum);
      EXPECT_NEAR(h.token_scores[t], lp, 2e-3) << "beam " << beam << " token " << t;
    }
  }
  // without return_scores: none
  std::string_view s = "A dog.";
  const SentenceResultView* r = nullptr;
  ASSERT_TRUE(tr_->TranslateViews(&s, 1, opt_, &r).ok());
  EXPECT_EQ(r[0].hypotheses[0].token_scores, nullptr);
}

TEST_F(TextTest, QualityScoresPerWordAndSentence) {
  TextOptions to;
  to.quality = true;
  const TextResultView* r = Text("A man is riding a bike. Two dogs play in the snow.", to);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->num_sentences, 2u);
  ASSERT_GT(r->num_words, 4u);
  EXPECT_FALSE(r->words_truncated);
  size_t words = 0;
  for (size_t i = 0; i < r->num_sentences; ++i) {
    const TextSentenceView& sv = r->sentences[i];
    ASSERT_GT(sv.num_words, 0u);
    double sum = 0;
    for (uint32_t w = sv.first_word; w < sv.first_word + sv.num_words; ++w) {
      const TextWordView& wv = r->words[w];
      EXPECT_LE(wv.score, 0.0f);
      EXPECT_GE(wv.target_begin, sv.target_begin);
      EXPECT_LE(wv.target_end, sv.target_end);
      EXPECT_EQ(r->text.substr(wv.target_begin, wv.target_end - wv.target_begin).find(' '), std::string_view::npos);
      sum += wv.score;
    }
    EXPECT_NEAR(sv.quality, sum / sv.num_words, 1e-5);
    words += sv.num_words;
  }
  EXPECT_EQ(words, r->num_words);
  // the words cover the translation's non-space bytes
  std::string covered(r->text.size(), ' ');
  for (size_t w = 0; w < r->num_words; ++w)
    for (uint32_t b = r->words[w].target_begin; b < r->words[w].target_end; ++b) covered[b] = r->text[b];
  EXPECT_EQ(covered, std::string(r->text));
  // without quality: no words
  EXPECT_EQ(Text("A dog.")->num_words, 0u);
}

TEST(TextCApi, TranslateText) {
  mtlite_model* m = nullptr;
  ASSERT_EQ(mtlite_model_load(ModelPath("int8").c_str(), 0, &m), MTLITE_OK) << mtlite_last_error();
  mtlite_limits lim;
  mtlite_limits_default(&lim);
  EXPECT_GT(lim.max_text_bytes, 0);
  mtlite_translator* t = nullptr;
  ASSERT_EQ(mtlite_translator_create(m, &lim, &t), MTLITE_OK) << mtlite_last_error();
  mtlite_text_options to;
  mtlite_text_options_default(&to);
  EXPECT_EQ(to.split, MTLITE_SPLIT_PARAGRAPH);
  const std::string text = "A dog runs. A cat sleeps.";
  mtlite_text_result r;
  ASSERT_EQ(mtlite_translate_text(t, text.data(), text.size(), nullptr, &to, &r), MTLITE_OK) << mtlite_last_error();
  EXPECT_EQ(r.num_sentences, 2u);
  EXPECT_EQ(r.failed_sentences, 0u);
  mtlite_text_sentence s;
  ASSERT_EQ(mtlite_text_sentence_get(t, 1, &s), MTLITE_OK);
  EXPECT_EQ(text.substr(s.source_begin, s.source_end - s.source_begin), "A cat sleeps.");
  EXPECT_EQ(s.status, MTLITE_OK);
  EXPECT_EQ(mtlite_text_sentence_get(t, 2, &s), MTLITE_OUT_OF_RANGE);
  to.html = 1;  // the default limits reserve no alignments
  EXPECT_EQ(mtlite_translate_text(t, "<b>x</b>", 8, nullptr, &to, &r), MTLITE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mtlite_last_error()).find("alignments"), std::string::npos);
  mtlite_translator_free(t);
  mtlite_model_free(m);
}

}  // namespace
}  // namespace mtlite

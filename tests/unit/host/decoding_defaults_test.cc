// The model's own decoding defaults (schema table DecodingDefaults): recorded by the converter from
// a Marian release folder's decoder.yml (or, on request, an HF generation_config.json), shown by
// `mtlite info`, and the default of every interface (C++, C, CLI) unless a call overrides it; a
// model without them decodes as before.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "marian_convert.h"
#include "model_reader.h"
#include "model_test_helpers.h"
#include "model_writer.h"
#include "mtlite/mtlite.h"
#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace {

using converter::AlignedBytes;
using converter::ConversionReport;
using converter::ConvertInputs;
using converter::ConvertOptions;
using converter::DecodingDefaultsMode;
using testing::ReadText;
using testing::TempDir;
using testing::WriteText;

std::string DataPath(const std::string& name) { return std::string(MTLITE_SOURCE_DIR) + "/tests/data/marian/" + name; }

// An OPUS-MT release folder made of the Marian fixture, with a decoder.yml: beam 3, normalize
// 0.6, max-length-factor 2, and two settings mtlite does not record.
void WriteReleaseFolder(const TempDir& d) {
  WriteText(d / "opus.spm8k-spm8k.transformer.model1.npz", ReadText(DataPath("untied.npz")));
  WriteText(d / "source.spm", ReadText(testing::DemoHfDir() + "/source.spm"));
  WriteText(d / "target.spm", ReadText(testing::DemoHfDir() + "/source.spm"));
  WriteText(d / "opus.spm8k-spm8k.vocab.yml", ReadText(DataPath("vocab.yml")));
  WriteText(d / "decoder.yml",
            "relative-paths: true\nbeam-size: 3\nnormalize: 0.6\nword-penalty: 0.5\nmax-length-factor: 2\n"
            "max-length: 100\nmini-batch: 16\n");
}

struct Converted {
  AlignedBytes bytes;
  ConversionReport report;
  ConvertInputs inputs;
  std::shared_ptr<const Model> model;
};

Converted Convert(const std::string& input, DecodingDefaultsMode mode) {
  Converted c;
  ConvertOptions o;
  o.decoding_defaults = mode;
  const Status s = converter::ConvertInput(input, o, &c.bytes, &c.report, &c.inputs);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) return c;
  auto m = Model::FromBuffer(c.bytes.data(), c.bytes.size(), LoadOptions{true});
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (m.ok()) c.model = m.value();
  return c;
}

bool HasWarning(const ConversionReport& r, const std::string& text) {
  for (const std::string& w : r.warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
}

const std::vector<std::string> kSentences = {"a b c d e f", "g a g a", "b b c", "f e d c b a g", "c", "a g f b"};

struct Output {
  std::vector<std::vector<int32_t>> ids;
  std::vector<float> scores;
  bool operator==(const Output& o) const { return ids == o.ids && scores == o.scores; }
};

Output TranslateAll(const std::shared_ptr<const Model>& model, TranslateOptions opt) {
  TranslatorLimits lim;
  lim.max_batch = int(kSentences.size());
  lim.max_beam = 4;
  lim.max_n_best = 4;
  lim.max_target_tokens = 64;
  lim.max_source_tokens = 64;
  auto tr = Translator::Create(model, lim);
  EXPECT_TRUE(tr.ok()) << tr.status().ToString();
  Output out;
  if (!tr.ok()) return out;
  opt.return_scores = true;
  opt.max_length = std::min(opt.max_length, 64);
  std::vector<TranslationResult> res;
  const Status s = tr.value()->Translate(kSentences, opt, &res);
  EXPECT_TRUE(s.ok()) << s.ToString();
  for (const TranslationResult& r : res) {
    out.ids.push_back(r.hypotheses.at(0).ids);
    out.scores.push_back(r.hypotheses.at(0).score);
  }
  return out;
}

TranslateOptions Explicit(int beam, float lp, float ratio, int offset) {
  TranslateOptions o;
  o.beam_size = beam;
  o.length_penalty = lp;
  o.max_length_ratio = ratio;
  o.max_length_offset = offset;
  return o;
}

TEST(DecodingDefaults, MarianDecoderYmlIsRecordedAndApplied) {
  TempDir d;
  WriteReleaseFolder(d);
  const Converted c = Convert(d.path(), DecodingDefaultsMode::kAuto);
  ASSERT_TRUE(c.model);
  EXPECT_TRUE(c.inputs.decoding_recorded);
  const DecodingDefaults& dd = c.model->decoding_defaults();
  ASSERT_FALSE(dd.empty());
  EXPECT_EQ(dd.beam_size, 3);
  EXPECT_EQ(dd.length_penalty, 0.6f);
  EXPECT_EQ(dd.max_length_ratio, 2.0f);
  EXPECT_EQ(dd.max_length_offset, 1);
  EXPECT_FALSE(dd.max_length.has_value());  // marian-decoder's max-length limits the source
  EXPECT_EQ(dd.source, "decoder.yml");
  EXPECT_TRUE(HasWarning(c.report, "decoder.yml: word-penalty 0.5: not applied")) << c.report.warnings.size();
  EXPECT_TRUE(HasWarning(c.report, "decoder.yml: max-length 100: a source-length limit"));
  EXPECT_FALSE(HasWarning(c.report, "mini-batch"));  // not a decoding setting

  const TranslateOptions o = c.model->DefaultTranslateOptions();
  EXPECT_EQ(o.beam_size, 3);
  EXPECT_EQ(o.length_penalty, 0.6f);
  EXPECT_EQ(o.max_length_ratio, 2.0f);
  EXPECT_EQ(o.max_length_offset, 1);
  EXPECT_EQ(o.max_length, TranslateOptions().max_length);
  EXPECT_EQ(o.n_best, 1);

  // The same model without recorded defaults: today's options, exactly.
  const Converted none = Convert(d.path(), DecodingDefaultsMode::kNone);
  ASSERT_TRUE(none.model);
  EXPECT_FALSE(none.inputs.decoding_recorded);
  EXPECT_TRUE(none.model->decoding_defaults().empty());
  const TranslateOptions n = none.model->DefaultTranslateOptions(), t;
  EXPECT_EQ(n.beam_size, t.beam_size);
  EXPECT_EQ(n.max_length, t.max_length);
  EXPECT_EQ(n.max_length_ratio, t.max_length_ratio);
  EXPECT_EQ(n.max_length_offset, t.max_length_offset);
  EXPECT_EQ(n.length_penalty, t.length_penalty);
  // The two files differ only by the table: the weights are the same
  EXPECT_LT(none.bytes.size(), c.bytes.size() + 1);

  // C++: the model's options decode as the explicit flags, and not as greedy
  const Output by_default = TranslateAll(c.model, c.model->DefaultTranslateOptions());
  EXPECT_EQ(by_default, TranslateAll(c.model, Explicit(3, 0.6f, 2.0f, 1)));
  EXPECT_EQ(by_default, TranslateAll(none.model, Explicit(3, 0.6f, 2.0f, 1)));
  EXPECT_FALSE(by_default == TranslateAll(c.model, TranslateOptions()));
  EXPECT_EQ(TranslateAll(none.model, none.model->DefaultTranslateOptions()), TranslateAll(c.model, TranslateOptions()));
}

TEST(DecodingDefaults, SurvivesRewritingAndIsChecked) {
  TempDir d;
  WriteReleaseFolder(d);
  const Converted c = Convert(d.path(), DecodingDefaultsMode::kAuto);
  ASSERT_TRUE(c.model);
  converter::ModelSpec spec;
  ASSERT_TRUE(converter::ReadModelSpec(*c.model, &spec).ok());
  EXPECT_EQ(spec.decoding_defaults.beam_size, 3);
  EXPECT_EQ(spec.decoding_defaults.source, "decoder.yml");
  const AlignedBytes again = converter::SerializeModel(spec);  // as `mtlite shortlist` rewrites a file
  auto reloaded = Model::FromBuffer(again.data(), again.size());
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().ToString();
  const DecodingDefaults& r = reloaded.value()->decoding_defaults();
  EXPECT_EQ(r.beam_size, 3);
  EXPECT_EQ(r.length_penalty, 0.6f);
  EXPECT_EQ(r.max_length_ratio, 2.0f);
  EXPECT_EQ(r.max_length_offset, 1);
  EXPECT_FALSE(r.max_length.has_value());
  EXPECT_EQ(r.source, "decoder.yml");

  struct Case {
    const char* name;
    void (*edit)(converter::DecodingDefaultsSpec*);
    const char* message;
  };
  const Case cases[] = {
      {"beam 0", [](converter::DecodingDefaultsSpec* s) { s->beam_size = 0; }, "decoding_defaults.beam_size 0"},
      {"beam 65", [](converter::DecodingDefaultsSpec* s) { s->beam_size = 65; }, "decoding_defaults.beam_size 65"},
      {"max_length 0", [](converter::DecodingDefaultsSpec* s) { s->max_length = 0; }, "decoding_defaults.max_length"},
      {"ratio -1", [](converter::DecodingDefaultsSpec* s) { s->max_length_ratio = -1.0f; }, "decoding_defaults.max_length_ratio"},
      {"ratio nan", [](converter::DecodingDefaultsSpec* s) { s->max_length_ratio = NAN; }, "decoding_defaults.max_length_ratio"},
      {"offset -1", [](converter::DecodingDefaultsSpec* s) { s->max_length_offset = -1; }, "decoding_defaults.max_length_offset"},
      {"penalty 100", [](converter::DecodingDefaultsSpec* s) { s->length_penalty = 100.0f; }, "decoding_defaults.length_penalty"},
  };
  for (const Case& k : cases) {
    converter::ModelSpec bad = spec;
    k.edit(&bad.decoding_defaults);
    const AlignedBytes b = converter::SerializeModel(bad);
    auto m = Model::FromBuffer(b.data(), b.size());
    ASSERT_FALSE(m.ok()) << k.name;
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidModel) << k.name;
    EXPECT_NE(m.status().message().find(k.message), std::string::npos) << k.name << ": " << m.status().ToString();
  }
}

TEST(DecodingDefaults, CApiOptionsFromModel) {
  TempDir d;
  WriteReleaseFolder(d);
  const Converted c = Convert(d.path(), DecodingDefaultsMode::kAuto);
  const Converted none = Convert(d.path(), DecodingDefaultsMode::kNone);
  ASSERT_TRUE(c.model && none.model);
  mtlite_model* with = nullptr;
  mtlite_model* without = nullptr;
  ASSERT_EQ(mtlite_model_from_buffer(c.bytes.data(), c.bytes.size(), 0, &with), MTLITE_OK);
  ASSERT_EQ(mtlite_model_from_buffer(none.bytes.data(), none.bytes.size(), 0, &without), MTLITE_OK);
  mtlite_options def, o;
  mtlite_options_default(&def);
  EXPECT_EQ(def.beam_size, 1);  // unchanged
  mtlite_options_from_model(with, &o);
  EXPECT_EQ(o.beam_size, 3);
  EXPECT_EQ(o.length_penalty, 0.6f);
  EXPECT_EQ(o.max_length_ratio, 2.0f);
  EXPECT_EQ(o.max_length_offset, 1);
  EXPECT_EQ(o.max_length, def.max_length);
  EXPECT_EQ(o.n_best, 1);
  const auto same = [](const mtlite_options& a, const mtlite_options& b) {
    return a.beam_size == b.beam_size && a.max_length == b.max_length && a.max_length_ratio == b.max_length_ratio &&
           a.max_length_offset == b.max_length_offset && a.length_penalty == b.length_penalty && a.n_best == b.n_best &&
           a.return_scores == b.return_scores && a.return_alignments == b.return_alignments &&
           a.alignment_layer == b.alignment_layer && a.profile == b.profile && a.stream == b.stream &&
           a.stream_user == b.stream_user && a.use_shortlist == b.use_shortlist;
  };
  mtlite_options_from_model(without, &o);
  EXPECT_TRUE(same(o, def));
  mtlite_options_from_model(nullptr, &o);
  EXPECT_TRUE(same(o, def));
  mtlite_options_from_model(with, nullptr);  // no crash

  // A translation with the model's options is the explicit beam 3 one
  mtlite_limits lim;
  mtlite_limits_default(&lim);
  lim.max_batch = 2;
  mtlite_translator* tr = nullptr;
  ASSERT_EQ(mtlite_translator_create(with, &lim, &tr), MTLITE_OK);
  const char* texts[] = {"a b c d e f", "f e d c b a g"};
  std::vector<std::vector<int32_t>> got[2];
  for (int pass = 0; pass < 2; ++pass) {
    mtlite_options_from_model(with, &o);
    if (pass == 1) {  // explicit, starting from the plain defaults
      mtlite_options_default(&o);
      o.beam_size = 3;
      o.length_penalty = 0.6f;
      o.max_length_ratio = 2.0f;
      o.max_length_offset = 1;
    }
    ASSERT_EQ(mtlite_translate(tr, texts, nullptr, 2, &o), MTLITE_OK) << mtlite_last_error();
    for (size_t i = 0; i < 2; ++i) {
      mtlite_hypothesis h;
      ASSERT_EQ(mtlite_result_get(tr, i, 0, &h), MTLITE_OK);
      got[pass].emplace_back(h.ids, h.ids + h.num_ids);
    }
  }
  EXPECT_EQ(got[0], got[1]);
  mtlite_translator_free(tr);
  mtlite_model_free(with);
  mtlite_model_free(without);
}

TEST(DecodingDefaults, CliTakesTheModelsDefaultsAndFlagsOverride) {
  TempDir d;
  WriteReleaseFolder(d);
  const std::string with = d / "with.mtlite", without = d / "without.mtlite";
  auto conv = testing::RunCli("convert '" + d.path() + "' -o '" + with + "'");
  ASSERT_EQ(conv.exit_code, 0) << conv.output;
  EXPECT_NE(conv.output.find("decoding defaults (decoder.yml): --beam 3 --length-penalty 0.6 --max-length-ratio 2 "
                             "--max-length-offset 1: recorded"),
            std::string::npos)
      << conv.output;
  EXPECT_NE(conv.output.find("warning: decoder.yml: word-penalty 0.5"), std::string::npos) << conv.output;
  conv = testing::RunCli("convert '" + d.path() + "' -o '" + without + "' --decoding-defaults none -q");
  ASSERT_EQ(conv.exit_code, 0) << conv.output;
  conv = testing::RunCli("convert '" + d.path() + "' -o x --decoding-defaults always");
  EXPECT_EQ(conv.exit_code, 2) << conv.output;

  const std::string input = "'" + (d / "in.txt") + "'";
  std::string lines;
  for (const std::string& s : kSentences) lines += s + "\n";
  WriteText(d / "in.txt", lines);
  const auto translate = [&](const std::string& model, const std::string& flags) {
    const auto r = testing::RunCli("translate -q -m '" + model + "' --split none --output-ids --scores " + flags +
                                   " < " + input);
    EXPECT_EQ(r.exit_code, 0) << flags << ": " << r.output;
    return r.output;
  };
  const std::string explicit_flags = "--beam 3 --length-penalty 0.6 --max-length-ratio 2 --max-length-offset 1";
  const std::string by_default = translate(with, "");
  EXPECT_EQ(by_default, translate(with, explicit_flags));
  EXPECT_EQ(by_default, translate(without, explicit_flags));
  // each flag overrides its default; together they give the model without defaults
  const std::string plain = translate(without, "");
  EXPECT_NE(by_default, plain);
  EXPECT_EQ(plain, translate(with, "--beam 1 --length-penalty 1 --max-length-ratio 0 --max-length-offset 10"));
  EXPECT_EQ(translate(with, "--beam 1"), translate(without, "--max-length-ratio 2 --max-length-offset 1 --length-penalty 0.6"));
  // --n-best is checked against the model's beam
  EXPECT_EQ(testing::RunCli("translate -q -m '" + with + "' --n-best 3 'a b c'").exit_code, 0);
  auto r = testing::RunCli("translate -q -m '" + with + "' --n-best 4 'a b c'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--n-best (4) cannot exceed the beam (3, the model's default; give --beam)"), std::string::npos)
      << r.output;
  EXPECT_EQ(testing::RunCli("translate -q -m '" + without + "' --n-best 2 'a b c'").exit_code, 2);

  // mtlite info shows them; a model without has no such section
  r = testing::RunCli("info '" + with + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("decoding defaults"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  beam_size                3\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  source                   \"decoder.yml\"\n"), std::string::npos) << r.output;
  r = testing::RunCli("info --json '" + with + "'");
  EXPECT_NE(r.output.find("\"decoding_defaults\": {\"beam_size\": 3, \"max_length_ratio\": 2, \"max_length_offset\": 1, "
                          "\"length_penalty\": 0.6, \"source\": \"decoder.yml\"}"),
            std::string::npos)
      << r.output;
  r = testing::RunCli("info '" + without + "'");
  EXPECT_EQ(r.output.find("decoding defaults"), std::string::npos) << r.output;
}

TEST(DecodingDefaults, HfGenerationConfigIsReportedOrRecordedOnRequest) {
  const std::string demo = testing::DemoHfDir();
  // auto: read and reported, not recorded (HF conversions decode as they always did)
  const Converted a = Convert(demo, DecodingDefaultsMode::kAuto);
  ASSERT_TRUE(a.model);
  EXPECT_FALSE(a.inputs.decoding_recorded);
  EXPECT_EQ(a.inputs.decoding.beam_size, 4);
  EXPECT_EQ(a.inputs.decoding.max_length, 255);  // HF's max_length 256 counts the decoder start
  EXPECT_TRUE(a.model->decoding_defaults().empty());
  // the demo model as the build converts it: byte-identical to a conversion with none
  const Converted n = Convert(demo, DecodingDefaultsMode::kNone);
  EXPECT_EQ(a.bytes, n.bytes);
  const Converted r = Convert(demo, DecodingDefaultsMode::kRecord);
  ASSERT_TRUE(r.model);
  EXPECT_TRUE(r.inputs.decoding_recorded);
  EXPECT_EQ(r.model->decoding_defaults().beam_size, 4);
  EXPECT_EQ(r.model->decoding_defaults().max_length, 255);
  EXPECT_FALSE(r.model->decoding_defaults().length_penalty.has_value());
  EXPECT_EQ(r.model->decoding_defaults().source, "generation_config.json");

  // keys the runtime does not implement are named (at their HF neutral value they are not)
  TempDir d;
  for (const auto& e : std::filesystem::directory_iterator(demo)) {
    if (e.path().filename() != "generation_config.json") std::filesystem::create_symlink(e.path(), d / e.path().filename().string());
  }
  WriteText(d / "generation_config.json",
            "{\"num_beams\": 2, \"max_new_tokens\": 40, \"length_penalty\": 0.5, \"no_repeat_ngram_size\": 3, "
            "\"repetition_penalty\": 1.0, \"do_sample\": true, \"bad_words_ids\": [[8000]], \"decoder_start_token_id\": 8000, "
            "\"pad_token_id\": 8000, \"eos_token_id\": 0}");
  const Converted g = Convert(d.path(), DecodingDefaultsMode::kRecord);
  ASSERT_TRUE(g.model);
  EXPECT_EQ(g.model->decoding_defaults().beam_size, 2);
  EXPECT_EQ(g.model->decoding_defaults().max_length, 40);
  EXPECT_EQ(g.model->decoding_defaults().length_penalty, 0.5f);
  EXPECT_TRUE(HasWarning(g.report, "generation_config.json: no_repeat_ngram_size 3: n-gram blocking is not implemented"));
  EXPECT_TRUE(HasWarning(g.report, "generation_config.json: do_sample true: sampling is not implemented"));
  EXPECT_FALSE(HasWarning(g.report, "repetition_penalty"));
}

}  // namespace
}  // namespace mtlite

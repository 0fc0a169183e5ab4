// The output-vocabulary shortlist, offline side: the corpus builder against a plain reference
// count, the Marian lex.s2t import, re-emitting a model with the section (every other buffer
// unchanged), and end to end through the CLI: `mtlite shortlist` on the committed training slice
// (tests/data/shortlist), `mtlite info`, `mtlite translate --shortlist`.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kernels.h"
#include "model_data.h"
#include "model_reader.h"
#include "model_test_helpers.h"
#include "model_writer.h"
#include "mtlite/mtlite.hpp"
#include "shortlist_builder.h"
#include "tokenizer.h"
#include "unit/alloc_counter.h"

namespace mtlite {
namespace {

using converter::AlignedBytes;
using converter::ShortlistOptions;
using converter::ShortlistReport;
using converter::ShortlistScore;
using converter::ShortlistSpec;

std::string TrainPath(const char* lang) { return std::string(MTLITE_SOURCE_DIR) + "/tests/data/shortlist/train." + lang; }

std::shared_ptr<const Model> LoadDemo(const char* quant = "int8") {
  auto m = Model::Load(testing::DemoModel(quant), LoadOptions{true});
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? std::shared_ptr<const Model>(std::move(m).value()) : nullptr;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<int32_t> Encode(const SpmTokenizer& tok, const std::string& line) {
  std::vector<uint8_t> ws(SpmTokenizer::WorkspaceBytes(std::max<size_t>(line.size(), 16)));
  std::vector<int32_t> ids(SpmTokenizer::kMaxNormalizedPerInputByte * std::max<size_t>(line.size(), 16) + 8);
  int n = 0;
  const Status s = tok.Encode(line, ws.data(), ws.size(), ids.data(), int(ids.size()), &n);
  EXPECT_TRUE(s.ok()) << s.ToString();
  ids.resize(size_t(s.ok() ? n : 0));
  return ids;
}

// The builder's definition, written the plain way: sets per pair, maps of counts, scores as
// exact rationals compared in long double (equal rationals of small integers give equal values).
ShortlistSpec ReferenceShortlist(const Model& model, const std::vector<std::string>& src,
                                 const std::vector<std::string>& tgt, const ShortlistOptions& o) {
  const detail::ModelData& md = model.data();
  const Tokenizer tok(md);
  const int vs = md.config.source_vocab_size, vt = md.config.target_vocab_size;
  std::set<int32_t> banned(md.config.bad_word_ids.begin(), md.config.bad_word_ids.end());
  banned.insert(md.config.pad_id);
  std::map<int32_t, uint64_t> freq, cs, ct;
  std::map<std::pair<int32_t, int32_t>, uint64_t> cst;
  for (size_t i = 0; i < src.size(); ++i) {
    const auto s_ids = Encode(tok.source(), src[i]);
    const auto t_ids = Encode(tok.target(), tgt[i]);
    for (int32_t t : t_ids) ++freq[t];
    std::set<int32_t> S(s_ids.begin(), s_ids.end()), T;
    for (int32_t t : t_ids) {
      if (!banned.count(t)) T.insert(t);
    }
    if (S.empty() || T.empty()) continue;
    for (int32_t s : S) ++cs[s];
    for (int32_t t : T) ++ct[t];
    for (int32_t s : S) {
      for (int32_t t : T) ++cst[{s, t}];
    }
  }
  ShortlistSpec out;
  std::vector<std::pair<uint64_t, int32_t>> by_freq;
  for (const auto& [t, n] : freq) {
    if (!banned.count(t)) by_freq.push_back({n, t});
  }
  std::sort(by_freq.begin(), by_freq.end(), [](auto a, auto b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  for (size_t i = 0; i < by_freq.size() && i < size_t(o.frequent); ++i) out.frequent.push_back(by_freq[i].second);
  const std::set<int32_t> frequent(out.frequent.begin(), out.frequent.end());
  const bool shared = vs == vt && std::equal(md.source_vocab.id_to_piece.begin(), md.source_vocab.id_to_piece.end(),
                                             md.target_vocab.id_to_piece.begin());
  out.offsets.push_back(0);
  for (int32_t s = 0; s < vs; ++s) {
    std::vector<std::pair<long double, int32_t>> scored;
    for (auto it = cst.lower_bound({s, 0}); it != cst.end() && it->first.first == s; ++it) {
      const int32_t t = it->first.second;
      if (frequent.count(t) || (shared && t == s)) continue;
      const long double c = (long double)it->second;
      scored.push_back({o.score == ShortlistScore::kDice ? 2 * c / (long double)(cs[s] + ct[t]) : c / (long double)cs[s], t});
    }
    std::sort(scored.begin(), scored.end(), [](auto a, auto b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
    for (size_t k = 0; k < scored.size() && k < size_t(o.top_k); ++k) out.targets.push_back(scored[k].second);
    out.offsets.push_back(uint32_t(out.targets.size()));
  }
  out.include_source_ids = shared;
  return out;
}

void ExpectSameLists(const ShortlistSpec& got, const ShortlistSpec& want) {
  EXPECT_EQ(got.frequent, want.frequent);
  ASSERT_EQ(got.offsets.size(), want.offsets.size());
  for (size_t s = 0; s + 1 < want.offsets.size(); ++s) {
    const std::vector<int32_t> g(got.targets.begin() + got.offsets[s], got.targets.begin() + got.offsets[s + 1]);
    const std::vector<int32_t> w(want.targets.begin() + want.offsets[s], want.targets.begin() + want.offsets[s + 1]);
    ASSERT_EQ(g, w) << "source id " << s;
  }
  EXPECT_EQ(got.include_source_ids, want.include_source_ids);
}

TEST(ShortlistBuild, MatchesThePlainReferenceCount) {
  auto model = LoadDemo();
  ASSERT_TRUE(model);
  const auto src = Lines(testing::ReadText(TrainPath("en"))), tgt = Lines(testing::ReadText(TrainPath("de")));
  const std::vector<std::string> src300(src.begin(), src.begin() + 300), tgt300(tgt.begin(), tgt.begin() + 300);
  testing::TempDir dir;
  testing::WriteText(dir / "a.en", [&] { std::string s; for (auto& l : src300) s += l + "\n"; return s; }());
  testing::WriteText(dir / "a.de", [&] { std::string s; for (auto& l : tgt300) s += l + "\n"; return s; }());
  for (ShortlistScore score : {ShortlistScore::kDice, ShortlistScore::kConditional}) {
    ShortlistOptions o;
    o.top_k = 7;
    o.frequent = 12;
    o.score = score;
    ShortlistSpec got;
    ShortlistReport report;
    ASSERT_TRUE(converter::BuildCorpusShortlist(*model, {dir / "a.en"}, {dir / "a.de"}, o, &got, &report).ok());
    EXPECT_EQ(report.pairs, 300u);
    EXPECT_EQ(got.top_k, 7);
    ExpectSameLists(got, ReferenceShortlist(*model, src300, tgt300, o));
  }
}

TEST(ShortlistBuild, ListsAvoidWhatIsAllowedAnywayAndAreDeterministic) {
  auto model = LoadDemo();
  ASSERT_TRUE(model);
  const ModelConfig& c = model->config();
  ShortlistOptions o;
  o.top_k = 20;
  o.frequent = 30;
  ShortlistSpec a, b;
  ShortlistReport r;
  ASSERT_TRUE(converter::BuildCorpusShortlist(*model, {TrainPath("en")}, {TrainPath("de")}, o, &a, &r).ok());
  ASSERT_TRUE(converter::BuildCorpusShortlist(*model, {TrainPath("en")}, {TrainPath("de")}, o, &b, &r).ok());
  EXPECT_EQ(a.frequent, b.frequent);
  EXPECT_EQ(a.offsets, b.offsets);
  EXPECT_EQ(a.targets, b.targets);
  EXPECT_EQ(r.pairs, 2000u);
  ASSERT_EQ(a.frequent.size(), 30u);
  ASSERT_EQ(a.offsets.size(), size_t(c.source_vocab_size) + 1);
  EXPECT_TRUE(a.include_source_ids);  // the demo model shares its vocabulary
  const std::set<int32_t> frequent(a.frequent.begin(), a.frequent.end());
  EXPECT_EQ(frequent.size(), a.frequent.size());
  EXPECT_FALSE(frequent.count(c.pad_id));
  uint64_t with = 0;
  for (int s = 0; s < c.source_vocab_size; ++s) {
    ASSERT_LE(a.offsets[size_t(s) + 1] - a.offsets[size_t(s)], 20u);
    with += a.offsets[size_t(s) + 1] > a.offsets[size_t(s)];
    for (uint32_t j = a.offsets[size_t(s)]; j < a.offsets[size_t(s) + 1]; ++j) {
      const int32_t t = a.targets[j];
      EXPECT_NE(t, c.pad_id);
      EXPECT_NE(t, s) << "a shared vocabulary allows the source id anyway";
      EXPECT_FALSE(frequent.count(t)) << "frequent ids are allowed anyway";
    }
  }
  EXPECT_EQ(with, r.sources_with_targets);
  EXPECT_GT(with, 500u);
  // The most frequent German tokens of the text lead the list ("▁." or "." and "▁die"/"▁der"...).
  const std::string first(model->data().target_vocab.id_to_piece[size_t(a.frequent[0])]);
  EXPECT_TRUE(first == "." || first == "▁." || first == "▁ein" || first == "▁Ein") << first;
  // K = 0: only the frequent list.
  o.top_k = 0;
  ASSERT_TRUE(converter::BuildCorpusShortlist(*model, {TrainPath("en")}, {TrainPath("de")}, o, &b, &r).ok());
  EXPECT_TRUE(b.targets.empty());
  EXPECT_EQ(b.frequent, a.frequent);
}

TEST(ShortlistBuild, BadInputGetsAnErrorNamingTheFile) {
  auto model = LoadDemo();
  ASSERT_TRUE(model);
  testing::TempDir dir;
  testing::WriteText(dir / "s", "a house\na dog\n");
  testing::WriteText(dir / "t", "ein Haus\n");
  testing::WriteText(dir / "bad", "ein Haus\nein \xff Hund\n");
  ShortlistSpec out;
  ShortlistReport r;
  Status s = converter::BuildCorpusShortlist(*model, {dir / "s"}, {dir / "t"}, {}, &out, &r);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("has 2 lines but"), std::string::npos) << s.ToString();
  s = converter::BuildCorpusShortlist(*model, {dir / "s"}, {dir / "bad"}, {}, &out, &r);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("bad:2:"), std::string::npos) << s.ToString();
  s = converter::BuildCorpusShortlist(*model, {dir / "s"}, {dir / "missing"}, {}, &out, &r);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("missing"), std::string::npos) << s.ToString();
  s = converter::BuildCorpusShortlist(*model, {dir / "s"}, {}, {}, &out, &r);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  ShortlistOptions negative;
  negative.top_k = -1;
  EXPECT_EQ(converter::BuildCorpusShortlist(*model, {dir / "s"}, {dir / "s"}, negative, &out, &r).code(),
            StatusCode::kInvalidArgument);
  // Text with no pair that has tokens on both sides (empty files, blank lines) builds nothing.
  testing::WriteText(dir / "empty", "");
  testing::WriteText(dir / "blank", "\n\n");
  for (const char* f : {"empty", "blank"}) {
    s = converter::BuildCorpusShortlist(*model, {dir / f}, {dir / f}, {}, &out, &r);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << f;
    EXPECT_NE(s.message().find("no sentence pair with tokens on both sides"), std::string::npos) << s.ToString();
  }
  testing::WriteText(dir / "e0", "a house\n\n");
  s = converter::BuildCorpusShortlist(*model, {dir / "e0"}, {dir / "blank"}, {}, &out, &r);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  // Empty lines are counted and skipped, not an error.
  testing::WriteText(dir / "e1", "a house\n\n");
  testing::WriteText(dir / "e2", "ein Haus\nwas\n");
  ASSERT_TRUE(converter::BuildCorpusShortlist(*model, {dir / "e1"}, {dir / "e2"}, {}, &out, &r).ok());
  EXPECT_EQ(r.pairs, 2u);
  EXPECT_EQ(r.skipped_pairs, 1u);
}

// ---- Marian lex.s2t -----------------------------------------------------------------------

int32_t Id(const Model& m, const std::string& piece) {
  const auto& v = m.data().target_vocab.id_to_piece;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == piece) return int32_t(i);
  }
  ADD_FAILURE() << "no piece " << piece;
  return -1;
}

TEST(ShortlistLex, ImportKeepsTheMostProbablePerSource) {
  auto model = LoadDemo();
  ASSERT_TRUE(model);
  const Model& m = *model;
  testing::TempDir dir;
  // TARGET SOURCE PROB; tabs or spaces; a repeated pair keeps its last probability.
  testing::WriteText(dir / "lex.s2t",
                     "▁Haus ▁house 0.5\n"
                     "▁Hause\t▁house\t0.25\n"
                     "▁Gebäude ▁house 0.25\n"
                     "▁Hund ▁house 0.9\n"
                     "▁Hund ▁house 0.1\n"  // repeated: 0.1 wins
                     "NULL ▁house 0.3\n"
                     "▁Haus NULL 0.3\n"
                     "nosuchpiece ▁house 0.7\n"
                     "▁Haus nosuchpiece 0.7\n"
                     "▁Katze ▁house 0\n"
                     "\n"
                     "▁Hund ▁dog 1e-3\r\n");
  ShortlistOptions o;
  o.top_k = 3;
  o.frequent = 5;
  ShortlistSpec sl;
  ShortlistReport r;
  ASSERT_TRUE(converter::ImportLexShortlist(m, dir / "lex.s2t", {}, o, &sl, &r).ok());
  EXPECT_EQ(r.lex_entries, 11u);
  EXPECT_EQ(r.lex_null, 2u);
  EXPECT_EQ(r.lex_unknown_target, 1u);
  EXPECT_EQ(r.lex_unknown_source, 1u);
  EXPECT_EQ(r.lex_not_positive, 1u);
  const int32_t house = Id(m, "▁house"), dog = Id(m, "▁dog");
  std::vector<int32_t> want = {Id(m, "▁Haus"), Id(m, "▁Gebäude"), Id(m, "▁Hause")};
  // 0.25 tie: the lower id first
  if (want[1] > want[2]) std::swap(want[1], want[2]);
  const std::set<int32_t> frequent(sl.frequent.begin(), sl.frequent.end());
  want.erase(std::remove_if(want.begin(), want.end(), [&](int32_t t) { return frequent.count(t) > 0; }), want.end());
  const std::vector<int32_t> got(sl.targets.begin() + sl.offsets[size_t(house)], sl.targets.begin() + sl.offsets[size_t(house) + 1]);
  EXPECT_EQ(got, want);  // ▁Hund (0.1 after the repeat) is the 4th: cut by top-k 3
  ASSERT_EQ(sl.offsets[size_t(dog) + 1] - sl.offsets[size_t(dog)], 1u);
  EXPECT_EQ(sl.targets[sl.offsets[size_t(dog)]], Id(m, "▁Hund"));
  EXPECT_EQ(sl.offsets.back(), sl.targets.size());
  EXPECT_EQ(r.sources_with_targets, 2u);
  // No target text: the frequent ids are the normal pieces with the highest unigram scores.
  ASSERT_EQ(sl.frequent.size(), 5u);
  const detail::SpmView& spm = m.data().target_spm;
  float lowest = 1e30f;
  for (int i = 0; i < spm.num_pieces; ++i) {
    if (std::find(sl.frequent.begin(), sl.frequent.end(), spm.to_vocab[i]) != sl.frequent.end()) lowest = std::min(lowest, spm.scores[i]);
  }
  int higher = 0;
  for (int i = 0; i < spm.num_pieces; ++i) higher += spm.types[i] == detail::PieceKind::kNormal && spm.scores[i] > lowest;
  EXPECT_LE(higher, 4);
  // With target text: the text's most frequent tokens.
  ShortlistSpec with_text;
  ASSERT_TRUE(converter::ImportLexShortlist(m, dir / "lex.s2t", {TrainPath("de")}, o, &with_text, &r).ok());
  ShortlistSpec corpus;
  ShortlistReport r2;
  ASSERT_TRUE(converter::BuildCorpusShortlist(m, {TrainPath("en")}, {TrainPath("de")}, o, &corpus, &r2).ok());
  EXPECT_EQ(with_text.frequent, corpus.frequent);
}

TEST(ShortlistLex, MalformedLinesAreErrorsWithTheLine) {
  auto model = LoadDemo();
  ASSERT_TRUE(model);
  testing::TempDir dir;
  ShortlistSpec sl;
  ShortlistReport r;
  const std::pair<const char*, const char*> cases[] = {
      {"▁Haus ▁house 0.5\n▁Haus ▁house\n", "lex:2: expected 'TARGET SOURCE PROB'"},
      {"▁Haus ▁house 0.5 extra\n", "lex:1: expected"},
      {"▁Haus ▁house nan\n", "lex:1: PROB 'nan'"},
      {"▁Haus ▁house 0.5x\n", "lex:1: PROB '0.5x'"},
      // nothing usable: empty, blank lines only, only NULL sides or pieces of other vocabularies
      {"", "lex: no entry whose source and target pieces are both in the model's vocabularies (0 entries"},
      {"\n \n", "lex: no entry whose"},
      {"NULL ▁house 0.5\nnosuchpiece ▁house 0.7\n▁Haus nosuchpiece 0.2\n",
       "(3 entries: 1 with NULL, 1 unknown source and 1 unknown target pieces)"},
  };
  for (const auto& [text, expect] : cases) {
    testing::WriteText(dir / "lex", text);
    const Status s = converter::ImportLexShortlist(*model, dir / "lex", {}, {}, &sl, &r);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(s.message().find(expect), std::string::npos) << s.ToString();
  }
  EXPECT_FALSE(converter::ImportLexShortlist(*model, dir / "nothing", {}, {}, &sl, &r).ok());
}

// ---- the section in a file ------------------------------------------------------------------

// Re-reading a model and serializing it again gives the file back, byte for byte.
TEST(ShortlistFile, ReadModelSpecReproducesTheFile) {
  for (const char* q : {"int8", "fp16", "fp32"}) {
    const AlignedBytes bytes = testing::ReadAligned(testing::DemoModel(q));
    auto m = Model::FromBuffer(bytes.data(), bytes.size(), LoadOptions{true});
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    converter::ModelSpec spec;
    ASSERT_TRUE(converter::ReadModelSpec(**m, &spec).ok());
    const AlignedBytes again = converter::SerializeModel(spec);
    ASSERT_EQ(again.size(), bytes.size()) << q;
    EXPECT_EQ(std::memcmp(again.data(), bytes.data(), bytes.size()), 0) << q;
  }
}

// Every data buffer of `out` but the shortlist's equals `in`'s (name, size, bytes).
// Token t's int8 output-projection row, scale and final_logits_bias entry, wherever the model
// stores them (a shortlist's row order).
std::string TokenRow(const Model& m, int t) {
  const detail::ModelData& md = m.data();
  const detail::WeightView& w = md.output_proj;
  const int r = w.row_of ? w.row_of[t] : t;
  std::string row(size_t(w.cols), '\0');
  kernels::UnpackBlockedRow(static_cast<const int8_t*>(w.data), w.rows, w.cols, r, reinterpret_cast<int8_t*>(&row[0]));
  row.append(reinterpret_cast<const char*>(&w.scales[r]), sizeof(float));
  if (md.final_logits_bias.data) row.append(reinterpret_cast<const char*>(&md.final_logits_bias.data[r]), sizeof(float));
  return row;
}

// Every data buffer but the shortlist's has the same bytes in `in` and `out`; when either stores
// the output projection in a shortlist's row order, the projection's buffers (the tied embedding
// table) and final_logits_bias instead hold the same row for every token.
void ExpectOtherBuffersEqual(const Model& in, const Model& out) {
  const bool reordered = in.data().shortlist.row_order || out.data().shortlist.row_order;
  std::map<std::string, std::string> a, b;
  auto collect = [reordered](const Model& m, std::map<std::string, std::string>* to) {
    for (const auto& c : m.data().checks) {
      if (c.name.rfind("shortlist.", 0) == 0) continue;
      if (reordered && (c.data == m.data().output_proj.data ||
                        reinterpret_cast<const void*>(c.data) == m.data().output_proj.scales ||
                        reinterpret_cast<const void*>(c.data) == m.data().final_logits_bias.data))
        continue;
      (*to)[c.Label()] = std::string(reinterpret_cast<const char*>(c.data), c.size);
    }
  };
  if (reordered) {
    ASSERT_EQ(in.config().target_vocab_size, out.config().target_vocab_size);
    for (int t = 0; t < in.config().target_vocab_size; ++t) ASSERT_EQ(TokenRow(in, t), TokenRow(out, t)) << "token " << t;
  }
  collect(in, &a);
  collect(out, &b);
  EXPECT_EQ(a.size(), b.size());
  for (const auto& [name, bytes] : a) {
    ASSERT_TRUE(b.count(name)) << name;
    EXPECT_TRUE(b[name] == bytes) << name;
  }
}

TEST(ShortlistFile, AddAndReplaceKeepEveryOtherBuffer) {
  auto model = LoadDemo();
  ASSERT_TRUE(model);
  ShortlistOptions o;
  o.top_k = 10;
  o.row_order = false;  // token order: every weight byte stays (ShortlistFile.RowOrder: the default)
  ShortlistSpec sl;
  ShortlistReport r;
  ASSERT_TRUE(converter::BuildCorpusShortlist(*model, {TrainPath("en")}, {TrainPath("de")}, o, &sl, &r).ok());
  AlignedBytes once;
  ASSERT_TRUE(converter::AddShortlist(*model, sl, &once).ok());
  auto m1 = Model::FromBuffer(once.data(), once.size(), LoadOptions{true});
  ASSERT_TRUE(m1.ok()) << m1.status().ToString();
  EXPECT_FALSE(model->has_shortlist());
  ASSERT_TRUE((*m1)->has_shortlist());
  const detail::ShortlistView& v = (*m1)->data().shortlist;
  EXPECT_EQ(std::vector<int32_t>(v.frequent, v.frequent + v.num_frequent), sl.frequent);
  EXPECT_EQ(std::vector<uint32_t>(v.offsets, v.offsets + sl.offsets.size()), sl.offsets);
  EXPECT_EQ(std::vector<int32_t>(v.targets, v.targets + sl.targets.size()), sl.targets);
  EXPECT_TRUE(v.include_source_ids);
  ExpectOtherBuffersEqual(*model, **m1);
  // The size profile has the section.
  bool found = false;
  for (const auto& c : (*m1)->SizeProfile()) {
    if (c.name == "shortlist") {
      found = true;
      EXPECT_EQ(c.bytes, 4 * (sl.frequent.size() + sl.offsets.size() + sl.targets.size()));
    }
  }
  EXPECT_TRUE(found);
  // Replacing: a smaller shortlist in the file that has one; the weights stay.
  o.top_k = 3;
  ShortlistSpec small;
  ASSERT_TRUE(converter::BuildCorpusShortlist(**m1, {TrainPath("en")}, {TrainPath("de")}, o, &small, &r).ok());
  AlignedBytes twice;
  ASSERT_TRUE(converter::AddShortlist(**m1, small, &twice).ok());
  auto m2 = Model::FromBuffer(twice.data(), twice.size(), LoadOptions{true});
  ASSERT_TRUE(m2.ok()) << m2.status().ToString();
  EXPECT_EQ(size_t((*m2)->data().shortlist.offsets[model->config().source_vocab_size]), small.targets.size());
  ExpectOtherBuffersEqual(*model, **m2);
  EXPECT_LT(twice.size(), once.size());
  // Removing it again (ReadModelSpec without the section) gives the original file.
  converter::ModelSpec spec;
  ASSERT_TRUE(converter::ReadModelSpec(**m2, &spec).ok());
  spec.shortlist.reset();
  const AlignedBytes back = converter::SerializeModel(spec);
  const AlignedBytes original = testing::ReadAligned(testing::DemoModel("int8"));
  ASSERT_EQ(back.size(), original.size());
  EXPECT_EQ(std::memcmp(back.data(), original.data(), back.size()), 0);
}

// The default build of an int8 model stores the output projection's rows (the tied embedding
// table) grouped by the shortlist: a permutation with the frequent ids and </s> first, format
// version 2, every token's row, scale and bias kept; the blocks a sentence's candidates touch
// shrink; translations without the shortlist are unchanged, with it the same tokens as a
// token-order shortlist. Replacing the shortlist composes the orders.
TEST(ShortlistFile, RowOrder) {
  auto model = LoadDemo();
  ASSERT_TRUE(model);
  const int V = model->config().target_vocab_size;
  ShortlistReport r;
  ShortlistSpec sl, sl_token;
  ASSERT_TRUE(converter::BuildCorpusShortlist(*model, {TrainPath("en")}, {TrainPath("de")}, {}, &sl, &r).ok());
  ShortlistOptions keep;
  keep.row_order = false;
  ASSERT_TRUE(converter::BuildCorpusShortlist(*model, {TrainPath("en")}, {TrainPath("de")}, keep, &sl_token, &r).ok());
  EXPECT_TRUE(sl_token.row_order.empty());
  ASSERT_EQ(sl.row_order.size(), size_t(V));
  std::vector<int32_t> sorted = sl.row_order;
  std::sort(sorted.begin(), sorted.end());
  for (int t = 0; t < V; ++t) ASSERT_EQ(sorted[size_t(t)], t);
  for (size_t i = 0; i < sl.frequent.size(); ++i) EXPECT_EQ(sl.row_order[i], sl.frequent[i]);
  EXPECT_EQ(sl.row_order[sl.frequent.size()], model->config().eos_id);

  AlignedBytes ordered, token;
  ASSERT_TRUE(converter::AddShortlist(*model, sl, &ordered).ok());
  ASSERT_TRUE(converter::AddShortlist(*model, sl_token, &token).ok());
  auto mo = Model::FromBuffer(ordered.data(), ordered.size(), LoadOptions{true});
  auto mt = Model::FromBuffer(token.data(), token.size(), LoadOptions{true});
  ASSERT_TRUE(mo.ok() && mt.ok()) << mo.status().ToString() << mt.status().ToString();
  converter::ModelSpec so, st;
  ASSERT_TRUE(converter::ReadModelSpec(**mo, &so).ok() && converter::ReadModelSpec(**mt, &st).ok());
  EXPECT_EQ(so.format_version, 2u);
  EXPECT_EQ(st.format_version, 1u);
  ASSERT_NE((*mo)->data().shortlist.row_order, nullptr);
  EXPECT_EQ((*mt)->data().shortlist.row_order, nullptr);
  EXPECT_EQ((*mo)->data().output_proj.row_of, (*mo)->data().shortlist.token_row);
  EXPECT_EQ((*mo)->data().source_embed.row_of, (*mo)->data().shortlist.token_row);  // shared vocabulary
  ExpectOtherBuffersEqual(*model, **mo);
  // Replacing: a token-order shortlist on the reordered file gives the token-order file byte for
  // byte; the reordered shortlist again gives the reordered file.
  AlignedBytes back, again;
  ASSERT_TRUE(converter::AddShortlist(**mo, sl_token, &back).ok());
  ASSERT_TRUE(converter::AddShortlist(**mo, sl, &again).ok());
  ASSERT_EQ(back.size(), token.size());
  EXPECT_EQ(std::memcmp(back.data(), token.data(), back.size()), 0);
  ASSERT_EQ(again.size(), ordered.size());
  EXPECT_EQ(std::memcmp(again.data(), ordered.data(), again.size()), 0);

  // The 8-row blocks the candidates of a dev sentence touch (batch 1), in both files.
  const std::vector<std::string> dev =
      Lines(testing::ReadText(std::string(MTLITE_SOURCE_DIR) + "/tests/data/dev/multi30k.val.en"));
  const std::vector<std::string> lines(dev.begin(), dev.begin() + 100);
  const detail::ShortlistView& v = (*mo)->data().shortlist;
  size_t blocks_token = 0, blocks_ordered = 0;
  for (const std::string& line : lines) {
    std::vector<int32_t> src;
    ASSERT_TRUE(EncodeSource(**mo, line, &src).ok());
    std::set<int32_t> cand(v.frequent, v.frequent + v.num_frequent), bt, bo;
    cand.insert(model->config().eos_id);
    for (int32_t id : src) {
      cand.insert(v.targets + v.offsets[id], v.targets + v.offsets[id + 1]);
      if (v.include_source_ids) cand.insert(id);
    }
    for (int32_t t : cand) bt.insert(t / 8), bo.insert(v.token_row[t] / 8);
    blocks_token += bt.size();
    blocks_ordered += bo.size();
  }
  std::printf("candidate blocks over %zu dev lines: %zu in token order, %zu grouped\n", lines.size(), blocks_token,
              blocks_ordered);
  EXPECT_LT(double(blocks_ordered), 0.8 * double(blocks_token));

  // Translations: without the shortlist identical to the model's (ids and scores, greedy and
  // beam 4); with it, greedy gives the token-order shortlist's tokens.
  std::shared_ptr<const Model> base = model, with_o(std::move(mo).value()), with_t(std::move(mt).value());
  TranslatorLimits lim;
  lim.max_batch = 2;
  lim.max_beam = 4;
  auto tb = Translator::Create(base, lim), to = Translator::Create(with_o, lim), tt = Translator::Create(with_t, lim);
  ASSERT_TRUE(tb.ok() && to.ok() && tt.ok());
  for (int beam : {1, 4}) {
    TranslateOptions plain, shortlisted;
    plain.beam_size = shortlisted.beam_size = beam;
    shortlisted.use_shortlist = true;
    const std::vector<std::string> batch(lines.begin(), lines.begin() + 12);
    for (size_t i = 0; i < batch.size(); i += 2) {
      const std::vector<std::string> two(batch.begin() + std::ptrdiff_t(i), batch.begin() + std::ptrdiff_t(i) + 2);
      std::vector<TranslationResult> a, b, so_, st_;
      ASSERT_TRUE(tb.value()->Translate(two, plain, &a).ok());
      ASSERT_TRUE(to.value()->Translate(two, plain, &b).ok());
      ASSERT_TRUE(to.value()->Translate(two, shortlisted, &so_).ok());
      ASSERT_TRUE(tt.value()->Translate(two, shortlisted, &st_).ok());
      for (size_t j = 0; j < two.size(); ++j) {
        EXPECT_EQ(a[j].hypotheses[0].ids, b[j].hypotheses[0].ids) << two[j];
        EXPECT_EQ(a[j].hypotheses[0].score, b[j].hypotheses[0].score) << two[j];
        if (beam == 1) EXPECT_EQ(so_[j].hypotheses[0].ids, st_[j].hypotheses[0].ids) << two[j];
      }
    }
  }
  // f32 models keep token order (their projection is computed whole).
  if (auto f32 = LoadDemo("fp32")) {
    ShortlistSpec s32;
    ASSERT_TRUE(converter::BuildCorpusShortlist(*f32, {TrainPath("en")}, {TrainPath("de")}, {}, &s32, &r).ok());
    EXPECT_TRUE(s32.row_order.empty());
  }
}

// The firmware load path (caller storage) validates the section without a heap allocation.
TEST(ShortlistFile, CallerStorageLoadAllocatesNothing) {
#ifndef MTLITE_COUNTS_ALLOCATIONS
  GTEST_SKIP() << "allocation counting needs an uninstrumented malloc (sanitizer build)";
#else
  auto model = LoadDemo();
  ASSERT_TRUE(model);
  ShortlistSpec sl;
  ShortlistReport r;
  ASSERT_TRUE(converter::BuildCorpusShortlist(*model, {TrainPath("en")}, {TrainPath("de")}, {}, &sl, &r).ok());
  AlignedBytes bytes;
  ASSERT_TRUE(converter::AddShortlist(*model, sl, &bytes).ok());
  auto need = Model::StorageBytes(bytes.data(), bytes.size());
  ASSERT_TRUE(need.ok()) << need.status().ToString();
  AlignedBytes storage(need.value() + 64);
  void* at = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
  testing_util::g_allocs = 0;
  testing_util::g_counting = true;
  {
    auto m = Model::FromBuffer(bytes.data(), bytes.size(), at, need.value());
    testing_util::g_counting = false;
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_TRUE((*m)->has_shortlist());
  }
  EXPECT_EQ(testing_util::g_allocs.load(), 0);
  // Too little storage for the section's marks: a clear error, not a crash.
  auto small = Model::FromBuffer(bytes.data(), bytes.size(), at, need.value() - 4096);
  EXPECT_EQ(small.status().code(), StatusCode::kResourceExhausted) << small.status().ToString();
#endif
}

// ---- end to end: the committed training slice through the CLI ---------------------------------

TEST(ShortlistEndToEnd, BuildInfoTranslate) {
  testing::TempDir dir;
  const std::string model = testing::DemoModel("int8"), out = dir / "demo.shortlist.mtlite";
  auto r = testing::RunCli("shortlist -m '" + model + "' -o '" + out + "' --source '" + TrainPath("en") + "' --target '" +
                           TrainPath("de") + "' --top-k 50 --frequent 50");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("read 2000 sentence pairs"), std::string::npos) << r.output;
  r = testing::RunCli("info '" + out + "' --verify");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("shortlist:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("checksums: ok"), std::string::npos) << r.output;
  r = testing::RunCli("info '" + out + "' --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"shortlist\": {"), std::string::npos) << r.output;

  auto base = Model::Load(model, LoadOptions{true});
  auto with = Model::Load(out, LoadOptions{true});
  ASSERT_TRUE(base.ok() && with.ok());
  std::shared_ptr<const Model> mb(std::move(base).value()), mw(std::move(with).value());
  EXPECT_FALSE(mb->has_shortlist());
  ASSERT_TRUE(mw->has_shortlist());
  ExpectOtherBuffersEqual(*mb, *mw);

  const std::vector<std::string> dev =
      Lines(testing::ReadText(std::string(MTLITE_SOURCE_DIR) + "/tests/data/dev/multi30k.val.en"));
  const std::vector<std::string> lines(dev.begin(), dev.begin() + 8);
  TranslatorLimits lim;
  lim.max_batch = 1;
  auto tb = Translator::Create(mb, lim);
  auto tw = Translator::Create(mw, lim);
  ASSERT_TRUE(tb.ok() && tw.ok());
  TranslateOptions plain, shortlisted;
  shortlisted.use_shortlist = true;
  const detail::ShortlistView& v = mw->data().shortlist;
  const ModelConfig& c = mw->config();
  int same = 0;
  for (const std::string& line : lines) {
    std::vector<TranslationResult> a, b, s;
    ASSERT_TRUE(tb.value()->Translate({line}, plain, &a).ok());
    ASSERT_TRUE(tw.value()->Translate({line}, plain, &b).ok());
    ASSERT_TRUE(tw.value()->Translate({line}, shortlisted, &s).ok());
    // Without --shortlist the section changes nothing.
    EXPECT_EQ(a[0].hypotheses[0].ids, b[0].hypotheses[0].ids) << line;
    EXPECT_EQ(a[0].hypotheses[0].score, b[0].hypotheses[0].score) << line;
    // With it, every output token is a candidate of the sentence.
    std::vector<int32_t> src;
    ASSERT_TRUE(EncodeSource(*mw, line, &src).ok());
    std::set<int32_t> allowed(v.frequent, v.frequent + v.num_frequent);
    allowed.insert(c.eos_id);
    for (int32_t id : src) {
      allowed.insert(v.targets + v.offsets[id], v.targets + v.offsets[id + 1]);
      if (v.include_source_ids) allowed.insert(id);
    }
    ASSERT_FALSE(s[0].hypotheses[0].ids.empty()) << line;
    for (int32_t id : s[0].hypotheses[0].ids) EXPECT_TRUE(allowed.count(id)) << line << ": id " << id;
    same += s[0].hypotheses[0].ids == a[0].hypotheses[0].ids;
  }
  std::printf("shortlist from the 2000-pair slice: %d of %zu translations unchanged\n", same, lines.size());

  // The CLI flag, and its clear error on the model without the section.
  testing::WriteText(dir / "in.txt", lines[0] + "\n" + lines[1] + "\n");
  r = testing::Run("'" + testing::CliPath() + "' translate -m '" + out + "' --shortlist < '" + (dir / "in.txt") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(Lines(r.output).size(), 2u) << r.output;
  r = testing::Run("'" + testing::CliPath() + "' translate -m '" + model + "' --shortlist < '" + (dir / "in.txt") + "'");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("no shortlist section"), std::string::npos) << r.output;
}

TEST(ShortlistEndToEnd, CliArgumentErrors) {
  const std::string model = testing::DemoModel("int8");
  testing::TempDir dir;
  const std::string out = dir / "o.mtlite";
  const std::pair<std::string, const char*> cases[] = {
      {"shortlist -m '" + model + "' -o '" + out + "'", "needs --source and --target"},
      {"shortlist -m '" + model + "' -o '" + out + "' --source '" + TrainPath("en") + "'", "one --target per --source"},
      {"shortlist -m '" + model + "' -o '" + out + "' --lex x --source '" + TrainPath("en") + "'", "not used with --lex"},
      {"shortlist -m '" + model + "' -o '" + out + "' --source '" + TrainPath("en") + "' --target '" + TrainPath("de") +
           "' --top-k -1",
       "--top-k"},
      {"shortlist -m '" + (dir / "none.mtlite") + "' -o '" + out + "' --source a --target b", "none.mtlite"},
      {"shortlist -m '" + model + "' -o '" + out + "' --source '" + TrainPath("en") + "' --target '" +
           (dir / "missing.de") + "'",
       "missing.de"},
  };
  for (const auto& [args, expect] : cases) {
    const auto r = testing::RunCli(args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_NE(r.output.find(expect), std::string::npos) << args << "\n" << r.output;
  }
  EXPECT_NE(access(out.c_str(), F_OK), 0) << "a failed run writes no file";
}

}  // namespace
}  // namespace mtlite

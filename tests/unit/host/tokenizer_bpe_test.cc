// SentencePiece BPE in the runtime tokenizer, against libsentencepiece itself: the BPE models in
// tests/data/tokenizer (trained by tests/reference/make_bpe_models.py: 2k, 8k with byte
// fallback, user-defined and control symbols with case folding, whitespace as suffix), one of
// them edited to hold UNUSED pieces, on every dev line, the adversarial lines, a generated corpus
// (random Unicode, mixed scripts, combining marks, control characters, runs of one character,
// whitespace runs) and long inputs; decoding; no allocation; the converter and `mtlite translate`
// with a BPE model.
#include <gtest/gtest.h>
#include <sentencepiece_processor.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "marian_layout.h"
#include "model_data.h"
#include "model_test_helpers.h"
#include "mtlite_generated.h"
#include "mtlite/mtlite.hpp"
#include "spm_proto.h"
#include "tokenizer.h"
#include "tokenizer_text.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

static std::atomic<long> g_allocations{0};
void* operator new(size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace mtlite {
namespace {

using converter::SpmPiece;
using converter::SpmProto;
using detail::PieceKind;

const std::string kData = std::string(MTLITE_SOURCE_DIR) + "/tests/data";

std::string ModelPath(const std::string& name) { return kData + "/tokenizer/" + name + ".model"; }

std::vector<std::string> Lines(const std::string& path) {
  std::vector<std::string> out;
  std::string data = testing::ReadText(path), line;
  for (char c : data) {
    if (c == '\n') {
      out.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  if (!line.empty()) out.push_back(line);
  return out;
}

// ---- a protobuf writer for the fields SpmProto keeps (to edit a model for the oracle) -------
void Varint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(char(uint8_t(v) | 0x80));
    v >>= 7;
  }
  out->push_back(char(v));
}
void Tag(uint32_t field, uint32_t wire, std::string* out) { Varint((uint64_t(field) << 3) | wire, out); }
void Int(uint32_t field, int64_t v, std::string* out) {
  Tag(field, 0, out);
  Varint(uint64_t(v), out);
}
void Bytes(uint32_t field, const std::string& v, std::string* out) {
  Tag(field, 2, out);
  Varint(v.size(), out);
  *out += v;
}
std::string Serialize(const SpmProto& p) {
  std::string out;
  for (const SpmPiece& piece : p.pieces) {
    std::string m;
    Bytes(1, piece.piece, &m);
    Tag(2, 5, &m);
    uint32_t bits;
    std::memcpy(&bits, &piece.score, 4);
    for (int i = 0; i < 4; ++i) m.push_back(char(uint8_t(bits >> (8 * i))));
    Int(3, piece.type, &m);
    Bytes(1, m, &out);
  }
  std::string t;
  Int(3, p.model_type, &t);
  Int(24, p.treat_whitespace_as_suffix, &t);
  Int(35, p.byte_fallback, &t);
  Int(40, p.unk_id, &t);
  Int(41, p.bos_id, &t);
  Int(42, p.eos_id, &t);
  Int(43, p.pad_id, &t);
  Bytes(2, t, &out);
  std::string n;
  Bytes(1, p.normalizer_name, &n);
  Bytes(2, p.precompiled_charsmap, &n);
  Int(3, p.add_dummy_prefix, &n);
  Int(4, p.remove_extra_whitespaces, &n);
  Int(5, p.escape_whitespaces, &n);
  Bytes(3, n, &out);
  return out;
}

// The tokenizer tables as the converter builds them, with the model's own pieces as the vocab
// (spm index = vocab id), and libsentencepiece loaded from the same bytes.
struct Bpe {
  SpmProto proto;
  std::vector<float> scores;
  std::vector<PieceKind> types;
  std::vector<int32_t> sorted, to_vocab;
  detail::SpmView spm;
  detail::VocabView vocab;
  std::map<std::string, int> piece_id;
  sentencepiece::SentencePieceProcessor sp;
  std::unique_ptr<SpmTokenizer> tok;

  explicit Bpe(const std::string& bytes) {
    Status s = converter::ParseSpmProto(bytes, &proto);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (s.ok()) s = converter::ValidateSpmProto(proto, "bpe.model");
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(proto.model_type, 2);
    EXPECT_TRUE(sp.LoadFromSerializedProto(bytes).ok());
    const int n = int(proto.pieces.size());
    for (int i = 0; i < n; ++i) {
      spm.pieces.push_back(proto.pieces[size_t(i)].piece);
      scores.push_back(proto.pieces[size_t(i)].score);
      types.push_back(PieceKind(proto.pieces[size_t(i)].type));
      to_vocab.push_back(i);
      sorted.push_back(i);
      piece_id[proto.pieces[size_t(i)].piece] = i;
    }
    std::sort(sorted.begin(), sorted.end(),
              [&](int a, int b) { return proto.pieces[size_t(a)].piece < proto.pieces[size_t(b)].piece; });
    spm.num_pieces = n;
    spm.scores = scores.data();
    spm.types = types.data();
    spm.sorted_pieces = sorted.data();
    spm.to_vocab = to_vocab.data();
    spm.unk_id = proto.unk_id;
    spm.bos_id = proto.bos_id;
    spm.eos_id = proto.eos_id;
    spm.pad_id = proto.pad_id;
    spm.add_dummy_prefix = proto.add_dummy_prefix;
    spm.remove_extra_whitespaces = proto.remove_extra_whitespaces;
    spm.escape_whitespaces = proto.escape_whitespaces;
    spm.treat_whitespace_as_suffix = proto.treat_whitespace_as_suffix;
    spm.byte_fallback = proto.byte_fallback;
    spm.model_type = detail::SpmModelType::kBpe;
    spm.charsmap = reinterpret_cast<const uint8_t*>(proto.precompiled_charsmap.data());
    spm.charsmap_size = proto.precompiled_charsmap.size();
    for (const std::string_view p : spm.pieces) vocab.id_to_piece.push_back(p);
    tok = std::make_unique<SpmTokenizer>(spm, vocab);
    EXPECT_TRUE(tok->status().ok()) << tok->status().ToString();
    EXPECT_TRUE(tok->is_bpe());
  }

  // libsentencepiece's pieces, looked up in the vocab as HF does (a merged run of unknown
  // characters that is no piece becomes <unk>).
  std::vector<int32_t> Oracle(const std::string& text) const {
    std::vector<std::string> pieces;
    EXPECT_TRUE(sp.Encode(text, &pieces).ok());
    std::vector<int32_t> ids;
    for (const std::string& p : pieces) {
      const auto it = piece_id.find(p);
      ids.push_back(it == piece_id.end() ? proto.unk_id : it->second);
    }
    return ids;
  }

  Status Encode(const std::string& text, std::vector<int32_t>* ids, size_t budget = 0) const {
    const size_t max_bytes = std::max<size_t>(budget ? budget : text.size(), 16);
    std::vector<unsigned char> ws(SpmTokenizer::WorkspaceBytes(max_bytes));
    ids->assign(SpmTokenizer::kMaxNormalizedPerInputByte * max_bytes + 16, -1);
    int n = 0;
    const Status s = tok->Encode(text, ws.data(), ws.size(), ids->data(), int(ids->size()), &n);
    ids->resize(s.ok() ? size_t(n) : 0);
    return s;
  }
};

Bpe& Trained(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Bpe>> models;
  auto& m = models[name];
  if (!m) m = std::make_unique<Bpe>(testing::ReadText(ModelPath(name)));
  return *m;
}

std::string Join(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}

// Every line: the runtime's ids equal the oracle's. Returns the lines compared.
size_t ExpectSameIds(const Bpe& m, const std::vector<std::string>& lines, const std::string& what) {
  size_t compared = 0, failures = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::vector<int32_t> got;
    const Status s = m.Encode(lines[i], &got);
    if (!s.ok()) {
      ADD_FAILURE() << what << " line " << i << ": " << s.ToString();
      if (++failures > 5) break;
      continue;
    }
    const std::vector<int32_t> want = m.Oracle(lines[i]);
    if (got != want) {
      ADD_FAILURE() << what << " line " << i << " '" << lines[i] << "'\n  mtlite: " << Join(got)
                    << "\n  sentencepiece: " << Join(want);
      if (++failures > 5) break;
    }
    ++compared;
  }
  return compared;
}

std::vector<std::string> DevLines() {
  std::vector<std::string> all;
  for (const char* f : {"multi30k.val.en", "multi30k.val.de", "tatoeba.dev.en", "tatoeba.dev.de"}) {
    for (std::string& l : Lines(kData + "/dev/" + f)) all.push_back(std::move(l));
  }
  for (std::string& l : Lines(kData + "/tokenizer/adversarial.txt")) all.push_back(std::move(l));
  return all;
}

void AppendUtf8(uint32_t cp, std::string* s) {
  if (cp < 0x80) {
    s->push_back(char(cp));
  } else if (cp < 0x800) {
    s->push_back(char(0xc0 | (cp >> 6)));
    s->push_back(char(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    s->push_back(char(0xe0 | (cp >> 12)));
    s->push_back(char(0x80 | ((cp >> 6) & 0x3f)));
    s->push_back(char(0x80 | (cp & 0x3f)));
  } else {
    s->push_back(char(0xf0 | (cp >> 18)));
    s->push_back(char(0x80 | ((cp >> 12) & 0x3f)));
    s->push_back(char(0x80 | ((cp >> 6) & 0x3f)));
    s->push_back(char(0x80 | (cp & 0x3f)));
  }
}

// Generated lines: random Unicode scalar values, mixed scripts, combining marks, control
// characters, runs of one character, whitespace runs, the models' own special strings, and
// fragments of dev text glued to all of these.
std::vector<std::string> GeneratedLines(uint32_t seed, int count) {
  std::mt19937 rng(seed);
  const std::vector<std::string> dev = Lines(kData + "/dev/tatoeba.dev.en");
  const uint32_t blocks[][2] = {{0x20, 0x7e},     {0xa0, 0x24f},    {0x300, 0x36f},   {0x370, 0x3ff},
                                {0x400, 0x4ff},   {0x590, 0x6ff},   {0x900, 0x97f},   {0xe00, 0xe7f},
                                {0x1100, 0x11ff}, {0x2000, 0x206f}, {0x2460, 0x24ff}, {0x3000, 0x30ff},
                                {0x4e00, 0x4fff}, {0xac00, 0xacff}, {0xfb00, 0xfdff}, {0xfe00, 0xff9f},
                                {0x1f300, 0x1f6ff}, {0x10000, 0x10ffff}};
  const char* specials[] = {"<s>", "</s>", "<unk>", "<pad>", "<sep>", "<ctl>", "NY", "New", "ab", "\xe2\x96\x81",
                            " ", "  ", "\t", "\n", "\r\n", "\xc2\xa0", "\xe3\x80\x80", "\xef\xbc\xa1"};
  std::vector<std::string> out;
  for (int k = 0; k < count; ++k) {
    std::string s;
    const int parts = 1 + int(rng() % 8);
    for (int p = 0; p < parts; ++p) {
      switch (rng() % 7) {
        case 0: {  // random scalar values from one block
          const auto& b = blocks[rng() % (sizeof blocks / sizeof blocks[0])];
          for (int i = int(rng() % 12); i >= 0; --i) {
            uint32_t cp = b[0] + rng() % (b[1] - b[0] + 1);
            if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
            AppendUtf8(cp, &s);
          }
          break;
        }
        case 1:  // letters with combining marks
          for (int i = int(rng() % 6); i >= 0; --i) {
            s.push_back(char('a' + rng() % 26));
            for (int j = int(rng() % 3); j > 0; --j) AppendUtf8(0x300 + rng() % 0x70, &s);
          }
          break;
        case 2:  // control characters
          for (int i = int(rng() % 4); i >= 0; --i) {
            const uint32_t c = rng() % 3 ? rng() % 0x20 : 0x7f + rng() % 0x21;
            AppendUtf8(c == 0 ? 1 : c, &s);
          }
          break;
        case 3: {  // a run of one character
          std::string c;
          AppendUtf8(rng() % 2 ? uint32_t('a' + rng() % 26) : 0x4e00 + rng() % 64, &c);
          for (int i = int(rng() % 40); i >= 0; --i) s += c;
          break;
        }
        case 4:  // whitespace runs
          for (int i = int(rng() % 6); i >= 0; --i) s += specials[10 + rng() % 8];
          break;
        case 5:
          s += specials[rng() % 10];
          break;
        default: {  // dev text
          const std::string& l = dev[rng() % dev.size()];
          const size_t a = rng() % (l.size() + 1);
          s += l.substr(a, rng() % 30);
          break;
        }
      }
    }
    // Keep it valid UTF-8: a dev fragment may have been cut inside a character.
    std::string valid;
    for (size_t i = 0; i < s.size();) {
      uint32_t cp;
      const size_t len =
          detail::tokenizer_text::DecodeUtf8(reinterpret_cast<const uint8_t*>(s.data()) + i, s.size() - i, &cp);
      if (len == 0) {
        ++i;
        continue;
      }
      valid.append(s, i, len);
      i += len;
    }
    out.push_back(valid);
  }
  return out;
}

class BpeModels : public ::testing::TestWithParam<std::string> {};

TEST_P(BpeModels, DevLinesMatchSentencepiece) {
  const size_t n = ExpectSameIds(Trained(GetParam()), DevLines(), GetParam() + " dev");
  EXPECT_GT(n, 4000u);
}

TEST_P(BpeModels, GeneratedCorpusMatchesSentencepiece) {
  const size_t n = ExpectSameIds(Trained(GetParam()), GeneratedLines(17, 3000), GetParam() + " generated");
  EXPECT_EQ(n, 3000u);
}

TEST_P(BpeModels, LongInputsMatchSentencepiece) {
  std::vector<std::string> lines = {std::string(16384, 'a'), std::string(16384, ' '), std::string(4096, 'x') + " y",
                                    ""};
  std::string mixed, cjk, words;
  for (int i = 0; i < 2048; ++i) mixed += "ab";
  for (int i = 0; i < 2000; ++i) cjk += "\xe4\xb8\x80";
  const std::vector<std::string> dev = Lines(kData + "/dev/multi30k.val.en");
  for (size_t i = 0; words.size() < 16384; ++i) words += dev[i % dev.size()] + " ";
  lines.push_back(mixed);
  lines.push_back(cjk);
  lines.push_back(words);
  EXPECT_EQ(ExpectSameIds(Trained(GetParam()), lines, GetParam() + " long"), lines.size());
}

// The decode path is the unigram one: the pieces joined, specials dropped, stripped. Checked
// against libsentencepiece's DecodePieces on the dev lines' ids.
TEST_P(BpeModels, DecodeMatchesSentencepiece) {
  const Bpe& m = Trained(GetParam());
  size_t checked = 0;
  for (const std::string& line : DevLines()) {
    std::vector<int32_t> ids;
    ASSERT_TRUE(m.Encode(line, &ids).ok());
    std::vector<std::string> pieces;
    for (int32_t id : ids) {
      const std::string p = m.sp.IdToPiece(id);
      if (p != "</s>" && p != "<unk>" && p != "<pad>") pieces.push_back(p);
    }
    std::string want;
    ASSERT_TRUE(m.sp.Decode(pieces, &want).ok());
    // Python's str.strip() on ASCII whitespace is enough for these lines' decodings.
    const size_t a = want.find_first_not_of(" \t\n\r\f\v"), b = want.find_last_not_of(" \t\n\r\f\v");
    want = a == std::string::npos ? "" : want.substr(a, b - a + 1);
    std::vector<char> out(line.size() * 4 + 64);
    size_t len = 0;
    ASSERT_TRUE(m.tok->Decode(ids.data(), int(ids.size()), out.data(), out.size(), &len).ok());
    if (want.find_first_of("\xc2\xe2\xe3") != std::string::npos) continue;  // non-ASCII space: skip
    EXPECT_EQ(std::string(out.data(), len), want) << line;
    ++checked;
  }
  EXPECT_GT(checked, 3000u);
}

TEST_P(BpeModels, EncodeDoesNotAllocate) {
  const Bpe& m = Trained(GetParam());
  const std::vector<std::string> lines = GeneratedLines(5, 200);
  std::vector<unsigned char> ws(SpmTokenizer::WorkspaceBytes(1024));
  std::vector<int32_t> ids(8192);
  const long before = g_allocations.load();
  for (const std::string& l : lines) {
    int n = 0;
    ASSERT_TRUE(m.tok->Encode(l, ws.data(), ws.size(), ids.data(), int(ids.size()), &n).ok());
  }
  EXPECT_EQ(g_allocations.load() - before, 0);
}

INSTANTIATE_TEST_SUITE_P(Bpe, BpeModels,
                         ::testing::Values(std::string("bpe_2k"), std::string("bpe_8k_bytes"), std::string("bpe_udf"),
                                           std::string("bpe_suffix")));

// The models exercise what they were trained for.
TEST(BpeTokenizer, ModelsHaveTheirFeatures) {
  EXPECT_TRUE(Trained("bpe_8k_bytes").proto.byte_fallback);
  EXPECT_EQ(Trained("bpe_8k_bytes").proto.pieces.size(), 8000u);
  EXPECT_EQ(Trained("bpe_2k").proto.pieces.size(), 2000u);
  int user = 0, control = 0;
  for (const SpmPiece& p : Trained("bpe_udf").proto.pieces) {
    user += p.type == 4;
    control += p.type == 3;
  }
  EXPECT_EQ(user, 4);
  EXPECT_EQ(control, 4);  // <s>, </s>, <pad>, <ctl>
  EXPECT_TRUE(Trained("bpe_suffix").proto.treat_whitespace_as_suffix);
  // Byte fallback is taken (a character outside the vocabulary) and user-defined symbols are
  // single pieces.
  const Bpe& b = Trained("bpe_8k_bytes");
  std::vector<int32_t> ids;
  ASSERT_TRUE(b.Encode("\xf0\x9f\x90\xb1", &ids).ok());
  EXPECT_EQ(ids, b.Oracle("\xf0\x9f\x90\xb1"));
  ASSERT_GE(ids.size(), 4u);
  EXPECT_EQ(b.proto.pieces[size_t(ids.back())].piece, "<0xB1>");
  const Bpe& u = Trained("bpe_udf");
  ASSERT_TRUE(u.Encode("NYab<sep>", &ids).ok());
  EXPECT_EQ(ids, u.Oracle("NYab<sep>"));
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(u.proto.pieces[size_t(ids[2])].piece, "<sep>");
}

// UNUSED pieces: merges may form them, and the final symbol is split again into the symbols the
// last candidate forming it joined. bpe_2k with every third multi-byte normal piece UNUSED.
TEST(BpeTokenizer, UnusedPiecesMatchSentencepiece) {
  SpmProto proto;
  ASSERT_TRUE(converter::ParseSpmProto(testing::ReadText(ModelPath("bpe_2k")), &proto).ok());
  int unused = 0;
  for (size_t i = 0; i < proto.pieces.size(); ++i) {
    SpmPiece& p = proto.pieces[i];
    if (p.type == 1 && p.piece.size() >= 2 && i % 3 == 0) {
      p.type = 5;
      ++unused;
    }
  }
  ASSERT_GT(unused, 300);
  Bpe m(Serialize(proto));
  EXPECT_GT(ExpectSameIds(m, DevLines(), "unused dev"), 4000u);
  EXPECT_EQ(ExpectSameIds(m, GeneratedLines(23, 1500), "unused generated"), 1500u);
  const std::vector<std::string> long_lines = {std::string(8192, 'e'), std::string(3000, 'a') + " the the"};
  EXPECT_EQ(ExpectSameIds(m, long_lines, "unused long"), long_lines.size());
  // The merge log lives in the room the input leaves in the workspace: a workspace sized for
  // exactly this input is enough here, or the input gets kOutOfRange, never wrong ids.
  std::vector<int32_t> ids;
  const std::string line = Lines(kData + "/dev/multi30k.val.en")[0];
  const Status s = m.Encode(line, &ids, line.size());
  if (s.ok()) {
    EXPECT_EQ(ids, m.Oracle(line));
  } else {
    EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s.ToString();
  }
}

TEST(BpeTokenizer, BadInputIsAnError) {
  const Bpe& m = Trained("bpe_2k");
  std::vector<int32_t> ids;
  Status s = m.Encode(std::string("ab\xff", 3), &ids);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("byte offset 2"), std::string::npos) << s.message();
  // Too small a workspace or output: kOutOfRange.
  const std::string text(300, 'q');
  std::vector<unsigned char> ws(SpmTokenizer::WorkspaceBytes(16));
  int n = 0;
  ids.assign(1000, 0);
  s = m.tok->Encode(text, ws.data(), ws.size(), ids.data(), int(ids.size()), &n);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  std::vector<unsigned char> big(SpmTokenizer::WorkspaceBytes(text.size()));
  s = m.tok->Encode(text, big.data(), big.size(), ids.data(), 2, &n);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s.ToString();
}

// The converter takes a BPE .spm, the file says so (`mtlite info`), the loaded model's tokenizer
// gives libsentencepiece's ids, and `mtlite translate` runs on it.
TEST(BpeTokenizer, ConvertInfoTranslate) {
  testing::TinyHf hf = testing::MakeTinyHf();
  hf.source_spm = hf.target_spm = testing::ReadText(ModelPath("bpe_2k"));
  const Bpe& m = Trained("bpe_2k");
  const int n = int(m.proto.pieces.size()), V = n + 1, d = 8;
  hf.vocab = nlohmann::json::object();
  for (int i = 0; i < n; ++i) hf.vocab[m.proto.pieces[size_t(i)].piece] = i;
  hf.vocab["<pad>"] = n;
  hf.config["vocab_size"] = V;
  hf.config["decoder_vocab_size"] = V;
  hf.config["pad_token_id"] = V - 1;
  hf.config["decoder_start_token_id"] = V - 1;
  hf.config["eos_token_id"] = m.proto.eos_id;
  hf.generation["bad_words_ids"] = {{V - 1}};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  hf.tensors["model.shared.weight"].shape = {V, d};
  hf.tensors["model.shared.weight"].values.resize(size_t(V * d));
  for (float& v : hf.tensors["model.shared.weight"].values) v = u(rng);
  hf.tensors["final_logits_bias"].shape = {1, V};
  hf.tensors["final_logits_bias"].values.assign(size_t(V), 0.0f);
  testing::TempDir dir;
  hf.Write(dir.path());
  const std::string out = dir / "bpe.mtlite";
  auto r = testing::RunCli("convert '" + dir.path() + "' -o '" + out + "' --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.output;

  r = testing::RunCli("info '" + out + "' --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["metadata"]["tokenizer"], "bpe") << r.output;
  EXPECT_FALSE(j["metadata"].contains("target_tokenizer"));
  // The demo model (unigram) says unigram.
  r = testing::RunCli("info '" + testing::DemoModel("int8") + "' --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(r.output)["metadata"]["tokenizer"], "unigram");

  // Version 5 (an older runtime refuses the file); a BPE file that says 4 is rejected.
  {
    converter::AlignedBytes b = testing::ReadAligned(out);
    const fb::Model* root = fb::GetSizePrefixedModel(b.data());
    ASSERT_EQ(root->format_version(), layout::kFormatVersionBpeTokenizer);
    ASSERT_EQ(root->tokenizer()->source_spm()->model_type(), fb::SpmModelType::BPE);
    const uint8_t* field = reinterpret_cast<const flatbuffers::Table*>(root)->GetAddressOf(fb::Model::VT_FORMAT_VERSION);
    flatbuffers::WriteScalar<uint32_t>(b.data() + (field - b.data()), layout::kFormatVersionBpeTokenizer - 1);
    auto old = Model::FromBuffer(b.data(), b.size());
    ASSERT_FALSE(old.ok());
    EXPECT_NE(old.status().message().find("model_type BPE needs format_version 5"), std::string::npos)
        << old.status().ToString();
  }

  auto model = Model::Load(out);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const detail::ModelData& md = model.value()->data();
  EXPECT_EQ(md.source_spm.model_type, detail::SpmModelType::kBpe);
  const Tokenizer tok(md);
  EXPECT_TRUE(tok.source().is_bpe());
  std::vector<unsigned char> ws(SpmTokenizer::WorkspaceBytes(512));
  std::vector<int32_t> ids(4096);
  for (const std::string& line : Lines(kData + "/dev/tatoeba.dev.de")) {
    if (line.size() > 512) continue;
    int k = 0;
    ASSERT_TRUE(tok.source().Encode(line, ws.data(), ws.size(), ids.data(), int(ids.size()), &k).ok());
    ASSERT_EQ(std::vector<int32_t>(ids.begin(), ids.begin() + k), m.Oracle(line)) << line;
  }

  const std::string in = dir / "in.txt";
  testing::WriteText(in, "A man is riding a bike.\nZwei Hunde spielen im Schnee.\n");
  r = testing::Run("'" + testing::CliPath() + "' translate -m '" + out + "' --output-ids < '" + in + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  size_t lines = 0;
  for (char c : r.output) lines += c == '\n';
  EXPECT_EQ(lines, 2u) << r.output;
}

}  // namespace
}  // namespace mtlite

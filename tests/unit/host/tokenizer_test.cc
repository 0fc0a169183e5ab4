// Tokenizer tests: converter/spm_proto (protobuf-free .spm reader) and runtime SpmTokenizer
// against the libsentencepiece + vocab.json oracle in tests/data/tokenizer (written by
// tests/reference/make_tokenizer_golden.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "model_data.h"
#include "mtlite/mtlite.hpp"
#include "spm_proto.h"
#include "tokenizer.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

// Counts heap allocations so tests can check that Encode/Decode allocate nothing.
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

using converter::ParseSpmProto;
using converter::SpmProto;
using detail::PieceKind;

const std::string kModelDir = std::string(MTLITE_SOURCE_DIR) + "/models/marian-en-de-tiny";
const std::string kDataDir = std::string(MTLITE_SOURCE_DIR) + "/tests/data";

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << "cannot open " << path;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Splits on '\n' only; a final newline does not start another line.
std::vector<std::string> ReadLines(const std::string& path) {
  std::string data = ReadFile(path);
  std::vector<std::string> lines;
  if (data.empty()) return lines;
  if (data.back() == '\n') data.pop_back();
  size_t start = 0;
  while (true) {
    const size_t nl = data.find('\n', start);
    lines.push_back(data.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return lines;
}

std::vector<std::vector<int32_t>> ReadIds(const std::string& path) {
  std::vector<std::vector<int32_t>> rows;
  for (const std::string& line : ReadLines(path)) {
    std::istringstream ss(line);
    std::vector<int32_t> ids;
    int32_t id;
    while (ss >> id) ids.push_back(id);
    rows.push_back(ids);
  }
  return rows;
}

std::vector<std::string> ReadDecoded(const std::string& path) {
  std::vector<std::string> out;
  for (const std::string& line : ReadLines(path)) out.push_back(nlohmann::json::parse(line).get<std::string>());
  return out;
}

std::string Join(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}

// Tokenizer tables built straight from a .spm + vocab.json, the way the converter builds them:
// tests the tokenizer independently of the converter and loader. Without a vocab.json the
// vocab is the model's own pieces (spm index = vocab id).
struct ParsedTables {
  SpmProto proto;
  std::vector<std::string> vocab_strings;
  std::vector<float> scores;
  std::vector<PieceKind> types;
  std::vector<int32_t> sorted, to_vocab;
  detail::SpmView spm;
  detail::VocabView vocab;

  // extra_vocab_path: a JSON object of further vocab entries {piece: id} (e.g. language codes).
  explicit ParsedTables(const std::string& spm_path, const std::string& vocab_path = "",
                        const std::string& extra_vocab_path = "") {
    const Status s = ParseSpmProto(ReadFile(spm_path), &proto);
    EXPECT_TRUE(s.ok()) << s.ToString();
    nlohmann::json vj = nlohmann::json::object();
    if (!vocab_path.empty()) {
      vj = nlohmann::json::parse(ReadFile(vocab_path));
      if (!extra_vocab_path.empty()) vj.update(nlohmann::json::parse(ReadFile(extra_vocab_path)));
    } else {
      for (size_t i = 0; i < proto.pieces.size(); ++i) vj[proto.pieces[i].piece] = i;
    }
    for (auto it = vj.begin(); it != vj.end(); ++it) {
      const int id = it.value().get<int>();
      if (id >= static_cast<int>(vocab_strings.size())) vocab_strings.resize(id + 1);
      vocab_strings[id] = it.key();
    }
    const int vocab_unk = vj.at("<unk>").get<int>();
    const int n = static_cast<int>(proto.pieces.size());
    for (int i = 0; i < n; ++i) {
      const converter::SpmPiece& p = proto.pieces[i];
      spm.pieces.push_back(p.piece);
      scores.push_back(p.score);
      types.push_back(static_cast<PieceKind>(p.type));
      to_vocab.push_back(vj.contains(p.piece) ? vj.at(p.piece).get<int>() : vocab_unk);
      sorted.push_back(i);
    }
    std::sort(sorted.begin(), sorted.end(),
              [&](int a, int b) { return proto.pieces[a].piece < proto.pieces[b].piece; });
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
    spm.charsmap = reinterpret_cast<const uint8_t*>(proto.precompiled_charsmap.data());
    spm.charsmap_size = proto.precompiled_charsmap.size();
    for (const std::string& v : vocab_strings) vocab.id_to_piece.push_back(v);
  }
};

const ParsedTables& Tables(bool target = false) {
  static const ParsedTables* source = new ParsedTables(kModelDir + "/source.spm", kModelDir + "/vocab.json");
  static const ParsedTables* target_tables = new ParsedTables(kModelDir + "/target.spm", kModelDir + "/vocab.json");
  return target ? *target_tables : *source;
}

// The converted demo model (converter + loader path).
std::shared_ptr<const Model> LoadedModel() {
  static std::shared_ptr<const Model> model = [] {
    auto r = Model::Load(std::string(MTLITE_TEST_MODEL_DIR) + "/demo.int8.mtlite");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r.value() : nullptr;
  }();
  return model;
}

// ---------------------------------------------------------------------------------------
// spm_proto

TEST(SpmProto, MatchesSentencepieceView) {
  const SpmProto& p = Tables().proto;
  const nlohmann::json view = nlohmann::json::parse(ReadFile(kDataDir + "/tokenizer/source_spm.json"));
  ASSERT_EQ(p.pieces.size(), view.at("piece_size").get<size_t>());
  const auto& pieces = view.at("pieces");
  const auto& scores = view.at("scores");
  const auto& kinds = view.at("kinds");
  for (size_t i = 0; i < p.pieces.size(); ++i) {
    ASSERT_EQ(p.pieces[i].piece, pieces[i].get<std::string>()) << i;
    ASSERT_EQ(p.pieces[i].score, static_cast<float>(scores[i].get<double>())) << i;
    const std::string kind = kinds[i].get<std::string>();
    const int t = p.pieces[i].type;
    const int expected = kind == "unknown" ? 2 : kind == "control" ? 3 : kind == "unused" ? 5 : kind == "byte" ? 6 : 0;
    if (expected != 0) {
      ASSERT_EQ(t, expected) << i;
    } else {
      ASSERT_TRUE(t == 1 || t == 4) << i;  // python cannot tell NORMAL from USER_DEFINED
    }
  }
  // sentencepiece reports -1 for an id whose piece is not of the expected kind.
  EXPECT_EQ(p.unk_id, view.at("unk_id").get<int>());
  EXPECT_EQ(p.eos_id, view.at("eos_id").get<int>());
  EXPECT_EQ(p.bos_id, view.at("bos_id").get<int>());
  EXPECT_EQ(p.pad_id, view.at("pad_id").get<int>());
  EXPECT_EQ(p.add_dummy_prefix, view.at("add_dummy_prefix").get<bool>());
  EXPECT_EQ(p.remove_extra_whitespaces, view.at("remove_extra_whitespaces").get<bool>());
  // Facts from models/marian-en-de-tiny/README.md (unigram, nmt_nfkc, no byte fallback).
  EXPECT_EQ(p.model_type, 1);
  EXPECT_EQ(p.normalizer_name, "nmt_nfkc");
  EXPECT_TRUE(p.escape_whitespaces);
  EXPECT_FALSE(p.byte_fallback);
  EXPECT_FALSE(p.treat_whitespace_as_suffix);
  EXPECT_GT(p.precompiled_charsmap.size(), 4u);
}

std::string Varint(uint64_t v) {
  std::string s;
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    if (v) b |= 0x80;
    s.push_back(static_cast<char>(b));
  } while (v);
  return s;
}
std::string Tag(int field, int wire) { return Varint(static_cast<uint64_t>(field) << 3 | wire); }
std::string Bytes(int field, const std::string& b) { return Tag(field, 2) + Varint(b.size()) + b; }

TEST(SpmProto, HandBuiltMessage) {
  // Defaults when sub-messages are absent.
  SpmProto p;
  ASSERT_TRUE(ParseSpmProto("", &p).ok());
  EXPECT_EQ(p.unk_id, 0);
  EXPECT_EQ(p.bos_id, 1);
  EXPECT_EQ(p.eos_id, 2);
  EXPECT_EQ(p.pad_id, -1);
  EXPECT_TRUE(p.add_dummy_prefix && p.remove_extra_whitespaces && p.escape_whitespaces);

  std::string score(4, '\0');
  const float f = -1.5f;
  std::memcpy(&score[0], &f, 4);
  const std::string piece = Bytes(1, "abc") + Tag(2, 5) + score + Tag(3, 0) + Varint(4) +
                            Tag(9, 1) + std::string(8, 'x');  // unknown fixed64
  const std::string trainer = Tag(3, 0) + Varint(2) + Tag(40, 0) + Varint(uint64_t(-3)) +  // negative int32
                              Tag(43, 0) + Varint(7) + Tag(35, 0) + Varint(1) + Tag(24, 0) + Varint(1) +
                              Bytes(2, "prefix") + Tag(10, 5) + "\x01\x02\x03\x04";
  const std::string normalizer = Bytes(1, "identity") + Bytes(2, std::string("\0\1\2", 3)) + Tag(3, 0) + Varint(0) +
                                 Tag(4, 0) + Varint(0) + Tag(5, 0) + Varint(0) + Bytes(6, "tsv");
  const std::string msg = Bytes(1, piece) + Bytes(2, trainer) + Bytes(3, normalizer) + Bytes(1, Bytes(1, "d")) +
                          Bytes(5, Bytes(1, "denorm")) + Tag(99, 0) + Varint(123);
  ASSERT_TRUE(ParseSpmProto(msg, &p).ok());
  ASSERT_EQ(p.pieces.size(), 2u);
  EXPECT_EQ(p.pieces[0].piece, "abc");
  EXPECT_EQ(p.pieces[0].score, -1.5f);
  EXPECT_EQ(p.pieces[0].type, 4);
  EXPECT_EQ(p.pieces[1].piece, "d");
  EXPECT_EQ(p.pieces[1].score, 0.0f);
  EXPECT_EQ(p.pieces[1].type, 1);
  EXPECT_EQ(p.model_type, 2);
  EXPECT_EQ(p.unk_id, -3);
  EXPECT_EQ(p.pad_id, 7);
  EXPECT_TRUE(p.byte_fallback);
  EXPECT_TRUE(p.treat_whitespace_as_suffix);
  EXPECT_EQ(p.normalizer_name, "identity");  // denormalizer_spec (field 5) must not overwrite it
  EXPECT_EQ(p.precompiled_charsmap, std::string("\0\1\2", 3));
  EXPECT_FALSE(p.add_dummy_prefix || p.remove_extra_whitespaces || p.escape_whitespaces);
}

TEST(SpmProto, MalformedInputIsAnErrorNotACrash) {
  const std::vector<std::string> bad = {
      "\x80",                                  // truncated varint tag
      std::string("\x00", 1),                  // field number 0
      "\x0a\x05" "abc",                        // length beyond the end
      "\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",  // huge length
      "\x08\x01",                              // pieces as a varint (wire-type mismatch)
      "\x0e",                                  // wire type 6
      "\x0b",                                  // wire type 3 (group)
      "\x0d\x01\x02",                          // truncated fixed32
      "\x09\x01\x02\x03",                      // truncated fixed64
      "\x18\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",  // 11-byte varint
      "\x0a\x02\x15\x00",                      // truncated score inside a piece
      "\x0a\x02\x0a\x05",                      // piece string overruns its sub-message
      "\x12\x02\x18\x80",                      // truncated model_type varint in trainer_spec
  };
  for (const std::string& b : bad) {
    SpmProto p;
    const Status s = ParseSpmProto(b, &p);
    EXPECT_EQ(s.code(), StatusCode::kInvalidModel) << "input size " << b.size();
    EXPECT_FALSE(s.message().empty());
  }
  // Every truncation and many random corruptions of the real file: error or success, no crash.
  const std::string file = ReadFile(kModelDir + "/source.spm");
  int errors = 0;
  for (size_t n = 0; n < file.size(); n += 997) {
    SpmProto p;
    if (!ParseSpmProto(std::string_view(file).substr(0, n), &p).ok()) ++errors;
  }
  EXPECT_GT(errors, 0);
  std::mt19937 rng(42);
  for (int iter = 0; iter < 300; ++iter) {
    std::string c = file.substr(0, 4096);
    for (int k = 0; k < 8; ++k) c[rng() % c.size()] = static_cast<char>(rng());
    SpmProto p;
    const Status s = ParseSpmProto(c, &p);
    if (!s.ok()) {
      EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
    }
  }
  EXPECT_EQ(ParseSpmProto("", nullptr).code(), StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------------------
// SpmTokenizer against the oracle

struct EncodeSet {
  const char* text;  // relative to tests/data
  const char* ids;   // relative to tests/data/tokenizer
  bool target;       // encoded with the target tokenizer
};
const EncodeSet kEncodeSets[] = {
    {"dev/multi30k.val.en", "multi30k.val.en.ids", false},
    {"dev/multi30k.val.de", "multi30k.val.de.ids", true},
    {"dev/tatoeba.dev.en", "tatoeba.dev.en.ids", false},
    {"dev/tatoeba.dev.de", "tatoeba.dev.de.ids", true},
    {"tokenizer/adversarial.txt", "adversarial.source.ids", false},
    {"tokenizer/adversarial.txt", "adversarial.target.ids", true},
};
struct DecodeSet {
  const char* ids;
  const char* decoded;
};
const DecodeSet kDecodeSets[] = {
    {"multi30k.val.de.ids", "multi30k.val.de.decoded"},
    {"tatoeba.dev.de.ids", "tatoeba.dev.de.decoded"},
    {"multi30k.val.greedy.ids", "multi30k.val.greedy.decoded"},
    {"tatoeba.dev.greedy.ids", "tatoeba.dev.greedy.decoded"},
    {"adversarial.target.ids", "adversarial.target.decoded"},
};

constexpr size_t kMaxInput = 4096;

void ExpectEncodeMatchesOracle(const SpmTokenizer& source, const SpmTokenizer& target) {
  ASSERT_TRUE(source.status().ok()) << source.status().ToString();
  ASSERT_TRUE(target.status().ok()) << target.status().ToString();
  std::vector<unsigned char> ws(SpmTokenizer::WorkspaceBytes(kMaxInput));
  std::vector<int32_t> ids(kMaxInput * 2);
  int compared = 0, mismatches = 0;
  for (const EncodeSet& set : kEncodeSets) {
    const SpmTokenizer& tok = set.target ? target : source;
    const std::vector<std::string> lines = ReadLines(kDataDir + "/" + set.text);
    const std::vector<std::vector<int32_t>> expected = ReadIds(kDataDir + "/tokenizer/" + set.ids);
    ASSERT_EQ(lines.size(), expected.size()) << set.text;
    ASSERT_GT(lines.size(), 0u);
    for (size_t i = 0; i < lines.size(); ++i) {
      ASSERT_LE(lines[i].size(), kMaxInput);
      int n = -1;
      const long before = g_allocations.load();
      const Status s = tok.Encode(lines[i], ws.data(), ws.size(), ids.data(), static_cast<int>(ids.size()), &n);
      EXPECT_EQ(g_allocations.load(), before) << "Encode allocated";
      ASSERT_TRUE(s.ok()) << set.text << ":" << i + 1 << " " << s.ToString();
      const std::vector<int32_t> got(ids.begin(), ids.begin() + n);
      if (got != expected[i]) {
        ++mismatches;
        ADD_FAILURE() << set.text << ":" << i + 1 << " \"" << lines[i] << "\"\n  expected " << Join(expected[i])
                      << "\n  got      " << Join(got);
      }
      ++compared;
    }
  }
  std::printf("[tokenizer] encode: %d lines compared, %d mismatches\n", compared, mismatches);
}

void ExpectDecodeMatchesOracle(const SpmTokenizer& tok) {
  std::vector<char> out(1 << 16);
  int compared = 0;
  for (const DecodeSet& set : kDecodeSets) {
    const auto rows = ReadIds(kDataDir + "/tokenizer/" + set.ids);
    const auto expected = ReadDecoded(kDataDir + "/tokenizer/" + set.decoded);
    ASSERT_EQ(rows.size(), expected.size()) << set.ids;
    for (size_t i = 0; i < rows.size(); ++i) {
      size_t len = 0;
      const long before = g_allocations.load();
      const Status s = tok.Decode(rows[i].data(), static_cast<int>(rows[i].size()), out.data(), out.size(), &len);
      EXPECT_EQ(g_allocations.load(), before) << "Decode allocated";
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_EQ(std::string(out.data(), len), expected[i]) << set.ids << ":" << i + 1;
      ++compared;
    }
  }
  std::printf("[tokenizer] decode: %d lines compared\n", compared);
}

TEST(SpmTokenizer, EncodeMatchesSentencepieceParsedSpm) {
  const ParsedTables& s = Tables(false);
  const ParsedTables& t = Tables(true);
  ExpectEncodeMatchesOracle(SpmTokenizer(s.spm, s.vocab), SpmTokenizer(t.spm, t.vocab));
}

TEST(SpmTokenizer, DecodeMatchesHfParsedSpm) {
  const ParsedTables& t = Tables(true);
  ExpectDecodeMatchesOracle(SpmTokenizer(t.spm, t.vocab));
}

TEST(SpmTokenizer, EncodeMatchesSentencepieceLoadedModel) {
  const auto model = LoadedModel();
  ASSERT_NE(model, nullptr);
  const Tokenizer tok(model->data());
  ExpectEncodeMatchesOracle(tok.source(), tok.target());
}

TEST(SpmTokenizer, DecodeMatchesHfLoadedModel) {
  const auto model = LoadedModel();
  ASSERT_NE(model, nullptr);
  const Tokenizer tok(model->data());
  ExpectDecodeMatchesOracle(tok.target());
}

// Small models with non-default settings (see make_tokenizer_golden.py): user-defined and
// control symbols, byte fallback, no dummy prefix, extra whitespace kept, nmt_nfkc_cf; and an
// identity normalizer (no charsmap) with whitespace as suffix.
void ExpectVariantMatchesOracle(const std::string& name) {
  const std::string dir = kDataDir + "/tokenizer/";
  const ParsedTables t(dir + name + ".model");
  const SpmTokenizer tok(t.spm, t.vocab);
  ASSERT_TRUE(tok.status().ok()) << tok.status().ToString();
  std::vector<std::string> lines = ReadLines(dir + "adversarial.txt");
  for (const char* f : {"multi30k.val.en", "tatoeba.dev.de"}) {
    const auto more = ReadLines(kDataDir + "/dev/" + f);
    lines.insert(lines.end(), more.begin(), more.end());
  }
  const auto expected = ReadIds(dir + name + ".ids");
  const auto decoded = ReadDecoded(dir + name + ".decoded");
  ASSERT_EQ(lines.size(), expected.size());
  ASSERT_EQ(lines.size(), decoded.size());
  std::vector<unsigned char> ws(SpmTokenizer::WorkspaceBytes(kMaxInput));
  std::vector<int32_t> ids(kMaxInput * 4);
  std::vector<char> out(1 << 16);
  for (size_t i = 0; i < lines.size(); ++i) {
    int n = -1;
    const Status s = tok.Encode(lines[i], ws.data(), ws.size(), ids.data(), static_cast<int>(ids.size()), &n);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(Join(std::vector<int32_t>(ids.begin(), ids.begin() + n)), Join(expected[i]))
        << name << " line " << i + 1 << " \"" << lines[i] << "\"";
    size_t len = 0;
    ASSERT_TRUE(tok.Decode(expected[i].data(), static_cast<int>(expected[i].size()), out.data(), out.size(), &len).ok());
    EXPECT_EQ(std::string(out.data(), len), decoded[i]) << name << " line " << i + 1;
  }
  std::printf("[tokenizer] %s: %zu lines compared\n", name.c_str(), lines.size());
}

TEST(SpmTokenizer, VariantFlagsMatchesOracle) {
  ExpectVariantMatchesOracle("variant_flags");
  // Byte pieces: valid, truncated and stray sequences, interleaved with other pieces.
  const std::string dir = kDataDir + "/tokenizer/";
  const ParsedTables t(dir + "variant_flags.model");
  ASSERT_TRUE(t.proto.byte_fallback);
  const SpmTokenizer tok(t.spm, t.vocab);
  const auto rows = ReadIds(dir + "variant_flags.bytes.ids");
  const auto decoded = ReadDecoded(dir + "variant_flags.bytes.decoded");
  ASSERT_EQ(rows.size(), decoded.size());
  char out[256];
  for (size_t i = 0; i < rows.size(); ++i) {
    size_t len = 0;
    ASSERT_TRUE(tok.Decode(rows[i].data(), static_cast<int>(rows[i].size()), out, sizeof(out), &len).ok());
    EXPECT_EQ(std::string(out, len), decoded[i]) << "byte row " << i + 1;
  }
}

TEST(SpmTokenizer, VariantSuffixMatchesOracle) {
  const ParsedTables t(kDataDir + "/tokenizer/variant_suffix.model");
  EXPECT_TRUE(t.proto.treat_whitespace_as_suffix);
  EXPECT_TRUE(t.proto.precompiled_charsmap.empty());
  ExpectVariantMatchesOracle("variant_suffix");
}

// OPUS-MT language codes (">>deu<<") against MarianTokenizer of transformers 4.2x, reimplemented on
// python3-sentencepiece in make_tokenizer_golden.py (lang_codes.jsonl), with the demo's tokenizer
// and a vocab that holds codes (the "multi" random checkpoint's vocab.json).
TEST(SpmTokenizer, LanguageCodesMatchMarianTokenizer) {
  const std::string dir = kDataDir + "/tokenizer/";
  const ParsedTables s(kModelDir + "/source.spm", kModelDir + "/vocab.json", dir + "lang_codes.vocab.json");
  const ParsedTables t(kModelDir + "/target.spm", kModelDir + "/vocab.json", dir + "lang_codes.vocab.json");
  ASSERT_EQ(s.vocab.id_to_piece.size(), 8007u);
  ASSERT_EQ(s.vocab.id_to_piece[8001], ">>deu<<");
  const SpmTokenizer source(s.spm, s.vocab), target(t.spm, t.vocab);
  ASSERT_TRUE(source.status().ok() && target.status().ok());
  std::vector<unsigned char> ws(SpmTokenizer::WorkspaceBytes(kMaxInput));
  std::vector<int32_t> ids(kMaxInput);
  std::vector<char> out(1 << 12);
  int cases = 0, with_code = 0;
  for (const std::string& line : ReadLines(dir + "lang_codes.jsonl")) {
    const nlohmann::json e = nlohmann::json::parse(line);
    const std::string text = e.at("text").get<std::string>();
    for (const bool is_target : {false, true}) {
      const SpmTokenizer& tok = is_target ? target : source;
      const auto expected = e.at(is_target ? "target_ids" : "source_ids").get<std::vector<int32_t>>();
      int n = -1;
      const long before = g_allocations.load();
      const Status st = tok.Encode(text, ws.data(), ws.size(), ids.data(), static_cast<int>(ids.size()), &n);
      EXPECT_EQ(g_allocations.load(), before) << "Encode allocated";
      ASSERT_TRUE(st.ok()) << st.ToString();
      EXPECT_EQ(Join(std::vector<int32_t>(ids.begin(), ids.begin() + n)), Join(expected))
          << (is_target ? "target" : "source") << " \"" << text << "\"";
      if (is_target) {
        size_t len = 0;
        ASSERT_TRUE(tok.Decode(expected.data(), static_cast<int>(expected.size()), out.data(), out.size(), &len).ok());
        EXPECT_EQ(std::string(out.data(), len), e.at("decoded").get<std::string>()) << "decode \"" << text << "\"";
      } else if (!expected.empty() && expected[0] >= 8001) {
        ++with_code;
      }
    }
    ++cases;
  }
  EXPECT_GE(cases, 40);
  EXPECT_GE(with_code, 10);  // the set really exercises code tokens found in the vocab
  std::printf("[tokenizer] language codes: %d inputs, %d with a known leading code\n", cases, with_code);
}

TEST(SpmTokenizer, LanguageCodeEdges) {
  const std::string dir = kDataDir + "/tokenizer/";
  const ParsedTables t(kModelDir + "/source.spm", kModelDir + "/vocab.json", dir + "lang_codes.vocab.json");
  const SpmTokenizer tok(t.spm, t.vocab);
  std::vector<unsigned char> ws(SpmTokenizer::WorkspaceBytes(64));
  int32_t ids[64];
  int n = -1;
  // The code counts against the capacity: ">>deu<< Hello" is 2 ids.
  ASSERT_TRUE(tok.Encode(">>deu<< Hello", ws.data(), ws.size(), ids, 2, &n).ok());
  EXPECT_EQ(n, 2);
  EXPECT_EQ(ids[0], 8001);
  EXPECT_EQ(tok.Encode(">>deu<< Hello", ws.data(), ws.size(), ids, 1, &n).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(n, 0);
  ASSERT_TRUE(tok.Encode(">>xx<<", ws.data(), ws.size(), ids, 1, &n).ok());
  EXPECT_EQ(n, 1);
  EXPECT_EQ(ids[0], 8003);
  EXPECT_EQ(tok.Encode(">>xx<<", ws.data(), ws.size(), nullptr, 0, &n).code(), StatusCode::kOutOfRange);
  // Invalid UTF-8 after a code is still an error with its offset in the original text.
  const Status bad = tok.Encode(">>deu<< a\xff", ws.data(), ws.size(), ids, 64, &n);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("offset 9"), std::string::npos) << bad.message();
  // Too small a workspace: an error, never an overflow (ASan build).
  for (size_t bytes : {size_t{0}, size_t{16}, size_t{40}}) {
    std::vector<unsigned char> small(bytes);
    EXPECT_EQ(tok.Encode(">>deu<< Hello there", bytes ? small.data() : nullptr, bytes, ids, 64, &n).code(),
              StatusCode::kOutOfRange) << bytes;
  }

  // A vocab without codes (the demo's): the leading code is <unk>, as HF's vocab.get(code, unk).
  const ParsedTables& demo = Tables();
  const SpmTokenizer plain(demo.spm, demo.vocab);
  int32_t want[64];
  int m = -1;
  ASSERT_TRUE(plain.Encode(">>deu<< A man", ws.data(), ws.size(), ids, 64, &n).ok());
  ASSERT_TRUE(plain.Encode("A man", ws.data(), ws.size(), want, 64, &m).ok());
  ASSERT_EQ(n, m + 1);
  EXPECT_EQ(ids[0], 1);  // <unk>
  EXPECT_EQ(std::vector<int32_t>(ids + 1, ids + n), std::vector<int32_t>(want, want + m));

  // Long lines full of ">>" without "<<" (and the reverse): the code search is linear (a search
  // that rescans the line from every ">>" would need ~10^10 steps here and hit the test timeout).
  // Nothing is removed, and the ids equal the demo tokenizer's (its vocab lacks only the codes).
  std::vector<unsigned char> big_ws(SpmTokenizer::WorkspaceBytes(1 << 18));
  std::vector<int32_t> a(1 << 19), b(1 << 19);
  for (const std::string& unit : {std::string(">>"), std::string("<<"), std::string("a>>b\n")}) {
    std::string text;
    while (text.size() < (1u << 18) - unit.size()) text += unit;
    int na = -1, nb = -1;
    ASSERT_TRUE(tok.Encode(text, big_ws.data(), big_ws.size(), a.data(), int(a.size()), &na).ok());
    ASSERT_TRUE(plain.Encode(text, big_ws.data(), big_ws.size(), b.data(), int(b.size()), &nb).ok());
    EXPECT_GT(na, 0);
    EXPECT_EQ(std::vector<int32_t>(a.begin(), a.begin() + na), std::vector<int32_t>(b.begin(), b.begin() + nb));
  }
}

TEST(SpmTokenizer, InvalidUtf8IsRejectedWithOffset) {
  const ParsedTables& t = Tables();
  SpmTokenizer tok(t.spm, t.vocab);
  std::vector<unsigned char> ws(SpmTokenizer::WorkspaceBytes(256));
  int32_t ids[256];
  struct Case {
    std::string text;
    size_t offset;
  };
  const Case cases[] = {
      {"ab\x80" "cd", 2},                 // lone continuation byte
      {"abc\xc3", 3},                     // truncated 2-byte sequence at the end
      {"a\xe2\x82" "b", 1},               // truncated 3-byte sequence
      {"\xf0\x9f\x98", 0},                // truncated 4-byte sequence
      {"x\xc0\xaf", 1},                   // overlong '/'
      {"\xe0\x80\xaf", 0},                // overlong 3-byte
      {"ok \xf0\x80\x80\xaf", 3},         // overlong 4-byte
      {"\xed\xa0\x80", 0},                // surrogate U+D800
      {"a\xed\xbf\xbf", 1},               // surrogate U+DFFF
      {"\xf4\x90\x80\x80", 0},            // U+110000
      {"\xf8\x88\x80\x80\x80", 0},        // 5-byte form
      {"\xff", 0},
      {"caf\xc3\xa9 \xfe", 6},            // valid prefix, then junk
  };
  for (const Case& c : cases) {
    int n = -1;
    const Status s = tok.Encode(c.text, ws.data(), ws.size(), ids, 256, &n);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.offset;
    EXPECT_NE(s.message().find("offset " + std::to_string(c.offset)), std::string::npos) << s.message();
    EXPECT_EQ(n, 0);
  }
}

TEST(SpmTokenizer, TooSmallBuffersAreErrors) {
  const ParsedTables& t = Tables();
  SpmTokenizer tok(t.spm, t.vocab);
  const std::string text = "Two young, White males are outside near many bushes.";
  std::vector<unsigned char> ws(SpmTokenizer::WorkspaceBytes(text.size()));
  std::vector<int32_t> ids(64);
  int n = 0;
  ASSERT_TRUE(tok.Encode(text, ws.data(), ws.size(), ids.data(), 64, &n).ok());
  ASSERT_GT(n, 1);
  const std::vector<int32_t> full(ids.begin(), ids.begin() + n);

  // Exact capacity works; one less is kOutOfRange, with nothing written past the capacity.
  int m = 0;
  std::fill(ids.begin(), ids.end(), -7);
  EXPECT_TRUE(tok.Encode(text, ws.data(), ws.size(), ids.data(), n, &m).ok());
  EXPECT_EQ(std::vector<int32_t>(ids.begin(), ids.begin() + m), full);
  std::fill(ids.begin(), ids.end(), -7);
  EXPECT_EQ(tok.Encode(text, ws.data(), ws.size(), ids.data(), n - 1, &m).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(ids[n - 1], -7);
  EXPECT_EQ(m, 0);
  EXPECT_EQ(tok.Encode(text, ws.data(), ws.size(), nullptr, 0, &m).code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(tok.Encode("", ws.data(), ws.size(), nullptr, 0, &m).ok());
  EXPECT_EQ(m, 0);

  // Workspace too small, including zero and tiny sizes; never a write past it (checked by ASan).
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{16}, size_t{64}, size_t{256}, ws.size() / 4}) {
    std::vector<unsigned char> small(bytes);
    const Status s = tok.Encode(text, bytes ? small.data() : nullptr, bytes, ids.data(), 64, &m);
    EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << bytes;
  }
  // Misaligned workspace still works.
  std::vector<unsigned char> ws2(ws.size() + 3);
  EXPECT_TRUE(tok.Encode(text, ws2.data() + 1, ws.size() + 2, ids.data(), 64, &m).ok());
  EXPECT_EQ(std::vector<int32_t>(ids.begin(), ids.begin() + m), full);

  // Inputs whose normalized form expands beyond the sizing assumption: kOutOfRange, then fine
  // with a larger workspace. U+FDFA becomes 18 characters under NFKC.
  std::string expanding;
  for (int i = 0; i < 40; ++i) expanding += "\xef\xb7\xba";
  std::vector<unsigned char> ws3(SpmTokenizer::WorkspaceBytes(expanding.size()));
  std::vector<int32_t> many(4096);
  EXPECT_EQ(tok.Encode(expanding, ws3.data(), ws3.size(), many.data(), 4096, &m).code(), StatusCode::kOutOfRange);
  std::vector<unsigned char> ws4(SpmTokenizer::WorkspaceBytes(expanding.size() * 4));
  EXPECT_TRUE(tok.Encode(expanding, ws4.data(), ws4.size(), many.data(), 4096, &m).ok());
  EXPECT_GT(m, 40);

  // Bad arguments.
  EXPECT_EQ(tok.Encode(text, ws.data(), ws.size(), ids.data(), 64, nullptr).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(tok.Encode(text, ws.data(), ws.size(), nullptr, 64, &m).code(), StatusCode::kInvalidArgument);
}

TEST(SpmTokenizer, DecodeErrors) {
  const ParsedTables& t = Tables();
  SpmTokenizer tok(t.spm, t.vocab);
  const int v = tok.vocab_size();
  char out[256];
  size_t len = 99;
  for (int32_t bad : {-1, v, v + 1, INT_MAX, INT_MIN}) {
    const int32_t ids[] = {3, bad, 4};
    const Status s = tok.Decode(ids, 3, out, sizeof(out), &len);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find(std::to_string(bad)), std::string::npos) << s.message();
    EXPECT_EQ(len, 0u);
  }
  // Capacity: exact fits (leading/trailing spaces do not count); one less fails.
  const int32_t ids[] = {8000, 10, 24, 4, 13, 0};  // <pad> ▁Ein ▁Mann ▁in ▁einem </s>
  ASSERT_TRUE(tok.Decode(ids, 6, out, sizeof(out), &len).ok());
  const std::string full(out, len);
  EXPECT_EQ(full, "Ein Mann in einem");
  EXPECT_TRUE(tok.Decode(ids, 6, out, full.size(), &len).ok());
  EXPECT_EQ(std::string(out, len), full);
  std::memset(out, '#', sizeof(out));
  EXPECT_EQ(tok.Decode(ids, 6, out, full.size() - 1, &len).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(out[full.size() - 1], '#');
  EXPECT_TRUE(tok.Decode(ids, 0, nullptr, 0, &len).ok());
  EXPECT_EQ(len, 0u);
  const int32_t specials[] = {0, 1, 8000};
  EXPECT_TRUE(tok.Decode(specials, 3, nullptr, 0, &len).ok());
  EXPECT_EQ(len, 0u);
  EXPECT_EQ(tok.Decode(ids, -1, out, sizeof(out), &len).code(), StatusCode::kInvalidArgument);
}

TEST(SpmTokenizer, InconsistentTablesAreReportedNotTrusted) {
  const ParsedTables& t = Tables();
  std::vector<unsigned char> ws(SpmTokenizer::WorkspaceBytes(64));
  int32_t ids[64];
  int n;
  auto expect_invalid = [&](const detail::SpmView& spm, const char* what) {
    SpmTokenizer tok(spm, t.vocab);
    EXPECT_EQ(tok.status().code(), StatusCode::kInvalidModel) << what;
    EXPECT_EQ(tok.Encode("a man", ws.data(), ws.size(), ids, 64, &n).code(), StatusCode::kInvalidModel) << what;
    char out[16];
    size_t len;
    const int32_t one = 3;
    EXPECT_EQ(tok.Decode(&one, 1, out, sizeof(out), &len).code(), StatusCode::kInvalidModel) << what;
  };
  {
    std::vector<int32_t> sorted(t.sorted);
    std::swap(sorted[10], sorted[11]);
    detail::SpmView spm = t.spm;
    spm.sorted_pieces = sorted.data();
    expect_invalid(spm, "unsorted");
    sorted = t.sorted;
    sorted[5] = spm.num_pieces;
    expect_invalid(spm, "sorted out of range");
  }
  {
    std::vector<int32_t> to_vocab(t.to_vocab);
    to_vocab[7] = static_cast<int32_t>(t.vocab.id_to_piece.size());
    detail::SpmView spm = t.spm;
    spm.to_vocab = to_vocab.data();
    expect_invalid(spm, "to_vocab");
  }
  {
    detail::SpmView spm = t.spm;
    spm.unk_id = 2;
    expect_invalid(spm, "unk id");
    spm = t.spm;
    spm.charsmap_size = 3;
    expect_invalid(spm, "charsmap size");
    std::string blob(t.proto.precompiled_charsmap);
    blob[0] = '\xff';  // trie size beyond the blob
    spm = t.spm;
    spm.charsmap = reinterpret_cast<const uint8_t*>(blob.data());
    expect_invalid(spm, "trie size");
    spm.pieces.pop_back();
    expect_invalid(spm, "piece count");
  }
}

// Random bytes (valid UTF-8 or not) and a corrupted-but-consistent charsmap never crash.
TEST(SpmTokenizer, RandomInputNeverCrashes) {
  const ParsedTables& t = Tables();
  std::mt19937 rng(7);
  std::string blob(t.proto.precompiled_charsmap);
  for (int k = 0; k < 2000; ++k) blob[8 + rng() % (blob.size() - 9)] = static_cast<char>(rng());
  detail::SpmView corrupt = t.spm;
  corrupt.charsmap = reinterpret_cast<const uint8_t*>(blob.data());
  SpmTokenizer good(t.spm, t.vocab), bad(corrupt, t.vocab);
  ASSERT_TRUE(bad.status().ok());
  std::vector<unsigned char> ws(SpmTokenizer::WorkspaceBytes(512));
  std::vector<int32_t> ids(4096);
  const char alphabet[] = "ab \t\xc3\xa9\xe2\x96\x81\xef\xac\x81\xf0\x9f\x98\x80\x80\xff.";
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s(rng() % 64, ' ');
    for (char& c : s) c = alphabet[rng() % (sizeof(alphabet) - 1)];
    int n;
    for (const SpmTokenizer* tok : {&good, &bad}) {
      const Status st = tok->Encode(s, ws.data(), ws.size(), ids.data(), static_cast<int>(ids.size()), &n);
      if (!st.ok()) {
        EXPECT_TRUE(st.code() == StatusCode::kInvalidArgument || st.code() == StatusCode::kOutOfRange) << st.ToString();
      }
    }
  }
}

// Information only (no timed assertion): encode speed with the converted model's tables.
}  // namespace
}  // namespace mtlite

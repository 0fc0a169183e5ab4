// The converter reads .spm files with its own parser (converter/spm_proto.*) and checks them with
// ValidateSpmProto; libsentencepiece is the oracle here. Every file libsentencepiece refuses to
// load must be refused by the converter too (hand-made damage with the expected verdict of both,
// then seeded truncations and byte flips of the demo model's source.spm), and a file both accept
// has the same pieces.
#include <gtest/gtest.h>
#include <sentencepiece_processor.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "model_test_helpers.h"
#include "spm_proto.h"

namespace mtlite {
namespace {

using converter::SpmPiece;
using converter::SpmProto;

// ---- a protobuf writer for the fields SpmProto keeps (test side) ----------------------------
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
  Varint(uint64_t(v), out);  // negative int32: ten bytes, sign-extended, as protobuf writes it
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
  if (!p.precompiled_charsmap.empty()) Bytes(2, p.precompiled_charsmap, &n);
  Int(3, p.add_dummy_prefix, &n);
  Int(4, p.remove_extra_whitespaces, &n);
  Int(5, p.escape_whitespaces, &n);
  Bytes(3, n, &out);
  return out;
}

const std::string& DemoSpmBytes() {
  static const std::string bytes = testing::ReadText(testing::DemoHfDir() + "/source.spm");
  return bytes;
}

SpmProto DemoSpm() {
  SpmProto p;
  const Status s = converter::ParseSpmProto(DemoSpmBytes(), &p);
  EXPECT_TRUE(s.ok()) << s.message();
  return p;
}

struct Verdicts {
  bool spm_ok = false, ours_ok = false;
  std::string spm_message, our_message;
  int spm_pieces = -1;
  size_t our_pieces = 0;
};

Verdicts Judge(const std::string& bytes) {
  Verdicts v;
  sentencepiece::SentencePieceProcessor sp;
  const auto st = sp.LoadFromSerializedProto(bytes);
  v.spm_ok = st.ok();
  v.spm_message = st.ToString();
  if (v.spm_ok) v.spm_pieces = sp.GetPieceSize();
  SpmProto p;
  Status s = converter::ParseSpmProto(bytes, &p);
  if (s.ok()) s = converter::ValidateSpmProto(p, "x.spm");
  v.ours_ok = s.ok();
  v.our_message = s.message();
  v.our_pieces = p.pieces.size();
  return v;
}

int Find(const SpmProto& p, int type) {
  for (size_t i = 0; i < p.pieces.size(); ++i) {
    if (p.pieces[i].type == type) return int(i);
  }
  return -1;
}

void AddBytePieces(SpmProto* p, int count) {
  for (int b = 0; b < count; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    p->pieces.push_back({name, 0.0f, 6});
  }
}

struct Case {
  const char* name;
  std::function<void(SpmProto*)> edit;
  bool spm_ok, ours_ok;
  const char* our_message;  // a substring of the converter's message when it rejects
};

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {"as_is", [](SpmProto*) {}, true, true, ""},
      {"no_pieces", [](SpmProto* p) { p->pieces.clear(); }, false, false, "no pieces"},
      {"empty_piece", [](SpmProto* p) { p->pieces[10].piece.clear(); }, false, false, "piece 10 is empty"},
      {"normal_piece_twice", [](SpmProto* p) { p->pieces[11].piece = p->pieces[10].piece; }, false, false,
       "defined twice"},
      // Normal and reserved pieces live in separate maps in libsentencepiece: the same text as a
      // normal and as a control piece is allowed by both.
      {"normal_piece_named_like_a_control_piece",
       [](SpmProto* p) { p->pieces[10].piece = p->pieces[size_t(Find(*p, 3))].piece; }, true, true, ""},
      {"two_unknown_pieces", [](SpmProto* p) { p->pieces[10].type = 2; }, false, false, "both of type UNKNOWN"},
      {"no_unknown_piece", [](SpmProto* p) { p->pieces[size_t(Find(*p, 2))].type = 1; }, false, false,
       "no piece is of type UNKNOWN"},
      // proto2 keeps an undefined enum value out of the field, so libsentencepiece sees NORMAL.
      {"type_7", [](SpmProto* p) { p->pieces[10].type = 7; }, true, false, "type 7"},
      {"byte_piece_without_byte_fallback", [](SpmProto* p) { AddBytePieces(p, 1); }, false, false,
       "byte_fallback is off"},
      {"byte_fallback_with_all_256", [](SpmProto* p) { p->byte_fallback = true; AddBytePieces(p, 256); }, true,
       true, ""},
      {"byte_fallback_missing_0xFF", [](SpmProto* p) { p->byte_fallback = true; AddBytePieces(p, 255); }, false,
       false, "<0xFF> is missing"},
      {"byte_piece_in_lower_case",
       [](SpmProto* p) {
         p->byte_fallback = true;
         AddBytePieces(p, 256);
         p->pieces.back().piece = "<0xff>";
       },
       false, false, "not <0xHH>"},
      // libsentencepiece takes the UNKNOWN piece as unk and does not look at TrainerSpec.unk_id;
      // the converter and the runtime index with it, so it must name that piece (an id past the
      // end crashed the converter before it was checked).
      {"unk_id_names_another_piece", [](SpmProto* p) { p->unk_id = Find(*p, 2) + 1; }, true, false,
       "TrainerSpec.unk_id"},
      {"unk_id_past_the_end", [](SpmProto* p) { p->unk_id = 70000; }, true, false, "TrainerSpec.unk_id is 70000"},
      {"unk_id_negative", [](SpmProto* p) { p->unk_id = -1; }, true, false, "TrainerSpec.unk_id is -1"},
      {"charsmap_of_3_bytes", [](SpmProto* p) { p->precompiled_charsmap = "abc"; }, false, false, "too short"},
      {"charsmap_trie_past_the_end",
       [](SpmProto* p) {
         const uint32_t n = uint32_t(p->precompiled_charsmap.size());
         std::memcpy(&p->precompiled_charsmap[0], &n, 4);
       },
       false, false, "bad trie size"},
  };
  return cases;
}

class SpmValidate : public ::testing::TestWithParam<size_t> {};

TEST_P(SpmValidate, AgreesWithLibsentencepiece) {
  const Case& c = Cases()[GetParam()];
  SpmProto p = DemoSpm();
  ASSERT_FALSE(p.precompiled_charsmap.empty()) << "the demo spm should carry a charsmap";
  c.edit(&p);
  const Verdicts v = Judge(Serialize(p));
  std::printf("%s: libsentencepiece %s; converter %s\n", c.name, v.spm_message.c_str(),
              v.ours_ok ? "OK" : v.our_message.c_str());
  EXPECT_EQ(v.spm_ok, c.spm_ok) << v.spm_message;
  EXPECT_EQ(v.ours_ok, c.ours_ok) << v.our_message;
  if (!c.ours_ok) {
    EXPECT_NE(v.our_message.find(c.our_message), std::string::npos) << v.our_message;
    EXPECT_EQ(v.our_message.rfind("x.spm: not a valid SentencePiece model: ", 0), 0u) << v.our_message;
  }
  if (v.spm_ok && v.ours_ok) {
    EXPECT_EQ(size_t(v.spm_pieces), v.our_pieces);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, SpmValidate, ::testing::Range<size_t>(0, Cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& i) { return std::string(Cases()[i.param].name); });

// The file as shipped, cut short and with single bytes changed: whatever libsentencepiece
// refuses, the converter refuses; whatever both accept has the same number of pieces.
TEST(SpmValidate, DamagedFilesRefusedByLibsentencepieceAreRefused) {
  const std::string& good = DemoSpmBytes();
  ASSERT_GT(good.size(), 1000u);
  std::vector<std::string> damaged;
  for (size_t cut = 0; cut < good.size(); cut += good.size() / 61 + 1) damaged.push_back(good.substr(0, cut));
  std::mt19937 rng(20261126);
  for (int i = 0; i < 240; ++i) {
    std::string d = good;
    const size_t at = rng() % d.size();
    d[at] = char(uint8_t(d[at]) ^ uint8_t(1u << (rng() % 8)));
    damaged.push_back(d);
  }
  int spm_refused = 0, ours_refused = 0;
  for (size_t i = 0; i < damaged.size(); ++i) {
    const Verdicts v = Judge(damaged[i]);
    spm_refused += !v.spm_ok;
    ours_refused += !v.ours_ok;
    if (!v.spm_ok) {
      EXPECT_FALSE(v.ours_ok) << "damaged file " << i << ": libsentencepiece: " << v.spm_message;
    } else if (v.ours_ok) {
      EXPECT_EQ(size_t(v.spm_pieces), v.our_pieces) << "damaged file " << i;
    }
  }
  std::printf("%zu damaged files: libsentencepiece refused %d, the converter %d\n", damaged.size(), spm_refused,
              ours_refused);
  EXPECT_GE(spm_refused, 30) << "the damage should reach what libsentencepiece checks";
}

}  // namespace
}  // namespace mtlite

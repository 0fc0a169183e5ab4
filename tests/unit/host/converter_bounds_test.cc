// Crafted converter inputs whose declared sizes or offsets would make a parser allocate far
// more than the input holds: each is refused with a Status naming the file and the item, before
// anything of the declared size is allocated. The inputs are a few KB.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "hf_convert.h"
#include "marian_checkpoint.h"
#include "marian_convert.h"
#include "archive_test_helpers.h"
#include "model_test_helpers.h"
#include "safetensors.h"

namespace mtlite {
namespace {

using converter::MarianCheckpoint;
using testing::TempDir;

void Put(uint64_t v, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(char(uint8_t(v >> (8 * i))));
}

// ---- .npz: a stored zip whose central directory may point several entries at one block ------

// A .npy array: `descr` ('<f4', '|S1'), `shape` as numpy prints it ("(4,)"), then `data`.
std::string Npy(const std::string& descr, const std::string& shape, const std::string& data) {
  std::string h = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + h.size() + 1) % 64) h.push_back(' ');
  h.push_back('\n');
  std::string out = "\x93NUMPY";
  out += '\1';
  out += '\0';
  Put(h.size(), 2, &out);
  return out + h + data;
}

struct ZipEntry {
  std::string name;  // with ".npy"
  std::string data;  // empty: no local entry of its own; it points at local entry `same_as`
  int same_as = -1;
};

std::string Zip(const std::vector<ZipEntry>& entries) {
  std::string out;
  std::vector<uint64_t> local(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const ZipEntry& e = entries[i];
    if (e.same_as >= 0) continue;
    local[i] = out.size();
    Put(0x04034b50, 4, &out);
    Put(20, 2, &out);  // version needed
    Put(0, 2, &out);   // flags
    Put(0, 2, &out);   // stored
    Put(0, 4, &out);   // time, date
    Put(testing::Crc(e.data), 4, &out);
    Put(e.data.size(), 4, &out);
    Put(e.data.size(), 4, &out);
    Put(e.name.size(), 2, &out);
    Put(0, 2, &out);
    out += e.name + e.data;
  }
  const uint64_t cd = out.size();
  for (size_t i = 0; i < entries.size(); ++i) {
    const ZipEntry& e = entries[i];
    const size_t l = e.same_as >= 0 ? size_t(e.same_as) : i;
    Put(0x02014b50, 4, &out);
    Put(20, 2, &out);
    Put(20, 2, &out);
    Put(0, 2, &out);  // flags
    Put(0, 2, &out);  // stored
    Put(0, 4, &out);
    Put(testing::Crc(entries[l].data), 4, &out);
    Put(entries[l].data.size(), 4, &out);
    Put(entries[l].data.size(), 4, &out);
    Put(e.name.size(), 2, &out);
    Put(0, 2, &out);   // extra
    Put(0, 2, &out);   // comment
    Put(0, 2, &out);   // disk
    Put(0, 2, &out);   // internal attributes
    Put(0, 4, &out);   // external attributes
    Put(local[l], 4, &out);
    out += e.name;
  }
  const uint64_t cd_size = out.size() - cd;
  Put(0x06054b50, 4, &out);
  Put(0, 4, &out);
  Put(entries.size(), 2, &out);
  Put(entries.size(), 2, &out);
  Put(cd_size, 4, &out);
  Put(cd, 4, &out);
  Put(0, 2, &out);
  return out;
}

Status ParseCheckpoint(const std::string& bytes, const std::string& name) {
  MarianCheckpoint c;
  return converter::ParseMarianCheckpoint(bytes, name, &c);
}

// Entries that share one stored block would each be decoded in full: the archive's bytes no
// longer bound the tensors' (a 2 MB file becomes GBs of floats). Such archives are refused.
TEST(ConverterBounds, NpzEntriesSharingDataAreRefused) {
  const std::string block = Npy("<f4", "(256,)", std::string(1024, '\0'));
  std::vector<ZipEntry> entries = {{"special:model.yml.npy", Npy("|S1", "(4,)", "a: 1")}, {"W0.npy", block}};
  for (int i = 1; i <= 40; ++i) entries.push_back({"W" + std::to_string(i) + ".npy", "", 1});
  const std::string npz = Zip(entries);
  ASSERT_LT(npz.size(), 8192u);
  Status s = ParseCheckpoint(npz, "shared.npz");
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel) << s.ToString();
  EXPECT_NE(s.message().find("shared.npz: zip entry 'W1.npy': data overlaps zip entry 'W0.npy'"), std::string::npos)
      << s.message();

  // the same entry twice
  s = ParseCheckpoint(Zip({{"special:model.yml.npy", Npy("|S1", "(4,)", "a: 1")}, {"W0.npy", block}, {"W0.npy", "", 1}}),
                      "twice.npz");
  EXPECT_NE(s.message().find("twice.npz: zip entry 'W0.npy' appears twice in the central directory"), std::string::npos)
      << s.message();

  // distinct entries pass the container checks (the options are what is wrong here)
  s = ParseCheckpoint(Zip({{"special:model.yml.npy", Npy("|S1", "(4,)", "a: 1")}, {"W0.npy", block}}), "ok.npz");
  EXPECT_EQ(s.message().find("overlaps"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("type"), std::string::npos) << s.message();
}

// ---- special:model.yml: one 1-D byte item of its length ---------------------------------------

struct BinItem {
  std::string name;
  uint64_t type;  // 0x0101 int8, 0x0404 float32
  std::vector<int32_t> shape;
  std::string data;
};

// A Marian binary model (version 1) of `items`.
std::string Bin(const std::vector<BinItem>& items) {
  std::string out;
  Put(1, 8, &out);
  Put(items.size(), 8, &out);
  for (const BinItem& it : items) {
    Put(it.name.size() + 1, 8, &out);
    Put(it.type, 8, &out);
    Put(it.shape.size(), 8, &out);
    Put(it.data.size(), 8, &out);
  }
  for (const BinItem& it : items) out += it.name + '\0';
  for (const BinItem& it : items) {
    for (int32_t d : it.shape) Put(uint32_t(d), 4, &out);
  }
  Put(0, 8, &out);
  for (const BinItem& it : items) out += it.data;
  return out;
}

TEST(ConverterBounds, ModelYmlItemMustBeOneDimensionalBytes) {
  const std::string yaml = "type: transformer\n";
  auto expect = [](const std::string& bytes, const std::string& text) {
    Status s = ParseCheckpoint(bytes, "m.bin");
    EXPECT_EQ(s.code(), StatusCode::kInvalidModel) << s.ToString();
    EXPECT_NE(s.message().find(text), std::string::npos) << s.message();
  };
  const std::string n = std::to_string(yaml.size());
  const int32_t len = int32_t(yaml.size());
  expect(Bin({{"special:model.yml", 0x0101, {2, len / 2}, yaml}}),
         "m.bin: special:model.yml: shape [2, 9] (a 1-D item of its " + n + " bytes expected)");
  expect(Bin({{"special:model.yml", 0x0101, {1000000}, yaml}}),
         "m.bin: special:model.yml: shape [1000000] (a 1-D item of its " + n + " bytes expected)");
  expect(Bin({{"special:model.yml", 0x0101, {}, yaml}}), "m.bin: special:model.yml: shape [] (a 1-D item");
  expect(Bin({{"special:model.yml", 0x0404, {len / 4}, std::string(yaml, 0, 16)}}),
         "m.bin: special:model.yml: item type float32 (bytes, int8, expected)");
  expect(Bin({{"special:model.yml", 0x0101, {len}, yaml}, {"special:model.yml", 0x0101, {4}, "a: 1"}}),
         "m.bin: duplicate item special:model.yml");
  // .npz: numpy's shape (2, 9) holds the bytes, but is no 1-D item
  Status s = ParseCheckpoint(Zip({{"special:model.yml.npy", Npy("|S1", "(2, 9)", yaml)}}), "m.npz");
  EXPECT_NE(s.message().find("m.npz: special:model.yml: shape [2, 9] (a 1-D item of its 18 bytes expected)"),
            std::string::npos)
      << s.message();
}

// ---- vocab.yml ---------------------------------------------------------------------------------

TEST(ConverterBounds, YamlVocabIdsMustBeDenseAndPiecesUnique) {
  std::vector<std::string> pieces;
  auto expect = [&](const std::string& text, const std::string& message) {
    Status s = converter::ParseMarianYamlVocab(text, "vocab.yml", &pieces);
    EXPECT_EQ(s.code(), StatusCode::kInvalidModel) << text;
    EXPECT_NE(s.message().find(message), std::string::npos) << s.message();
    EXPECT_TRUE(pieces.empty());
  };
  // one line would make 16M pieces; the largest id is bounded by the number of entries
  expect("a: 16777215\n", "vocab.yml: no piece has id 0 (ids must be 0..n-1; line 1 has id 16777215)");
  expect("a: 0\nb: 1\nc: 9999999\n", "vocab.yml: no piece has id 2 (ids must be 0..n-1; line 3 has id 9999999)");
  expect("a: 0\nb: 1\na: 2\n", "vocab.yml: piece 'a' given twice (ids 0 and 2)");
  expect("\"\\u2581x\": 1\n\"\\u2581x\": 0\n", "vocab.yml: piece '\xE2\x96\x81x' given twice (ids 0 and 1)");
  expect("a: 0\nb: 0\n", "vocab.yml line 2: id 0 given twice");
  ASSERT_TRUE(converter::ParseMarianYamlVocab("b: 1\na: 0\n\"c\": 2\n", "vocab.yml", &pieces).ok());
  EXPECT_EQ(pieces, (std::vector<std::string>{"a", "b", "c"}));
}

// ---- HF: max_position_embeddings ------------------------------------------------------------------

TEST(ConverterBounds, HfMaxPositionsIsBoundedBeforeTheSinusoidIsBuilt) {
  // INT_MAX positions (d_model 8) or an INT_MAX d_model (16 positions): tables of 64 GB and more
  const std::pair<const char*, int64_t> cases[] = {
      {"max_position_embeddings", INT_MAX}, {"max_position_embeddings", 1000001}, {"d_model", INT_MAX}};
  for (const auto& [field, value] : cases) {
    SCOPED_TRACE(std::string(field) + " " + std::to_string(value));
    TempDir dir;
    testing::TinyHf hf = testing::MakeTinyHf();
    hf.config[field] = value;
    hf.Write(dir.path());
    converter::ConvertOptions o;
    o.semantics = converter::Semantics::kMarian;
    converter::AlignedBytes out;
    converter::ConversionReport report;
    converter::ConvertInputs in;
    Status s = converter::ConvertInput(dir.path(), o, &out, &report, &in);
    EXPECT_EQ(s.code(), StatusCode::kInvalidModel) << s.ToString();
    const std::string bound = std::string(field) == "d_model" ? "16384" : "1000000";
    EXPECT_NE(s.message().find("config.json: field '" + std::string(field) + "' must be an integer in [1, " + bound + "]"),
              std::string::npos)
        << s.message();
  }
  // the CLI: exit 1, no output file
  TempDir dir;
  testing::TinyHf hf = testing::MakeTinyHf();
  hf.config["max_position_embeddings"] = INT_MAX;
  hf.Write(dir.path());
  const std::string out = dir / "x.mtlite";
  const auto r = testing::RunCli("convert '" + dir.path() + "' -o '" + out + "' --semantics marian --quiet");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("max_position_embeddings"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out));
}

// --semantics marian builds both position tables from config.json alone (max_position_embeddings
// x d_model floats): a config that makes them larger than the checkpoint (and 16 MiB) is refused
// before they are built (1000000 x 16384 would be 64 GB each).
TEST(ConverterBounds, HfMarianSemanticsPositionTablesAreBoundedByTheCheckpoint) {
  for (const auto& [positions, ok] : {std::pair<int64_t, bool>{1000000, false}, {600000, false}, {4096, true}}) {
    SCOPED_TRACE(positions);
    TempDir dir;
    testing::TinyHf hf = testing::MakeTinyHf();
    hf.config["max_position_embeddings"] = positions;
    hf.Write(dir.path());
    converter::ConvertOptions o;
    o.semantics = converter::Semantics::kMarian;
    converter::AlignedBytes out;
    converter::ConversionReport report;
    converter::ConvertInputs in;
    Status s = converter::ConvertInput(dir.path(), o, &out, &report, &in);
    if (ok) {
      EXPECT_EQ(s.message().find("position tables"), std::string::npos) << s.ToString();
      continue;
    }
    EXPECT_EQ(s.code(), StatusCode::kInvalidModel) << s.ToString();
    EXPECT_NE(s.message().find("config.json: max_position_embeddings " + std::to_string(positions) +
                               " x d_model 8 makes position tables of " + std::to_string(positions * 32) + " bytes"),
              std::string::npos)
        << s.message();
  }
}

// ---- safetensors: data_offsets ------------------------------------------------------------------

std::string SafetensorsWith(const nlohmann::json& header, size_t data_bytes) {
  const std::string h = header.dump();
  std::string out;
  Put(h.size(), 8, &out);
  return out + h + std::string(data_bytes, '\0');
}

TEST(ConverterBounds, SafetensorsOverlappingOffsetsAreRefused) {
  auto parse = [](const std::string& bytes) {
    converter::Safetensors st;
    return converter::Safetensors::Parse(bytes, "model.safetensors", &st);
  };
  // 40 names for one 4 KB block: --semantics marian would read each in full
  nlohmann::json shared = nlohmann::json::object();
  for (int i = 0; i < 40; ++i) {
    shared["t" + std::to_string(100 + i)] = {{"dtype", "F32"}, {"shape", {1024}}, {"data_offsets", {0, 4096}}};
  }
  Status s = parse(SafetensorsWith(shared, 4096));
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel) << s.ToString();
  EXPECT_NE(s.message().find("model.safetensors: tensor 't101': data_offsets [0, 4096) overlap tensor 't100' [0, 4096)"),
            std::string::npos)
      << s.message();

  const nlohmann::json partial = {{"a", {{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {0, 8}}}},
                                  {"b", {{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {4, 12}}}}};
  s = parse(SafetensorsWith(partial, 12));
  EXPECT_NE(s.message().find("tensor 'b': data_offsets [4, 12) overlap tensor 'a' [0, 8)"), std::string::npos)
      << s.message();

  // adjacent tensors, given in any order, and empty ones between them are fine
  const nlohmann::json fine = {{"b", {{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {8, 16}}}},
                               {"a", {{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {0, 8}}}},
                               {"e", {{"dtype", "F32"}, {"shape", {0, 4}}, {"data_offsets", {8, 8}}}},
                               {"f", {{"dtype", "F32"}, {"shape", {0}}, {"data_offsets", {8, 8}}}}};
  converter::Safetensors st;
  ASSERT_TRUE(converter::Safetensors::Parse(SafetensorsWith(fine, 16), "model.safetensors", &st).ok());
  // a zero-element tensor reads as empty (no copy into an empty vector's null data)
  std::vector<float> v = {1.0f};
  ASSERT_TRUE(st.ReadF32("e", &v).ok());
  EXPECT_TRUE(v.empty());
  ASSERT_TRUE(st.ReadF32("a", &v).ok());
  EXPECT_EQ(v.size(), 2u);
}

}  // namespace
}  // namespace mtlite

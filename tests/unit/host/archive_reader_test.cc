// The converter's archive readers: zip (converter/zip_reader.*: .npz checkpoints, Argos packages)
// and gzip (converter/inflate.*: gzipped release files). Valid archives read back exactly; every
// damaged or crafted one (sizes, CRCs, overlaps, methods, zip64, bombs, truncation) is a Status
// naming the archive and entry, and nothing of a declared size is allocated before it is checked.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "archive_test_helpers.h"
#include "inflate.h"
#include "zip_reader.h"

namespace mtlite {
namespace {

using converter::ZipEntry;
using converter::ZipLimits;
using converter::ZipReader;
using testing::MakeZip;
using testing::ZipFile;

std::string Pattern(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    s[i] = char(seed >> 24);
  }
  return s;
}

Status OpenZip(const std::string& bytes, ZipReader* z, const ZipLimits& limits = ZipLimits()) {
  return ZipReader::Open(bytes, "a.zip", z, limits);
}

void ExpectError(const Status& s, const std::string& text, StatusCode code = StatusCode::kInvalidModel) {
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_NE(s.message().find(text), std::string::npos) << "want '" << text << "' in: " << s.message();
}

TEST(ZipReader, ListsAndReadsStoredAndDeflateEntries) {
  const std::string text = "{\"package_version\": \"1.0\"}\n", weights = Pattern(70000, 7), zeros(5000, '\0');
  for (bool zip64 : {false, true}) {
    SCOPED_TRACE(zip64 ? "zip64" : "zip");
    const std::string zip = MakeZip({{"pkg/metadata.json", text, 8}, {"pkg/model/model.bin", weights, 0},
                                     {"pkg/zeros", zeros, 8}, {"pkg/empty", "", 0}, {"pkg/empty.z", "", 8}},
                                    zip64);
    ZipReader z;
    ASSERT_TRUE(OpenZip(zip, &z).ok()) << OpenZip(zip, &z).ToString();
    ASSERT_EQ(z.entries().size(), 5u);
    EXPECT_EQ(z.entries()[0].name, "pkg/metadata.json");
    EXPECT_EQ(z.entries()[0].method, 8);
    EXPECT_EQ(z.entries()[1].size, weights.size());
    const ZipEntry* e = z.Find("pkg/model/model.bin");
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(z.Find("model.bin"), nullptr);
    std::string out;
    ASSERT_TRUE(z.Read(*e, &out).ok());
    EXPECT_EQ(out, weights);
    std::string_view view;
    ASSERT_TRUE(z.View(*e, &view).ok());
    EXPECT_EQ(view, weights);
    EXPECT_EQ(view.data(), zip.data() + e->data_offset);  // in place
    ASSERT_TRUE(z.Read(*z.Find("pkg/metadata.json"), &out).ok());
    EXPECT_EQ(out, text);
    ExpectError(z.View(*z.Find("pkg/metadata.json"), &view), "is compressed", StatusCode::kInvalidArgument);
    ASSERT_TRUE(z.Read(*z.Find("pkg/zeros"), &out).ok());
    EXPECT_EQ(out, zeros);
    ASSERT_TRUE(z.Read(*z.Find("pkg/empty.z"), &out).ok());
    EXPECT_TRUE(out.empty());
    // the caller's bound, checked before anything is allocated
    ExpectError(z.Read(*e, &out, weights.size() - 1),
                "a.zip: zip entry 'pkg/model/model.bin': 70000 bytes uncompressed, more than the 69999 allowed");
    EXPECT_TRUE(z.Read(*e, &out, weights.size()).ok());
  }
}

TEST(ZipReader, DamagedEntriesAreRefused) {
  const std::string data = Pattern(3000, 3);
  std::string out;
  auto read_first = [&](const ZipFile& f) {
    ZipReader z;
    const std::string zip = MakeZip({f});  // the reader keeps a view of it
    Status s = OpenZip(zip, &z);
    if (s.ok()) s = z.Read(z.entries()[0], &out);
    return s;
  };
  ZipFile f{"w.npy", data, 8};
  f.crc_xor = 1;
  ExpectError(read_first(f), "a.zip: zip entry 'w.npy': CRC-32 mismatch");
  f = {"w.npy", data, 0};
  f.crc_xor = 0x80000000u;
  ExpectError(read_first(f), "a.zip: zip entry 'w.npy': CRC-32 mismatch");
  f = {"w.npy", data, 8};
  f.size_delta = 1;
  ExpectError(read_first(f), "a.zip: zip entry 'w.npy': deflate data inflates to 3000 bytes, not the 3001 declared");
  f.size_delta = -1;
  ExpectError(read_first(f), "deflate data inflates to more than the 2999 bytes declared");
  f = {"w.npy", data, 0};
  f.size_delta = 5;
  ExpectError(read_first(f), "stored entry of 3000 bytes declares 3005 uncompressed bytes");
  f = {"w.npy", data, 0};
  f.flags = 1;
  ExpectError(read_first(f), "a.zip: zip entry 'w.npy': encrypted zip entry", StatusCode::kUnsupported);
  f = {"w.npy", data, 12};
  ExpectError(read_first(f), "compression method 12 (bzip2); only stored (0) and deflate (8)", StatusCode::kUnsupported);
  f = {"w.npy", data, 14};
  ExpectError(read_first(f), "compression method 14 (lzma)", StatusCode::kUnsupported);

  // damaged deflate bytes: a corrupted stream
  std::string zip = MakeZip({{"w.npy", data, 8}});
  ZipReader z;
  ASSERT_TRUE(OpenZip(zip, &z).ok());
  const uint64_t at = z.entries()[0].data_offset;
  for (uint64_t k = 0; k < 8; ++k) zip[size_t(at + k)] = char(0xff);
  ASSERT_TRUE(OpenZip(zip, &z).ok());
  EXPECT_FALSE(z.Read(z.entries()[0], &out).ok());
  EXPECT_TRUE(out.empty());
}

TEST(ZipReader, DirectoryBoundsAreChecked) {
  const std::string block = Pattern(4096, 5);
  ZipReader z;
  // several names for one block (a small archive would decode to many times its size)
  std::vector<ZipFile> shared = {{"a", block, 0}};
  for (int i = 0; i < 30; ++i) {
    ZipFile f{"b" + std::to_string(i), "", 0};
    f.same_local_as = 0;
    shared.push_back(f);
  }
  ExpectError(OpenZip(MakeZip(shared), &z), "a.zip: zip entry 'b0': data overlaps zip entry 'a'");
  ExpectError(OpenZip(MakeZip({{"a", block, 0}, {"a", "x", 0}}), &z), "zip entry 'a' appears twice");
  ExpectError(OpenZip(MakeZip({{"", "x", 0}}), &z), "zip central directory entry 0 has an empty name");
  ExpectError(OpenZip(MakeZip({{std::string("a\0b", 3), "x", 0}}), &z), "name contains a NUL byte");

  // a decompression bomb: 8 MiB of zeros in ~8 KB
  const std::string bomb = MakeZip({{"big", std::string(8u << 20, '\0'), 8}});
  ASSERT_LT(bomb.size(), 20000u);
  ExpectError(OpenZip(bomb, &z), "a.zip: zip entry 'big': ");
  ExpectError(OpenZip(bomb, &z), "compressed bytes declare 8388608 uncompressed (more than 256 times: a decompression bomb?)");
  ZipLimits loose;
  loose.max_ratio = 2000;
  ASSERT_TRUE(OpenZip(bomb, &z, loose).ok());
  loose.max_total_bytes = 1u << 20;  // the total bound
  ExpectError(OpenZip(bomb, &z, loose), "zip entries total more than 1048576 uncompressed bytes (at zip entry 'big')");

  ZipLimits few;
  few.max_entries = 2;
  ExpectError(OpenZip(MakeZip({{"a", "1", 0}, {"b", "2", 0}, {"c", "3", 0}}), &z, few), "3 zip entries (at most 2 are read)");

  // every truncation of a valid archive is refused (or, cut inside nothing the directory needs, never crashes)
  const std::string zip = MakeZip({{"x/metadata.json", "{}", 8}, {"x/model.bin", block, 0}}, true);
  for (size_t n = 0; n < zip.size(); ++n) {
    Status s = OpenZip(zip.substr(0, n), &z);
    EXPECT_FALSE(s.ok()) << n;
    EXPECT_FALSE(s.message().empty());
  }
  ExpectError(OpenZip("PK\x03\x04 not a zip", &z), "no zip end-of-central-directory record");
  // a central directory count beyond what its bytes can hold
  std::string big_count = MakeZip({{"a", "1", 0}});
  big_count[big_count.size() - 12] = char(0xff);
  big_count[big_count.size() - 11] = char(0x7f);
  big_count[big_count.size() - 14] = char(0xff);
  big_count[big_count.size() - 13] = char(0x7f);
  ExpectError(OpenZip(big_count, &z), "cannot hold 32767 entries");
}

TEST(Gzip, ReadsMembersAndRefusesDamage) {
  const std::string a = Pattern(100000, 11), b = "second member\n";
  std::string out;
  ASSERT_TRUE(converter::Gunzip(testing::Gzip(a), 1u << 20, "f.gz", &out).ok());
  EXPECT_EQ(out, a);
  ASSERT_TRUE(converter::Gunzip(testing::Gzip(a) + testing::Gzip(b), 1u << 20, "f.gz", &out).ok());
  EXPECT_EQ(out, a + b);  // `cat a.gz b.gz`
  ASSERT_TRUE(converter::Gunzip(testing::Gzip(""), 10, "f.gz", &out).ok());
  EXPECT_TRUE(out.empty());

  ExpectError(converter::Gunzip(testing::Gzip(a), a.size() - 1, "f.gz", &out),
              "f.gz: gzip data inflates to more than 99999 bytes");
  EXPECT_TRUE(converter::Gunzip(testing::Gzip(a), a.size(), "f.gz", &out).ok());
  const std::string gz = testing::Gzip(a);
  for (size_t n : {size_t(0), size_t(1), size_t(10), gz.size() / 2, gz.size() - 4, gz.size() - 1}) {
    Status s = converter::Gunzip(gz.substr(0, n), 1u << 20, "f.gz", &out);
    EXPECT_EQ(s.code(), StatusCode::kInvalidModel) << n;
    EXPECT_NE(s.message().find("f.gz: "), std::string::npos) << s.message();
  }
  std::string bad_crc = gz;
  bad_crc[bad_crc.size() - 6] ^= 1;  // the CRC-32 of the trailer
  ExpectError(converter::Gunzip(bad_crc, 1u << 20, "f.gz", &out), "f.gz: damaged gzip data (incorrect data check)");
  ExpectError(converter::Gunzip(gz + "junk", 1u << 20, "f.gz", &out), "f.gz: bytes after the end of the gzip data");
  ExpectError(converter::Gunzip("plain text", 1u << 20, "f.gz", &out), "f.gz: not gzip data");
  // a bomb: 64 MiB of zeros in ~64 KB is refused at the bound, the buffer never past it
  const std::string bomb = testing::Gzip(std::string(64u << 20, '\0'));
  ExpectError(converter::Gunzip(bomb, 4u << 20, "bomb.gz", &out), "bomb.gz: gzip data inflates to more than 4194304 bytes");
  EXPECT_EQ(converter::GzipOutputBound(1000), uint64_t(64) << 20);
  EXPECT_EQ(converter::GzipOutputBound(uint64_t(10) << 20), uint64_t(640) << 20);
}

TEST(Gzip, RawDeflateMustMatchItsDeclaredSize) {
  const std::string a = Pattern(5000, 2), d = testing::RawDeflate(a);
  std::string out;
  ASSERT_TRUE(converter::InflateRaw(d, a.size(), "e", &out).ok());
  EXPECT_EQ(out, a);
  ExpectError(converter::InflateRaw(d + "x", a.size(), "e", &out), "e: bytes after the end of the deflate data");
  ExpectError(converter::InflateRaw(d.substr(0, d.size() / 2), a.size(), "e", &out), "e: deflate data ends early");
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace mtlite

#include "crc32c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace mtlite {
namespace {

uint32_t Crc(const std::string& s) { return Crc32c(s.data(), s.size()); }

// Bit-at-a-time definition, independent of the table-driven implementation.
uint32_t SlowCrc32c(const uint8_t* p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int b = 0; b < 8; ++b) c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
  }
  return ~c;
}

TEST(Crc32c, KnownVectors) {
  EXPECT_EQ(Crc(""), 0x00000000u);
  EXPECT_EQ(Crc("a"), 0xC1D04330u);
  EXPECT_EQ(Crc("123456789"), 0xE3069283u);
  // RFC 3720 (iSCSI) appendix B.4 test patterns.
  std::vector<uint8_t> buf(32, 0);
  EXPECT_EQ(Crc32c(buf.data(), buf.size()), 0x8A9136AAu);
  std::fill(buf.begin(), buf.end(), 0xFF);
  EXPECT_EQ(Crc32c(buf.data(), buf.size()), 0x62A8AB43u);
  for (int i = 0; i < 32; ++i) buf[i] = uint8_t(i);
  EXPECT_EQ(Crc32c(buf.data(), buf.size()), 0x46DD794Eu);
  for (int i = 0; i < 32; ++i) buf[i] = uint8_t(31 - i);
  EXPECT_EQ(Crc32c(buf.data(), buf.size()), 0x113FDB5Cu);
}

TEST(Crc32c, MatchesBitwiseDefinitionAtEveryLengthAndAlignment) {
  std::mt19937 rng(7);
  std::vector<uint8_t> data(300);
  for (auto& b : data) b = uint8_t(rng());
  for (size_t start = 0; start < 9; ++start) {
    for (size_t n = 0; start + n <= data.size(); n += 1 + n / 16) {
      ASSERT_EQ(Crc32c(data.data() + start, n), SlowCrc32c(data.data() + start, n))
          << "start " << start << " n " << n;
    }
  }
}

TEST(Crc32c, Incremental) {
  const std::string s = "The quick brown fox jumps over the lazy dog";
  for (size_t split = 0; split <= s.size(); ++split) {
    uint32_t c = Crc32c(s.data(), split);
    c = Crc32c(s.data() + split, s.size() - split, c);
    EXPECT_EQ(c, Crc(s)) << split;
  }
  EXPECT_EQ(Crc(s), 0x22620404u);
}

TEST(Crc32c, DetectsEverySingleBitFlip) {
  std::vector<uint8_t> data(64);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 37 + 11);
  const uint32_t good = Crc32c(data.data(), data.size());
  for (size_t bit = 0; bit < data.size() * 8; ++bit) {
    data[bit / 8] ^= uint8_t(1u << (bit % 8));
    EXPECT_NE(Crc32c(data.data(), data.size()), good) << bit;
    data[bit / 8] ^= uint8_t(1u << (bit % 8));
  }
}

}  // namespace
}  // namespace mtlite

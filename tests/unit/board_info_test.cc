// `mtlite info --board`: the boards' memory maps in the CLI (runtime/cli/board_info.cc) are the
// linker scripts' (platforms/baremetal/<board>/memory.ld), and the fit puts each part where the
// bare-metal build puts it: the model in the first read-only region it fits, the arena, model
// tables and error heap in the RAM region, the stack in the stack region.
#include "board_info.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

namespace mtlite {
namespace cli {
namespace {

struct LdRegion {
  uint64_t origin = 0, bytes = 0;
};

// The MEMORY block of a board's linker script: NAME (attrs) : ORIGIN = 0x..., LENGTH = N[K|M]
std::map<std::string, LdRegion> ReadMemory(const std::string& board) {
  const std::string path = std::string(MTLITE_SOURCE_DIR) + "/platforms/baremetal/" + board + "/memory.ld";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::map<std::string, LdRegion> out;
  const std::regex line(R"((\w+)\s*\([a-z]+\)\s*:\s*ORIGIN\s*=\s*(0x[0-9A-Fa-f]+)\s*,\s*LENGTH\s*=\s*([0-9]+)([KM]?))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator(); ++it) {
    LdRegion r;
    r.origin = std::strtoull((*it)[2].str().c_str(), nullptr, 16);
    r.bytes = std::strtoull((*it)[3].str().c_str(), nullptr, 10);
    if ((*it)[4] == "K") r.bytes *= 1024;
    if ((*it)[4] == "M") r.bytes *= 1024 * 1024;
    out[(*it)[1]] = r;
  }
  return out;
}

TEST(BoardInfo, RegionsAreTheLinkerScripts) {
  for (const char* name : {"mps3-an547", "mps2-an500"}) {
    const BoardInfo* b = FindBoard(name);
    ASSERT_NE(b, nullptr) << name;
    const auto ld = ReadMemory(name);
    ASSERT_EQ(ld.size(), b->regions.size()) << name;
    for (const BoardRegion& r : b->regions) {
      auto it = ld.find(r.name);
      ASSERT_NE(it, ld.end()) << name << " " << r.name;
      EXPECT_EQ(it->second.origin, r.origin) << name << " " << r.name;
      EXPECT_EQ(it->second.bytes, r.bytes) << name << " " << r.name;
    }
  }
  EXPECT_EQ(FindBoard("mps3-an548"), nullptr);
  EXPECT_EQ(BoardNames(), "mps3-an547, mps2-an500");
}

TEST(BoardInfo, ModelGoesToTheFirstRegionItFits) {
  const BoardInfo& b = *FindBoard("mps3-an547");
  const uint64_t qspi = 8u << 20;
  EXPECT_EQ(FitOnBoard(b, qspi, 1000, 1000, 1000, 100).model_region, "QSPI");
  EXPECT_EQ(FitOnBoard(b, qspi + 1, 1000, 1000, 1000, 100).model_region, "DDR");
  EXPECT_EQ(FitOnBoard(b, 9678201, 1310400, 276032, 18176, 1621).model_region, "DDR");  // the demo model
  const BoardFit none = FitOnBoard(b, uint64_t(3) << 30, 1000, 1000, 1000, 100);
  EXPECT_EQ(none.model_region, "");
  EXPECT_FALSE(none.fits());
  EXPECT_FALSE(none.parts[0].fits);
}

TEST(BoardInfo, RamAndStackRegions) {
  const BoardInfo& m55 = *FindBoard("mps3-an547");
  // SRAM holds arena + tables + the 64 KB error heap: 4 MB exactly fits, one byte more does not.
  const uint64_t sram = 4u << 20;
  EXPECT_TRUE(FitOnBoard(m55, 1, sram - m55.heap_bytes - 1000, 1000, 1000, 100).fits());
  const BoardFit over = FitOnBoard(m55, 1, sram - m55.heap_bytes - 999, 1000, 1000, 100);
  EXPECT_FALSE(over.fits());
  ASSERT_EQ(over.parts.size(), 3u);
  EXPECT_EQ(over.parts[1].region, "SRAM");
  EXPECT_FALSE(over.parts[1].fits);
  EXPECT_TRUE(over.parts[2].fits);
  // The stack is at least the linker script's; a larger budget figure counts instead.
  const BoardFit small_stack = FitOnBoard(m55, 1, 1000, 1000, 100, 10);
  EXPECT_EQ(small_stack.parts[2].region, "DTCM");
  EXPECT_EQ(small_stack.parts[2].bytes, m55.stack_bytes + 10);
  EXPECT_FALSE(FitOnBoard(m55, 1, 1000, 1000, 512 * 1024, 10).fits());

  // mps2-an500: one RAM region for everything.
  const BoardInfo& m7 = *FindBoard("mps2-an500");
  const BoardFit f = FitOnBoard(m7, 9678201, 1310400, 276032, 18176, 1621);
  EXPECT_TRUE(f.fits());
  ASSERT_EQ(f.parts.size(), 2u);
  EXPECT_EQ(f.model_region, "PSRAM");
  EXPECT_EQ(f.parts[1].region, "SSRAM23");
  EXPECT_EQ(f.parts[1].bytes, 1310400u + 276032u + m7.heap_bytes + m7.stack_bytes + 1621u);
}

}  // namespace
}  // namespace cli
}  // namespace mtlite

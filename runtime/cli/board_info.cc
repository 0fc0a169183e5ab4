#include "board_info.h"

#include <cinttypes>
#include <cstdio>

namespace mtlite {
namespace cli {

namespace {

constexpr uint64_t kKiB = 1024, kMiB = 1024 * 1024;

const std::vector<BoardInfo>& Boards() {
  static const std::vector<BoardInfo> boards = {
      {"mps3-an547",
       "Cortex-M55 (Helium)",
       "mps3-an547",
       {{"ITCM", 0x00000000, 512 * kKiB, "code"},
        {"DTCM", 0x20000000, 512 * kKiB, "stack, .data, .bss"},
        {"SRAM", 0x21000000, 4 * kMiB, "arena, model tables, error-message heap"},
        {"QSPI", 0x28000000, 8 * kMiB, "model (flash)"},
        {"DDR", 0x60000000, 2048 * kMiB, "model (standing in for external XIP flash)"}},
       {"QSPI", "DDR"},
       "SRAM",
       "DTCM",
       "ITCM",
       64 * kKiB,
       128 * kKiB},
      {"mps2-an500",
       "Cortex-M7 (no Helium)",
       "mps2-an500",
       {{"SSRAM1", 0x00000000, 4 * kMiB, "code"},
        {"SSRAM23", 0x20000000, 4 * kMiB, "arena, model tables, error-message heap, stack, .data, .bss"},
        {"PSRAM", 0x60000000, 16 * kMiB, "model (standing in for external XIP flash)"}},
       {"PSRAM"},
       "SSRAM23",
       "SSRAM23",
       "SSRAM1",
       64 * kKiB,
       128 * kKiB},
  };
  return boards;
}

const BoardRegion* Region(const BoardInfo& b, const std::string& name) {
  for (const BoardRegion& r : b.regions)
    if (name == r.name) return &r;
  return nullptr;
}

}  // namespace

const BoardInfo* FindBoard(const std::string& name) {
  for (const BoardInfo& b : Boards())
    if (name == b.name) return &b;
  return nullptr;
}

std::string BoardNames() {
  std::string out;
  for (const BoardInfo& b : Boards()) out += (out.empty() ? "" : ", ") + std::string(b.name);
  return out;
}

bool BoardFit::fits() const {
  for (const Part& p : parts)
    if (!p.fits) return false;
  return true;
}

BoardFit FitOnBoard(const BoardInfo& board, uint64_t model_bytes, uint64_t arena_bytes, uint64_t model_storage_bytes,
                    uint64_t stack_bytes, uint64_t static_data_bytes) {
  BoardFit fit;
  BoardFit::Part model{"model", "", model_bytes, 0, false};
  for (const char* name : board.model_regions) {
    const BoardRegion* r = Region(board, name);
    model.region = name;
    model.region_bytes = r->bytes;
    if (model_bytes <= r->bytes) {
      model.fits = true;
      fit.model_region = name;
      break;
    }
  }
  fit.parts.push_back(model);
  // The stack region holds the linker script's stack (at least the budget's stack figure) and the
  // static data; where it is the RAM region too, everything is counted there once.
  const uint64_t stack = stack_bytes > board.stack_bytes ? stack_bytes : board.stack_bytes;
  const uint64_t ram = arena_bytes + model_storage_bytes + board.heap_bytes;
  const BoardRegion* ram_region = Region(board, board.ram_region);
  const BoardRegion* stack_region = Region(board, board.stack_region);
  if (ram_region == stack_region) {
    const uint64_t all = ram + stack + static_data_bytes;
    fit.parts.push_back({"arena + model tables + error heap + stack + static data", ram_region->name, all,
                         ram_region->bytes, all <= ram_region->bytes});
  } else {
    fit.parts.push_back({"arena + model tables + error heap", ram_region->name, ram, ram_region->bytes,
                         ram <= ram_region->bytes});
    fit.parts.push_back({"stack + static data", stack_region->name, stack + static_data_bytes, stack_region->bytes,
                         stack + static_data_bytes <= stack_region->bytes});
  }
  return fit;
}

void PrintBoardFit(const BoardInfo& board, const BoardFit& fit) {
  std::printf("\nboard %s (%s; qemu-system-arm -M %s; platforms/baremetal/%s/%s.ld):\n", board.name, board.cpu,
              board.qemu_machine, board.name, board.name);
  for (const BoardFit::Part& p : fit.parts) {
    const BoardRegion* r = Region(board, p.region);
    std::printf("  %-56s %12" PRIu64 " bytes -> %-7s (0x%08" PRIx64 ", %" PRIu64 " bytes): %s\n", p.what.c_str(),
                p.bytes, p.region.c_str(), r ? r->origin : 0, p.region_bytes, p.fits ? "fits" : "DOES NOT FIT");
  }
  const BoardRegion* code = Region(board, board.code_region);
  std::printf("  %-56s %12s       -> %-7s (0x%08" PRIx64 ", %" PRIu64 " bytes): the target build's .text + .rodata\n",
              "code and constants", "", code->name, code->origin, code->bytes);
  std::printf("  (stack: the linker script's %" PRIu64 " bytes, or the budget's figure when larger; error heap: %" PRIu64
              " bytes for error messages, unused while translating)\n",
              board.stack_bytes, board.heap_bytes);
}

}  // namespace cli
}  // namespace mtlite

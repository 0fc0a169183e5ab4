// `mtlite info --limits ... --board NAME`: where each part of a translator goes on a bare-metal
// board (platforms/baremetal/<board>/<board>.ld) and whether it fits. The boards' memory maps are
// the linker scripts' (and cmake/baremetal.cmake's model regions); this table repeats them for
// the CLI, and scripts/baremetal_test.sh checks that both choose the same model region.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mtlite {
namespace cli {

struct BoardRegion {
  const char* name;
  uint64_t origin;
  uint64_t bytes;
  const char* what;
};

struct BoardInfo {
  const char* name;
  const char* cpu;
  const char* qemu_machine;
  std::vector<BoardRegion> regions;
  std::vector<const char*> model_regions;  // read-only regions for the model, first choice first
  const char* ram_region;                  // the arena, the model tables, the error-message heap
  const char* stack_region;                // the stack and the static data
  const char* code_region;
  uint64_t heap_bytes;                     // the linker script's __heap_size
  uint64_t stack_bytes;                    // the linker script's __stack_size
};

// The board of that name, or nullptr.
const BoardInfo* FindBoard(const std::string& name);
// "mps3-an547, mps2-an500"
std::string BoardNames();

// What a translator of these sizes needs on the board.
struct BoardFit {
  std::string model_region;  // empty: the model fits no read-only region
  struct Part {
    std::string what, region;
    uint64_t bytes = 0, region_bytes = 0;
    bool fits = false;
  };
  std::vector<Part> parts;  // model, RAM region, stack region
  bool fits() const;
};
BoardFit FitOnBoard(const BoardInfo& board, uint64_t model_bytes, uint64_t arena_bytes, uint64_t model_storage_bytes,
                    uint64_t stack_bytes, uint64_t static_data_bytes);

void PrintBoardFit(const BoardInfo& board, const BoardFit& fit);

}  // namespace cli
}  // namespace mtlite

// libFuzzer target: Marian's YAML vocabulary (`piece: id` lines) on arbitrary bytes:
// ParseMarianYamlVocab returns a Status, never crashes or trips a sanitizer; every rejection has
// a message and leaves no pieces; allocation stays within 32 x the input + 1 MiB; an accepted
// vocabulary has no more pieces than lines and no piece twice.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "alloc_meter.h"
#include "fuzz_util.h"
#include "marian_checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mtlite;
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::AllocMeter meter;
  {
    std::vector<std::string> pieces;
    Status s = converter::ParseMarianYamlVocab(text, "vocab.yml", &pieces);
    if (!s.ok()) {
      if (s.message().empty()) fuzz::Fail(text, "rejection without a message");
      if (!pieces.empty()) fuzz::Fail(text, "a rejection left %zu pieces", pieces.size());
    } else {
      const size_t lines = size_t(std::count(text.begin(), text.end(), '\n')) + 1;
      if (pieces.size() > lines) fuzz::Fail(text, "%zu pieces from %zu lines", pieces.size(), lines);
      std::vector<std::string> sorted = pieces;
      std::sort(sorted.begin(), sorted.end());
      if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) fuzz::Fail(text, "a piece given twice was accepted");
    }
  }
  meter.Check(text, 32, 1u << 20, "ParseMarianYamlVocab");
  return 0;
}

// libFuzzer target: Marian's binary lexical shortlist (lex.*.s2t.bin, converter/lex_binary.*) on
// arbitrary bytes. The checksum is recomputed over the input first (half of the inputs, chosen by
// a byte), so the fuzzer reaches the checks behind it. ParseBinaryLex returns a Status, never
// crashes or trips a sanitizer; every rejection has a message; allocation stays within 4 x the
// input + 64 KiB; an accepted shortlist has non-decreasing offsets from 0 ending at its target count.
#include <cstddef>
#include <cstdint>
#include <string>

#include "alloc_meter.h"
#include "fuzz_util.h"
#include "lex_binary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mtlite;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (bytes.size() >= 48 && (uint8_t(bytes[47]) & 1) == 0) {  // a valid checksum
    const uint64_t sum = converter::BinaryLexChecksum(bytes);
    for (int i = 0; i < 8; ++i) bytes[size_t(8 + i)] = char(uint8_t(sum >> (8 * i)));
  }
  fuzz::AllocMeter meter;
  {
    converter::BinaryLex lex;
    Status s = converter::ParseBinaryLex(bytes, "lex.s2t.bin", &lex);
    if (!s.ok()) {
      if (s.message().empty()) fuzz::Fail(bytes, "rejection without a message");
    } else {
      if (lex.offsets.empty() || lex.offsets[0] != 0 || lex.offsets.back() != lex.targets.size()) {
        fuzz::Fail(bytes, "accepted offsets do not run from 0 to the target count");
      }
      for (size_t i = 1; i < lex.offsets.size(); ++i) {
        if (lex.offsets[i] < lex.offsets[i - 1]) fuzz::Fail(bytes, "accepted offsets decrease at %zu", i);
      }
    }
  }
  meter.Check(bytes, 4, 64u << 10, "ParseBinaryLex");
  return 0;
}

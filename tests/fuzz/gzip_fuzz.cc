// libFuzzer target: the converter's gzip reader (converter/inflate.*: the .gz files of release
// folders) on arbitrary bytes, with an output bound of 4 x the input + 4 KiB. Gunzip returns a
// Status, never crashes, hangs or trips a sanitizer; every rejection has a message; an accepted
// output is within the bound; allocation stays within 16 x the input + 1 MiB.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "alloc_meter.h"
#include "fuzz_util.h"
#include "inflate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mtlite;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  fuzz::AllocMeter meter;
  {
    const uint64_t bound = 4 * uint64_t(size) + 4096;
    std::string out;
    Status s = converter::Gunzip(bytes, bound, "fuzz.gz", &out);
    if (!s.ok() && s.message().empty()) fuzz::Fail(bytes, "rejection without a message");
    if (s.ok() && out.size() > bound) fuzz::Fail(bytes, "%zu bytes out, above the bound", out.size());
    if (s.ok() && !out.empty()) {  // the same data as one raw deflate stream is not gzip: refused
      std::string again;
      if (converter::Gunzip(out, bound, "fuzz.gz", &again).ok() && !converter::IsGzip(out)) {
        fuzz::Fail(bytes, "data without the gzip magic was accepted");
      }
    }
  }
  meter.Check(bytes, 16, 1u << 20, "Gunzip");
  return 0;
}

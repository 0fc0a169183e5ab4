// libFuzzer target: the converter's zip reader (converter/zip_reader.*: .npz checkpoints, Argos
// .argosmodel packages) on arbitrary bytes. Open checks the directory; then every entry is read
// (Read, bounded by 8 x the archive + 64 KiB in all through ZipLimits) and every stored one viewed
// in place. Everything returns a Status, never crashes, hangs or trips a sanitizer; every
// rejection has a message; an entry read has exactly its declared size; allocation stays within
// 16 x the input + 1 MiB (zlib's own state included).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "alloc_meter.h"
#include "fuzz_util.h"
#include "zip_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mtlite;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  fuzz::AllocMeter meter;
  {
    converter::ZipLimits limits;
    limits.max_total_bytes = 8 * uint64_t(size) + (64u << 10);
    limits.max_entries = 4096;
    converter::ZipReader zip;
    Status s = converter::ZipReader::Open(bytes, "fuzz.zip", &zip, limits);
    if (!s.ok()) {
      if (s.message().empty()) fuzz::Fail(bytes, "Open: rejection without a message");
    } else {
      uint64_t total = 0;
      for (const converter::ZipEntry& e : zip.entries()) {
        if (zip.Find(e.name) != &e) fuzz::Fail(bytes, "Find(%s) is not its entry", e.name.c_str());
        total += e.size;
        std::string out;
        s = zip.Read(e, &out);
        if (!s.ok() && s.message().empty()) fuzz::Fail(bytes, "Read: rejection without a message");
        if (s.ok() && out.size() != e.size) fuzz::Fail(bytes, "entry %s: read %zu bytes of %llu", e.name.c_str(), out.size(),
                                                        static_cast<unsigned long long>(e.size));
        if (e.method == 0) {
          std::string_view v;
          Status vs = zip.View(e, &v);
          if (vs.ok() != s.ok()) fuzz::Fail(bytes, "entry %s: View and Read disagree", e.name.c_str());
          if (vs.ok() && v != out) fuzz::Fail(bytes, "entry %s: View differs from Read", e.name.c_str());
        }
        if (s.ok() && e.size > 0) {
          s = zip.Read(e, &out, e.size - 1);
          if (s.ok()) fuzz::Fail(bytes, "entry %s: read with a bound one byte short", e.name.c_str());
        }
      }
      if (total > limits.max_total_bytes) fuzz::Fail(bytes, "entries total %llu bytes, above the limit", static_cast<unsigned long long>(total));
    }
  }
  meter.Check(bytes, 16, 1u << 20, "ZipReader");
  return 0;
}

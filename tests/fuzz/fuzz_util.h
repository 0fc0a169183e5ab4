// Helpers shared by the text-path fuzz targets (tokenizer_fuzz.cc, translate_fuzz.cc).
//
// The targets need a converted model, which a fuzz tree cannot make (it is a clang tree without
// the converter): the environment variable MTLITE_FUZZ_MODEL names a .mtlite file, normally the
// host build's build/models/demo.int8.mtlite (scripts/fuzz.sh builds it and sets the variable;
// the seed-replay tests in tests/CMakeLists.txt set it too).
//
// A failed property prints what was wrong and the input, then aborts: libFuzzer (or the replay
// driver) reports the abort as a finding and keeps the input.
#pragma once

#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace fuzz {

// Prints the input as a C string literal (bytes >= 0x7f and controls escaped).
inline void PrintInput(std::string_view s) {
  std::fprintf(stderr, "input (%zu bytes): \"", s.size());
  for (unsigned char c : s) {
    if (c == '\\' || c == '"') std::fprintf(stderr, "\\%c", c);
    else if (c >= 0x20 && c < 0x7f) std::fputc(c, stderr);
    else std::fprintf(stderr, "\\x%02x", c);
  }
  std::fprintf(stderr, "\"\n");
}

[[noreturn]] inline void Fail(std::string_view input, const char* fmt, ...) {
  std::fprintf(stderr, "\nFUZZ PROPERTY FAILED: ");
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "\n");
  PrintInput(input);
  std::abort();
}

// The model named by MTLITE_FUZZ_MODEL, loaded once (with checksums verified). Exits with a
// message when the variable is unset or the file does not load: that is a setup error.
inline std::shared_ptr<const Model> LoadFuzzModel() {
  const char* path = std::getenv("MTLITE_FUZZ_MODEL");
  if (path == nullptr || *path == '\0') {
    std::fprintf(stderr, "MTLITE_FUZZ_MODEL must name a .mtlite model (e.g. build/models/demo.int8.mtlite; "
                         "scripts/fuzz.sh sets it)\n");
    std::exit(2);
  }
  LoadOptions options;
  options.verify_checksums = true;
  auto model = Model::Load(path, options);
  if (!model.ok()) {
    std::fprintf(stderr, "MTLITE_FUZZ_MODEL=%s: %s\n", path, model.status().ToString().c_str());
    std::exit(2);
  }
  return model.value();
}

// Independent strict UTF-8 check (RFC 3629: shortest form, no surrogates, <= U+10FFFF), written
// from the table in RFC 3629 section 4 rather than shared with the tokenizer it checks.
inline bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  auto in = [](unsigned char c, unsigned char lo, unsigned char hi) { return c >= lo && c <= hi; };
  while (i < n) {
    const unsigned char c = byte(i);
    if (c <= 0x7f) { i += 1; continue; }
    if (in(c, 0xc2, 0xdf)) {
      if (i + 1 >= n || !in(byte(i + 1), 0x80, 0xbf)) return false;
      i += 2;
      continue;
    }
    if (in(c, 0xe0, 0xef)) {
      if (i + 2 >= n) return false;
      const unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
      if (!in(byte(i + 1), lo, hi) || !in(byte(i + 2), 0x80, 0xbf)) return false;
      i += 3;
      continue;
    }
    if (in(c, 0xf0, 0xf4)) {
      if (i + 3 >= n) return false;
      const unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
      if (!in(byte(i + 1), lo, hi) || !in(byte(i + 2), 0x80, 0xbf) || !in(byte(i + 3), 0x80, 0xbf)) return false;
      i += 4;
      continue;
    }
    return false;  // 0x80..0xc1 (continuation or overlong 2-byte lead), 0xf5..0xff
  }
  return true;
}

}  // namespace fuzz
}  // namespace mtlite

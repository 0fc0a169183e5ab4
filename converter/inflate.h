// Bounded decompression for the converter's inputs (zlib): raw deflate streams (zip entries) and
// gzip files (release folders ship `model.*.bin.gz`, `vocab.*.spm.gz`, `lex.*.s2t.bin.gz`).
// Output never grows past the bound the caller gives, so a small crafted file cannot make the
// converter allocate gigabytes; every failure is a Status naming `what`, never a crash.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace converter {

// A raw deflate stream (RFC 1951, no zlib or gzip wrapper) that must inflate to exactly
// `expected_size` bytes: more or fewer, trailing bytes after the stream's end, or damaged data
// are kInvalidModel "WHAT: ...". `out` is sized once to expected_size (the caller bounds it).
Status InflateRaw(std::string_view deflated, uint64_t expected_size, const std::string& what, std::string* out);

// True when `bytes` start with the gzip magic 1f 8b.
bool IsGzip(std::string_view bytes);

// A gzip file (RFC 1952; several members are concatenated, as `cat a.gz b.gz` makes), each
// member's CRC-32 and length checked by zlib. More than `max_bytes` of output is kInvalidModel
// "WHAT: gzip data inflates to more than MAX bytes"; the output buffer grows with the data
// inflated, never past max_bytes (a header's claimed size is not trusted).
Status Gunzip(std::string_view gz, uint64_t max_bytes, const std::string& what, std::string* out);

// The bound ReadFile applies to a `.gz` input of `compressed` bytes: 64 times its size, at least
// 64 MiB, at most 16 GiB. Real releases inflate 1.5-4 times; a file that inflates further is
// refused as a likely decompression bomb.
uint64_t GzipOutputBound(uint64_t compressed);

// CRC-32 (the zip/gzip polynomial) of `bytes`.
uint32_t Crc32(std::string_view bytes);

}  // namespace converter
}  // namespace mtlite

// CRC32C (Castagnoli, reflected polynomial 0x82F63B78), as used for every data buffer of an
// .mtlite file. Portable table-driven implementation (slicing-by-8); no CPU-specific code.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mtlite {

// CRC32C of `size` bytes. Pass the previous result as `crc` to continue a running checksum:
// Crc32c(b, m, Crc32c(a, n)) == Crc32c(a ++ b, n + m).
uint32_t Crc32c(const void* data, size_t size, uint32_t crc = 0);

}  // namespace mtlite

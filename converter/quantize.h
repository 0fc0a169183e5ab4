// Weight encodings of the converter: int8 per-output-channel symmetric (BlockedN8K4) and f16.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mtlite {
namespace converter {

// Reconstruction error of an encoded tensor.
struct EncodeError {
  double max_abs = 0;  // max |w - decoded(w)|
  double rel_rms = 0;  // sqrt(sum (w - decoded)^2 / sum w^2); 0 for an all-zero tensor
};

// Row-major f32 [rows][cols] -> int8 BlockedN8K4 bytes + one scale per row:
//   s[n] = max|W[n,:]| / 127, q = clamp(round_half_even(w / s[n]), -127, 127).
// An all-zero row gets s = 1 and q = 0 (never a zero scale).
EncodeError QuantizeInt8(const float* w, int rows, int cols, std::vector<uint8_t>* packed,
                         std::vector<float>* scales);

// f32 -> IEEE binary16 bits (round to nearest even), stored little-endian.
EncodeError EncodeF16(const float* w, size_t n, std::vector<uint8_t>* out);

}  // namespace converter
}  // namespace mtlite

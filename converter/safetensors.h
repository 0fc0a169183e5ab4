// Reader for the safetensors format: 8-byte little-endian header length, a JSON header
// {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {...}}, then raw
// little-endian data. Every offset and size is validated when the file is opened.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace converter {

class Safetensors {
 public:
  struct Entry {
    std::string dtype;              // "F32", "F16", "BF16", ...
    std::vector<int64_t> shape;
    uint64_t begin = 0, end = 0;    // relative to the data section
  };

  // Reads and validates the whole file (header and every tensor's byte range).
  static Status Open(const std::string& path, Safetensors* out);
  // Same, from bytes already in memory; `name` is used in messages.
  static Status Parse(std::string bytes, const std::string& name, Safetensors* out);

  const Entry* Find(const std::string& tensor) const;
  bool Has(const std::string& tensor) const { return Find(tensor) != nullptr; }
  // Tensor values converted to f32 (F32, F16 and BF16 are supported).
  Status ReadF32(const std::string& tensor, std::vector<float>* out) const;

  const std::map<std::string, Entry>& entries() const { return entries_; }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string name_;
  std::string bytes_;
  uint64_t data_start_ = 0;
  std::map<std::string, Entry> entries_;
};

}  // namespace converter
}  // namespace mtlite

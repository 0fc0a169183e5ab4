// Small file helpers for the converter (host tool).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace converter {

bool FileExists(const std::string& path);
// Reads the whole file; kIoError naming the path on failure.
Status ReadFile(const std::string& path, std::string* out);
// Writes to `path`.tmp and renames it over `path`, so a failed write never leaves a partial file;
// an existing device, pipe or symbolic link is written in place. kIoError "cannot write PATH:
// reason" or "writing PATH: reason".
Status WriteFileAtomic(const std::string& path, const void* data, size_t size);

}  // namespace converter
}  // namespace mtlite

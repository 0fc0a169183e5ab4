// Small file helpers for the converter (host tool).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace converter {

bool FileExists(const std::string& path);
// Reads the whole file; kIoError naming the path on failure. A path ending in ".gz" is a gzip
// file and reads as its inflated bytes (converter/inflate.h: bounded by GzipOutputBound; a damaged
// or oversized one is kInvalidModel naming the path), so release folders that ship
// `model.*.bin.gz`, `vocab.*.spm.gz` or `lex.*.s2t.bin.gz` are read as they are.
Status ReadFile(const std::string& path, std::string* out);
// True when `path` ends in ".gz".
bool IsGzipPath(const std::string& path);
// The file name of `path` without its directory and without a ".gz" suffix: the name of what
// ReadFile returns ("dir/model.bin.gz" -> "model.bin"). Names recorded in a model file use it, so
// a converted model does not depend on whether its inputs were gzipped.
std::string ContentName(const std::string& path);
// Writes to `path`.tmp and renames it over `path`, so a failed write never leaves a partial file;
// an existing device, pipe or symbolic link is written in place. kIoError "cannot write PATH:
// reason" or "writing PATH: reason".
Status WriteFileAtomic(const std::string& path, const void* data, size_t size);

}  // namespace converter
}  // namespace mtlite

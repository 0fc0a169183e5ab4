// Reader for zip archives held in memory: numpy `.npz` checkpoints (np.savez writes stored
// entries, np.savez_compressed deflate ones) and Argos Translate `.argosmodel` packages (a deflate
// zip of `<dir>/metadata.json`, `<dir>/sentencepiece.model`, `<dir>/model/model.bin`, ...).
//
// What is read: the end-of-central-directory record (and the zip64 one, when the archive has it),
// the central directory, and for each entry its local header. What is checked when the archive is
// opened, before any entry is read: one disk only; every record inside the archive; the entry
// count and the total of the uncompressed sizes within ZipLimits; names non-empty, without NUL,
// each once; no encryption; methods stored (0) or deflate (8), else kUnsupported naming the
// method; a stored entry's two sizes equal; a deflate entry inflating to at most max_ratio times
// its compressed size (decompression bombs); every entry's bytes [local header, end of data)
// inside the archive and disjoint from every other entry's (overlapping entries would let a small
// file decode to many times its size). Sizes and offsets come from the central directory (the
// local header's may be 0xffffffff or 0 when a data descriptor or zip64 extra follows). zip64 is
// supported: the zip64 end-of-central-directory record and the zip64 extra field of an entry.
// Reading an entry inflates it into a buffer of exactly its declared size (more or less data is an
// error) and checks its CRC-32. Every rejection is a Status "ARCHIVE: ...", never a crash.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace converter {

struct ZipLimits {
  uint64_t max_entries = 65536;
  // The sum of every entry's uncompressed size.
  uint64_t max_total_bytes = uint64_t(16) << 30;
  // A deflate entry's uncompressed size is at most max_ratio x its compressed size + 64 KiB
  // (deflate itself reaches 1032:1 on repeated bytes; weights and text inflate 1-5 times).
  uint64_t max_ratio = 256;
};

struct ZipEntry {
  std::string name;              // as stored (a path with '/' separators)
  uint16_t method = 0;           // 0 stored, 8 deflate
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;  // bytes of data in the archive
  uint64_t size = 0;             // uncompressed
  uint64_t local_offset = 0;     // the local header
  uint64_t data_offset = 0;      // the first byte of the (compressed) data
};

class ZipReader {
 public:
  // Reads and checks the directory of the archive in `archive` (see above). The bytes are not
  // copied: they must outlive the reader. `name` starts every message.
  static Status Open(std::string_view archive, const std::string& name, ZipReader* out,
                     const ZipLimits& limits = ZipLimits());
  // A temporary string would be gone before the entries are read.
  static Status Open(std::string&& archive, const std::string& name, ZipReader* out,
                     const ZipLimits& limits = ZipLimits()) = delete;

  // In central-directory order.
  const std::vector<ZipEntry>& entries() const { return entries_; }
  const ZipEntry* Find(std::string_view entry_name) const;
  const std::string& name() const { return name_; }

  // The entry's uncompressed bytes into `out` (replaced), CRC-32 checked. An entry larger than
  // `max_bytes` is kInvalidModel "ARCHIVE: ENTRY: N bytes uncompressed, more than the M allowed"
  // before anything is allocated.
  Status Read(const ZipEntry& entry, std::string* out, uint64_t max_bytes = UINT64_MAX) const;

  // A stored entry's bytes in place (no copy), CRC-32 checked; kInvalidArgument for a deflate
  // entry (use Read).
  Status View(const ZipEntry& entry, std::string_view* out) const;

 private:
  std::string name_;
  std::string_view archive_;
  std::vector<ZipEntry> entries_;
};

}  // namespace converter
}  // namespace mtlite

#include "zip_reader.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "inflate.h"

namespace mtlite {
namespace converter {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr uint32_t kZip64EndSig = 0x06064b50, kZip64LocatorSig = 0x07064b50;
constexpr uint64_t kEndBytes = 22, kCentralBytes = 46, kLocalBytes = 30, kZip64EndBytes = 56, kLocatorBytes = 20;

uint64_t Le(std::string_view b, uint64_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | uint8_t(b[size_t(at) + size_t(i)]);
  return v;
}

Status Bad(const std::string& archive, const std::string& what) {
  return Status(StatusCode::kInvalidModel, archive + ": " + what);
}

std::string Quoted(const std::string& entry) { return "zip entry '" + entry + "'"; }

const char* MethodName(uint64_t m) {
  switch (m) {
    case 1: return "shrink";
    case 6: return "implode";
    case 9: return "deflate64";
    case 12: return "bzip2";
    case 14: return "lzma";
    case 93: return "zstandard";
    case 95: return "xz";
    case 99: return "AES encryption";
    default: return "unknown";
  }
}

// The end-of-central-directory record: the last signature within the final 64 KiB + 22 bytes
// whose comment fits in the file.
bool FindEnd(std::string_view b, uint64_t* at) {
  const uint64_t size = b.size();
  if (size < kEndBytes) return false;
  const uint64_t stop = size > kEndBytes + 65535 ? size - kEndBytes - 65535 : 0;
  for (uint64_t i = size - kEndBytes;; --i) {
    if (Le(b, i, 4) == kEndSig && i + kEndBytes + Le(b, i + 20, 2) <= size) {
      *at = i;
      return true;
    }
    if (i == stop) return false;
  }
}

}  // namespace

Status ZipReader::Open(std::string_view b, const std::string& name, ZipReader* out, const ZipLimits& limits) {
  ZipReader z;
  z.name_ = name;
  z.archive_ = b;
  const uint64_t size = b.size();
  uint64_t end = 0;
  if (!FindEnd(b, &end)) return Bad(name, "no zip end-of-central-directory record (not a zip archive, or truncated)");
  uint64_t disk = Le(b, end + 4, 2), cd_disk = Le(b, end + 6, 2), disk_entries = Le(b, end + 8, 2);
  uint64_t count = Le(b, end + 10, 2), cd_size = Le(b, end + 12, 4), cd_off = Le(b, end + 16, 4);
  if (end >= kLocatorBytes && Le(b, end - kLocatorBytes, 4) == kZip64LocatorSig) {
    const uint64_t loc = end - kLocatorBytes;
    const uint64_t z64 = Le(b, loc + 8, 8);
    if (Le(b, loc + 4, 4) != 0 || Le(b, loc + 16, 4) > 1) return Status(StatusCode::kUnsupported, name + ": multi-disk zip archive");
    if (z64 > loc || loc - z64 < kZip64EndBytes || Le(b, z64, 4) != kZip64EndSig) {
      return Bad(name, "bad zip64 end-of-central-directory record");
    }
    disk = Le(b, z64 + 16, 4);
    cd_disk = Le(b, z64 + 20, 4);
    disk_entries = Le(b, z64 + 24, 8);
    count = Le(b, z64 + 32, 8);
    cd_size = Le(b, z64 + 40, 8);
    cd_off = Le(b, z64 + 48, 8);
    end = z64;  // the central directory ends before the zip64 record
  } else if (count == 0xffff || cd_size == 0xffffffff || cd_off == 0xffffffff) {
    return Bad(name, "zip64 sizes without a zip64 end-of-central-directory locator");
  }
  if (disk != 0 || cd_disk != 0 || disk_entries != count) return Status(StatusCode::kUnsupported, name + ": multi-disk zip archive");
  if (cd_off > end || cd_size > end - cd_off) {
    return Bad(name, "zip central directory (" + std::to_string(cd_size) + " bytes at " + std::to_string(cd_off) +
                         ") beyond the archive's " + std::to_string(size) + " bytes");
  }
  if (count > cd_size / kCentralBytes) {
    return Bad(name, "zip central directory of " + std::to_string(cd_size) + " bytes cannot hold " + std::to_string(count) +
                         " entries");
  }
  if (count > limits.max_entries) {
    return Bad(name, std::to_string(count) + " zip entries (at most " + std::to_string(limits.max_entries) + " are read)");
  }
  z.entries_.reserve(size_t(count));
  const uint64_t cd_end = cd_off + cd_size;
  uint64_t at = cd_off, total = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const std::string which = "zip central directory entry " + std::to_string(i);
    if (cd_end - at < kCentralBytes || Le(b, at, 4) != kCentralSig) return Bad(name, "bad " + which);
    const uint64_t flags = Le(b, at + 8, 2), method = Le(b, at + 10, 2);
    ZipEntry e;
    e.crc32 = uint32_t(Le(b, at + 16, 4));
    e.compressed_size = Le(b, at + 20, 4);
    e.size = Le(b, at + 24, 4);
    uint64_t entry_disk = Le(b, at + 34, 2);
    e.local_offset = Le(b, at + 42, 4);
    const uint64_t nlen = Le(b, at + 28, 2), xlen = Le(b, at + 30, 2), clen = Le(b, at + 32, 2);
    if (cd_end - at - kCentralBytes < nlen + xlen + clen) return Bad(name, which + " overruns the directory");
    e.name = std::string(b.substr(size_t(at + kCentralBytes), size_t(nlen)));
    if (e.name.empty()) return Bad(name, which + " has an empty name");
    if (e.name.find('\0') != std::string::npos) return Bad(name, which + ": name contains a NUL byte");
    const std::string where = Quoted(e.name);
    // zip64 extra field (id 1): the 64-bit values of the fields stored as all ones, in this order.
    const bool need_usize = e.size == 0xffffffff, need_csize = e.compressed_size == 0xffffffff;
    const bool need_local = e.local_offset == 0xffffffff, need_disk = entry_disk == 0xffff;
    if (need_usize || need_csize || need_local || need_disk) {
      bool found = false;
      for (uint64_t x = at + kCentralBytes + nlen, xend = x + xlen; xend - x >= 4;) {
        const uint64_t id = Le(b, x, 2), n = Le(b, x + 2, 2);
        if (n > xend - x - 4) break;
        if (id == 1) {
          uint64_t f = x + 4;
          const uint64_t fend = f + n;
          auto take = [&](bool need, uint64_t* v, int bytes) {
            if (!need) return true;
            if (fend - f < uint64_t(bytes)) return false;
            *v = Le(b, f, bytes);
            f += uint64_t(bytes);
            return true;
          };
          if (!take(need_usize, &e.size, 8) || !take(need_csize, &e.compressed_size, 8) ||
              !take(need_local, &e.local_offset, 8) || !take(need_disk, &entry_disk, 4)) {
            return Bad(name, where + ": zip64 extra field too short for its sizes");
          }
          found = true;
          break;
        }
        x += 4 + n;
      }
      if (!found) return Bad(name, where + ": sizes of 0xffffffff without a zip64 extra field");
    }
    at += kCentralBytes + nlen + xlen + clen;
    if (entry_disk != 0) return Status(StatusCode::kUnsupported, name + ": " + where + ": on another disk (multi-disk archive)");
    if (flags & 1) return Status(StatusCode::kUnsupported, name + ": " + where + ": encrypted zip entry");
    if (method != 0 && method != 8) {
      return Status(StatusCode::kUnsupported, name + ": " + where + ": compression method " + std::to_string(method) + " (" +
                                                  MethodName(method) + "); only stored (0) and deflate (8) entries are read");
    }
    e.method = uint16_t(method);
    if (method == 0 && e.compressed_size != e.size) {
      return Bad(name, where + ": stored entry of " + std::to_string(e.compressed_size) + " bytes declares " +
                           std::to_string(e.size) + " uncompressed bytes");
    }
    if (method == 8) {
      const uint64_t slack = 65536;
      if (e.compressed_size > (UINT64_MAX - slack) / std::max<uint64_t>(limits.max_ratio, 1) ||
          e.size > e.compressed_size * limits.max_ratio + slack) {
        return Bad(name, where + ": " + std::to_string(e.compressed_size) + " compressed bytes declare " +
                             std::to_string(e.size) + " uncompressed (more than " + std::to_string(limits.max_ratio) +
                             " times: a decompression bomb?)");
      }
    }
    if (e.size > limits.max_total_bytes - std::min(total, limits.max_total_bytes)) {
      return Bad(name, "zip entries total more than " + std::to_string(limits.max_total_bytes) + " uncompressed bytes (at " +
                           where + ")");
    }
    total += e.size;
    const uint64_t local = e.local_offset;
    if (local > size || size - local < kLocalBytes || Le(b, local, 4) != kLocalSig) {
      return Bad(name, where + ": no local header at offset " + std::to_string(local));
    }
    const uint64_t data = local + kLocalBytes + Le(b, local + 26, 2) + Le(b, local + 28, 2);
    if (data > size || e.compressed_size > size - data) {
      return Bad(name, where + ": data (" + std::to_string(e.compressed_size) + " bytes at " + std::to_string(data) +
                           ") beyond the archive's " + std::to_string(size) + " bytes");
    }
    e.data_offset = data;
    z.entries_.push_back(std::move(e));
  }
  // Names once each; entries' bytes disjoint (so that what is decoded is bounded by the archive).
  std::vector<size_t> order(z.entries_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return z.entries_[x].name != z.entries_[y].name ? z.entries_[x].name < z.entries_[y].name : x < y;
  });
  for (size_t i = 1; i < order.size(); ++i) {
    if (z.entries_[order[i]].name == z.entries_[order[i - 1]].name) {
      return Bad(name, Quoted(z.entries_[order[i]].name) + " appears twice in the central directory");
    }
  }
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    const ZipEntry &a = z.entries_[x], &c = z.entries_[y];
    return a.local_offset != c.local_offset ? a.local_offset < c.local_offset : x < y;
  });
  for (size_t i = 1; i < order.size(); ++i) {
    const ZipEntry &prev = z.entries_[order[i - 1]], &e = z.entries_[order[i]];
    if (e.local_offset < prev.data_offset + prev.compressed_size) {
      return Bad(name, Quoted(e.name) + ": data overlaps " + Quoted(prev.name));
    }
  }
  *out = std::move(z);
  return Status::Ok();
}

const ZipEntry* ZipReader::Find(std::string_view entry_name) const {
  for (const ZipEntry& e : entries_) {
    if (e.name == entry_name) return &e;
  }
  return nullptr;
}

Status ZipReader::View(const ZipEntry& e, std::string_view* out) const {
  *out = std::string_view();
  if (e.method != 0) return Status(StatusCode::kInvalidArgument, name_ + ": " + Quoted(e.name) + " is compressed (read it with Read)");
  if (e.data_offset > archive_.size() || e.compressed_size > archive_.size() - e.data_offset) {
    return Status(StatusCode::kInvalidArgument, name_ + ": " + Quoted(e.name) + " is not an entry of this archive");
  }
  const std::string_view data = archive_.substr(size_t(e.data_offset), size_t(e.compressed_size));
  if (Crc32(data) != e.crc32) return Bad(name_, Quoted(e.name) + ": CRC-32 mismatch (the archive is damaged)");
  *out = data;
  return Status::Ok();
}

Status ZipReader::Read(const ZipEntry& e, std::string* out, uint64_t max_bytes) const {
  out->clear();
  if (e.size > max_bytes) {
    return Bad(name_, Quoted(e.name) + ": " + std::to_string(e.size) + " bytes uncompressed, more than the " +
                          std::to_string(max_bytes) + " allowed");
  }
  if (e.method == 0) {
    std::string_view v;
    Status s = View(e, &v);
    if (!s.ok()) return s;
    out->assign(v.data(), v.size());
    return Status::Ok();
  }
  if (e.data_offset > archive_.size() || e.compressed_size > archive_.size() - e.data_offset) {
    return Status(StatusCode::kInvalidArgument, name_ + ": " + Quoted(e.name) + " is not an entry of this archive");
  }
  Status s = InflateRaw(archive_.substr(size_t(e.data_offset), size_t(e.compressed_size)), e.size, name_ + ": " + Quoted(e.name), out);
  if (!s.ok()) return s;
  if (Crc32(*out) != e.crc32) {
    out->clear();
    return Bad(name_, Quoted(e.name) + ": CRC-32 mismatch (the archive is damaged)");
  }
  return Status::Ok();
}

}  // namespace converter
}  // namespace mtlite

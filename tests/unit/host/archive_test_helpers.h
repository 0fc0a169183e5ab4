// Writers of the archives the converter reads, for tests: gzip files, raw deflate streams and zip
// archives (stored or deflate entries, optionally zip64), with knobs to damage each field. Made
// with zlib's compressor; the readers under test are converter/inflate.* and zip_reader.*.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace mtlite {
namespace testing {

inline void PutLe(uint64_t v, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(char(uint8_t(v >> (8 * i))));
}

// window_bits: -15 raw deflate, 31 gzip.
inline std::string Compress(const std::string& data, int window_bits, int level = 6) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw std::runtime_error("deflateInit2");
  std::string out(deflateBound(&z, uLong(data.size())) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = uInt(data.size());
  z.next_out = reinterpret_cast<Bytef*>(&out[0]);
  z.avail_out = uInt(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}
inline std::string Gzip(const std::string& data) { return Compress(data, 31); }
inline std::string RawDeflate(const std::string& data) { return Compress(data, -15); }

inline uint32_t Crc(const std::string& data) {
  return uint32_t(crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(data.data()), uInt(data.size())));
}

struct ZipFile {
  std::string name;
  std::string data;          // uncompressed
  int method = 0;            // 0 stored, 8 deflate (compressed here), anything else: stored bytes, that method
  // Damage (applied to the central directory only, which the reader trusts).
  int64_t size_delta = 0;    // added to the declared uncompressed size
  uint32_t crc_xor = 0;
  uint16_t flags = 0;
  int same_local_as = -1;    // >= 0: no local entry of its own; points at that entry's
};

// A zip archive of `files` (central directory in the given order). zip64: sizes and offsets in
// zip64 extra fields and a zip64 end-of-central-directory record, as numpy writes large archives.
inline std::string MakeZip(const std::vector<ZipFile>& files, bool zip64 = false) {
  std::string out;
  std::vector<uint64_t> local(files.size());
  std::vector<std::string> stored(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    const ZipFile& f = files[i];
    stored[i] = f.method == 8 ? RawDeflate(f.data) : f.data;
    if (f.same_local_as >= 0) continue;
    local[i] = out.size();
    PutLe(0x04034b50, 4, &out);
    PutLe(zip64 ? 45 : 20, 2, &out);
    PutLe(f.flags, 2, &out);
    PutLe(uint64_t(f.method), 2, &out);
    PutLe(0, 4, &out);  // time, date
    PutLe(Crc(f.data), 4, &out);
    PutLe(zip64 ? 0xffffffff : stored[i].size(), 4, &out);
    PutLe(zip64 ? 0xffffffff : f.data.size(), 4, &out);
    PutLe(f.name.size(), 2, &out);
    PutLe(zip64 ? 20 : 0, 2, &out);
    out += f.name;
    if (zip64) {
      PutLe(1, 2, &out);
      PutLe(16, 2, &out);
      PutLe(f.data.size(), 8, &out);
      PutLe(stored[i].size(), 8, &out);
    }
    out += stored[i];
  }
  const uint64_t cd = out.size();
  for (size_t i = 0; i < files.size(); ++i) {
    const ZipFile& f = files[i];
    const size_t l = f.same_local_as >= 0 ? size_t(f.same_local_as) : i;
    const uint64_t usize = uint64_t(int64_t(files[l].data.size()) + f.size_delta);
    PutLe(0x02014b50, 4, &out);
    PutLe(zip64 ? 45 : 20, 2, &out);
    PutLe(zip64 ? 45 : 20, 2, &out);
    PutLe(f.flags, 2, &out);
    PutLe(uint64_t(files[l].method), 2, &out);
    PutLe(0, 4, &out);
    PutLe(Crc(files[l].data) ^ f.crc_xor, 4, &out);
    PutLe(zip64 ? 0xffffffff : stored[l].size(), 4, &out);
    PutLe(zip64 ? 0xffffffff : usize, 4, &out);
    PutLe(f.name.size(), 2, &out);
    PutLe(zip64 ? 28 : 0, 2, &out);  // extra
    PutLe(0, 2, &out);               // comment
    PutLe(0, 2, &out);               // disk
    PutLe(0, 2, &out);               // internal attributes
    PutLe(0, 4, &out);               // external attributes
    PutLe(zip64 ? 0xffffffff : local[l], 4, &out);
    out += f.name;
    if (zip64) {
      PutLe(1, 2, &out);
      PutLe(24, 2, &out);
      PutLe(usize, 8, &out);
      PutLe(stored[l].size(), 8, &out);
      PutLe(local[l], 8, &out);
    }
  }
  const uint64_t cd_size = out.size() - cd;
  if (zip64) {
    const uint64_t z64 = out.size();
    PutLe(0x06064b50, 4, &out);
    PutLe(44, 8, &out);
    PutLe(45, 2, &out);
    PutLe(45, 2, &out);
    PutLe(0, 4, &out);
    PutLe(0, 4, &out);
    PutLe(files.size(), 8, &out);
    PutLe(files.size(), 8, &out);
    PutLe(cd_size, 8, &out);
    PutLe(cd, 8, &out);
    PutLe(0x07064b50, 4, &out);
    PutLe(0, 4, &out);
    PutLe(z64, 8, &out);
    PutLe(1, 4, &out);
  }
  PutLe(0x06054b50, 4, &out);
  PutLe(0, 4, &out);
  PutLe(zip64 ? 0xffff : files.size(), 2, &out);
  PutLe(zip64 ? 0xffff : files.size(), 2, &out);
  PutLe(zip64 ? 0xffffffff : cd_size, 4, &out);
  PutLe(zip64 ? 0xffffffff : cd, 4, &out);
  PutLe(0, 2, &out);
  return out;
}

}  // namespace testing
}  // namespace mtlite

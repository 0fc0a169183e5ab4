#include "inflate.h"

#include <zlib.h>

#include <algorithm>
#include <climits>

namespace mtlite {
namespace converter {
namespace {

Status Bad(const std::string& what, const std::string& message) {
  return Status(StatusCode::kInvalidModel, what + ": " + message);
}

// zlib counts in uInt (32 bits): larger buffers are fed in pieces.
constexpr uint64_t kMaxChunk = uint64_t(1) << 30;

class Stream {
 public:
  explicit Stream(int window_bits) { ok_ = inflateInit2(&z_, window_bits) == Z_OK; }
  ~Stream() {
    if (ok_) inflateEnd(&z_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  bool ok() const { return ok_; }
  z_stream* z() { return &z_; }

 private:
  z_stream z_{};
  bool ok_ = false;
};

std::string ZlibMessage(const z_stream& z, int rc) {
  if (z.msg != nullptr) return z.msg;
  return rc == Z_MEM_ERROR ? "out of memory" : rc == Z_BUF_ERROR ? "truncated data" : "damaged data";
}

}  // namespace

uint32_t Crc32(std::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* p = reinterpret_cast<const Bytef*>(bytes.data());
  for (uint64_t left = bytes.size(); left > 0;) {
    const uInt n = uInt(std::min(left, kMaxChunk));
    crc = crc32(crc, p, n);
    p += n;
    left -= n;
  }
  return uint32_t(crc);
}

Status InflateRaw(std::string_view deflated, uint64_t expected_size, const std::string& what, std::string* out) {
  out->clear();
  Stream s(-MAX_WBITS);
  if (!s.ok()) return Status(StatusCode::kResourceExhausted, what + ": cannot initialise zlib");
  if (expected_size > out->max_size()) return Bad(what, "entry too large for this machine");
  out->resize(size_t(expected_size));
  z_stream& z = *s.z();
  const auto* in = reinterpret_cast<const Bytef*>(deflated.data());
  uint64_t in_left = deflated.size(), out_done = 0;
  char spare = 0;  // one byte past the end: any output there means the entry is larger than declared
  for (;;) {
    if (z.avail_in == 0 && in_left > 0) {
      z.next_in = const_cast<Bytef*>(in);
      z.avail_in = uInt(std::min(in_left, kMaxChunk));
      in += z.avail_in;
      in_left -= z.avail_in;
    }
    const bool past_end = out_done == expected_size;
    if (past_end) {
      z.next_out = reinterpret_cast<Bytef*>(&spare);
      z.avail_out = 1;
    } else {
      z.next_out = reinterpret_cast<Bytef*>(&(*out)[size_t(out_done)]);
      z.avail_out = uInt(std::min(expected_size - out_done, kMaxChunk));
    }
    const uInt before = z.avail_out;
    const int rc = inflate(&z, Z_NO_FLUSH);
    const uInt produced = before - z.avail_out;
    if (past_end && produced > 0) {
      out->clear();
      return Bad(what, "deflate data inflates to more than the " + std::to_string(expected_size) + " bytes declared");
    }
    out_done += produced;
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK && !(rc == Z_BUF_ERROR && (z.avail_in > 0 || in_left > 0))) {
      out->clear();
      if (rc == Z_BUF_ERROR) {
        return Bad(what, "deflate data ends early (" + std::to_string(out_done) + " of " + std::to_string(expected_size) +
                             " bytes)");
      }
      return Bad(what, "damaged deflate data (" + ZlibMessage(z, rc) + ")");
    }
    if (produced == 0 && z.avail_in == 0 && in_left == 0) {
      out->clear();
      return Bad(what, "deflate data ends early (" + std::to_string(out_done) + " of " + std::to_string(expected_size) +
                           " bytes)");
    }
  }
  if (out_done != expected_size) {
    out->clear();
    return Bad(what, "deflate data inflates to " + std::to_string(out_done) + " bytes, not the " +
                         std::to_string(expected_size) + " declared");
  }
  if (z.avail_in > 0 || in_left > 0) {
    out->clear();
    return Bad(what, "bytes after the end of the deflate data");
  }
  return Status::Ok();
}

bool IsGzip(std::string_view bytes) {
  return bytes.size() >= 2 && uint8_t(bytes[0]) == 0x1f && uint8_t(bytes[1]) == 0x8b;
}

uint64_t GzipOutputBound(uint64_t compressed) {
  const uint64_t lo = uint64_t(64) << 20, hi = uint64_t(16) << 30;
  if (compressed > hi / 64) return hi;
  return std::max(lo, compressed * 64);
}

Status Gunzip(std::string_view gz, uint64_t max_bytes, const std::string& what, std::string* out) {
  out->clear();
  if (!IsGzip(gz)) return Bad(what, "not gzip data (no 1f 8b magic)");
  Stream s(MAX_WBITS + 16);  // gzip wrapper only
  if (!s.ok()) return Status(StatusCode::kResourceExhausted, what + ": cannot initialise zlib");
  z_stream& z = *s.z();
  const auto* in = reinterpret_cast<const Bytef*>(gz.data());
  uint64_t in_left = gz.size();
  // Grow geometrically from a small start: the output is never more than twice what was inflated.
  std::string buf(size_t(std::min<uint64_t>(std::max<uint64_t>(gz.size() * 2, 4096), max_bytes + 1)), '\0');
  uint64_t done = 0;
  bool member_ended = false;
  for (;;) {
    if (z.avail_in == 0 && in_left > 0) {
      z.next_in = const_cast<Bytef*>(in);
      z.avail_in = uInt(std::min(in_left, kMaxChunk));
      in += z.avail_in;
      in_left -= z.avail_in;
    }
    if (member_ended) {
      if (z.avail_in == 0) break;  // the end of the file after a complete member
      if (uint8_t(z.next_in[0]) != 0x1f) {
        return Bad(what, "bytes after the end of the gzip data");
      }
      if (inflateReset(&z) != Z_OK) return Bad(what, "cannot restart zlib");
      member_ended = false;
    }
    if (done == buf.size()) {
      if (done > max_bytes) return Bad(what, "gzip data inflates to more than " + std::to_string(max_bytes) + " bytes");
      const uint64_t grown = std::min<uint64_t>(std::max<uint64_t>(done * 2, 4096), max_bytes + 1);
      buf.resize(size_t(grown));
    }
    z.next_out = reinterpret_cast<Bytef*>(&buf[size_t(done)]);
    z.avail_out = uInt(std::min(uint64_t(buf.size()) - done, kMaxChunk));
    const uInt before = z.avail_out;
    const int rc = inflate(&z, Z_NO_FLUSH);
    done += before - z.avail_out;
    if (done > max_bytes) return Bad(what, "gzip data inflates to more than " + std::to_string(max_bytes) + " bytes");
    if (rc == Z_STREAM_END) {
      member_ended = true;
      continue;
    }
    if (rc == Z_BUF_ERROR && z.avail_in == 0 && in_left == 0) return Bad(what, "truncated gzip data");
    if (rc != Z_OK && rc != Z_BUF_ERROR) return Bad(what, "damaged gzip data (" + ZlibMessage(z, rc) + ")");
    if (rc == Z_OK && z.avail_in == 0 && in_left == 0 && z.avail_out > 0) return Bad(what, "truncated gzip data");
  }
  buf.resize(size_t(done));
  buf.shrink_to_fit();
  *out = std::move(buf);
  return Status::Ok();
}

}  // namespace converter
}  // namespace mtlite

#include "io.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "inflate.h"
#include "status_macros.h"

namespace mtlite {
namespace converter {

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool IsGzipPath(const std::string& path) { return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0; }

std::string ContentName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (IsGzipPath(name)) name.resize(name.size() - 3);
  return name;
}

namespace {

Status ReadRaw(const std::string& path, std::string* out) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status(StatusCode::kIoError, "cannot open " + path + ": " + std::strerror(errno));
  out->clear();
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out->append(buf, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return Status(StatusCode::kIoError, "error reading " + path);
  return Status::Ok();
}

}  // namespace

Status ReadFile(const std::string& path, std::string* out) {
  if (!IsGzipPath(path)) return ReadRaw(path, out);
  std::string gz;
  MTLITE_RETURN_IF_ERROR(ReadRaw(path, &gz));
  out->clear();
  return Gunzip(gz, GzipOutputBound(gz.size()), path, out);
}

Status WriteFileAtomic(const std::string& path, const void* data, size_t size) {
  // A device, a pipe or a symbolic link (/dev/stdout) is written in place: renaming over it would
  // replace it.
  struct stat st;
  const bool in_place = lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  const std::string tmp = in_place ? path : path + ".tmp";
  const auto fail = [&](int err) {
    if (!in_place) std::remove(tmp.c_str());
    return Status(StatusCode::kIoError, "writing " + path + ": " + (err ? std::strerror(err) : "write error"));
  };
  errno = 0;
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return Status(StatusCode::kIoError, "cannot write " + path + ": " + std::strerror(errno));
  errno = 0;
  bool ok = std::fwrite(data, 1, size, f) == size && std::fflush(f) == 0;
  int err = ok ? 0 : errno;
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) return fail(err);
  if (!in_place && std::rename(tmp.c_str(), path.c_str()) != 0) return fail(errno);
  return Status::Ok();
}

}  // namespace converter
}  // namespace mtlite

#include "io.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace mtlite {
namespace converter {

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Status ReadFile(const std::string& path, std::string* out) {
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

Status WriteFileAtomic(const std::string& path, const void* data, size_t size) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return Status(StatusCode::kIoError, "cannot create " + tmp + ": " + std::strerror(errno));
  const bool ok = std::fwrite(data, 1, size, f) == size;
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    return Status(StatusCode::kIoError, "error writing " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status(StatusCode::kIoError, "cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace converter
}  // namespace mtlite

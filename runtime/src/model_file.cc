// Model::Load: memory-maps a model file (read-only) and loads it in place. The only file I/O of
// the runtime: the minimal build (MTLITE_MINIMAL, docs/deploy.md) compiles this file into the
// CLI instead of the runtime library, which then has no mmap and no file I/O at all.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "model_data.h"
#include "mtlite/mtlite.hpp"

namespace mtlite {

Result<std::shared_ptr<const Model>> Model::Load(const std::string& path, const LoadOptions& options) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status(StatusCode::kIoError, "cannot open '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Status(StatusCode::kIoError, "'" + path + "' is not a readable regular file");
  }
  if (st.st_size <= 0 || uint64_t(st.st_size) > SIZE_MAX) {
    close(fd);
    return Status(StatusCode::kInvalidModel, path + ": empty or too large to map");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  close(fd);
  if (p == MAP_FAILED) return Status(StatusCode::kIoError, "cannot mmap '" + path + "': " + std::strerror(err));
  std::shared_ptr<Model> model(new Model());
  model->data_->mapping = p;  // owned from here on: ~Model unmaps
  model->data_->mapping_size = size;
  model->data_->unmap = [](void* mapping, size_t bytes) { munmap(mapping, bytes); };
  model->data_->base = static_cast<const uint8_t*>(p);
  model->data_->size = size;
  Status s = detail::PrepareModel(model->data_, options, nullptr, 0);
  if (!s.ok()) return Status(s.code(), path + ": " + s.message());
  return std::shared_ptr<const Model>(std::move(model));
}

}  // namespace mtlite

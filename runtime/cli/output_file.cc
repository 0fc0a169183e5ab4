#include "output_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdarg>
#include <cstring>

namespace mtlite {
namespace cli {

namespace {

std::string Reason(int err) { return err > 0 ? std::strerror(err) : "write error"; }

}  // namespace

bool OutputFile::Open(const std::string& path) {
  Discard();
  path_ = path;
  error_ = 0;
  open_failed_ = false;
  struct stat st;
  const bool replace = lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode);
  tmp_ = replace ? path + ".tmp" : std::string();
  errno = 0;
  f_ = std::fopen(replace ? tmp_.c_str() : path.c_str(), "wb");
  if (!f_) {
    Fail(errno);
    open_failed_ = true;
    tmp_.clear();
    return false;
  }
  return true;
}

void OutputFile::OpenStdout() {
  Discard();
  path_ = "stdout";
  error_ = 0;
  open_failed_ = false;
  f_ = stdout;
  is_stdout_ = true;
}

void OutputFile::Write(const void* data, size_t size) {
  if (!f_ || failed() || size == 0) return;
  errno = 0;
  if (std::fwrite(data, 1, size, f_) != size) Fail(errno);
}

void OutputFile::Printf(const char* format, ...) {
  if (!f_ || failed()) return;
  va_list args;
  va_start(args, format);
  errno = 0;
  if (std::vfprintf(f_, format, args) < 0) Fail(errno);
  va_end(args);
}

bool OutputFile::Flush() {
  if (f_ && !failed()) {
    errno = 0;
    if (std::fflush(f_) != 0) Fail(errno);
  }
  return !failed();
}

bool OutputFile::FinishStream() {
  Flush();
  if (std::ferror(f_)) Fail(0);
  if (is_stdout_) {
    f_ = nullptr;
    is_stdout_ = false;
    return !failed();
  }
  errno = 0;
  if (std::fclose(f_) != 0) Fail(errno);
  f_ = nullptr;
  return !failed();
}

bool OutputFile::Close() {
  if (!f_) return !failed();
  if (!FinishStream()) {
    if (!tmp_.empty()) std::remove(tmp_.c_str());
    tmp_.clear();
    return false;
  }
  if (!tmp_.empty() && std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    Fail(errno);
    std::remove(tmp_.c_str());
  }
  tmp_.clear();
  return !failed();
}

void OutputFile::Discard() {
  if (!f_) return;
  if (is_stdout_) {
    std::fflush(f_);
    is_stdout_ = false;
  } else {
    std::fclose(f_);
  }
  f_ = nullptr;
  if (!tmp_.empty()) std::remove(tmp_.c_str());
  tmp_.clear();
}

std::string OutputFile::error() const {
  return (open_failed_ ? "cannot write " : "writing ") + path_ + ": " + Reason(error_);
}

bool WriteWholeFile(const std::string& path, std::string_view data, std::string* error) {
  OutputFile out;
  if (out.Open(path)) {
    out.Write(data);
    if (out.Close()) return true;
  }
  *error = out.error();
  return false;
}

bool FinishStdout(const char* command) {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int err = flushed ? 0 : errno;
  if (flushed && !std::ferror(stdout)) return true;
  std::fprintf(stderr, "%s: writing stdout: %s\n", command, Reason(err).c_str());
  return false;
}

}  // namespace cli
}  // namespace mtlite

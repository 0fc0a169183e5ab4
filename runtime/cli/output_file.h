// Checked output of the `mtlite` commands: every write, flush and close is checked, and a failure
// is reported once, naming the output and the reason ("writing out.json: No space left on
// device"), so that a full disk or a closed pipe is an error (exit 1), never silent data loss.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

namespace mtlite {
namespace cli {

class OutputFile {
 public:
  OutputFile() = default;
  ~OutputFile() { Discard(); }  // an output that was not closed is abandoned
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Opens `path` for writing. A new file or an existing regular file is written to PATH.tmp and
  // renamed over PATH by Close(), so a failed or abandoned write leaves PATH as it was; anything
  // else (a device, a pipe, a symbolic link such as /dev/stdout) is written in place. false (and
  // error()) when it cannot be created.
  bool Open(const std::string& path);
  // Writes to stdout, named "stdout" in errors; Close() flushes it and leaves it open.
  void OpenStdout();

  // After the first failure the writes do nothing; Close() reports it.
  void Write(const void* data, size_t size);
  void Write(std::string_view s) { Write(s.data(), s.size()); }
  void Printf(const char* format, ...) __attribute__((format(printf, 2, 3)));
  bool Flush();  // false once a write failed
  bool failed() const { return error_ != 0; }

  // Flushes and closes (renames the temporary into place); false on any failure, after which
  // nothing is left behind but an output written in place.
  bool Close();
  // Closes without renaming and removes the temporary (no-op when closed).
  void Discard();

  // After a failure: "cannot write PATH: reason" when it could not be created, else "writing
  // PATH: reason".
  std::string error() const;

 private:
  void Fail(int err) {
    if (!error_) error_ = err ? err : -1;
  }
  bool FinishStream();

  std::FILE* f_ = nullptr;
  std::string path_, tmp_;  // tmp_: the file written, empty when in place
  bool is_stdout_ = false, open_failed_ = false;
  int error_ = 0;  // errno of the first failure; -1: unknown
};

// Writes `data` to `path` with an OutputFile; false and *error (OutputFile::error()) on failure.
bool WriteWholeFile(const std::string& path, std::string_view data, std::string* error);

// Flushes stdout at the end of a command; false (and "mtlite COMMAND: writing stdout: reason" on
// stderr) when anything written to it was lost.
bool FinishStdout(const char* command);

}  // namespace cli
}  // namespace mtlite

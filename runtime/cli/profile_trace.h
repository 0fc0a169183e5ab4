// The Chrome trace of `mtlite profile --trace FILE` (docs/profiling.md documents the format).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mtlite/mtlite.hpp"
#include "output_file.h"

namespace mtlite {
namespace cli {

// Streams Chrome Trace Event Format (JSON object form): complete events ("ph": "X") with
// timestamps in microseconds (exact ns as 3 decimals), then "otherData" with the calls.
class TraceWriter {
 public:
  // Opens the file and writes the process and thread names; false (and error()) on failure.
  bool Open(const std::string& path, const std::string& model, int threads);

  // The events of one call, shifted to the call's start on the run's clock; `cat`: op -> component.
  void Call(const ProfileView& v, uint32_t call, uint64_t offset_ns, const std::map<std::string, std::string>& cat);

  // Closes the event list, writes otherData and the file; false (and error()) on a write error,
  // with no file left behind. A run that fails before Finish() leaves no file either.
  bool Finish(const std::string& other_data);

  size_t events() const { return events_; }
  bool is_open() const { return open_; }
  std::string error() const { return out_.error(); }

 private:
  void Sep();
  void Meta(const char* name, int lane, const std::string& args);

  OutputFile out_;
  bool open_ = false, first_ = true;
  size_t events_ = 0;
  std::vector<const ProfileEvent*> order_;
};

}  // namespace cli
}  // namespace mtlite

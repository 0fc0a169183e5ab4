#include "kernels.h"
#include "mtlite/mtlite.hpp"
#include "platform.h"

namespace mtlite {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case StatusCode::kInvalidModel: return "INVALID_MODEL";
    case StatusCode::kChecksumMismatch: return "CHECKSUM_MISMATCH";
    case StatusCode::kIoError: return "IO_ERROR";
    case StatusCode::kOutOfRange: return "OUT_OF_RANGE";
    case StatusCode::kUnsupported: return "UNSUPPORTED";
    case StatusCode::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case StatusCode::kInternal: return "INTERNAL";
  }
  return "UNKNOWN";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

namespace detail {
void DieOnErrorAccess(const Status& status) {
  platform::WriteDiagnostic("mtlite: Result::value() called on an error (check ok() first): ");
  platform::WriteDiagnostic(StatusCodeName(status.code()));
  platform::WriteDiagnostic(": ");
  platform::WriteDiagnostic(status.message().data(), status.message().size());
  platform::Fatal("\n");
}
}  // namespace detail

const char* Version() {
#ifdef MTLITE_VERSION_STRING
  return MTLITE_VERSION_STRING;
#else
  return "0.0.0";
#endif
}

const char* KernelTableName() { return kernels::BestKernels().name; }

}  // namespace mtlite

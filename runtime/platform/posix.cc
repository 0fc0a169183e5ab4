// The platform layer on an OS with a C library (platform.h): Linux, Android, WebAssembly.
#include <chrono>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

#include "platform.h"

#if defined(__linux__) && !defined(__EMSCRIPTEN__) && (defined(__aarch64__) || defined(__arm__))
#include <sys/auxv.h>
#define MTLITE_PLATFORM_HAS_AUXV 1
#endif

namespace mtlite {
namespace platform {

const char* Name() { return "posix"; }

const char* GetEnv(const char* name) { return std::getenv(name); }

void WriteDiagnostic(const char* text, size_t length) {
  while (length > 0) {
    const ssize_t k = ::write(2, text, length);
    if (k <= 0) return;
    text += k;
    length -= static_cast<size_t>(k);
  }
}
void WriteDiagnostic(const char* text) { WriteDiagnostic(text, std::strlen(text)); }

void Fatal(const char* text) {
  WriteDiagnostic(text);
  std::abort();
}

uint64_t MonotonicNs() {
  return uint64_t(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

void* AlignedAlloc(size_t alignment, size_t bytes) { return std::aligned_alloc(alignment, bytes); }
void AlignedFree(void* p) { std::free(p); }

unsigned long CpuHwcap() {
#if defined(MTLITE_PLATFORM_HAS_AUXV)
  return getauxval(AT_HWCAP);
#else
  return 0;
#endif
}

}  // namespace platform
}  // namespace mtlite

// The platform layer without an OS (platform.h): a bare-metal program (platforms/baremetal).
// No environment, no heap and no C library I/O: diagnostics, the clock and halting go to three
// C functions of the board. Their weak defaults here drop the text, read 0 and stop the core in
// a loop, so the library links into any program; platforms/baremetal/semihosting.c defines them
// (stderr, the host's clock and exit over semihosting), a product defines them for its UART,
// timer and reset.
#include <cstring>

#include "platform.h"

extern "C" {
__attribute__((weak)) void mtlite_board_diagnostic(const char* text, size_t length) {
  (void)text;
  (void)length;
}
__attribute__((weak)) uint64_t mtlite_board_clock_ns(void) { return 0; }
__attribute__((weak, noreturn)) void mtlite_board_halt(int code) {
  (void)code;
  static volatile int stop;
  for (;;) (void)stop;  // volatile reads: a loop with side effects
}
}

namespace mtlite {
namespace platform {

const char* Name() { return "baremetal"; }

const char* GetEnv(const char*) { return nullptr; }

void WriteDiagnostic(const char* text, size_t length) { mtlite_board_diagnostic(text, length); }
void WriteDiagnostic(const char* text) { WriteDiagnostic(text, std::strlen(text)); }

void Fatal(const char* text) {
  WriteDiagnostic(text);
  mtlite_board_halt(134);
}

uint64_t MonotonicNs() { return mtlite_board_clock_ns(); }

void* AlignedAlloc(size_t, size_t) { return nullptr; }
void AlignedFree(void*) {}

unsigned long CpuHwcap() { return 0; }

}  // namespace platform
}  // namespace mtlite

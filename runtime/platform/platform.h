// The operating-system services the runtime uses, behind one interface, so that the library,
// its tokenizer, search and kernels build for a board without an OS. One implementation is
// compiled in, chosen by CMake (MTLITE_PLATFORM):
//   posix.cc      Linux, Android, and WebAssembly (emscripten's POSIX layer): getenv, stderr,
//                 abort, getauxval(AT_HWCAP)
//   baremetal.cc  no OS (platforms/cortex-m*.cmake): no environment, no CPU feature register to
//                 ask (the build names the core), diagnostics and halting through two functions
//                 the board provides (mtlite_board_diagnostic, mtlite_board_halt; weak defaults)
// The other services are profile choices of the build rather than calls: threads (thread_pool.cc,
// none in the minimal profile: MTLITE_NO_THREADS) and file mapping (model_file.cc, outside the
// minimal library: Model::FromBuffer reads a model in place from flash).
#ifndef MTLITE_PLATFORM_PLATFORM_H_
#define MTLITE_PLATFORM_PLATFORM_H_

#include <cstddef>
#include <cstdint>

namespace mtlite {
namespace platform {

// The platform's name: "posix" or "baremetal".
const char* Name();

// An environment variable's value; nullptr when it is unset or there is no environment.
const char* GetEnv(const char* name);

// Writes a diagnostic (one or more whole lines) to the diagnostics channel: stderr, or the
// board's console. Never allocates.
void WriteDiagnostic(const char* text, size_t length);
void WriteDiagnostic(const char* text);

// A programming error that cannot be reported as a Status (Result::value() of an error): writes
// the message and stops the program (abort, or the board's halt).
[[noreturn]] void Fatal(const char* text);

// A monotonic clock in ns (the profiler's time base, kernels/ticks.h): steady_clock; on bare
// metal the board's clock (mtlite_board_clock_ns; 0 where the board has none).
uint64_t MonotonicNs();

// Memory the runtime owns when a caller passes none (Model::FromBuffer, Translator::Create
// without storage/arena): aligned_alloc/free; bare metal has no heap for it: nullptr (the call
// then fails with RESOURCE_EXHAUSTED; pass the storage and the arena).
void* AlignedAlloc(size_t alignment, size_t bytes);
void AlignedFree(void* p);

// Linux's AT_HWCAP word (the CPU features the kernel reports to processes); 0 where there is none.
unsigned long CpuHwcap();

}  // namespace platform
}  // namespace mtlite

#endif  // MTLITE_PLATFORM_PLATFORM_H_

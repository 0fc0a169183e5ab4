/* RAM painting (ram_probe.h). The stack functions read and write stack memory outside any live
 * frame on purpose: they are excluded from AddressSanitizer (whose figures are meaningless
 * anyway: it enlarges every frame). */
#include "ram_probe.h"

#include <alloca.h>
#include <string.h>

#define MTLITE_PATTERN 0xA5u

#if defined(__clang__) || defined(__GNUC__)
#define MTLITE_PROBE_FN __attribute__((noinline, no_sanitize_address))
#else
#define MTLITE_PROBE_FN
#endif

MTLITE_PROBE_FN void mtlite_stack_paint(mtlite_stack_probe* probe, size_t bytes) {
  /* The alloca'd block lies just below this frame, i.e. where the caller's next calls put
   * theirs. Volatile: the stores must happen although nothing reads them here. */
  volatile unsigned char* region = (volatile unsigned char*)alloca(bytes);
  for (size_t i = 0; i < bytes; ++i) region[i] = (unsigned char)MTLITE_PATTERN;
  probe->bottom = (uintptr_t)region;
  probe->top = (uintptr_t)region + bytes;
}

MTLITE_PROBE_FN size_t mtlite_stack_used(const mtlite_stack_probe* probe) {
  /* The stack grows down: the deepest byte the calls touched is the lowest non-pattern one. */
  const volatile unsigned char* p = (const volatile unsigned char*)probe->bottom;
  const size_t n = (size_t)(probe->top - probe->bottom);
  size_t i = 0;
  while (i < n && p[i] == (unsigned char)MTLITE_PATTERN) ++i;
  return n - i;
}

void mtlite_fill_pattern(void* memory, size_t bytes) { memset(memory, (int)MTLITE_PATTERN, bytes); }

size_t mtlite_high_water(const void* memory, size_t bytes) {
  const unsigned char* p = (const unsigned char*)memory;
  size_t n = bytes;
  while (n > 0 && p[n - 1] == (unsigned char)MTLITE_PATTERN) --n;
  return n;
}

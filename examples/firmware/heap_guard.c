/* The example's heap guard: it replaces malloc and its family to count every call, so the
 * example can report (and the firmware test check) that mtlite allocated nothing. A real
 * firmware would simply have no heap; on Linux the C library itself allocates a little before
 * main, hence the count is taken from main's first line (heap_guard_count()).
 *
 * Static builds (MTLITE_FIRMWARE_STATIC): the C library's malloc is not linked at all; the few
 * allocations glibc's static start-up makes are served from a small static pool (and freed
 * memory is not reused: nothing should allocate after start-up). Dynamic builds: the calls are
 * forwarded to glibc's allocator (__libc_malloc & co., as tests/unit/host/zero_alloc_test.cc
 * does). glibc only; elsewhere the guard counts nothing and says so (heap_guard_active()). */
#include "heap_guard.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h> /* defines __GLIBC__ on glibc */

#if defined(__GLIBC__)

static volatile long g_calls;

long heap_guard_count(void) { return g_calls; }
int heap_guard_active(void) { return 1; }

#if defined(MTLITE_FIRMWARE_STATIC)

static unsigned char g_pool[256 * 1024] __attribute__((aligned(64)));
static size_t g_used;

static void* take(size_t align, size_t n) {
  ++g_calls;
  if (align < 16) align = 16;
  size_t at = (g_used + align - 1) / align * align;
  if (at > sizeof g_pool || n > sizeof g_pool - at) return NULL;
  g_used = at + n;
  return g_pool + at;
}
void* malloc(size_t n) { return take(16, n); }
void* calloc(size_t a, size_t b) {
  if (b && a > SIZE_MAX / b) return NULL;
  void* p = take(16, a * b);
  if (p) memset(p, 0, a * b);
  return p;
}
void* realloc(void* p, size_t n) {
  void* q = take(16, n);
  /* The old block's size is unknown: copy what can be in the pool after it (never more than n). */
  if (p && q) {
    size_t avail = (size_t)(g_pool + sizeof g_pool - (unsigned char*)p);
    memmove(q, p, n < avail ? n : avail);
  }
  return q;
}
void* memalign(size_t align, size_t n) { return take(align, n); }
void* aligned_alloc(size_t align, size_t n) { return take(align, n); }
int posix_memalign(void** out, size_t align, size_t n) {
  *out = take(align, n);
  return *out ? 0 : 12 /* ENOMEM */;
}
void* valloc(size_t n) { return take(4096, n); }
void* pvalloc(size_t n) { return take(4096, (n + 4095) / 4096 * 4096); }
void free(void* p) { (void)p; }
size_t malloc_usable_size(void* p) {
  (void)p;
  return 0;
}

#else /* dynamic: forward to glibc */

void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);

void* malloc(size_t n) {
  ++g_calls;
  return __libc_malloc(n);
}
void* calloc(size_t a, size_t b) {
  ++g_calls;
  return __libc_calloc(a, b);
}
void* realloc(void* p, size_t n) {
  ++g_calls;
  return __libc_realloc(p, n);
}
void* memalign(size_t align, size_t n) {
  ++g_calls;
  return __libc_memalign(align, n);
}
void* aligned_alloc(size_t align, size_t n) {
  ++g_calls;
  return __libc_memalign(align, n);
}
int posix_memalign(void** out, size_t align, size_t n) {
  ++g_calls;
  *out = __libc_memalign(align, n);
  return *out ? 0 : 12 /* ENOMEM */;
}
void free(void* p) { __libc_free(p); }

#endif

#else /* not glibc */

long heap_guard_count(void) { return 0; }
int heap_guard_active(void) { return 0; }

#endif

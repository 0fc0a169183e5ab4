// Counts the heap allocations of a test program: glibc lets a program interpose malloc & co.
// Include in exactly one translation unit of a test executable. Under a sanitizer (which owns
// malloc) nothing is interposed and MTLITE_COUNTS_ALLOCATIONS stays undefined: a test that needs
// the count skips with that reason.
#pragma once

#include <atomic>
#include <cstddef>

namespace mtlite {
namespace testing_util {
inline std::atomic<bool> g_counting{false};
inline std::atomic<long> g_allocs{0};  // counted while g_counting is set, on any thread
}  // namespace testing_util
}  // namespace mtlite

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define MTLITE_COUNTS_ALLOCATIONS 1
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);

inline void MtliteCountAllocation() {
  if (mtlite::testing_util::g_counting.load(std::memory_order_relaxed)) mtlite::testing_util::g_allocs.fetch_add(1);
}
void* malloc(size_t n) {
  MtliteCountAllocation();
  return __libc_malloc(n);
}
void* calloc(size_t a, size_t b) {
  MtliteCountAllocation();
  return __libc_calloc(a, b);
}
void* realloc(void* p, size_t n) {
  MtliteCountAllocation();
  return __libc_realloc(p, n);
}
void* aligned_alloc(size_t al, size_t n) {
  MtliteCountAllocation();
  return __libc_memalign(al, n);
}
int posix_memalign(void** out, size_t al, size_t n) {
  MtliteCountAllocation();
  *out = __libc_memalign(al, n);
  return *out ? 0 : 12;
}
void free(void* p) { __libc_free(p); }
}
#endif

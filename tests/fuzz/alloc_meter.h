// The allocation bound of the converter's parsers, checked by their fuzz targets: what a parser
// allocates while it reads an input is at most a small multiple of the input's size (plus a
// constant), so a crafted file of a few KB can never make the converter ask for gigabytes.
//
//   fuzz::AllocMeter meter;                         // starts measuring
//   ... parse ...
//   meter.Check(input, 16, 1 << 20, "what");        // peak live heap growth <= 16 x size + 1 MiB
//
// The meter follows the peak of live heap bytes since it started (frees lower the live count).
// Under AddressSanitizer (the libFuzzer tree and the sanitizer tree) it uses the sanitizer's
// malloc/free hooks, so every allocation of the process counts; in plain builds (the host tree's
// replay of the seeds) it replaces the global operator new/delete in the binary, so C++
// allocations count (those are what the parsers make). Under TSan or MSan it measures nothing
// and Check passes (those runtimes own the allocator and the targets do not run there).
//
// Include it from exactly one file of a program (it defines the replacement operators).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string_view>

#include "fuzz_util.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MTLITE_FUZZ_METER_ASAN 1
#elif __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define MTLITE_FUZZ_METER_OFF 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(MTLITE_FUZZ_METER_ASAN)
#define MTLITE_FUZZ_METER_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(MTLITE_FUZZ_METER_OFF)
#define MTLITE_FUZZ_METER_OFF 1
#endif

#if defined(MTLITE_FUZZ_METER_ASAN)
// The sanitizer runtime's allocator interface (declared here: GCC does not install
// <sanitizer/allocator_interface.h>).
extern "C" {
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*, size_t),
                                              void (*free_hook)(const volatile void*));
size_t __sanitizer_get_allocated_size(const volatile void* p);
}
#elif !defined(MTLITE_FUZZ_METER_OFF)
#include <malloc.h>
#endif

namespace mtlite {
namespace fuzz {
namespace meter_detail {

inline std::atomic<int64_t> live{0}, peak{0};
inline std::atomic<bool> active{false};

inline void Add(int64_t n) {
  const int64_t now = live.fetch_add(n, std::memory_order_relaxed) + n;
  int64_t p = peak.load(std::memory_order_relaxed);
  while (now > p && !peak.compare_exchange_weak(p, now, std::memory_order_relaxed)) {
  }
}
inline void Sub(int64_t n) { live.fetch_sub(n, std::memory_order_relaxed); }

#if defined(MTLITE_FUZZ_METER_ASAN)
inline void OnMalloc(const volatile void*, size_t size) { Add(int64_t(size)); }
inline void OnFree(const volatile void* p) {
  if (p != nullptr) Sub(int64_t(__sanitizer_get_allocated_size(p)));
}
inline bool Install() {
  static const bool installed = __sanitizer_install_malloc_and_free_hooks(OnMalloc, OnFree) != 0;
  if (!installed) {  // never measure nothing silently
    std::fprintf(stderr, "alloc_meter: the sanitizer refused the malloc/free hooks\n");
    std::abort();
  }
  return installed;
}
#elif !defined(MTLITE_FUZZ_METER_OFF)
inline bool Install() { return true; }
#else
inline bool Install() { return false; }
#endif

}  // namespace meter_detail

class AllocMeter {
 public:
  AllocMeter() : enabled_(meter_detail::Install()) {
    start_ = meter_detail::live.load();
    meter_detail::peak.store(start_);
  }
  // Peak live bytes above the start.
  int64_t Peak() const { return enabled_ ? meter_detail::peak.load() - start_ : 0; }
  // Fails (aborts, as a fuzz property does) when the peak exceeds factor x input size + slack.
  void Check(std::string_view input, uint64_t factor, uint64_t slack, const char* what) const {
    const int64_t peak = Peak();
    const uint64_t bound = factor * uint64_t(input.size()) + slack;
    if (peak > int64_t(bound)) {
      Fail(input, "%s allocated %lld bytes at its peak for a %zu-byte input (bound: %llu x size + %llu = %llu)", what,
           static_cast<long long>(peak), input.size(), static_cast<unsigned long long>(factor),
           static_cast<unsigned long long>(slack), static_cast<unsigned long long>(bound));
    }
  }

 private:
  bool enabled_;
  int64_t start_ = 0;
};

}  // namespace fuzz
}  // namespace mtlite

#if !defined(MTLITE_FUZZ_METER_ASAN) && !defined(MTLITE_FUZZ_METER_OFF)
// Plain builds: the replaceable global allocation functions, counting what they hand out.
namespace mtlite {
namespace fuzz {
namespace meter_detail {
inline void* Allocate(size_t n, size_t align) {
  void* p = nullptr;
  if (align <= alignof(std::max_align_t)) {
    p = std::malloc(n ? n : 1);
  } else if (posix_memalign(&p, align, n ? n : 1) != 0) {
    p = nullptr;
  }
  if (p == nullptr) throw std::bad_alloc();
  Add(int64_t(malloc_usable_size(p)));
  return p;
}
inline void Release(void* p) {
  if (p == nullptr) return;
  Sub(int64_t(malloc_usable_size(p)));
  std::free(p);
}
}  // namespace meter_detail
}  // namespace fuzz
}  // namespace mtlite
void* operator new(size_t n) { return mtlite::fuzz::meter_detail::Allocate(n, 0); }
void* operator new[](size_t n) { return mtlite::fuzz::meter_detail::Allocate(n, 0); }
void* operator new(size_t n, std::align_val_t a) { return mtlite::fuzz::meter_detail::Allocate(n, size_t(a)); }
void* operator new[](size_t n, std::align_val_t a) { return mtlite::fuzz::meter_detail::Allocate(n, size_t(a)); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return mtlite::fuzz::meter_detail::Allocate(n, 0);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  try {
    return mtlite::fuzz::meter_detail::Allocate(n, 0);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { mtlite::fuzz::meter_detail::Release(p); }
void operator delete[](void* p) noexcept { mtlite::fuzz::meter_detail::Release(p); }
void operator delete(void* p, size_t) noexcept { mtlite::fuzz::meter_detail::Release(p); }
void operator delete[](void* p, size_t) noexcept { mtlite::fuzz::meter_detail::Release(p); }
void operator delete(void* p, std::align_val_t) noexcept { mtlite::fuzz::meter_detail::Release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { mtlite::fuzz::meter_detail::Release(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { mtlite::fuzz::meter_detail::Release(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { mtlite::fuzz::meter_detail::Release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { mtlite::fuzz::meter_detail::Release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { mtlite::fuzz::meter_detail::Release(p); }
#endif

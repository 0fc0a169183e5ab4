// ThreadSanitizer builds only (tests/CMakeLists.txt links this into every test there).
//
// Debian's libpthreadpool is not instrumented: TSan sees the worker threads being created but not
// how pthreadpool_parallelize_1d hands them work (atomics and futexes inside the library) nor how
// it waits for them, so it would report every buffer the caller writes before the call and a
// worker reads (and every result the caller reads after it) as a race. This interposes
// pthreadpool_parallelize_1d (the only pthreadpool entry point the int8 path uses) and states
// its documented fork-join contract to TSan: everything before the call happens before every
// task; every task happens before the return. Races between tasks of one call, and everything
// outside the pool, are still reported. (Redundant, and harmless, once the runtime's own thread
// pool wrapper carries the same annotations.)
#include <dlfcn.h>
#include <pthreadpool.h>
#include <sanitizer/tsan_interface.h>

#include <cstdio>
#include <cstdlib>

namespace {

struct Wrapped {
  pthreadpool_task_1d_t function;
  void* context;
  // Two addresses TSan pairs acquire/release on: the caller releases `start`, tasks acquire it;
  // tasks release `end`, the caller acquires it. Tasks never acquire what other tasks released,
  // so two tasks of one call stay unordered (their races are still seen).
  char start, end;
};

void RunTask(void* w, size_t i) {
  Wrapped* x = static_cast<Wrapped*>(w);
  __tsan_acquire(&x->start);
  x->function(x->context, i);
  __tsan_release(&x->end);
}

using Parallelize1d = void (*)(pthreadpool_t, pthreadpool_task_1d_t, void*, size_t, uint32_t);

}  // namespace

extern "C" void pthreadpool_parallelize_1d(pthreadpool_t pool, pthreadpool_task_1d_t function, void* context,
                                           size_t range, uint32_t flags) {
  static const Parallelize1d real = reinterpret_cast<Parallelize1d>(dlsym(RTLD_NEXT, "pthreadpool_parallelize_1d"));
  if (real == nullptr) {
    std::fprintf(stderr, "pthreadpool_tsan: pthreadpool_parallelize_1d not found after this binary\n");
    std::abort();
  }
  Wrapped w{function, context, 0, 0};
  __tsan_release(&w.start);
  real(pool, RunTask, &w, range, flags);
  __tsan_acquire(&w.end);
}

// Fork-join parallelism for the layers: ParallelFor(n, fn) runs fn(0..n-1) on the calling
// thread and the pool's workers and returns when all are done. One pool per Translator.
//
// The workers come from pthreadpool (Debian's libpthreadpool). Its internal synchronisation is
// not instrumented in sanitizer builds, so ThreadSanitizer would not see that a task starts
// after the caller wrote its inputs and ends before the caller reads its outputs: the
// annotations below state exactly those two happens-before edges.
#pragma once

#include <pthreadpool.h>

#include <cstddef>

#include "mtlite/mtlite.hpp"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MTLITE_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define MTLITE_TSAN 1
#endif

#ifdef MTLITE_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace mtlite {
namespace detail {

class ThreadPool {
 public:
  ThreadPool() = default;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool() {
    if (pool_) pthreadpool_destroy(pool_);
  }

  // threads <= 1: no workers, ParallelFor runs inline.
  Status Init(int threads) {
    threads_ = threads < 1 ? 1 : threads;
    if (threads_ > 1) {
      pool_ = pthreadpool_create(size_t(threads_));
      if (!pool_) return Status(StatusCode::kResourceExhausted, "cannot create a thread pool");
    }
    return Status::Ok();
  }

  int threads() const { return threads_; }
  bool parallel() const { return pool_ != nullptr; }
  pthreadpool_t handle() const { return pool_; }  // for XNNPACK operators

  template <class F>
  void ParallelFor(int n, F&& fn) const {
    if (!pool_ || n <= 1) {
      for (int i = 0; i < n; ++i) fn(i);
      return;
    }
    struct Ctx {
      F* f;
    } ctx{&fn};
#ifdef MTLITE_TSAN
    __tsan_release(&ctx);
#endif
    pthreadpool_parallelize_1d(
        pool_,
        [](void* c, size_t i) {
#ifdef MTLITE_TSAN
          __tsan_acquire(c);
#endif
          (*static_cast<Ctx*>(c)->f)(int(i));
#ifdef MTLITE_TSAN
          __tsan_release(c);
#endif
        },
        &ctx, size_t(n), 0);
#ifdef MTLITE_TSAN
    __tsan_acquire(&ctx);
#endif
  }

 private:
  int threads_ = 1;
  pthreadpool_t pool_ = nullptr;
};

}  // namespace detail
}  // namespace mtlite

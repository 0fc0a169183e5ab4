// Fork-join parallelism for the layers: ParallelFor(n, fn) runs fn(i, thread) for i in [0, n) on
// the calling thread (thread 0) and the pool's workers (threads 1..), and returns when every task
// is done. One pool per Translator.
//
// Thread t owns tasks [t * n / threads, (t + 1) * n / threads): each thread runs its own range,
// then claims, one at a time, what is left of the others' (thread_pool.cc). The same split of a
// layer thus lands on the same thread step after step (its weights stay in that core's caches),
// a slower core gives its last tasks away, and the call waits for the *tasks*, not for the
// workers: a worker the OS has descheduled (the other core busy) costs nothing, the caller simply
// runs the tasks itself. Workers spin briefly for the next job (a decoder step issues
// dozens of small ones back to back), then sleep on a condition variable.
//
// Synchronisation is std::atomic and std::mutex only, so ThreadSanitizer sees every edge.
// MTLITE_NO_THREADS (the minimal build) compiles the workers out: everything runs inline.
#pragma once

#include <atomic>
#include <cstdint>

#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace detail {

class ThreadPool {
 public:
  static constexpr int kMaxThreads = 256;

  ThreadPool() = default;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool();

  // threads <= 1: no workers, ParallelFor runs inline.
  Status Init(int threads);

  int threads() const { return threads_; }
  bool parallel() const { return threads_ > 1; }

  template <class F>
  void ParallelFor(int n, F&& fn) const {
    if (threads_ <= 1 || n <= 1) {
      for (int i = 0; i < n; ++i) fn(i, 0);
      return;
    }
    Run(n, [](void* f, int i, int thread) { (*static_cast<F*>(f))(i, thread); }, &fn);
  }

 private:
  using TaskFn = void (*)(void* ctx, int task, int thread);
  void Run(int n, TaskFn fn, void* ctx) const;
  struct Shared;
  int threads_ = 1;
  Shared* shared_ = nullptr;  // workers and their job slot (thread_pool.cc)
};

}  // namespace detail
}  // namespace mtlite

// Fork-join parallelism for the layers: ParallelFor(n, fn) runs fn(i, thread) for i in [0, n) on
// the calling thread (thread 0) and the pool's workers (threads 1..), and returns when every task
// is done. One pool per Translator.
//
// Thread t owns tasks [t * n / threads, (t + 1) * n / threads): each thread runs its own range,
// then claims, one at a time, what is left of the others' (thread_pool.cc). The same split of a
// layer thus lands on the same thread step after step (its weights stay in that core's caches),
// a slower core gives its last tasks away, and the call waits for the *tasks*, not for the
// workers: a worker the OS has descheduled (the other core busy) holds up at most the one task it
// had claimed, and the other threads (the caller among them) run the rest of its range. Workers spin
// briefly for the next job (a decoder step issues dozens of small ones back to back), then sleep
// on a condition variable.
//
// Synchronisation is std::atomic and std::mutex only, so ThreadSanitizer sees every edge.
// MTLITE_NO_THREADS (the minimal build) compiles the workers out: everything runs inline.
#pragma once

#include <algorithm>
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

// A barrier for the tasks of one ParallelFor(threads) call that share work inside their tasks (a
// row-parallel decoder step's layers, split by output columns: decoder_step.cc). Each member
// spins (then yields, should the OS run it on a busy core) until all `members` have arrived.
// Every task must run on its own thread, which ParallelFor guarantees when there are as many tasks
// as threads: each thread claims its own task first, and no thread can take a second task while
// its first one waits here. Break() releases the waiting members and makes every later Wait()
// return false at once (a member that failed), so no member waits for one that has returned.
class SpinBarrier {
 public:
  void Reset(int members) {
    members_ = members;
    count_.store(0, std::memory_order_relaxed);
    broken_.store(false, std::memory_order_relaxed);
  }
  bool Wait();  // false: broken
  void Break() { broken_.store(true, std::memory_order_release); }
  int members() const { return members_; }

 private:
  int members_ = 1;
  std::atomic<int> count_{0};
  std::atomic<uint32_t> generation_{0};
  std::atomic<bool> broken_{false};
};

// Shares of a row-parallel call's rows (one task per thread, each all layers of its rows) in
// proportion to each thread's measured speed: rows per ns from the fork to the end of its task,
// averaged over earlier calls. Cores need not be equally fast (a big.LITTLE CPU; the vCPUs of a
// virtual machine, 1.5x apart at times on the 2-vCPU test machine) nor equally quick to wake,
// and a task, once started, cannot be shared: equal shares leave the faster thread waiting for
// the slower one at every join. The split never changes a result (a row's output does not
// depend on the other rows). Record() of distinct tasks may run concurrently; Split() after the
// join that ends them.
class RowBalancer {
 public:
  // Equal shares until measured.
  void Reset() {
    for (float& s : speed_) s = 0;
  }
  // bounds[0..tasks]: task i runs rows [bounds[i], bounds[i + 1]) of n; each task gets at least
  // one row when n >= tasks, and no task less than a quarter of the fastest one's share.
  void Split(int n, int tasks, int* bounds) const {
    float w[ThreadPool::kMaxThreads], top = 0, sum = 0;
    for (int i = 0; i < tasks; ++i) top = std::max(top, speed_[i]);
    for (int i = 0; i < tasks; ++i) sum += w[i] = top > 0 ? std::max(speed_[i], 0.25f * top) : 1.0f;
    float acc = 0;
    bounds[0] = 0;
    for (int i = 0; i < tasks; ++i) {
      acc += w[i];
      const int lo = std::min(bounds[i] + 1, n);             // this task's row
      const int hi = std::max(n - (tasks - 1 - i), lo);       // a row for each later task
      const int b = i + 1 == tasks ? n : int(float(n) * acc / sum + 0.5f);
      bounds[i + 1] = std::min(std::max(b, lo), hi);
    }
  }
  // Task `task` ran `rows` rows in `ns` from the fork on thread `thread` (a stolen task, thread
  // != task, says nothing about its owner and is not counted).
  void Record(int task, int thread, int rows, uint64_t ns) {
    if (task != thread || rows <= 0) return;
    const float rate = float(rows) / float(std::max<uint64_t>(ns, 1));
    speed_[task] = speed_[task] > 0 ? 0.75f * speed_[task] + 0.25f * rate : rate;
  }

 private:
  float speed_[ThreadPool::kMaxThreads] = {};
};

}  // namespace detail
}  // namespace mtlite

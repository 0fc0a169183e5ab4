#include "thread_pool.h"

#include <string>

#ifndef MTLITE_NO_THREADS
#include <condition_variable>
#include <mutex>
#include <new>
#include <thread>
#include <vector>
#endif

namespace mtlite {
namespace detail {

#ifdef MTLITE_NO_THREADS

struct ThreadPool::Shared {};
ThreadPool::~ThreadPool() = default;
Status ThreadPool::Init(int threads) {
  threads_ = 1;
  if (threads > 1)
    return Status(StatusCode::kUnsupported, "this build has no threads (minimal profile): num_threads must be 1");
  return Status::Ok();
}
void ThreadPool::Run(int n, TaskFn fn, void* ctx) const {
  for (int i = 0; i < n; ++i) fn(ctx, i, 0);
}

#else

namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || (defined(__arm__) && defined(__ARM_ARCH) && __ARM_ARCH >= 7)
  asm volatile("yield");
#endif
}

// Spin iterations a worker waits for the next job before it sleeps (tens of microseconds).
constexpr int kSpinIterations = 20000;

}  // namespace

// The job slot. `claim` packs (job generation << 32 | task count << 16 | next task index): a
// worker claims a task with a compare-exchange of the whole word, so a late worker can never
// claim a task of a job it did not read, nor run past the job's task count; fn/ctx are read after
// the claim word and are the job's own whenever the claim succeeds (a job's fields are only
// replaced once all its tasks have been claimed and finished).
struct ThreadPool::Shared {
  static constexpr int kMaxTasks = 0xffff;
  std::atomic<uint64_t> claim{0};
  std::atomic<uint32_t> generation{0};
  std::atomic<TaskFn> fn{nullptr};
  std::atomic<void*> ctx{nullptr};
  std::atomic<int> pending{0};  // tasks of the current job not finished yet
  std::atomic<int> sleepers{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::thread> workers;

  // Runs tasks of the posted job until none is left to claim.
  void Work(int thread) {
    uint64_t cur = claim.load(std::memory_order_acquire);
    for (;;) {
      const int count = int((cur >> 16) & 0xffff), i = int(cur & 0xffff);
      if (i >= count) return;
      TaskFn f = fn.load(std::memory_order_acquire);
      void* c = ctx.load(std::memory_order_acquire);
      if (!claim.compare_exchange_weak(cur, cur + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
      f(c, i, thread);
      pending.fetch_sub(1, std::memory_order_acq_rel);
      cur = claim.load(std::memory_order_acquire);
    }
  }

  void Loop(int thread) {
    uint32_t seen = 0;
    for (;;) {
      uint32_t gen = generation.load(std::memory_order_acquire);
      for (int spin = 0; gen == seen && spin < kSpinIterations && !stop.load(std::memory_order_relaxed); ++spin) {
        CpuRelax();
        gen = generation.load(std::memory_order_acquire);
      }
      if (gen == seen) {
        std::unique_lock<std::mutex> lock(mu);
        sleepers.fetch_add(1, std::memory_order_seq_cst);
        cv.wait(lock, [&] {
          return generation.load(std::memory_order_seq_cst) != seen || stop.load(std::memory_order_seq_cst);
        });
        sleepers.fetch_sub(1, std::memory_order_relaxed);
        gen = generation.load(std::memory_order_acquire);
      }
      if (stop.load(std::memory_order_acquire)) return;
      seen = gen;
      Work(thread);
    }
  }
};

ThreadPool::~ThreadPool() {
  if (!shared_) return;
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    shared_->stop.store(true, std::memory_order_seq_cst);
  }
  shared_->cv.notify_all();
  for (std::thread& t : shared_->workers) t.join();
  delete shared_;
}

Status ThreadPool::Init(int threads) {
  threads_ = threads < 1 ? 1 : threads > kMaxThreads ? kMaxThreads : threads;
  if (threads_ == 1) return Status::Ok();
  shared_ = new (std::nothrow) Shared();
  if (!shared_) return Status(StatusCode::kResourceExhausted, "cannot allocate the thread pool");
  for (int t = 1; t < threads_; ++t) {
    try {
      shared_->workers.emplace_back([s = shared_, t] { s->Loop(t); });
    } catch (...) {
      threads_ = t;  // run with the workers that started
      return Status(StatusCode::kResourceExhausted, "cannot start worker thread " + std::to_string(t));
    }
  }
  return Status::Ok();
}

void ThreadPool::Run(int n, TaskFn fn, void* ctx) const {
  Shared& s = *shared_;
  for (int base = 0; base < n; base += Shared::kMaxTasks) {
    const int count = n - base < Shared::kMaxTasks ? n - base : Shared::kMaxTasks;
    // More tasks than a claim word counts: run them as consecutive jobs of offset tasks.
    struct Offset {
      TaskFn fn;
      void* ctx;
      int base;
      static void Call(void* o, int i, int t) {
        const Offset& x = *static_cast<Offset*>(o);
        x.fn(x.ctx, x.base + i, t);
      }
    } off{fn, ctx, base};
    const bool whole = base == 0 && count == n;
    const uint32_t gen = s.generation.load(std::memory_order_relaxed) + 1;
    s.fn.store(whole ? fn : &Offset::Call, std::memory_order_relaxed);
    s.ctx.store(whole ? ctx : static_cast<void*>(&off), std::memory_order_relaxed);
    s.pending.store(count, std::memory_order_relaxed);
    s.claim.store(uint64_t(gen) << 32 | uint64_t(count) << 16, std::memory_order_release);
    s.generation.store(gen, std::memory_order_seq_cst);  // wakes the workers
    if (s.sleepers.load(std::memory_order_seq_cst) > 0) {
      { std::lock_guard<std::mutex> lock(s.mu); }
      s.cv.notify_all();
    }
    s.Work(0);
    while (s.pending.load(std::memory_order_acquire) > 0) CpuRelax();
  }
}

#endif

}  // namespace detail
}  // namespace mtlite

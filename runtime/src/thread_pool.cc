#include "thread_pool.h"

#include <string>

#ifndef MTLITE_NO_THREADS
#include <condition_variable>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <vector>
#endif

namespace mtlite {
namespace detail {

namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || (defined(__arm__) && defined(__ARM_ARCH) && __ARM_ARCH >= 7)
  asm volatile("yield");
#endif
}

// Spin iterations a worker waits for the next job before it sleeps, and a SpinBarrier member for
// the others before it yields: 20000 pause / yield hints, about half a millisecond on an x86-64
// core (pause takes tens of cycles or more), less on ARM, where yield is cheaper.
constexpr int kSpinIterations = 20000;

}  // namespace

bool SpinBarrier::Wait() {
  const uint32_t gen = generation_.load(std::memory_order_acquire);
  if (count_.fetch_add(1, std::memory_order_acq_rel) + 1 == members_) {
    count_.store(0, std::memory_order_relaxed);
    generation_.store(gen + 1, std::memory_order_release);  // publishes the reset count too
    return !broken_.load(std::memory_order_acquire);
  }
  for (int spin = 0; generation_.load(std::memory_order_acquire) == gen; ++spin) {
    if (broken_.load(std::memory_order_acquire)) return false;
#ifndef MTLITE_NO_THREADS
    if (spin >= kSpinIterations) {
      std::this_thread::yield();
      continue;
    }
#endif
    CpuRelax();
  }
  return !broken_.load(std::memory_order_acquire);
}

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

// The job slot. Thread t owns tasks [t * n / threads, (t + 1) * n / threads) of an n-task job
// (thread 0, the caller, the first range): every thread runs its own range from the front,
// then takes what is left of the others' ranges from their back. A layer split the same way
// step after step thus gives each thread the same output columns (their weights stay in its
// caches), and a thread that runs slower (a busy or a smaller core) simply loses its last tasks
// to the others.
//
// A range is one word, (job generation << 32 | end << 16 | next): owner and thieves claim with a
// compare-exchange of the whole word, so a late worker can never claim a task of a job it did
// not read, nor one another thread claimed; fn/ctx are read after the range word and are the
// job's own whenever the claim succeeds (a job's fields are only replaced once all its tasks
// have been claimed and finished). Each range has its own cache line.
struct ThreadPool::Shared {
  static constexpr int kMaxTasks = 0xffff;
  struct alignas(64) Range {
    std::atomic<uint64_t> word{0};
  };
  std::atomic<uint32_t> generation{0};
  std::atomic<TaskFn> fn{nullptr};
  std::atomic<void*> ctx{nullptr};
  std::atomic<int> pending{0};  // tasks of the current job not finished yet
  std::atomic<int> sleepers{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::thread> workers;
  std::unique_ptr<Range[]> ranges;  // one per thread
  int threads = 1;

  static uint64_t Word(uint32_t gen, int end, int next) {
    return uint64_t(gen) << 32 | uint64_t(end) << 16 | uint64_t(next);
  }

  // Claims a task of job `gen` from range r, its front when `own`, else its back; -1 if none.
  int Claim(uint32_t gen, int r, bool own, TaskFn* f, void** c) {
    std::atomic<uint64_t>& w = ranges[size_t(r)].word;
    uint64_t cur = w.load(std::memory_order_acquire);
    for (;;) {
      const int end = int((cur >> 16) & 0xffff), next = int(cur & 0xffff);
      if (uint32_t(cur >> 32) != gen || next >= end) return -1;
      *f = fn.load(std::memory_order_acquire);
      *c = ctx.load(std::memory_order_acquire);
      const uint64_t want = own ? Word(gen, end, next + 1) : Word(gen, end - 1, next);
      if (w.compare_exchange_weak(cur, want, std::memory_order_acq_rel, std::memory_order_acquire))
        return own ? next : end - 1;
    }
  }

  // Runs tasks of job `gen`: this thread's range, then the others' (the next thread's first).
  void Work(int thread, uint32_t gen) {
    TaskFn f = nullptr;
    void* c = nullptr;
    for (int k = 0; k < threads; ++k) {
      const int r = (thread + k) % threads;
      for (int i; (i = Claim(gen, r, k == 0, &f, &c)) >= 0;) {
        f(c, i, thread);
        pending.fetch_sub(1, std::memory_order_acq_rel);
      }
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
      Work(thread, gen);
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
  shared_->ranges.reset(new (std::nothrow) Shared::Range[size_t(threads_)]);
  if (!shared_->ranges) {
    delete shared_;
    shared_ = nullptr;
    threads_ = 1;
    return Status(StatusCode::kResourceExhausted, "cannot allocate the thread pool");
  }
  shared_->threads = threads_;
  for (int t = 1; t < threads_; ++t) {
    try {
      shared_->workers.emplace_back([s = shared_, t] { s->Loop(t); });
    } catch (...) {
      // Init fails (the translator is not created); the workers that started stay in `workers`
      // for the destructor to stop and join (no job has been posted).
      threads_ = t;
      shared_->threads = t;
      return Status(StatusCode::kResourceExhausted, "cannot start worker thread " + std::to_string(t));
    }
  }
  return Status::Ok();
}

void ThreadPool::Run(int n, TaskFn fn, void* ctx) const {
  Shared& s = *shared_;
  for (int base = 0; base < n; base += Shared::kMaxTasks) {
    const int count = n - base < Shared::kMaxTasks ? n - base : Shared::kMaxTasks;
    // More tasks than a range word counts (16 bits): run them as consecutive jobs of offset tasks.
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
    const int T = s.threads;
    for (int t = 0; t < T; ++t)
      s.ranges[size_t(t)].word.store(Shared::Word(gen, int(int64_t(count) * (t + 1) / T), int(int64_t(count) * t / T)),
                                     std::memory_order_release);
    s.generation.store(gen, std::memory_order_seq_cst);  // wakes the workers
    if (s.sleepers.load(std::memory_order_seq_cst) > 0) {
      { std::lock_guard<std::mutex> lock(s.mu); }
      s.cv.notify_all();
    }
    s.Work(0, gen);
    while (s.pending.load(std::memory_order_acquire) > 0) CpuRelax();
  }
}

#endif

}  // namespace detail
}  // namespace mtlite

// The fork-join pool of the layers (runtime/src/thread_pool.h): every task runs exactly once, on
// a valid thread, for any task count (including counts past one job's limit, split into
// consecutive jobs) and thread count; jobs run back to back; and a thread stuck in a task never
// holds up the tasks of its own range: the other threads take them (and are seen to).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "thread_pool.h"

namespace mtlite {
namespace detail {
namespace {

TEST(ThreadPool, EveryTaskRunsOnceOnAValidThread) {
  for (int threads : {1, 2, 3, 4}) {
    ThreadPool pool;
    ASSERT_TRUE(pool.Init(threads).ok());
    EXPECT_EQ(pool.threads(), threads);
    for (int n : {0, 1, 2, 3, 5, 7, 8, 64, 1001, 0xffff, 0xffff + 1, 2 * 0xffff + 3}) {
      std::vector<std::atomic<int>> runs(static_cast<size_t>(n));  // zero-initialized
      std::atomic<int> bad_thread{0};
      pool.ParallelFor(n, [&](int i, int thread) {
        runs[size_t(i)].fetch_add(1, std::memory_order_relaxed);
        if (thread < 0 || thread >= threads) bad_thread.fetch_add(1, std::memory_order_relaxed);
      });
      int wrong = 0;
      for (int i = 0; i < n; ++i) wrong += runs[size_t(i)].load() != 1;
      EXPECT_EQ(wrong, 0) << threads << " threads, " << n << " tasks";
      EXPECT_EQ(bad_thread.load(), 0) << threads << " threads, " << n << " tasks";
    }
  }
}

TEST(ThreadPool, ManyJobsBackToBack) {
  ThreadPool pool;
  ASSERT_TRUE(pool.Init(3).ok());
  std::vector<int> out(16);
  long long total = 0;
  for (int job = 0; job < 20000; ++job) {
    const int n = 1 + job % 16;
    pool.ParallelFor(n, [&](int i, int) { out[size_t(i)] = job + i; });  // each slot written by one task
    for (int i = 0; i < n; ++i) total += out[size_t(i)] - job;
  }
  long long want = 0;
  for (int job = 0; job < 20000; ++job)
    for (int i = 0; i < 1 + job % 16; ++i) want += i;
  EXPECT_EQ(total, want);
}

// Inside a task: waits until `done` reaches `others` (the job's other tasks), for 10 s at most
// (then counts a timeout).
void WaitForOthers(const std::atomic<int>& done, int others, std::atomic<int>* timeouts) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (done.load() < others) {
    if (std::chrono::steady_clock::now() > deadline) {
      timeouts->fetch_add(1);
      return;
    }
    std::this_thread::yield();
  }
}

// The first task a worker runs blocks until every other task of the job is done: the job can only
// finish if the other threads take the rest of that worker's range. (If the caller ran every task
// itself, no worker task blocks and the job finishes all the same.) A pool that left a range to
// its owner would wait here until the 10 s timeout and fail.
TEST(ThreadPool, AStuckThreadsTasksAreTakenByTheOthers) {
  for (int threads : {2, 3}) {
    ThreadPool pool;
    ASSERT_TRUE(pool.Init(threads).ok());
    for (int round = 0; round < 20; ++round) {
      const int n = 24;
      std::atomic<int> done{0}, blocked{0}, timeouts{0};
      pool.ParallelFor(n, [&](int, int thread) {
        if (thread > 0 && blocked.exchange(1) == 0) {
          WaitForOthers(done, n - 1, &timeouts);
        }
        done.fetch_add(1);
      });
      EXPECT_EQ(done.load(), n);
      EXPECT_EQ(timeouts.load(), 0) << threads << " threads, round " << round;
    }
  }
}

// The first task to start blocks its thread until every other task of the job is done. That
// task is the front of its thread's own range (a thread claims from its own range first, and
// steals only once that range is empty), so the rest of that range can only run if the other
// threads steal it. Which thread ran each task is recorded: the blocked thread ran one task, and
// the other 5 of its range ran elsewhere. A pool whose threads only ran their own ranges would
// let the wait time out (10 s) and then run the range on its owner, which this counts.
TEST(ThreadPool, TheOthersStealABlockedThreadsRange) {
  for (int threads : {2, 3, 4}) {
    ThreadPool pool;
    ASSERT_TRUE(pool.Init(threads).ok());
    for (int round = 0; round < 10; ++round) {
      const int per_thread = 6, n = per_thread * threads;  // thread t owns [6t, 6t + 6)
      std::vector<std::atomic<int>> ran_on(static_cast<size_t>(n));
      for (auto& r : ran_on) r.store(-1);
      std::atomic<int> done{0}, timeouts{0}, blocked{-1};
      pool.ParallelFor(n, [&](int i, int thread) {
        ran_on[size_t(i)].store(thread);
        int none = -1;
        if (blocked.compare_exchange_strong(none, thread)) {
          WaitForOthers(done, n - 1, &timeouts);
        }
        done.fetch_add(1);
      });
      ASSERT_EQ(done.load(), n);
      EXPECT_EQ(timeouts.load(), 0) << threads << " threads, round " << round;
      const int b = blocked.load();
      ASSERT_GE(b, 0);
      int on_blocked = 0, stolen = 0;  // tasks the blocked thread ran; tasks of its range others ran
      for (int i = 0; i < n; ++i) {
        const int t = ran_on[size_t(i)].load();
        ASSERT_GE(t, 0) << i;
        on_blocked += t == b;
        stolen += i / per_thread == b && t != b;
      }
      EXPECT_EQ(on_blocked, 1) << threads << " threads, round " << round << ", thread " << b << " blocked";
      EXPECT_EQ(stolen, per_thread - 1) << threads << " threads, round " << round << ", thread " << b << " blocked";
    }
  }
}

std::vector<int> Bounds(const RowBalancer& b, int n, int tasks) {
  std::vector<int> v(size_t(tasks) + 1, -1);
  b.Split(n, tasks, v.data());
  return v;
}

TEST(RowBalancer, EqualSharesUntilMeasured) {
  RowBalancer b;
  EXPECT_EQ(Bounds(b, 10, 3), (std::vector<int>{0, 3, 7, 10}));
  EXPECT_EQ(Bounds(b, 16, 2), (std::vector<int>{0, 8, 16}));
}

TEST(RowBalancer, SharesFollowTheMeasuredSpeeds) {
  RowBalancer b;
  b.Record(0, 0, 10, 1000);  // 0.01 rows / ns
  b.Record(1, 1, 10, 2000);  // half as fast
  EXPECT_EQ(Bounds(b, 30, 2), (std::vector<int>{0, 20, 30}));
  // a stolen task (run by thread 0, owned by 1) says nothing about thread 1
  b.Record(1, 0, 10, 1000);
  EXPECT_EQ(Bounds(b, 30, 2), (std::vector<int>{0, 20, 30}));
  // later calls move the shares gradually (a quarter of the way per call)
  b.Record(1, 1, 10, 1000);  // 0.75 * 0.005 + 0.25 * 0.01 = 0.00625
  EXPECT_EQ(Bounds(b, 26, 2), (std::vector<int>{0, 16, 26}));
  b.Reset();
  EXPECT_EQ(Bounds(b, 30, 2), (std::vector<int>{0, 15, 30}));
}

TEST(RowBalancer, NoThreadStarves) {
  RowBalancer b;
  b.Record(0, 0, 1000, 1000);
  b.Record(1, 1, 1, 1000000);  // 1000x slower: still a quarter of the fastest share
  EXPECT_EQ(Bounds(b, 10, 2), (std::vector<int>{0, 8, 10}));
  b.Record(2, 2, 1, 1000000);
  EXPECT_EQ(Bounds(b, 3, 3), (std::vector<int>{0, 1, 2, 3}));  // one row each, at least
}

TEST(RowBalancer, BoundsAreOrderedAndCoverEveryRow) {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    RowBalancer b;
    const int tasks = 1 + int(rng() % 8), n = int(rng() % 200);
    for (int t = 0; t < tasks; ++t)
      if (rng() % 4) b.Record(t, t, 1 + int(rng() % 100), 1 + rng() % 100000);
    const std::vector<int> v = Bounds(b, n, tasks);
    ASSERT_EQ(v.front(), 0);
    ASSERT_EQ(v.back(), n);
    for (int t = 0; t < tasks; ++t) {
      ASSERT_LE(v[size_t(t)], v[size_t(t) + 1]) << round;
      if (n >= tasks) {
        ASSERT_LT(v[size_t(t)], v[size_t(t) + 1]) << round;  // every task a row
      }
    }
  }
}

// The tasks of one ParallelFor(threads) as a team: in every round each member writes its slot,
// waits, and must then see every member's slot of that round (and none of the next): a barrier
// that let a member through early, or reused a count before all had left, fails this.
TEST(SpinBarrier, EveryMemberSeesTheWholeRound) {
  for (int threads : {2, 3, 4}) {
    ThreadPool pool;
    ASSERT_TRUE(pool.Init(threads).ok());
    SpinBarrier barrier;
    // more threads than this machine may have cores: members wait by yielding, slower
    const int kRounds = threads <= 2 ? 2000 : 200;
    std::vector<std::atomic<int>> slot(static_cast<size_t>(threads));
    std::atomic<int> errors{0};
    for (int job = 0; job < 3; ++job) {
      barrier.Reset(threads);
      for (auto& v : slot) v.store(-1);
      pool.ParallelFor(threads, [&](int task, int) {
        for (int r = 0; r < kRounds; ++r) {
          slot[size_t(task)].store(r, std::memory_order_relaxed);
          if (!barrier.Wait()) errors.fetch_add(1);
          for (int o = 0; o < threads; ++o)
            if (slot[size_t(o)].load(std::memory_order_relaxed) != r) errors.fetch_add(1);
          if (!barrier.Wait()) errors.fetch_add(1);  // nobody writes round r + 1 before all read r
        }
      });
      EXPECT_EQ(errors.load(), 0) << threads << " threads, job " << job;
    }
  }
}

// A member that fails breaks the barrier: the others, waiting or arriving later, return false
// instead of waiting for it, and the job ends.
TEST(SpinBarrier, BreakReleasesTheOthers) {
  ThreadPool pool;
  ASSERT_TRUE(pool.Init(3).ok());
  SpinBarrier barrier;
  barrier.Reset(3);
  std::atomic<int> released{0};
  pool.ParallelFor(3, [&](int task, int) {
    if (task == 2) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the others wait by now
      barrier.Break();
      return;
    }
    if (!barrier.Wait()) released.fetch_add(1);
    if (!barrier.Wait()) released.fetch_add(1);  // a broken barrier stays broken
  });
  EXPECT_EQ(released.load(), 4);
  barrier.Reset(1);
  EXPECT_TRUE(barrier.Wait());  // Reset makes it usable again; one member never waits
}

}  // namespace
}  // namespace detail
}  // namespace mtlite

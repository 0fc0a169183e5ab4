// The C API under allocation failure: a C caller cannot catch a C++ exception, so every entry
// point returns a status (MTLITE_RESOURCE_EXHAUSTED for memory) instead of letting std::bad_alloc
// out. This program replaces the global operator new; armed, it throws std::bad_alloc at the n-th
// allocation from then on, and each call is repeated for n = 0, 1, ... until it succeeds: every
// allocation the call makes fails once.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "model_test_helpers.h"
#include "mtlite/mtlite.h"

namespace {

std::atomic<long> g_countdown{-1};  // allocations left before the failing one; -1: disarmed
std::atomic<long> g_failed{0};

void* Allocate(std::size_t n, std::size_t align) {
  if (g_countdown.load(std::memory_order_relaxed) >= 0 && g_countdown.fetch_sub(1) == 0) {
    g_failed.fetch_add(1);
    throw std::bad_alloc();
  }
  if (n == 0) n = 1;
  void* p = align > alignof(std::max_align_t) ? std::aligned_alloc(align, (n + align - 1) / align * align)
                                              : std::malloc(n);
  if (!p) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(std::size_t n) { return Allocate(n, 0); }
void* operator new[](std::size_t n) { return Allocate(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) { return Allocate(n, std::size_t(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return Allocate(n, std::size_t(a)); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return Allocate(n, 0);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return Allocate(n, 0);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  try {
    return Allocate(n, std::size_t(a));
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  try {
    return Allocate(n, std::size_t(a));
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

namespace mtlite {
namespace {

// Runs `call` with the n-th allocation failing, for n = 0, 1, ... until it returns MTLITE_OK
// (after `undo` of a success that is not the last); every failure must be a status with a
// message. Returns the number of runs that failed.
template <class Call, class Undo>
int FailEachAllocation(const char* what, Call call, Undo undo) {
  int failures = 0;
  for (long n = 0;; ++n) {
    g_failed.store(0);
    g_countdown.store(n);
    mtlite_status st = MTLITE_INTERNAL;
    bool threw = false;
    try {
      st = call();
    } catch (...) {
      threw = true;
    }
    g_countdown.store(-1);
    EXPECT_FALSE(threw) << what << ": an exception left the C API at allocation " << n;
    if (threw) return failures;
    if (g_failed.load() == 0) {  // fewer than n + 1 allocations: the call ran unharmed
      EXPECT_EQ(st, MTLITE_OK) << what << ": " << mtlite_last_error();
      return failures;
    }
    if (st == MTLITE_OK) {
      undo();  // the failure was absorbed (an optional allocation): fine
      continue;
    }
    ++failures;
    EXPECT_EQ(st, MTLITE_RESOURCE_EXHAUSTED) << what << ", allocation " << n << ": " << mtlite_last_error();
    EXPECT_GT(std::strlen(mtlite_last_error()), 0u) << what;
    if (n > 100000) {
      ADD_FAILURE() << what << ": no end";
      return failures;
    }
  }
}

TEST(CApiAllocationFailure, EveryEntryPointReturnsAStatus) {
  const std::string path = testing::DemoModel("int8");
  mtlite_model* model = nullptr;
  int failures = FailEachAllocation(
      "mtlite_model_load", [&] { return mtlite_model_load(path.c_str(), 1, &model); },
      [&] { mtlite_model_free(model), model = nullptr; });
  EXPECT_GT(failures, 0);
  ASSERT_NE(model, nullptr);

  const converter::AlignedBytes bytes = testing::ReadAligned(path);
  mtlite_model* from_buffer = nullptr;
  failures = FailEachAllocation(
      "mtlite_model_from_buffer", [&] { return mtlite_model_from_buffer(bytes.data(), bytes.size(), 0, &from_buffer); },
      [&] { mtlite_model_free(from_buffer), from_buffer = nullptr; });
  EXPECT_GT(failures, 0);
  mtlite_model_free(from_buffer);

  for (int threads : {1, 2}) {
    mtlite_limits lim;
    mtlite_limits_default(&lim);
    lim.max_batch = 2;
    lim.num_threads = threads;
    mtlite_translator* tr = nullptr;
    failures = FailEachAllocation(
        "mtlite_translator_create", [&] { return mtlite_translator_create(model, &lim, &tr); },
        [&] { mtlite_translator_free(tr), tr = nullptr; });
    EXPECT_GT(failures, 0);
    ASSERT_NE(tr, nullptr);

    size_t need = 0;
    FailEachAllocation("mtlite_arena_bytes", [&] { return mtlite_arena_bytes(model, &lim, &need); }, [] {});
    ASSERT_GT(need, 0u);
    std::vector<unsigned char> storage(need + 64);
    void* arena = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
    mtlite_translator* placed = nullptr;
    FailEachAllocation(
        "mtlite_translator_create_in_arena",
        [&] { return mtlite_translator_create_in_arena(model, &lim, arena, need, &placed); },
        [&] { mtlite_translator_free(placed), placed = nullptr; });
    mtlite_translator_free(placed);

    // A translate call allocates nothing; a rejected one allocates its error message.
    const char* texts[] = {"A man is walking.", "Two dogs play."};
    mtlite_options opt;
    mtlite_options_default(&opt);
    FailEachAllocation("mtlite_translate", [&] { return mtlite_translate(tr, texts, nullptr, 2, &opt); }, [] {});
    EXPECT_EQ(mtlite_result_count(tr, 1), 1);
    opt.beam_size = lim.max_beam + 1;
    g_failed.store(0);
    g_countdown.store(0);
    mtlite_status st = MTLITE_OK;
    EXPECT_NO_THROW(st = mtlite_translate(tr, texts, nullptr, 2, &opt));
    g_countdown.store(-1);
    EXPECT_EQ(st, g_failed.load() ? MTLITE_RESOURCE_EXHAUSTED : MTLITE_INVALID_ARGUMENT) << mtlite_last_error();
    mtlite_translator_free(tr);
  }
  mtlite_model_free(model);
}

}  // namespace
}  // namespace mtlite

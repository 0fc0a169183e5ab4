// Runs the tests registered through tests/wasm/gtest/gtest.h: every test, or those whose
// "Suite.Name" contains the first argument. Prints each failure with its file, line and scoped
// traces, then "N passed, N failed, N skipped"; exit code 1 if any test failed or none ran.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace testing {
namespace internal {
namespace {

struct TestEntry {
  const char* suite;
  const char* name;
  void (*fn)();
};

std::vector<TestEntry>& Registry() {
  static std::vector<TestEntry> tests;
  return tests;
}

struct Current {
  bool failed = false, skipped = false;
  std::vector<std::string> traces;
};
Current g_current;

}  // namespace

bool RegisterTest(const char* suite, const char* name, void (*fn)()) {
  Registry().push_back({suite, name, fn});
  return true;
}

void AssertHelper::operator=(const Message& m) const {
  if (outcome_ == Outcome::kSkip) {
    g_current.skipped = true;
    std::printf("  skipped: %s\n", m.str().c_str());
    return;
  }
  g_current.failed = true;
  std::printf("%s:%d: Failure\n%s\n", file_, line_, summary_.c_str());
  const std::string msg = m.str();
  if (!msg.empty()) std::printf("%s\n", msg.c_str());
  for (auto it = g_current.traces.rbegin(); it != g_current.traces.rend(); ++it)
    std::printf("  trace: %s\n", it->c_str());
}

ScopedTrace::ScopedTrace(const char* file, int line, const std::string& msg) {
  g_current.traces.push_back(std::string(file) + ":" + std::to_string(line) + ": " + msg);
}
ScopedTrace::~ScopedTrace() { g_current.traces.pop_back(); }

}  // namespace internal
}  // namespace testing

int main(int argc, char** argv) {
  using namespace testing::internal;
  const char* filter = argc > 1 ? argv[1] : "";
  int passed = 0, failed = 0, skipped = 0;
  for (const TestEntry& t : Registry()) {
    const std::string full = std::string(t.suite) + "." + t.name;
    if (full.find(filter) == std::string::npos) continue;
    g_current = Current();
    std::printf("[ RUN      ] %s\n", full.c_str());
    std::fflush(stdout);
    t.fn();
    if (g_current.failed) {
      ++failed;
      std::printf("[  FAILED  ] %s\n", full.c_str());
    } else if (g_current.skipped) {
      ++skipped;
      std::printf("[  SKIPPED ] %s\n", full.c_str());
    } else {
      ++passed;
      std::printf("[       OK ] %s\n", full.c_str());
    }
  }
  std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed > 0 || passed == 0 ? 1 : 0;
}

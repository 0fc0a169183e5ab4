// A small stand-in for GoogleTest, for test programs built where GoogleTest is not available
// (WebAssembly: tests/wasm/, cmake/wasm.cmake). It covers what the kernel tests of tests/unit use:
// TEST, {EXPECT,ASSERT}_{TRUE,FALSE,EQ,NE,LT,LE,GT,GE,NEAR}, EXPECT_STR{EQ,NE}, SCOPED_TRACE,
// GTEST_SKIP and messages streamed into any of them. ASSERT_* return from the test function, as in
// GoogleTest. gtest_main.cc runs the tests and prints "N passed, N failed, N skipped".
#pragma once

#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <type_traits>

namespace testing {

class Message {
 public:
  template <class T>
  Message& operator<<(const T& v) {
    if constexpr (std::is_null_pointer_v<T>) {
      os_ << "nullptr";
    } else if constexpr (std::is_pointer_v<T> && !std::is_same_v<T, const char*> && !std::is_same_v<T, char*>) {
      os_ << reinterpret_cast<const void*>(v);
    } else if constexpr (std::is_integral_v<T> && sizeof(T) == 1 && !std::is_same_v<T, bool>) {
      os_ << int(v);
    } else {
      os_ << v;
    }
    return *this;
  }
  std::string str() const { return os_.str(); }

 private:
  std::ostringstream os_;
};

namespace internal {

enum class Outcome { kNonFatal, kFatal, kSkip };

bool RegisterTest(const char* suite, const char* name, void (*fn)());

// Records a failure (or a skip) with the streamed message when assigned one.
class AssertHelper {
 public:
  AssertHelper(Outcome outcome, const char* file, int line, std::string summary)
      : outcome_(outcome), file_(file), line_(line), summary_(std::move(summary)) {}
  void operator=(const Message& m) const;

 private:
  Outcome outcome_;
  const char* file_;
  int line_;
  std::string summary_;
};

class ScopedTrace {
 public:
  ScopedTrace(const char* file, int line, const std::string& msg);
  ~ScopedTrace();
};

struct Result {
  bool ok;
  std::string message;
  explicit operator bool() const { return ok; }
};

template <class A, class B, class Op>
Result Compare(const char* ea, const char* eb, const A& a, const B& b, const char* op, Op f) {
  if (f(a, b)) return {true, {}};
  Message m;
  m << "expected " << ea << " " << op << " " << eb << ", with " << ea << " = " << a << " and " << eb << " = " << b;
  return {false, m.str()};
}

inline Result Near(const char* ea, const char* eb, double a, double b, double tol) {
  if (std::fabs(a - b) <= tol) return {true, {}};
  char buf[160];
  std::snprintf(buf, sizeof buf, " differ by %.9g > %.9g (%.9g vs %.9g)", std::fabs(a - b), tol, a, b);
  return {false, std::string(ea) + " and " + eb + buf};
}

inline Result StrEq(const char* ea, const char* eb, const char* a, const char* b, bool want_equal) {
  const bool equal = (a == nullptr || b == nullptr) ? a == b : std::strcmp(a, b) == 0;
  if (equal == want_equal) return {true, {}};
  return {false, std::string("expected ") + ea + (want_equal ? " == " : " != ") + eb + ", with \"" +
                     (a ? a : "(null)") + "\" and \"" + (b ? b : "(null)") + "\""};
}

}  // namespace internal
}  // namespace testing

#define MTLITE_GT_CAT2_(a, b) a##b
#define MTLITE_GT_CAT_(a, b) MTLITE_GT_CAT2_(a, b)

#define TEST(suite, name)                                                                          \
  static void suite##_##name##_Test();                                                             \
  [[maybe_unused]] static const bool suite##_##name##_registered =                                 \
      ::testing::internal::RegisterTest(#suite, #name, &suite##_##name##_Test);                    \
  static void suite##_##name##_Test()

#define MTLITE_GT_REPORT_(outcome, summary) \
  ::testing::internal::AssertHelper(::testing::internal::Outcome::outcome, __FILE__, __LINE__, summary) = \
      ::testing::Message()
#define MTLITE_GT_IF_(result, on_fail, outcome) \
  if (const ::testing::internal::Result gt_result_ = (result))   \
    ;                                                             \
  else                                                            \
    on_fail MTLITE_GT_REPORT_(outcome, gt_result_.message)

#define MTLITE_GT_BOOL_(c, want, on_fail, outcome) \
  MTLITE_GT_IF_((::testing::internal::Result{bool(c) == want, std::string("expected ") + #c + " to be " #want}), \
                on_fail, outcome)
#define MTLITE_GT_CMP_(a, b, op, on_fail, outcome)                                                          \
  MTLITE_GT_IF_(::testing::internal::Compare(#a, #b, (a), (b), #op,                                        \
                                             [](const auto& x_, const auto& y_) { return x_ op y_; }), \
                on_fail, outcome)

#define EXPECT_TRUE(c) MTLITE_GT_BOOL_(c, true, , kNonFatal)
#define EXPECT_FALSE(c) MTLITE_GT_BOOL_(c, false, , kNonFatal)
#define ASSERT_TRUE(c) MTLITE_GT_BOOL_(c, true, return, kFatal)
#define ASSERT_FALSE(c) MTLITE_GT_BOOL_(c, false, return, kFatal)
#define EXPECT_EQ(a, b) MTLITE_GT_CMP_(a, b, ==, , kNonFatal)
#define EXPECT_NE(a, b) MTLITE_GT_CMP_(a, b, !=, , kNonFatal)
#define EXPECT_LT(a, b) MTLITE_GT_CMP_(a, b, <, , kNonFatal)
#define EXPECT_LE(a, b) MTLITE_GT_CMP_(a, b, <=, , kNonFatal)
#define EXPECT_GT(a, b) MTLITE_GT_CMP_(a, b, >, , kNonFatal)
#define EXPECT_GE(a, b) MTLITE_GT_CMP_(a, b, >=, , kNonFatal)
#define ASSERT_EQ(a, b) MTLITE_GT_CMP_(a, b, ==, return, kFatal)
#define ASSERT_NE(a, b) MTLITE_GT_CMP_(a, b, !=, return, kFatal)
#define ASSERT_LT(a, b) MTLITE_GT_CMP_(a, b, <, return, kFatal)
#define ASSERT_LE(a, b) MTLITE_GT_CMP_(a, b, <=, return, kFatal)
#define ASSERT_GT(a, b) MTLITE_GT_CMP_(a, b, >, return, kFatal)
#define ASSERT_GE(a, b) MTLITE_GT_CMP_(a, b, >=, return, kFatal)
#define EXPECT_NEAR(a, b, tol) MTLITE_GT_IF_(::testing::internal::Near(#a, #b, (a), (b), (tol)), , kNonFatal)
#define ASSERT_NEAR(a, b, tol) MTLITE_GT_IF_(::testing::internal::Near(#a, #b, (a), (b), (tol)), return, kFatal)
#define EXPECT_STREQ(a, b) MTLITE_GT_IF_(::testing::internal::StrEq(#a, #b, (a), (b), true), , kNonFatal)
#define EXPECT_STRNE(a, b) MTLITE_GT_IF_(::testing::internal::StrEq(#a, #b, (a), (b), false), , kNonFatal)
#define ADD_FAILURE() MTLITE_GT_REPORT_(kNonFatal, "failure")
#define GTEST_SKIP() return MTLITE_GT_REPORT_(kSkip, "skipped")
#define SCOPED_TRACE(msg) \
  ::testing::internal::ScopedTrace MTLITE_GT_CAT_(gt_trace_, __LINE__)(__FILE__, __LINE__, (::testing::Message() << (msg)).str())

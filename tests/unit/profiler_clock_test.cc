// The profiler's clock: the tick counter (kernels/ticks.h), its conversion to ns at the end of
// a profiled call, and the steady-clock fallback. No model needed: these also run in the ARM
// cross builds (the aarch64 counter is cntvct_el0, armhf has none).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "profiler.h"
#include "ticks.h"

namespace mtlite {
namespace detail {
namespace {

using kernels::SteadyNs;

// A profiler bound to its own records.
struct Bound {
  static constexpr int kLayers = 2;
  std::vector<ProfileEntry> entries = std::vector<ProfileEntry>(size_t(Op::kNumOps) * (kLayers + 1));
  std::vector<ProfileEvent> events = std::vector<ProfileEvent>(64);
  Profiler p;
  explicit Bound(Profiler::Clock clock) : p(clock) { p.Bind(entries.data(), kLayers, events.data(), events.size()); }
  const ProfileEntry& Entry(Op op, int layer = -1) const { return entries[size_t(op) * (kLayers + 1) + layer + 1]; }
};

// Waits (busy) until the steady clock has advanced by ns; returns the time it measured.
uint64_t BusyNs(uint64_t ns) {
  const uint64_t t0 = SteadyNs();
  uint64_t t = t0;
  while (t - t0 < ns) t = SteadyNs();
  return t - t0;
}

uint64_t Duration(const ProfileEvent& e) { return e.end_ns - e.start_ns; }

// Allowed difference between a span and the wait measured inside it: 3 % (the scale's error is
// far smaller) plus the span's own clock reads; under qemu (ARM cross builds) code translated on
// first use adds tens of us to the first pass.
#if defined(MTLITE_EMULATED_TESTS)
constexpr double kSlackNs = 100000;
#else
constexpr double kSlackNs = 1000;
#endif
double Tolerance(double want) { return 0.03 * want + kSlackNs; }

TEST(ProfilerClock, SteadyOverrideFromEnvironment) {
  const char* old = std::getenv("MTLITE_PROFILE_CLOCK");
  const std::string saved = old ? old : "";
  ASSERT_EQ(setenv("MTLITE_PROFILE_CLOCK", "steady", 1), 0);
  EXPECT_FALSE(kernels::TicksUsable());
  ASSERT_EQ(setenv("MTLITE_PROFILE_CLOCK", "ticks", 1), 0);  // any other value: the default
  const bool usable = kernels::TicksUsable();
  if (old) {
    setenv("MTLITE_PROFILE_CLOCK", saved.c_str(), 1);
  } else {
    unsetenv("MTLITE_PROFILE_CLOCK");
  }
#if defined(__aarch64__)
  EXPECT_TRUE(usable);
#elif defined(__x86_64__) || defined(__i386__)
  // Linux derives the nonstop_tsc flag from the same CPUID bit (0x80000007 EDX[8]).
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  bool nonstop = false;
  while (std::getline(cpuinfo, line))
    if (line.rfind("flags", 0) == 0) {
      nonstop = (line + " ").find(" nonstop_tsc ") != std::string::npos;
      break;
    }
  if (nonstop) {
    EXPECT_TRUE(usable);
  }
  std::printf("[ NOTE     ] invariant TSC: %s (cpuinfo nonstop_tsc: %s)\n", usable ? "yes" : "no",
              nonstop ? "yes" : "no");
#else
  EXPECT_FALSE(usable);  // no counter: ReadTicks() is the steady clock
#endif
}

TEST(ProfilerClock, ProcessChoiceFollowsEnvironment) {
  // Decided once per process: under MTLITE_PROFILE_CLOCK=steady (ctest runs the profiler tests
  // that way too) the steady clock, else the counter where usable.
  const char* env = std::getenv("MTLITE_PROFILE_CLOCK");
  const bool steady = env && std::strcmp(env, "steady") == 0;
  EXPECT_EQ(Profiler::ProcessClock(),
            !steady && kernels::TicksUsable() ? Profiler::Clock::kTicks : Profiler::Clock::kSteady);
  EXPECT_EQ(Profiler().clock(), Profiler::ProcessClock());
  EXPECT_EQ(Profiler(Profiler::Clock::kSteady).clock(), Profiler::Clock::kSteady);
}

TEST(ProfilerClock, TicksAdvance) {
  const uint64_t a = kernels::ReadTicks();
  BusyNs(200000);
  const uint64_t b = kernels::ReadTicks();
  EXPECT_GT(b, a);
}

// Fake clock values: every recorded time is converted with scale = steady ns / ticks of the call.
TEST(ProfilerClock, ConvertsTicksToNsAtEnd) {
  Bound b(Profiler::Clock::kTicks);
  const uint64_t s0 = 1000000000, k0 = 777;  // steady ns, ticks at Begin
  b.p.Begin(2, s0, k0);
  const long root = b.p.Open(Op::kTranslate, -1, -1, k0 + 10);
  const long child = b.p.Open(Op::kEncoderLayer, 1, -1, k0 + 100);
  b.p.Close(child, Op::kEncoderLayer, 1, k0 + 100, k0 + 1100, 64, 32, 1, 2, 3);
  b.p.Add(Op::kSearchScan, 250, 3);
  b.p.Part(Op::kLinearPart, -1, 1, k0 + 200, k0 + 701, 1, 8, 16);
  b.p.Part(Op::kLinearPart, -1, 1, k0 - 5, k0 + 3, 1, 8, 16);  // a lagging core's counter
  b.p.Close(root, Op::kTranslate, -1, k0 + 10, k0 + 4000, 0, 0, 0, 0, 0);
  b.p.End(1, 0, s0 + 10000, k0 + 4000);  // 10000 ns over 4000 ticks: 2.5 ns per tick
  const ProfileView& v = b.p.view();
  EXPECT_EQ(v.wall_ns, 10000u);
  ASSERT_EQ(v.num_events, 4u);
  EXPECT_EQ(v.events[0].start_ns, 25u);
  EXPECT_EQ(v.events[0].end_ns, 10000u);
  EXPECT_EQ(v.events[1].start_ns, 250u);
  EXPECT_EQ(v.events[1].end_ns, 2750u);
  EXPECT_EQ(v.events[1].depth, 1);
  EXPECT_EQ(v.events[1].bytes, 64u);
  EXPECT_EQ(v.events[2].lane, 1);
  EXPECT_EQ(v.events[2].start_ns, 500u);
  EXPECT_EQ(v.events[2].end_ns, 1753u);  // 1752.5 rounds up
  EXPECT_EQ(v.events[3].start_ns, 0u);   // before the call's start: clamped, never wrapped
  EXPECT_EQ(v.events[3].end_ns, 8u);
  EXPECT_EQ(b.Entry(Op::kTranslate).total_ns, 9975u);
  EXPECT_EQ(b.Entry(Op::kEncoderLayer, 1).total_ns, 2500u);
  EXPECT_EQ(b.Entry(Op::kEncoderLayer, 1).calls, 1u);
  EXPECT_EQ(b.Entry(Op::kEncoderLayer, 1).macs, 32u);
  EXPECT_EQ(b.Entry(Op::kSearchScan).total_ns, 625u);
  EXPECT_EQ(b.Entry(Op::kSearchScan).calls, 3u);
  EXPECT_EQ(b.Entry(Op::kDecoderStep).total_ns, 0u);

  // The next call starts from clean records and its own scale.
  b.p.Begin(1, s0 + 50000, k0 + 9000);
  const long again = b.p.Open(Op::kTranslate, -1, -1, k0 + 9000);
  b.p.Close(again, Op::kTranslate, -1, k0 + 9000, k0 + 9400, 0, 0, 0, 0, 0);
  b.p.End(1, 0, s0 + 50100, k0 + 9400);  // 0.25 ns per tick
  EXPECT_EQ(b.p.view().num_events, 1u);
  EXPECT_EQ(b.p.view().events[0].end_ns, 100u);
  EXPECT_EQ(b.Entry(Op::kTranslate).total_ns, 100u);
  EXPECT_EQ(b.Entry(Op::kEncoderLayer, 1).total_ns, 0u);
}

TEST(ProfilerClock, NoTickElapsedGivesZeroTimes) {
  Bound b(Profiler::Clock::kTicks);
  b.p.Begin(1, 5000, 42);
  const long root = b.p.Open(Op::kTranslate, -1, -1, 42);
  b.p.Close(root, Op::kTranslate, -1, 42, 42, 0, 0, 0, 0, 0);
  b.p.End(1, 0, 5300, 42);  // a counter coarser than the call
  EXPECT_EQ(b.p.view().wall_ns, 300u);
  EXPECT_EQ(b.p.view().events[0].start_ns, 0u);
  EXPECT_EQ(b.p.view().events[0].end_ns, 0u);
  EXPECT_EQ(b.Entry(Op::kTranslate).total_ns, 0u);
  EXPECT_EQ(b.Entry(Op::kTranslate).calls, 1u);
}

TEST(ProfilerClock, SteadyModeRecordsNs) {
  Bound b(Profiler::Clock::kSteady);
  uint64_t s = 0, t = 0;
  b.p.ReadClocks(&s, &t);
  EXPECT_EQ(s, t);  // one reading of the steady clock
  b.p.Begin(1, 1000, 1000);
  const long root = b.p.Open(Op::kTranslate, -1, -1, 1100);
  b.p.Close(root, Op::kTranslate, -1, 1100, 1733, 0, 0, 0, 0, 0);
  b.p.End(1, 0, 2000, 2000);
  EXPECT_EQ(b.p.view().wall_ns, 1000u);
  EXPECT_EQ(b.p.view().events[0].start_ns, 100u);
  EXPECT_EQ(b.p.view().events[0].end_ns, 733u);
  EXPECT_EQ(b.Entry(Op::kTranslate).total_ns, 633u);
}

// Real clocks: a span around a ~2 ms wait reports the wait measured by the steady clock inside
// it (within Tolerance()), with either clock; the structure is the
// same whichever clock records it. The waits are compared with what was measured, not with
// their targets: a preemption of this thread lengthens both. Returns whether those times agree
// and the children cover their parent and the root the call (98 % / 97 %, up to kSlackNs): a
// preemption, or under qemu the first translation of code, in the few instructions between two
// clock readings makes that false, so callers retry it (RealSpansCover).
bool CheckRealSpans(Profiler::Clock clock, std::vector<ProfileEvent>* out) {
  Bound b(clock);
  uint64_t s = 0, t = 0;
  b.p.ReadClocks(&s, &t);
  b.p.Begin(1, s, t);
  uint64_t waited[3] = {0, 0, 0};
  {
    Span root(&b.p, Op::kTranslate);
    {
      Span encoder(&b.p, Op::kEncoder);
      for (int l = 0; l < 2; ++l) {
        Span layer(&b.p, Op::kEncoderLayer, l);
        waited[l] = BusyNs(l == 0 ? 2000000 : 1000000);
      }
    }
    Span search(&b.p, Op::kSearch);
    const uint64_t t0 = b.p.Now();
    waited[2] = BusyNs(300000);
    b.p.Add(Op::kSearchScan, b.p.Now() - t0, 1);
  }
  b.p.ReadClocks(&s, &t);
  b.p.End(1, 1, s, t);
  const ProfileView& v = b.p.view();
  EXPECT_EQ(v.num_events, 5u);
  if (v.num_events != 5u) return true;  // reported above; no coverage to judge
  const ProfileEvent* e = v.events;
  // translate, encoder, encoder.layer 0, encoder.layer 1, search
  const char* ops[] = {"translate", "encoder", "encoder.layer", "encoder.layer", "search"};
  const int depths[] = {0, 1, 2, 2, 1};
  for (int i = 0; i < 5; ++i) {
    EXPECT_STREQ(e[i].op, ops[i]);
    EXPECT_EQ(e[i].depth, depths[i]) << i;
    EXPECT_EQ(e[i].lane, 0);
    EXPECT_LE(e[i].start_ns, e[i].end_ns);
  }
  // The spans' times against the waits measured inside them: retried like the coverage, since
  // a preemption between a span's open and its wait's first clock reading lengthens the span only.
  auto near = [](double got, double want) { return std::fabs(got - want) <= Tolerance(want); };
  bool timed = true;
  for (int l = 0; l < 2; ++l) {
    const double want = double(waited[l]);
    timed = timed && near(double(Duration(e[2 + l])), want) &&
            near(double(b.Entry(Op::kEncoderLayer, l).total_ns), want);
  }
  timed = timed && near(double(b.Entry(Op::kSearchScan).total_ns), double(waited[2]));
  // Nesting in time; the children account for their parents (up to the span overhead).
  EXPECT_GE(e[2].start_ns, e[1].start_ns);
  EXPECT_LE(e[2].end_ns, e[3].start_ns);
  EXPECT_LE(e[3].end_ns, e[1].end_ns);
  EXPECT_LE(e[4].end_ns, e[0].end_ns);
  const uint64_t children = Duration(e[2]) + Duration(e[3]);
  EXPECT_LE(children, Duration(e[1]));
  EXPECT_LE(Duration(e[0]), v.wall_ns + 1);
  // aggregate = trace, up to rounding (an event's ends are converted apart, a total at once)
  EXPECT_NEAR(double(b.Entry(Op::kTranslate).total_ns), double(Duration(e[0])), 1.0);
  EXPECT_NEAR(double(b.Entry(Op::kEncoder).total_ns), double(Duration(e[1])), 1.0);
  out->assign(e, e + v.num_events);
  return timed && double(children) >= 0.98 * double(Duration(e[1])) - kSlackNs &&
         double(Duration(e[0])) >= 0.97 * double(v.wall_ns) - kSlackNs;
}

// CheckRealSpans until its times and coverage hold once (at most 3 runs); the structure checks
// hold every run.
bool RealSpansCover(Profiler::Clock clock, std::vector<ProfileEvent>* out) {
  for (int attempt = 0; attempt < 3; ++attempt)
    if (CheckRealSpans(clock, out)) return true;
  return false;
}

TEST(ProfilerClock, TickSpansAgreeWithSteadyClock) {
  if (!kernels::TicksUsable())
    GTEST_SKIP() << "no usable tick counter here (or MTLITE_PROFILE_CLOCK=steady): the steady test covers this";
  std::vector<ProfileEvent> events;
  EXPECT_TRUE(RealSpansCover(Profiler::Clock::kTicks, &events))
      << "a span off its measured wait by more than Tolerance(), children < 98 % of their parent or the root "
         "< 97 % of the call, in 3 runs";
}

TEST(ProfilerClock, SteadySpansGiveSameStructure) {
  std::vector<ProfileEvent> steady, ticks;
  EXPECT_TRUE(RealSpansCover(Profiler::Clock::kSteady, &steady))
      << "a span off its measured wait by more than Tolerance(), children < 98 % of their parent or the root "
         "< 97 % of the call, in 3 runs";
  if (!kernels::TicksUsable()) return;  // compared with the ticks run where there is one
  EXPECT_TRUE(RealSpansCover(Profiler::Clock::kTicks, &ticks));
  ASSERT_EQ(steady.size(), ticks.size());
  for (size_t i = 0; i < steady.size(); ++i) {
    EXPECT_STREQ(steady[i].op, ticks[i].op);
    EXPECT_EQ(steady[i].depth, ticks[i].depth);
    EXPECT_EQ(steady[i].layer, ticks[i].layer);
    EXPECT_EQ(steady[i].lane, ticks[i].lane);
  }
}

}  // namespace
}  // namespace detail
}  // namespace mtlite

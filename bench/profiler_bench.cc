// Cost of the profiler's records: one span nested in an open one (open + close: two counter
// reads, an event claimed, an aggregate updated), with the tick counter and with the steady
// clock, and the two clock reads alone. Profiling is on only when a call asks for it; these
// numbers times the spans of a call (~28 per demo-model decoder step) are its overhead.
#include <benchmark/benchmark.h>

#include <vector>

#include "profiler.h"
#include "ticks.h"

namespace mtlite {
namespace detail {
namespace {

void SpanNested(benchmark::State& state, Profiler::Clock clock) {
  if (clock == Profiler::Clock::kTicks && !kernels::TicksUsable()) {
    state.SkipWithError("no usable tick counter on this CPU (or MTLITE_PROFILE_CLOCK=steady)");
    return;
  }
  const int layers = 2;
  std::vector<ProfileEntry> entries(size_t(Op::kNumOps) * (layers + 1));
  std::vector<ProfileEvent> events(1 << 16);
  Profiler p(clock);
  p.Bind(entries.data(), layers, events.data(), events.size());
  uint64_t steady_ns = 0, ticks = 0;
  p.ReadClocks(&steady_ns, &ticks);
  p.Begin(1, steady_ns, ticks);
  {
    Span parent(&p, Op::kDecoderStep);
    size_t spans = 0;
    for (auto _ : state) {
      if (++spans == events.size() - 2) {  // keep claiming real event slots, never drop
        state.PauseTiming();
        p.ReadClocks(&steady_ns, &ticks);
        p.Begin(1, steady_ns, ticks);
        spans = 0;
        state.ResumeTiming();
      }
      Span s(&p, Op::kDecoderLayer, 0);
      s.Work(1, 1, 1, 1, 1);
    }
  }
  p.ReadClocks(&steady_ns, &ticks);
  p.End(1, 0, steady_ns, ticks);
}
void BM_SpanNestedTicks(benchmark::State& state) { SpanNested(state, Profiler::Clock::kTicks); }
void BM_SpanNestedSteady(benchmark::State& state) { SpanNested(state, Profiler::Clock::kSteady); }
BENCHMARK(BM_SpanNestedTicks);
BENCHMARK(BM_SpanNestedSteady);

void BM_ReadTicks(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(kernels::ReadTicks());
}
void BM_SteadyNs(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(kernels::SteadyNs());
}
BENCHMARK(BM_ReadTicks);
BENCHMARK(BM_SteadyNs);

}  // namespace
}  // namespace detail
}  // namespace mtlite

BENCHMARK_MAIN();

// Latency profiling: every phase and op of a translation is a named span with its weight (or
// K/V cache) bytes and MACs. Off unless a call asks for it (TranslateOptions::profile): then the
// layers see a null Profiler* and a span costs one pointer test.
//
// On: a span reads a cheap counter at open and close (kernels/ticks.h: the TSC on x86 with an
// invariant TSC, cntvct_el0 on aarch64; elsewhere, or with MTLITE_PROFILE_CLOCK=steady, the
// steady clock in ns), chosen once per process. The records hold raw counter values during the
// call; End() converts them to ns once, with the scale measured over the call itself (steady
// ns / ticks between Begin() and End()), so every reported time is in ns of the steady clock:
// off by the scale's error (the two clock reads at each end, < 1e-4 of a call of >= 1 ms) and by
// the counter's resolution (< 1 ns for the TSC, one tick of the aarch64 generic timer: 1 to
// ~50 ns). The call's wall time is the steady-clock difference itself. Two records, both in
// arena buffers planned from the limits (TranslatorLimits::profiling), so profiling allocates
// nothing:
//  * aggregates per (op, layer) of the calling thread's spans: calls, time, bytes, MACs —
//    always complete;
//  * a trace of events (start, end, lane, depth, shape): lane 0 is the calling thread, lanes
//    1.. the pool's workers (their parts of a parallel linear layer or attention). The event
//    buffer holds TranslatorLimits::profile_events events (0: sized for one full-length call);
//    when it is full, later events are dropped and counted, the aggregates stay exact.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "checked_size.h"
#include "mtlite/mtlite.hpp"
#include "ticks.h"

namespace mtlite {
namespace detail {

enum class Op : uint8_t {
  kTranslate = 0,
  kTokenize,
  kEncoder,
  kEncoderEmbed,
  kEncoderLayer,
  kEncSelfAttnQKV,
  kEncSelfAttnCore,
  kEncSelfAttnOut,
  kEncSelfAttnNorm,
  kEncFfn1,
  kEncFfn2,
  kEncFfnNorm,
  kEncoderJoin,       // row-parallel: lane 0 waits for the other threads' rows
  kCrossKV,
  kDecoderStep,
  kDecoderEmbed,
  kDecoderLayer,
  kDecSelfAttnQKV,
  kDecSelfAttnCore,
  kDecSelfAttnOut,
  kDecSelfAttnNorm,
  kCrossAttnQ,
  kCrossAttnCore,
  kCrossAttnOut,
  kCrossAttnNorm,
  kDecFfn1,
  kDecFfn2,
  kDecFfnNorm,
  kDecoderJoin,       // row-parallel: lane 0 waits for the other threads' rows
  kOutputProjection,
  kSearch,
  kSearchLogSoftmax,  // aggregate only (interleaved per row inside kSearch)
  kSearchScan,        // aggregate only: candidate scan (beam) / argmax (greedy)
  kFinish,
  kLinearPart,        // trace only: a worker's share of a linear layer
  kAttentionPart,     // trace only: a worker's share of an attention
  kNumOps
};

const char* OpName(Op op);
// Report component of an op: "tokenizer", "encoder", "cross_kv", "decoder.self_attn",
// "decoder.cross_attn", "decoder.ffn", "decoder.other", "output_projection", "search", "finish".
const char* OpComponent(Op op);
// The op this one nests in on lane 0 (kNumOps for the root).
Op OpParent(Op op);

class Profiler {
 public:
  // The spans' counter: kTicks = kernels::ReadTicks(), kSteady = steady-clock ns.
  enum class Clock : uint8_t { kTicks, kSteady };
  // The process's choice, made on first use: kTicks where kernels::TicksUsable() (which
  // honours MTLITE_PROFILE_CLOCK=steady), else kSteady.
  static Clock ProcessClock();

  explicit Profiler(Clock clock = ProcessClock()) : ticks_(clock == Clock::kTicks) {}
  Clock clock() const { return ticks_ ? Clock::kTicks : Clock::kSteady; }

  // entries: [kNumOps][layers + 1]; events: capacity.
  void Bind(ProfileEntry* entries, int layers, ProfileEvent* events, size_t capacity);
  // A profiled call starts: clears the records. steady_ns and ticks: both clocks read at the
  // same moment (ReadClocks).
  void Begin(int threads, uint64_t steady_ns, uint64_t ticks);
  // The call ends (both clocks read again): converts every recorded time from counter units
  // to ns (scale = steady ns / ticks since Begin) and fills the view.
  void End(int sentences, int steps, uint64_t steady_ns, uint64_t ticks);
  // Both clocks at one moment: the counter is read around the steady clock (best of a few
  // tries, in case the thread was interrupted between the reads). In kSteady mode both are the
  // same steady-clock reading.
  void ReadClocks(uint64_t* steady_ns, uint64_t* ticks) const;

  // The counter (ticks or ns, see clock()): what spans, Add() and Part() take.
  uint64_t Now() const { return ticks_ ? kernels::ReadTicks() : kernels::SteadyNs(); }

  // Lane 0 spans (aggregated and traced); returns the event slot or -1.
  long Open(Op op, int layer, int step, uint64_t t0);
  void Close(long slot, Op op, int layer, uint64_t t0, uint64_t t1, uint64_t bytes, uint64_t macs, int m, int n,
             int k);
  // Aggregate-only time in counter units (search sub-parts).
  void Add(Op op, uint64_t ticks, uint64_t calls);
  // A lane-0 span of `op` from t0 until now, recorded when it ends: the wait of a row-parallel
  // call's lane 0 (it finished its rows at t0) for the other threads.
  void Join(Op op, uint64_t t0) { Close(Open(op, -1, step_, t0), op, -1, t0, Now(), 0, 0, 0, 0, 0); }
  // A worker lane's span (trace only).
  void Part(Op op, int layer, int lane, uint64_t t0, uint64_t t1, int m, int n, int k);

  const ProfileView& view() const { return view_; }
  int current_step() const { return step_; }
  void set_step(int t) { step_ = t; }

 private:
  ProfileEvent* Claim();
  // Counter value relative to the call's start (0 for a reading before it: a worker's core
  // whose counter lags the calling thread's by a few ticks).
  uint64_t Since(uint64_t t) const { return t > start_ ? t - start_ : 0; }
  bool ticks_;
  ProfileEntry* entries_ = nullptr;
  int layers_ = 0;
  ProfileEvent* events_ = nullptr;
  size_t capacity_ = 0;
  std::atomic<size_t> next_event_{0};
  std::atomic<size_t> dropped_{0};
  int depth_ = 0;
  int step_ = -1;
  uint64_t start_ = 0;         // counter at Begin()
  uint64_t start_steady_ = 0;  // steady ns at Begin()
  ProfileView view_;
};

// RAII span on lane 0. With a null profiler it does nothing but test the pointer.
class Span {
 public:
  Span(Profiler* p, Op op, int layer = -1) : p_(p) {
    if (p_) {
      op_ = op;
      layer_ = layer;
      t0_ = p_->Now();
      slot_ = p_->Open(op, layer, p_->current_step(), t0_);
    }
  }
  ~Span() {
    if (p_) p_->Close(slot_, op_, layer_, t0_, p_->Now(), bytes_, macs_, m_, n_, k_);
  }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  // Work of the span: bytes streamed (weights, or K/V cache for attention), MACs, shape.
  void Work(uint64_t bytes, uint64_t macs, int m, int n, int k) {
    bytes_ += bytes;
    macs_ += macs;
    m_ = m;
    n_ = n;
    k_ = k;
  }

 private:
  Profiler* p_;
  Op op_ = Op::kTranslate;
  int layer_ = -1;
  long slot_ = -1;
  uint64_t t0_ = 0, bytes_ = 0, macs_ = 0;
  int m_ = 0, n_ = 0, k_ = 0;
};

// Events a call can produce, for sizing the buffer: every lane-0 span of a full-length call
// (max target tokens steps) plus worker parts.
CheckedSize ProfileEventsFor(int encoder_layers, int decoder_layers, int max_target_tokens, int threads);

}  // namespace detail
}  // namespace mtlite

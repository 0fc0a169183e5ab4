#include "profiler.h"

#include <algorithm>

namespace mtlite {
namespace detail {

namespace {

struct OpInfo {
  const char* name;
  const char* component;
  Op parent;
};

constexpr Op kRoot = Op::kNumOps;

const OpInfo kOps[int(Op::kNumOps)] = {
    {"translate", "total", kRoot},
    {"tokenize", "tokenizer", Op::kTranslate},
    {"encoder", "encoder", Op::kTranslate},
    {"encoder.embed", "encoder", Op::kEncoder},
    {"encoder.layer", "encoder", Op::kEncoder},
    {"encoder.self_attn.qkv", "encoder", Op::kEncoderLayer},
    {"encoder.self_attn.attention", "encoder", Op::kEncoderLayer},
    {"encoder.self_attn.out", "encoder", Op::kEncoderLayer},
    {"encoder.self_attn.norm", "encoder", Op::kEncoderLayer},
    {"encoder.ffn.fc1", "encoder", Op::kEncoderLayer},
    {"encoder.ffn.fc2", "encoder", Op::kEncoderLayer},
    {"encoder.ffn.norm", "encoder", Op::kEncoderLayer},
    {"encoder.join", "encoder", Op::kEncoder},
    {"cross_kv", "cross_kv", Op::kTranslate},
    {"decoder.step", "decoder.other", Op::kTranslate},
    {"decoder.embed", "decoder.other", Op::kDecoderStep},
    {"decoder.layer", "decoder.other", Op::kDecoderStep},
    {"decoder.self_attn.qkv", "decoder.self_attn", Op::kDecoderLayer},
    {"decoder.self_attn.attention", "decoder.self_attn", Op::kDecoderLayer},
    {"decoder.self_attn.out", "decoder.self_attn", Op::kDecoderLayer},
    {"decoder.self_attn.norm", "decoder.self_attn", Op::kDecoderLayer},
    {"decoder.cross_attn.q", "decoder.cross_attn", Op::kDecoderLayer},
    {"decoder.cross_attn.attention", "decoder.cross_attn", Op::kDecoderLayer},
    {"decoder.cross_attn.out", "decoder.cross_attn", Op::kDecoderLayer},
    {"decoder.cross_attn.norm", "decoder.cross_attn", Op::kDecoderLayer},
    {"decoder.ffn.fc1", "decoder.ffn", Op::kDecoderLayer},
    {"decoder.ffn.fc2", "decoder.ffn", Op::kDecoderLayer},
    {"decoder.ffn.norm", "decoder.ffn", Op::kDecoderLayer},
    {"decoder.join", "decoder.other", Op::kDecoderStep},
    {"output_projection", "output_projection", Op::kDecoderStep},
    {"search", "search", Op::kTranslate},
    {"search.log_softmax", "search", Op::kSearch},
    {"search.candidate_scan", "search", Op::kSearch},
    {"finish", "finish", Op::kTranslate},
    {"linear.part", "worker", kRoot},
    {"attention.part", "worker", kRoot},
};

}  // namespace

const char* OpName(Op op) { return op < Op::kNumOps ? kOps[int(op)].name : "?"; }
const char* OpComponent(Op op) { return op < Op::kNumOps ? kOps[int(op)].component : "?"; }
Op OpParent(Op op) { return op < Op::kNumOps ? kOps[int(op)].parent : kRoot; }

CheckedSize ProfileEventsFor(int encoder_layers, int decoder_layers, int max_target_tokens, int threads) {
  const CheckedSize parts = threads > 1 ? 2 * threads : 0;  // worker shares per parallel op
  // lane 0: encoder layer = 1 + 3 qkv + attention + out + norm + fc1 + fc2 + norm (+ FFN chunks),
  // + the encoder's joins (row-parallel: after lane 0's rows, and before them when a worker took them)
  const CheckedSize encoder = 5 + CheckedSize(encoder_layers) * (12 + 10 * parts) + 2 + 4 * parts;
  // decoder step: step + embed + output projection + search + 2 joins, per layer 1 + 16 spans (+ parts)
  const CheckedSize step = 6 + parts + CheckedSize(decoder_layers) * (17 + 12 * parts);
  return 8 + encoder + CheckedSize(max_target_tokens) * step;
}

Profiler::Clock Profiler::ProcessClock() {
  static const Clock clock = kernels::TicksUsable() ? Clock::kTicks : Clock::kSteady;
  return clock;
}

void Profiler::ReadClocks(uint64_t* steady_ns, uint64_t* ticks) const {
  if (!ticks_) {
    *steady_ns = *ticks = kernels::SteadyNs();
    return;
  }
  // The pair whose two counter reads lie closest together: the steady reading between them is
  // then matched to their midpoint within half that gap.
  uint64_t best_gap = UINT64_MAX;
  for (int i = 0; i < 3; ++i) {
    const uint64_t a = kernels::ReadTicks();
    const uint64_t s = kernels::SteadyNs();
    const uint64_t b = kernels::ReadTicks();
    const uint64_t gap = b > a ? b - a : 0;
    if (gap < best_gap) {
      best_gap = gap;
      *steady_ns = s;
      *ticks = a + gap / 2;
    }
  }
}

void Profiler::Bind(ProfileEntry* entries, int layers, ProfileEvent* events, size_t capacity) {
  entries_ = entries;
  layers_ = layers;
  events_ = events;
  capacity_ = capacity;
}

void Profiler::Begin(int threads, uint64_t steady_ns, uint64_t ticks) {
  const int per_op = layers_ + 1;
  for (int o = 0; o < int(Op::kNumOps); ++o)
    for (int l = 0; l < per_op; ++l) {
      ProfileEntry& e = entries_[o * per_op + l];
      e = ProfileEntry();
      e.op = kOps[o].name;
      e.component = kOps[o].component;
      e.parent = kOps[o].parent == kRoot ? "" : kOps[int(kOps[o].parent)].name;
      e.layer = l - 1;
    }
  next_event_.store(0, std::memory_order_relaxed);
  dropped_.store(0, std::memory_order_relaxed);
  depth_ = 0;
  step_ = -1;
  start_ = ticks;
  start_steady_ = steady_ns;
  view_ = ProfileView();
  view_.threads = threads;
}

void Profiler::End(int sentences, int steps, uint64_t steady_ns, uint64_t ticks) {
  view_.entries = entries_;
  view_.num_entries = size_t(int(Op::kNumOps) * (layers_ + 1));
  view_.events = events_;
  const size_t n = next_event_.load(std::memory_order_acquire);
  view_.num_events = n < capacity_ ? n : capacity_;
  view_.dropped_events = dropped_.load(std::memory_order_relaxed);
  view_.wall_ns = steady_ns > start_steady_ ? steady_ns - start_steady_ : 0;
  if (ticks_) {
    // Counter units -> ns of the steady clock over this call. No tick elapsed (a coarse
    // counter, a call shorter than one tick): every recorded difference is 0 as well.
    const uint64_t d_ticks = Since(ticks);
    const double scale = d_ticks > 0 ? double(view_.wall_ns) / double(d_ticks) : 0.0;
    const auto ns = [scale](uint64_t t) { return uint64_t(double(t) * scale + 0.5); };
    for (size_t i = 0; i < view_.num_entries; ++i) entries_[i].total_ns = ns(entries_[i].total_ns);
    for (size_t i = 0; i < view_.num_events; ++i) {
      events_[i].start_ns = ns(events_[i].start_ns);
      events_[i].end_ns = ns(events_[i].end_ns);
    }
  }
  view_.sentences = sentences;
  view_.steps = steps;
}

ProfileEvent* Profiler::Claim() {
  const size_t i = next_event_.fetch_add(1, std::memory_order_relaxed);
  if (i >= capacity_) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  return events_ + i;
}

long Profiler::Open(Op op, int layer, int step, uint64_t t0) {
  const int depth = depth_++;
  ProfileEvent* e = Claim();
  if (!e) return -1;
  *e = ProfileEvent();
  e->op = OpName(op);
  e->layer = layer;
  e->lane = 0;
  e->depth = depth;
  e->step = step;
  e->start_ns = Since(t0);  // counter units until End()
  e->end_ns = e->start_ns;
  return long(e - events_);
}

void Profiler::Close(long slot, Op op, int layer, uint64_t t0, uint64_t t1, uint64_t bytes, uint64_t macs, int m,
                     int n, int k) {
  --depth_;
  const int l = layer < 0 ? 0 : layer + 1 <= layers_ ? layer + 1 : layers_;
  ProfileEntry& a = entries_[int(op) * (layers_ + 1) + l];
  ++a.calls;
  a.total_ns += t1 > t0 ? t1 - t0 : 0;  // counter units until End()
  a.bytes += bytes;
  a.macs += macs;
  if (slot < 0) return;
  ProfileEvent& e = events_[slot];
  e.end_ns = std::max(Since(t1), e.start_ns);
  e.bytes = bytes;
  e.macs = macs;
  e.m = m;
  e.n = n;
  e.k = k;
}

void Profiler::Add(Op op, uint64_t ticks, uint64_t calls) {
  ProfileEntry& a = entries_[int(op) * (layers_ + 1)];
  a.calls += calls;
  a.total_ns += ticks;
}

void Profiler::Part(Op op, int layer, int lane, uint64_t t0, uint64_t t1, int m, int n, int k) {
  ProfileEvent* e = Claim();
  if (!e) return;
  *e = ProfileEvent();
  e->op = OpName(op);
  e->layer = layer;
  e->lane = lane;
  e->depth = 0;
  e->step = step_;
  e->start_ns = Since(t0);
  e->end_ns = std::max(Since(t1), e->start_ns);
  e->m = m;
  e->n = n;
  e->k = k;
}

}  // namespace detail
}  // namespace mtlite

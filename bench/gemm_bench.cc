// int8 GEMM / GEMV benchmarks: every kernel table (reference, avx2, avx-vnni, avx512-vnni, avx512-amx /
// neon, neon-dotprod) against XNNPACK's qs8 (static scales) and f32 fully-connected operators on
// the same shapes, single thread; and the machine's streaming read bandwidth, the bound of a
// GEMV whose weights come from DRAM.
//
//   gemm/<table>/m/n/k/{hot,cold}     gemm_s8_blocked only (activations already quantised)
//   gather/<table>/m/n/k/{hot,cold}   gemm_s8_blocked_gather over a shortlist's blocks: the first
//                                     1/16 (frequent words: one run) and every 4th block after
//   runs/<table>/m/n/k/{hot,cold}     the same blocks as one gemm_s8_blocked call per run of
//                                     consecutive blocks (what the run-time shortlist did before
//                                     it called the gather entry)
//   linear/<table>/m/n/k/{hot,cold}   quantize_rows_s8 + gemm_s8_blocked (f32 in, f32 out: what
//                                     the runtime does per linear layer)
//   xnn_qs8/m/n/k/{hot,cold}          xnn fully_connected_nc_qs8 (int8 in, int8 out)
//   xnn_f32/m/n/k/{hot,cold}          xnn fully_connected_nc_f32
//   bandwidth/read/<MiB>              a plain streaming read (the widest loads the CPU has)
//   stream/<table>/m/n/k/cold         the GEMV (m = 1, 4) from DRAM and the streaming read over as
//                                     many bytes, alternated: ratio = GEMV GB/s / read GB/s
// Shapes: the demo model (d 256: n 1024 / 8001 at k 256) and OPUS-MT base (d 512: n 512 / 2048 /
// 58101 at k 512, n 512 at k 2048; n 58101 is the output projection, 30 MB of int8), m = 1
// (greedy decoding), 4 (beam 4), 8, 16 (batch), 64 (encoder).
// "cold" cycles through enough weight copies (512 MiB, far beyond L3: the read bandwidth of this
// machine levels off from 128 MiB) that every call streams its weights from DRAM; "hot" reuses
// one copy (L2/L3 resident). Counters: GOPS = 2*m*n*k/s; GBps = weight bytes/s.
// Before a table is timed on a shape it is checked against the reference on that shape (a few
// rows; tests/unit/kernel_tester.h): a wrong kernel reports an error instead of a time.
// Suggested: --benchmark_repetitions=3 --benchmark_report_aggregates_only=true (medians).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kernel_tester.h"
#include "kernels.h"
#include "measure.h"

// XNNPACK is looked up at run time (dlopen of Debian's libXNNPACK.so.0), so this file builds
// and runs with or without MTLITE_USE_XNNPACK; without the library the XNNPACK benchmarks are
// simply not registered (and a line says so).
#if __has_include(<xnnpack.h>) && __has_include(<dlfcn.h>)
#include <dlfcn.h>
#include <xnnpack.h>
#define MTLITE_BENCH_XNNPACK 1
#endif

namespace {

using mtlite::kernels::Act;
using mtlite::kernels::KernelTable;

constexpr size_t kColdBytes = size_t(512) << 20;
constexpr int kMaxM = 64;

struct Shape {
  int m, n, k;
};

int Copies(size_t bytes, bool cold) {
  if (!cold) return 1;
  const size_t c = (kColdBytes + bytes - 1) / bytes;
  return int(c < 2 ? 2 : c > 8192 ? 8192 : c);
}

std::mt19937& Rng() {
  static std::mt19937 rng(1234);
  return rng;
}

void SetCounters(benchmark::State& st, const Shape& s) {
  st.counters["GOPS"] =
      benchmark::Counter(2.0 * s.m * s.n * s.k * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  st.counters["GBps"] = benchmark::Counter(double(mtlite::kernels::BlockedN8K4Bytes(s.n, s.k)) * 1e-9,
                                           benchmark::Counter::kIsIterationInvariantRate);
}

// Weights (copies of one packed matrix), scales and kMaxM rows of activations for our kernels,
// shared by every table and m of one (n, k, cold): the benchmarks are registered in that order,
// so only the latest set is kept.
struct OurData {
  int n = 0, k = 0, kp = 0;
  bool cold = false;
  // Copies() copies of the packed weights, each at a 64-byte aligned address as in a model file
  // (every tensor sits at a 64-byte aligned offset): a misaligned copy splits cache lines and
  // costs a quarter of the bandwidth here.
  std::unique_ptr<int8_t, decltype(&std::free)> w{nullptr, &std::free};
  size_t bytes = 0, stride = 0;
  int copies = 0;
  std::vector<float> w_scales, bias, x, a_scales, c;
  std::vector<int8_t> a;
  std::vector<int32_t> shortlist;  // the first 1/16 of the blocks, then every 4th

  static const OurData& Get(const Shape& s, bool cold) {
    static std::unique_ptr<OurData> d;
    if (!d || d->n != s.n || d->k != s.k || d->cold != cold) {
      d.reset();  // free the previous copies first
      d.reset(new OurData(s.n, s.k, cold));
    }
    return *d;
  }
  const int8_t* Weights(size_t i) const { return w.get() + (i % size_t(copies)) * stride; }

 private:
  OurData(int n_, int k_, bool cold_) : n(n_), k(k_), kp((k_ + 3) / 4 * 4), cold(cold_) {
    std::uniform_int_distribution<int> wd(-127, 127);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<int8_t> rowmajor(size_t(n) * k);
    for (auto& v : rowmajor) v = int8_t(wd(Rng()));
    bytes = mtlite::kernels::BlockedN8K4Bytes(n, k);
    stride = (bytes + 63) / 64 * 64;
    copies = Copies(stride, cold);
    w.reset(static_cast<int8_t*>(std::aligned_alloc(64, stride * size_t(copies))));
    if (!w) std::abort();  // a benchmark host without the memory
    mtlite::kernels::PackBlockedN8K4(rowmajor.data(), n, k, w.get());
    for (int i = 1; i < copies; ++i) std::memcpy(w.get() + size_t(i) * stride, w.get(), bytes);
    w_scales.assign(n, 0.01f);
    bias.resize(n);
    for (auto& v : bias) v = nd(Rng());
    x.resize(size_t(kMaxM) * k);
    for (auto& v : x) v = nd(Rng());
    a.resize(size_t(kMaxM) * kp);
    a_scales.resize(kMaxM);
    mtlite::kernels::ReferenceKernels().quantize_rows_s8(x.data(), kMaxM, k, k, a.data(), kp, a_scales.data());
    c.resize(size_t(kMaxM) * (n + 7) / 8 * 8);
    const int nb = (n + 7) / 8;
    for (int b = 0; b < nb; b += b < nb / 16 ? 1 : 4) shortlist.push_back(b);
  }
};

// "" if table t computes shape s (up to 5 rows of it) bit-identically to the reference. Each
// (table, shape) is checked once per process.
std::string Verify(const KernelTable* t, const Shape& s, bool gather) {
  static std::set<std::string> done;
  const int m = s.m < 5 ? s.m : 5;
  const std::string key = std::string(t->name) + "/" + std::to_string(s.n) + "/" + std::to_string(s.k) +
                          "/" + std::to_string(m) + (gather ? "/gather" : "");
  if (done.count(key)) return "";
  mtlite::kernels::test::GemmTester g;
  g.m(m).n(s.n).k(s.k).bias(true).check_exact(false);
  if (gather) g.blocks(OurData::Get(s, false).shortlist);
  std::string err = g.Test(*t);
  if (err.empty()) done.insert(key);
  return err;
}

enum class Kind { kGemm, kLinear, kGather, kRuns };

// The blocks of `list` as runs of consecutive blocks, one gemm_s8_blocked call each.
void GemmRuns(const KernelTable* t, const Shape& s, const std::vector<int32_t>& list, const int8_t* a, int lda,
              const float* a_scales, const int8_t* w, const float* w_scales, const float* bias, float* c) {
  const int nsel = int(list.size()), kp = (s.k + 3) / 4 * 4;
  for (int i = 0; i < nsel;) {
    int j = i + 1;
    while (j < nsel && list[j] == list[j - 1] + 1) ++j;
    const int n0 = list[i] * 8, n1 = std::min(s.n, (list[j - 1] + 1) * 8);
    t->gemm_s8_blocked(s.m, n1 - n0, s.k, a, lda, a_scales, w + size_t(list[i]) * kp * 8, w_scales + n0,
                       bias + n0, nullptr, 0, c + size_t(i) * 8, 8 * nsel, Act::kNone);
    i = j;
  }
}

void BM_Gemm(benchmark::State& st, const KernelTable* t, Shape s, bool cold, Kind kind) {
  const std::string err = Verify(t, s, kind == Kind::kGather || kind == Kind::kRuns);
  if (!err.empty()) {
    st.SkipWithError(err.c_str());
    return;
  }
  const OurData& d = OurData::Get(s, cold);
  float* c = const_cast<float*>(d.c.data());
  int8_t* a = const_cast<int8_t*>(d.a.data());
  float* a_scales = const_cast<float*>(d.a_scales.data());
  const int nsel = int(d.shortlist.size());
  size_t i = 0;
  for (auto _ : st) {
    const int8_t* w = d.Weights(i++);
    if (kind == Kind::kLinear) t->quantize_rows_s8(d.x.data(), s.m, s.k, s.k, a, d.kp, a_scales);
    if (kind == Kind::kGather)
      t->gemm_s8_blocked_gather(s.m, s.n, nsel, d.shortlist.data(), s.k, a, d.kp, a_scales, w,
                                d.w_scales.data(), d.bias.data(), c, 8 * nsel);
    else if (kind == Kind::kRuns)
      GemmRuns(t, s, d.shortlist, a, d.kp, a_scales, w, d.w_scales.data(), d.bias.data(), c);
    else
      t->gemm_s8_blocked(s.m, s.n, s.k, a, d.kp, a_scales, w, d.w_scales.data(), d.bias.data(), nullptr,
                         0, c, s.n, Act::kNone);
    benchmark::DoNotOptimize(c);
    benchmark::ClobberMemory();
  }
  if (kind == Kind::kGather || kind == Kind::kRuns) s.n = 8 * nsel;  // the work done: the selected rows only
  SetCounters(st, s);
}

// ---- the streaming read bound ----------------------------------------------------------------
// The plain streaming read of the runtime's measurement helpers (runtime/cli/measure.h: the
// widest vector loads the CPU has, 4 independent accumulators; narrower loads reach only ~75 %
// of the DRAM bandwidth here) over the first bytes / 256 * 256 bytes of p (64-byte aligned).
int64_t StreamRead(const int8_t* p, size_t bytes) {
  return int64_t(mtlite::cli::StreamReadWords(reinterpret_cast<const uint64_t*>(p), bytes / 256 * 32));
}

// Thread CPU time: the time this thread ran, stalls included (a memory-bound loop stalls, it is
// not descheduled), descheduling excluded (the machine is shared).
double ThreadSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// GEMV (m = 1; m = 4 for beam search) with weights from DRAM against the streaming read of as
// many bytes, alternated
// matrix by matrix (one read of a matrix-sized slice of a separate buffer, one GEMV of the next
// weight copy) so that both see the same machine (one core's DRAM bandwidth moves with what the
// other cores do). Counters read_GBps, gemv_GBps and ratio = gemv / read, each the median over
// the iterations (each iteration covers the 512 MiB of weight copies).
void BM_GemvVsRead(benchmark::State& st, const KernelTable* t, Shape s) {
  const std::string err = Verify(t, s, false);
  if (!err.empty()) {
    st.SkipWithError(err.c_str());
    return;
  }
  const OurData& d = OurData::Get(s, true);
  const size_t slice = d.stride;
  int8_t* buf = static_cast<int8_t*>(std::aligned_alloc(64, slice * size_t(d.copies)));
  if (!buf) {
    st.SkipWithError("out of memory");
    return;
  }
  std::memset(buf, 1, slice * size_t(d.copies));
  float* c = const_cast<float*>(d.c.data());
  std::vector<double> read, gemv, ratio;
  for (auto _ : st) {
    double tr = 0, tg = 0;
    for (int i = 0; i < d.copies; ++i) {
      const double t0 = ThreadSeconds();
      benchmark::DoNotOptimize(StreamRead(buf + size_t(i) * slice, d.bytes));
      const double t1 = ThreadSeconds();
      t->gemm_s8_blocked(s.m, s.n, s.k, d.a.data(), d.kp, d.a_scales.data(), d.Weights(size_t(i)),
                         d.w_scales.data(), d.bias.data(), nullptr, 0, c, s.n, Act::kNone);
      benchmark::ClobberMemory();
      const double t2 = ThreadSeconds();
      tr += t1 - t0, tg += t2 - t1;
    }
    const double total = double(d.bytes) * d.copies * 1e-9;
    read.push_back(total / tr);
    gemv.push_back(total / tg);
    ratio.push_back(tr / tg);
  }
  std::free(buf);
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  st.counters["read_GBps"] = median(read);
  st.counters["gemv_GBps"] = median(gemv);
  st.counters["ratio"] = median(ratio);
}

void BM_Bandwidth(benchmark::State& st, size_t bytes) {
  int8_t* p = static_cast<int8_t*>(std::aligned_alloc(64, bytes));
  if (!p) {
    st.SkipWithError("out of memory");
    return;
  }
  std::memset(p, 1, bytes);  // touch every page
  for (auto _ : st) benchmark::DoNotOptimize(StreamRead(p, bytes));
  std::free(p);
  st.counters["GBps"] = benchmark::Counter(double(bytes) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

#if defined(MTLITE_BENCH_XNNPACK)
struct XnnApi {
  decltype(&xnn_initialize) initialize = nullptr;
  decltype(&xnn_create_fully_connected_nc_qs8) create_qs8 = nullptr;
  decltype(&xnn_setup_fully_connected_nc_qs8) setup_qs8 = nullptr;
  decltype(&xnn_create_fully_connected_nc_f32) create_f32 = nullptr;
  decltype(&xnn_setup_fully_connected_nc_f32) setup_f32 = nullptr;
  decltype(&xnn_run_operator) run = nullptr;
  decltype(&xnn_delete_operator) destroy = nullptr;
  bool Load() {
    void* h = dlopen("libXNNPACK.so.0", RTLD_NOW | RTLD_GLOBAL);
    if (!h) h = dlopen("libXNNPACK.so", RTLD_NOW | RTLD_GLOBAL);
    if (!h) return false;
    initialize = reinterpret_cast<decltype(initialize)>(dlsym(h, "xnn_initialize"));
    create_qs8 = reinterpret_cast<decltype(create_qs8)>(dlsym(h, "xnn_create_fully_connected_nc_qs8"));
    setup_qs8 = reinterpret_cast<decltype(setup_qs8)>(dlsym(h, "xnn_setup_fully_connected_nc_qs8"));
    create_f32 = reinterpret_cast<decltype(create_f32)>(dlsym(h, "xnn_create_fully_connected_nc_f32"));
    setup_f32 = reinterpret_cast<decltype(setup_f32)>(dlsym(h, "xnn_setup_fully_connected_nc_f32"));
    run = reinterpret_cast<decltype(run)>(dlsym(h, "xnn_run_operator"));
    destroy = reinterpret_cast<decltype(destroy)>(dlsym(h, "xnn_delete_operator"));
    return initialize && create_qs8 && setup_qs8 && create_f32 && setup_f32 && run && destroy &&
           initialize(nullptr) == xnn_status_success;
  }
};
XnnApi xnn;

struct XnnOps {
  std::vector<xnn_operator_t> ops;
  ~XnnOps() {
    for (auto op : ops) xnn.destroy(op);
  }
};

void BM_XnnQs8(benchmark::State& st, Shape s, bool cold) {
  std::uniform_int_distribution<int> wd(-127, 127);
  std::vector<int8_t> w(size_t(s.n) * s.k), x(size_t(s.m) * s.k), y(size_t(s.m) * s.n);
  for (auto& v : w) v = int8_t(wd(Rng()));
  for (auto& v : x) v = int8_t(wd(Rng()));
  std::vector<int32_t> bias(s.n, 0);
  XnnOps ops;
  ops.ops.resize(Copies(size_t(s.n) * s.k, cold), nullptr);
  for (auto& op : ops.ops) {
    // static scales: output scale chosen so outputs use the int8 range
    if (xnn.create_qs8(s.k, s.n, s.k, s.n, 0, 0.02f, 0.01f, w.data(),
                                          bias.data(), 0, 0.02f * 0.01f * 40.0f * std::sqrt(float(s.k)),
                                          -127, 127, 0, &op) != xnn_status_success) {
      st.SkipWithError("xnn_create_fully_connected_nc_qs8 failed");
      return;
    }
  }
  size_t i = 0;
  for (auto _ : st) {
    xnn_operator_t op = ops.ops[i];
    if (++i == ops.ops.size()) i = 0;
    // setup is part of every call (the operator is re-pointed at new buffers per call in a
    // real runtime as well); it is cheap next to the GEMM
    xnn.setup_qs8(op, s.m, x.data(), y.data(), nullptr);
    xnn.run(op, nullptr);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  SetCounters(st, s);
}

void BM_XnnF32(benchmark::State& st, Shape s, bool cold) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> w(size_t(s.n) * s.k), x(size_t(s.m) * s.k), y(size_t(s.m) * s.n), bias(s.n);
  for (auto& v : w) v = nd(Rng());
  for (auto& v : x) v = nd(Rng());
  for (auto& v : bias) v = nd(Rng());
  XnnOps ops;
  ops.ops.resize(Copies(size_t(s.n) * s.k * 4, cold), nullptr);
  for (auto& op : ops.ops) {
    if (xnn.create_f32(s.k, s.n, s.k, s.n, w.data(), bias.data(), -INFINITY,
                                          INFINITY, 0, &op) != xnn_status_success) {
      st.SkipWithError("xnn_create_fully_connected_nc_f32 failed");
      return;
    }
  }
  size_t i = 0;
  for (auto _ : st) {
    xnn_operator_t op = ops.ops[i];
    if (++i == ops.ops.size()) i = 0;
    xnn.setup_f32(op, s.m, x.data(), y.data(), nullptr);
    xnn.run(op, nullptr);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  SetCounters(st, s);
}
#endif

std::string Name(const char* kind, Shape s, bool cold) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%s/m%d/n%d/k%d/%s", kind, s.m, s.n, s.k, cold ? "cold" : "hot");
  return buf;
}

void RegisterAll(bool have_xnn) {
  const Shape nk[] = {
      {0, 1024, 256},  {0, 8001, 256},                                    // demo model (d 256)
      {0, 512, 512},   {0, 2048, 512}, {0, 58101, 512}, {0, 512, 2048},   // OPUS-MT base (d 512)
  };
  const KernelTable* tables[8];
  const int nt = mtlite::kernels::AvailableKernels(tables, 8);
  for (size_t mib : {16, 1024}) {
    benchmark::RegisterBenchmark(("bandwidth/read/" + std::to_string(mib) + "MiB").c_str(), BM_Bandwidth,
                                 mib << 20)
        ->Unit(benchmark::kMillisecond);
  }
  for (Shape s : {Shape{1, 58101, 512}, Shape{4, 58101, 512}, Shape{1, 2048, 512}, Shape{1, 512, 2048},
                  Shape{1, 8001, 256}})
    for (int t = 0; t < nt; ++t) {
      if (std::strcmp(tables[t]->name, "reference") == 0) continue;
      benchmark::RegisterBenchmark(Name((std::string("stream/") + tables[t]->name).c_str(), s, true).c_str(),
                                   BM_GemvVsRead, tables[t], s)
          ->Unit(benchmark::kMillisecond)
          ->Iterations(15);
    }
  // shape-major, so that every table and m of a shape share one OurData
  for (Shape s : nk) {
    for (bool cold : {false, true}) {
      for (int m : {1, 2, 4, 8, 16, 64}) {
        s.m = m;
        for (int t = 0; t < nt; ++t) {
          const KernelTable* tab = tables[t];
          const bool ref = std::strcmp(tab->name, "reference") == 0;
          if (ref && double(s.m) * s.n * s.k > 2e8) continue;  // seconds per call
          auto* b = benchmark::RegisterBenchmark(Name((std::string("gemm/") + tab->name).c_str(), s, cold).c_str(),
                                                 BM_Gemm, tab, s, cold, Kind::kGemm);
          b->Unit(benchmark::kMicrosecond);
          if (ref) {
            b->MinTime(0.05);
            continue;
          }
          if (s.n > 4096) {  // an output projection: its shortlist form
            benchmark::RegisterBenchmark(Name((std::string("gather/") + tab->name).c_str(), s, cold).c_str(),
                                         BM_Gemm, tab, s, cold, Kind::kGather)
                ->Unit(benchmark::kMicrosecond);
            benchmark::RegisterBenchmark(Name((std::string("runs/") + tab->name).c_str(), s, cold).c_str(),
                                         BM_Gemm, tab, s, cold, Kind::kRuns)
                ->Unit(benchmark::kMicrosecond);
          }
          benchmark::RegisterBenchmark(Name((std::string("linear/") + tab->name).c_str(), s, cold).c_str(),
                                       BM_Gemm, tab, s, cold, Kind::kLinear)
              ->Unit(benchmark::kMicrosecond);
        }
#if defined(MTLITE_BENCH_XNNPACK)
        if (!have_xnn || (cold && m != 1)) continue;
        benchmark::RegisterBenchmark(Name("xnn_qs8", s, cold).c_str(), BM_XnnQs8, s, cold)
            ->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(Name("xnn_f32", s, cold).c_str(), BM_XnnF32, s, cold)
            ->Unit(benchmark::kMicrosecond);
#endif
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool have_xnn = false;
#if defined(MTLITE_BENCH_XNNPACK)
  have_xnn = xnn.Load();
  if (!have_xnn) std::fprintf(stderr, "XNNPACK not available: its benchmarks are not registered\n");
#endif
  RegisterAll(have_xnn);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

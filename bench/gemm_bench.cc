// int8 GEMM / GEMV benchmarks: every kernel table (reference, avx2 / neon / neon-dotprod)
// against XNNPACK's qs8 (static scales) and f32 fully-connected operators on the same shapes,
// single thread.
//
//   gemm/<table>/m/n/k/{hot,cold}     gemm_s8_blocked only (activations already quantised)
//   linear/<table>/m/n/k/{hot,cold}   quantize_rows_s8 + gemm_s8_blocked (f32 in, f32 out: what
//                                     the runtime does per linear layer)
//   xnn_qs8/m/n/k/{hot,cold}          xnn fully_connected_nc_qs8 (int8 in, int8 out)
//   xnn_f32/m/n/k/{hot,cold}          xnn fully_connected_nc_f32
// "cold" cycles through enough weight copies (64 MiB) that every call streams its weights from
// DRAM (L3 is 32 MiB here); "hot" reuses one copy (L2/L3 resident). Counter GOPS = 2*m*n*k/s.
// Before a table is timed on a shape it is checked against the reference on that shape (a few
// rows; tests/unit/kernel_tester.h): a wrong kernel reports an error instead of a time.
// Suggested: --benchmark_repetitions=3 --benchmark_report_aggregates_only=true (medians).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kernel_tester.h"
#include "kernels.h"

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

constexpr size_t kColdBytes = size_t(64) << 20;

struct Shape {
  int m, n, k;
};

int Copies(size_t bytes, bool cold) {
  if (!cold) return 1;
  size_t c = (kColdBytes + bytes - 1) / bytes;
  return int(c < 2 ? 2 : c);
}

std::mt19937& Rng() {
  static std::mt19937 rng(1234);
  return rng;
}

void SetCounters(benchmark::State& st, const Shape& s) {
  st.counters["GOPS"] =
      benchmark::Counter(2.0 * s.m * s.n * s.k * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// Weights, scales and activations for our kernels.
struct OurData {
  int kp;
  std::vector<std::vector<int8_t>> w;  // copies of the packed weights
  std::vector<float> w_scales, bias, x, a_scales, c;
  std::vector<int8_t> a;
  OurData(const Shape& s, bool cold) {
    kp = (s.k + 3) / 4 * 4;
    std::uniform_int_distribution<int> wd(-127, 127);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<int8_t> rowmajor(size_t(s.n) * s.k);
    for (auto& v : rowmajor) v = int8_t(wd(Rng()));
    const size_t bytes = mtlite::kernels::BlockedN8K4Bytes(s.n, s.k);
    w.resize(Copies(bytes, cold));
    for (auto& copy : w) {
      copy.resize(bytes);
      mtlite::kernels::PackBlockedN8K4(rowmajor.data(), s.n, s.k, copy.data());
    }
    w_scales.assign(s.n, 0.01f);
    bias.resize(s.n);
    for (auto& v : bias) v = nd(Rng());
    x.resize(size_t(s.m) * s.k);
    for (auto& v : x) v = nd(Rng());
    a.resize(size_t(s.m) * kp);
    a_scales.resize(s.m);
    mtlite::kernels::ReferenceKernels().quantize_rows_s8(x.data(), s.m, s.k, s.k, a.data(), kp,
                                                         a_scales.data());
    c.resize(size_t(s.m) * s.n);
  }
};

// "" if table t computes shape s (up to 5 rows of it) bit-identically to the reference. Each
// (table, shape) is checked once per process.
std::string Verify(const KernelTable* t, const Shape& s) {
  static std::set<std::string> done;
  const std::string key = std::string(t->name) + "/" + std::to_string(s.n) + "/" + std::to_string(s.k) +
                          "/" + std::to_string(s.m < 5 ? s.m : 5);
  if (done.count(key)) return "";
  mtlite::kernels::test::GemmTester g;
  g.m(s.m < 5 ? s.m : 5).n(s.n).k(s.k).bias(true).check_exact(false);
  std::string err = g.Test(*t);
  if (err.empty()) done.insert(key);
  return err;
}

void BM_Gemm(benchmark::State& st, const KernelTable* t, Shape s, bool cold, bool with_quantize) {
  const std::string err = Verify(t, s);
  if (!err.empty()) {
    st.SkipWithError(err.c_str());
    return;
  }
  OurData d(s, cold);
  size_t i = 0;
  for (auto _ : st) {
    const int8_t* w = d.w[i].data();
    if (++i == d.w.size()) i = 0;
    if (with_quantize)
      t->quantize_rows_s8(d.x.data(), s.m, s.k, s.k, d.a.data(), d.kp, d.a_scales.data());
    t->gemm_s8_blocked(s.m, s.n, s.k, d.a.data(), d.kp, d.a_scales.data(), w, d.w_scales.data(),
                       d.bias.data(), nullptr, 0, d.c.data(), s.n, Act::kNone);
    benchmark::DoNotOptimize(d.c.data());
    benchmark::ClobberMemory();
  }
  SetCounters(st, s);
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
      {0, 256, 256},  {0, 1024, 256}, {0, 256, 1024}, {0, 8001, 256},   // demo model (d 256)
      {0, 512, 512},  {0, 2048, 512}, {0, 512, 2048}, {0, 8001, 512},   // d_model 512
  };
  const KernelTable* tables[8];
  const int nt = mtlite::kernels::AvailableKernels(tables, 8);
  for (int m : {1, 4, 8, 16, 64}) {
    for (Shape s : nk) {
      s.m = m;
      for (bool cold : {false, true}) {
        if (cold && m != 1) continue;  // cold matters for the weight-streaming GEMV
        for (int t = 0; t < nt; ++t) {
          const KernelTable* tab = tables[t];
          const bool ref = std::strcmp(tab->name, "reference") == 0;
          auto* b = benchmark::RegisterBenchmark(Name((std::string("gemm/") + tab->name).c_str(), s, cold).c_str(),
                                                 BM_Gemm, tab, s, cold, false);
          b->Unit(benchmark::kMicrosecond);
          if (ref) b->MinTime(0.05);
          if (!ref) {
            benchmark::RegisterBenchmark(Name((std::string("linear/") + tab->name).c_str(), s, cold).c_str(),
                                         BM_Gemm, tab, s, cold, true)
                ->Unit(benchmark::kMicrosecond);
          }
        }
#if defined(MTLITE_BENCH_XNNPACK)
        if (!have_xnn) continue;
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

#include "measure.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "kernels.h"

namespace mtlite {
namespace cli {

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// 64-byte aligned, like the model's tensors (the kernels read weights in place).
template <class T>
std::unique_ptr<T[], FreeDeleter> Aligned(size_t count) {
  const size_t bytes = (count * sizeof(T) + 63) / 64 * 64;
  return std::unique_ptr<T[], FreeDeleter>(static_cast<T*>(std::aligned_alloc(64, bytes ? bytes : 64)));
}

}  // namespace

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = p / 100.0 * double(v.size() - 1);
  const size_t lo = size_t(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

long MaxRssKb() {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return -1;
  return ru.ru_maxrss;
}

long ProcStatusKb(const char* key) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kb = -1;
  const size_t n = std::strlen(key);
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, key, n) == 0 && line[n] == ':') {
      kb = std::strtol(line + n + 1, nullptr, 10);
      break;
    }
  }
  std::fclose(f);
  return kb;
}

long CodeRssKb() {
  char exe[4096];
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) return -1;
  exe[len] = '\0';
  std::FILE* f = std::fopen("/proc/self/smaps", "r");
  if (!f) return -1;
  char line[4352];
  long kb = 0;
  bool code = false;
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, "Rss:", 4) == 0) {
      if (code) kb += std::strtol(line + 4, nullptr, 10);
      continue;
    }
    // a mapping header: "start-end perms offset dev inode [path]"
    const char* dash = std::strchr(line, '-');
    const char* space = std::strchr(line, ' ');
    if (!dash || !space || dash > space) continue;
    const char* path = std::strchr(line, '/');
    if (!path) {
      code = false;
      continue;
    }
    std::string p(path);
    while (!p.empty() && (p.back() == '\n' || p.back() == ' ')) p.pop_back();
    code = p == exe || p.find(".so") != std::string::npos;
  }
  std::fclose(f);
  return kb;
}

// Sums n 64-bit words (n a multiple of 32) in 64-byte vectors with four independent accumulators:
// a plain streaming read. On x86-64 it is compiled three times and the widest loads the CPU has
// are chosen at load time (narrower loads reach only ~75 % of a core's DRAM bandwidth there);
// elsewhere the compiler splits the vectors into the target's own.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
uint64_t StreamReadWords(const uint64_t* p, size_t n) {
  typedef uint64_t V __attribute__((vector_size(64)));
  V a0 = {}, a1 = {}, a2 = {}, a3 = {};
  for (size_t i = 0; i + 32 <= n; i += 32) {
    V v0, v1, v2, v3;
    std::memcpy(&v0, p + i, sizeof v0);
    std::memcpy(&v1, p + i + 8, sizeof v1);
    std::memcpy(&v2, p + i + 16, sizeof v2);
    std::memcpy(&v3, p + i + 24, sizeof v3);
    a0 += v0;
    a1 += v1;
    a2 += v2;
    a3 += v3;
  }
  const V s = (a0 + a1) + (a2 + a3);
  uint64_t r = 0;
  for (int i = 0; i < 8; ++i) r ^= s[i];
  return r;
}

double ReadBandwidthGBs(size_t bytes, int reps) {
  const size_t n = std::max<size_t>(bytes / sizeof(uint64_t) / 32 * 32, 32);
  auto buf = Aligned<uint64_t>(n);  // 64-byte aligned: a misaligned buffer splits cache lines
  if (!buf) return 0;
  for (size_t i = 0; i < n; ++i) buf[i] = i * 0x9E3779B97F4A7C15ull;
  const size_t read = n * sizeof(uint64_t);
  const int passes = int(std::max<size_t>(1, (size_t(64) << 20) / read));  // >= 64 MiB per timing
  double best = 0;
  volatile uint64_t sink = 0;
  for (int r = 0; r <= reps; ++r) {  // r = 0: warm pass, not timed
    const auto t0 = Clock::now();
    for (int p = 0; p < passes; ++p) sink = sink + StreamReadWords(buf.get(), n);
    const double s = SecondsSince(t0);
    if (r > 0 && s > 0) best = std::max(best, double(read) * passes / s * 1e-9);
  }
  return best;
}

double GemmGops(int m, int n, int k, int reps, std::string* kernels_name) {
  const kernels::KernelTable& K = kernels::BestKernels();
  if (kernels_name) *kernels_name = K.name;
  if (m < 1 || n < 1 || k < 1) return 0;
  const int kp = kernels::RoundUp(k, 4);
  auto a = Aligned<int8_t>(size_t(m) * kp);
  auto w = Aligned<int8_t>(kernels::BlockedN8K4Bytes(n, k));
  auto a_scales = Aligned<float>(size_t(m));
  auto w_scales = Aligned<float>(size_t(kernels::RoundUp(n, 8)));
  auto c = Aligned<float>(size_t(m) * n);
  if (!a || !w || !a_scales || !w_scales || !c) return 0;
  uint32_t x = 12345;  // deterministic operands in [-127, 127] (the kernels' contract)
  auto next = [&x] {
    x = x * 1664525u + 1013904223u;
    return int8_t(int((x >> 8) % 255u) - 127);
  };
  for (size_t i = 0; i < size_t(m) * kp; ++i) a[i] = (int(i % size_t(kp)) < k) ? next() : 0;
  for (size_t i = 0; i < kernels::BlockedN8K4Bytes(n, k); ++i) w[i] = next();
  for (int i = 0; i < m; ++i) a_scales[i] = 1.0f / 127;
  for (int i = 0; i < kernels::RoundUp(n, 8); ++i) w_scales[i] = 1.0f / 127;
  auto call = [&] {
    K.gemm_s8_blocked(m, n, k, a.get(), kp, a_scales.get(), w.get(), w_scales.get(), nullptr, nullptr, 0, c.get(), n,
                      kernels::Act::kNone);
  };
  call();  // warm
  const double ops = 2.0 * m * n * k;
  double best = 0;
  for (int r = 0; r < reps; ++r) {  // each timing: doubling batches of calls until >= 20 ms
    long calls = 0;
    double s = 0;
    const auto t0 = Clock::now();
    for (long batch = 1; s < 0.02; batch *= 2) {
      for (long i = 0; i < batch; ++i) call();
      calls += batch;
      s = SecondsSince(t0);
    }
    best = std::max(best, ops * double(calls) / s * 1e-9);
  }
  return best;
}

}  // namespace cli
}  // namespace mtlite

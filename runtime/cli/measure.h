// Measurement helpers shared by `mtlite profile` and the benchmark drivers: order statistics,
// the process's peak memory, and two host roofline numbers (single-thread streaming read
// bandwidth, the int8 GEMM of the kernel table). Portable (Linux on x86-64 and ARM).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mtlite {
namespace cli {

// numpy.percentile(v, p) with linear interpolation between order statistics; 0 for no values.
double Percentile(std::vector<double> v, double p);

// Peak resident set of this process in KiB (getrusage ru_maxrss); -1 if unknown.
long MaxRssKb();
// A "Key:  N kB" line of /proc/self/status (e.g. "VmHWM", "VmRSS") in KiB; -1 if unknown.
long ProcStatusKb(const char* key);
// Resident KiB of the program's own code: the mappings of the executable and of the shared
// libraries (/proc/self/smaps: file mappings whose name contains ".so" or is the executable).
// Counted in RSS, shared with every other process using those files, and the same whatever the
// model; -1 if unknown.
long CodeRssKb();

// One plain streaming read of the 64-bit words p[0, n) (n a multiple of 32), the widest vector
// loads the CPU has, four independent accumulators: the probe ReadBandwidthGBs times, for
// benchmarks that time it against another kernel themselves. Returns a checksum.
uint64_t StreamReadWords(const uint64_t* p, size_t n);

// Single-thread read bandwidth in GB/s (1e9 bytes/s) over a buffer of `bytes`: the best of
// `reps` timed passes after one warm pass; each timed pass reads the buffer often enough to last
// >= ~20 ms. 0 if the buffer cannot be allocated.
double ReadBandwidthGBs(size_t bytes, int reps);

// Throughput of the best kernel table's int8 GEMM (gemm_s8_blocked, the linear layers' kernel)
// on an m x n x k problem with operands resident in cache: 2*m*n*k operations per call, in
// GOPS (1e9/s), the best of `reps` timings of >= 20 ms each; 0 for an empty problem.
// *kernels receives the table name.
double GemmGops(int m, int n, int k, int reps, std::string* kernels);

}  // namespace cli
}  // namespace mtlite

#include "linear.h"

#include "marian_layout.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#ifdef MTLITE_USE_XNNPACK
#include <pthreadpool.h>
#include <xnnpack.h>
#endif

namespace mtlite {
namespace detail {

using kernels::Act;
using kernels::RoundUp;

Act ToAct(ActivationKind a) {
  switch (a) {
    case ActivationKind::kSiLU: return Act::kSiLU;
    case ActivationKind::kReLU: return Act::kReLU;
    case ActivationKind::kGELU: return Act::kGELU;
    case ActivationKind::kGELUTanh: return Act::kGELUTanh;
  }
  return Act::kNone;
}

Linear::~Linear() {
#ifdef MTLITE_USE_XNNPACK
  if (xnn_op_) xnn_delete_operator(static_cast<xnn_operator_t>(xnn_op_));
#endif
}

Status Linear::Init(const WeightView& w, const VectorView& bias) {
  w_ = &w;
  bias_ = bias.data;
#ifdef MTLITE_USE_XNNPACK
  if (w.dtype == WeightType::kInt8) return Status::Ok();
  std::vector<float> tmp;  // creation time only: XNNPACK packs its own copy
  const float* kernel = static_cast<const float*>(w.data);
  if (w.dtype == WeightType::kF16) {
    tmp.resize(size_t(w.rows) * w.cols);
    const uint16_t* h = static_cast<const uint16_t*>(w.data);
    for (size_t i = 0; i < tmp.size(); ++i) tmp[i] = layout::F16ToF32(h[i]);
    kernel = tmp.data();
  }
  xnn_operator_t op = nullptr;
  const xnn_status st = xnn_create_fully_connected_nc_f32(size_t(w.cols), size_t(w.rows), size_t(w.cols),
                                                          size_t(w.rows), kernel, bias.data, -INFINITY, INFINITY,
                                                          0, &op);
  if (st != xnn_status_success)
    return Status(StatusCode::kResourceExhausted,
                  "XNNPACK fully-connected creation failed (status " + std::to_string(int(st)) + ")");
  xnn_op_ = op;
#endif
  return Status::Ok();
}

size_t Linear::weight_bytes() const {
  if (!w_) return 0;
  const size_t n = size_t(w_->rows), k = size_t(w_->cols);
  switch (w_->dtype) {
    case WeightType::kInt8: return kernels::BlockedN8K4Bytes(w_->rows, w_->cols) + n * sizeof(float);
    case WeightType::kF16: return n * k * 2;
    case WeightType::kF32: return n * k * 4;
  }
  return 0;
}

size_t Linear::block_bytes(int nblocks) const {
  return w_ ? size_t(nblocks) * 8 * (size_t(RoundUp(w_->cols, 4)) + sizeof(float)) : 0;
}

namespace {

// Whether an int8 layer of m rows x n outputs x k inputs is worth splitting over threads: its
// weights are large enough that two streams read them faster (>= 128 KiB), or its arithmetic
// is (>= 8 M multiply-adds). A split costs a fork-join and, above all, moves the output lines
// each thread wrote to the core that reads them next; below these sizes (e.g. a 256 x 256
// projection of 16-64 decoder rows: 4-20 us) that costs more than the halved work saves.
// Measured on a 2-core Zen5: m 64 x n 256 x k 256 took 19 us on one thread, 23 us on two;
// m 16 x n 1,536 x k 256 (384 KiB of weights) 31 us and 24 us.
bool SplitPays(int m, int n, int k) {
  const uint64_t weight_bytes = uint64_t(n) * uint64_t(k);
  const uint64_t macs = uint64_t(m) * weight_bytes;
  return weight_bytes >= (uint64_t(128) << 10) || macs >= (uint64_t(8) << 20);
}

// Multiply-adds of one part of a large layer, at most (~25 us on one Zen5 core): a thread that
// runs slower (a smaller core, a vCPU whose host core is busy) gives whole parts away to the
// others (thread_pool.h), so a part is its unit of balance.
constexpr uint64_t kMacsPerPart = uint64_t(8) << 20;

// Parts of an int8 layer over `blocks` 8-output weight blocks (m rows, k inputs): when the split
// pays, two per thread or one per kMacsPerPart, whichever is more; else one.
int SplitParts(const Exec& ex, int m, int blocks, int k) {
  if (!ex.pool->parallel() || !SplitPays(m, blocks * 8, k)) return 1;
  const uint64_t by_work = uint64_t(m) * uint64_t(blocks) * 8 * uint64_t(k) / kMacsPerPart;
  return int(std::min<uint64_t>(uint64_t(blocks), std::max<uint64_t>(uint64_t(ex.pool->threads()) * 2, by_work)));
}

// Part p of `parts` even shares of the 8-row weight blocks of an n-output layer: output rows
// [n0, n1), from block b0.
struct BlockPart {
  int b0, n0, n1;
};
BlockPart PartOfBlocks(int n, int p, int parts) {
  const int blocks = (n + 7) / 8;
  const int b0 = int(int64_t(blocks) * p / parts), b1 = int(int64_t(blocks) * (p + 1) / parts);
  return {b0, b0 * 8, std::min(n, b1 * 8)};
}

// fn(b0, n0, n1) for each part's output rows [n0, n1) (from 8-row block b0) of an int8 layer of n
// outputs, the parts over the pool (SplitParts), each profiled as a linear part.
template <class F>
void ForOutputParts(const Exec& ex, int m, int n, int k, F&& fn) {
  const int parts = SplitParts(ex, m, (n + 7) / 8, k);
  ex.pool->ParallelFor(parts, [&](int p, int thread) {
    const auto [b0, n0, n1] = PartOfBlocks(n, p, parts);
    if (n1 <= n0) return;
    const uint64_t t0 = ex.prof && thread > 0 ? ex.prof->Now() : 0;
    fn(b0, n0, n1);
    if (ex.prof && thread > 0) ex.prof->Part(Op::kLinearPart, -1, thread, t0, ex.prof->Now(), m, n1 - n0, k);
  });
}

// Many rows (the encoder's layers: batch x source tokens) split by rows, one part per thread,
// instead of by output columns. A column split leaves each thread's columns of the output in its
// own cache, and the next layer, which reads every column of every row, pulls half of them
// across cores (a worker's quarter of an encoder fc1, m 64 x 1,536 x 256, 29 us of work on one
// thread, was seen taking 90-104 us). With >= 32 rows per thread the weights, which each thread
// now reads whole, are reused enough. Encoder-only runs (batch 16, --max-length 1, 2 threads,
// column vs row split, interleaved) on a 2-vCPU VM whose speed drifts: tiny32k 26.6-35.7 vs
// 27.0-37.0 ms in one period (1 thread 48 ms), 59-63 vs 53-56 ms in a slow one (1 thread 70);
// base 109-121 vs 97-108 ms (1 thread 138-149); the row split was ahead in 14 of 15 pairs.
// Same results: every output is computed exactly as before, only by another thread.
bool SplitByRows(const Exec& ex, int m, int n, int k) {
  return ex.pool->parallel() && m >= 32 * ex.pool->threads() && SplitPays(m, n, k);
}

}  // namespace

Status Linear::RunBlocks(const Exec& ex, const float* x, int m, const int32_t* blocks, int nblocks, float* y,
                         const LinearScratch& s) const {
  const WeightView& w = *w_;
  if (w.dtype != WeightType::kInt8) return Status(StatusCode::kInternal, "RunBlocks needs int8 weights");
  if (m <= 0 || nblocks <= 0) return Status::Ok();
  if (ex.fault && ex.fault->Hit()) return Status(StatusCode::kInternal, "injected fault in a linear layer");
  const kernels::KernelTable& K = *ex.K;
  const int n = w.rows, k = w.cols, kp = RoundUp(k, 4), ldy = nblocks * 8;
  K.quantize_rows_s8(x, m, k, k, s.quantized, kp, s.quant_scales);
  const int8_t* wq = static_cast<const int8_t*>(w.data);
  const int parts = SplitParts(ex, m, nblocks, k);
  ex.pool->ParallelFor(parts, [&](int p, int thread) {
    const uint64_t t0 = ex.prof && thread > 0 ? ex.prof->Now() : 0;
    const int i0 = int(int64_t(nblocks) * p / parts), i1 = int(int64_t(nblocks) * (p + 1) / parts);
    // the kernel's block-list GEMM (the same tiles over the listed blocks, in one call)
    if (i1 > i0)
      K.gemm_s8_blocked_gather(m, n, i1 - i0, blocks + i0, k, s.quantized, kp, s.quant_scales, wq, w.scales, bias_,
                               y + size_t(i0) * 8, ldy);
    if (ex.prof && thread > 0) ex.prof->Part(Op::kLinearPart, -1, thread, t0, ex.prof->Now(), m, ldy, k);
  });
  return Status::Ok();
}

Status Linear::RunScattered(const Exec& ex, const float* x, int m, const int32_t* col, float* y,
                           const LinearScratch& s) const {
  const WeightView& w = *w_;
  const kernels::KernelTable& K = *ex.K;
  const int n = w.rows, k = w.cols, kp = RoundUp(k, 4);
  if (w.dtype != WeightType::kInt8) return Status(StatusCode::kInternal, "RunScattered needs int8 weights");
  if (m <= 0) return Status::Ok();
  if (ex.fault && ex.fault->Hit()) return Status(StatusCode::kInternal, "injected fault in a linear layer");
  K.quantize_rows_s8(x, m, k, k, s.quantized, kp, s.quant_scales);
  const int8_t* wq = static_cast<const int8_t*>(w.data);
  // output rows split over threads in 8-row blocks, as Run does; the columns they write differ
  ForOutputParts(ex, m, n, k, [&](int b0, int n0, int n1) {
    K.gemm_s8_blocked_scatter(m, n1 - n0, k, s.quantized, kp, s.quant_scales, wq + size_t(b0) * kp * 8, w.scales + n0,
                              bias_ ? bias_ + n0 : nullptr, col + n0, y, n);
  });
  return Status::Ok();
}

void Linear::QuantizeRows(const Exec& ex, const float* x, int r0, int r1, int8_t* q, float* q_scales) const {
  const int k = w_->cols, kp = RoundUp(k, 4);
  if (r1 > r0)
    ex.K->quantize_rows_s8(x + size_t(r0) * k, r1 - r0, k, k, q + size_t(r0) * kp, kp, q_scales + r0);
}

void Linear::RunColumns(const Exec& ex, const int8_t* q, const float* q_scales, int m, int part, int parts, float* y,
                        const float* residual, Act act) const {
  const auto [b0, n0, n1] = PartOfBlocks(w_->rows, part, parts);
  if (m > 0 && n1 > n0) GemmOutputs(ex, q, q_scales, m, b0, n0, n1, y, residual, act);
}

void Linear::GemmOutputs(const Exec& ex, const int8_t* q, const float* q_scales, int m, int b0, int n0, int n1,
                         float* y, const float* residual, Act act) const {
  const WeightView& w = *w_;
  const int n = w.rows, k = w.cols, kp = RoundUp(k, 4);
  ex.K->gemm_s8_blocked(m, n1 - n0, k, q, kp, q_scales, static_cast<const int8_t*>(w.data) + size_t(b0) * kp * 8,
                        w.scales + n0, bias_ ? bias_ + n0 : nullptr, residual ? residual + n0 : nullptr, n, y + n0, n,
                        act);
}

Status Linear::Run(const Exec& ex, const float* x, int m, float* y, const float* residual, Act act,
                   const LinearScratch& s) const {
  const WeightView& w = *w_;
  const kernels::KernelTable& K = *ex.K;
  const int n = w.rows, k = w.cols;
  if (m <= 0) return Status::Ok();
  if (ex.fault && ex.fault->Hit()) return Status(StatusCode::kInternal, "injected fault in a linear layer");
  if (w.dtype == WeightType::kInt8) {
    const int kp = RoundUp(k, 4);
    const int8_t* wq = static_cast<const int8_t*>(w.data);
    if (SplitByRows(ex, m, n, k)) {
      // Each thread quantizes and multiplies its own rows (multiples of 4, the tiles' row
      // panel), all output columns: the rows stay in its cache for the next layer.
      const int parts = ex.pool->threads();
      ex.pool->ParallelFor(parts, [&](int p, int thread) {
        const int r0 = (m * p / parts) & ~3, r1 = p + 1 == parts ? m : (m * (p + 1) / parts) & ~3;
        if (r1 <= r0) return;
        const uint64_t t0 = ex.prof && thread > 0 ? ex.prof->Now() : 0;
        const size_t a0 = size_t(r0) * kp, y0 = size_t(r0) * n;
        QuantizeRows(ex, x, r0, r1, s.quantized, s.quant_scales);
        K.gemm_s8_blocked(r1 - r0, n, k, s.quantized + a0, kp, s.quant_scales + r0, wq, w.scales, bias_,
                          residual ? residual + y0 : nullptr, n, y + y0, n, act);
        if (ex.prof && thread > 0) ex.prof->Part(Op::kLinearPart, -1, thread, t0, ex.prof->Now(), r1 - r0, n, k);
      });
      return Status::Ok();
    }
    K.quantize_rows_s8(x, m, k, k, s.quantized, kp, s.quant_scales);
    // Output channels split over threads in blocks of 8 rows (BlockedN8K4 blocks).
    ForOutputParts(ex, m, n, k, [&](int b0, int n0, int n1) {
      GemmOutputs(ex, s.quantized, s.quant_scales, m, b0, n0, n1, y, residual, act);
    });
    return Status::Ok();
  }
  float* dst = residual ? s.staging : y;
#ifdef MTLITE_USE_XNNPACK
  xnn_operator_t op = static_cast<xnn_operator_t>(xnn_op_);
  xnn_status st = xnn_setup_fully_connected_nc_f32(op, size_t(m), x, dst, static_cast<pthreadpool_t>(ex.xnn_pool));
  if (st == xnn_status_success) st = xnn_run_operator(op, static_cast<pthreadpool_t>(ex.xnn_pool));
  if (st != xnn_status_success)
    return Status(StatusCode::kInternal, "XNNPACK fully-connected " + std::to_string(m) + "x" + std::to_string(k) +
                                             " -> " + std::to_string(n) + " failed (status " +
                                             std::to_string(int(st)) + ")");
#else
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float sum = 0;
      if (w.dtype == WeightType::kF32) {
        sum = K.dot_f32(x + size_t(i) * k, static_cast<const float*>(w.data) + size_t(j) * k, k);
      } else {
        const uint16_t* h = static_cast<const uint16_t*>(w.data) + size_t(j) * k;
        for (int q = 0; q < k; ++q) sum += x[size_t(i) * k + q] * layout::F16ToF32(h[q]);
      }
      dst[size_t(i) * n + j] = bias_ ? sum + bias_[j] : sum;
    }
#endif
  if (residual) {
    for (size_t i = 0; i < size_t(m) * n; ++i) y[i] = dst[i] + residual[i];
  }
  if (act != Act::kNone) K.activation(y, m * n, act);
  return Status::Ok();
}

}  // namespace detail
}  // namespace mtlite

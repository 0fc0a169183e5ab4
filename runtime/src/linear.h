// A linear layer y = act(x W^T + b (+ residual)) over one weight of the model, read in place:
//  * int8 (the deployment format): activations quantized per row, the kernel table's exact int8
//    GEMM on the BlockedN8K4 weights, output channels split over the thread pool in 8-row blocks;
//  * f32 / f16 with XNNPACK: an f32 fully-connected operator created once per Translator
//    (XNNPACK packs its own copy of the weights at creation);
//  * f32 / f16 without XNNPACK: the scalar path (dot products over the stored rows).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "kernels.h"
#include "model_data.h"
#include "mtlite/mtlite.hpp"
#include "profiler.h"
#include "thread_pool.h"

namespace mtlite {
namespace detail {

// Test hook: makes the n-th linear layer run from now (0 = the next one) fail with kInternal, so
// tests can check that a failure deep in the forward pass reaches the caller as a Status.
// Safe to hit from several threads (a row-parallel decoder step runs layers on each).
struct FaultInjector {
  std::atomic<long> countdown{-1};  // < 0: off
  bool Hit() {
    long c = countdown.load(std::memory_order_relaxed);
    while (c >= 0)
      if (countdown.compare_exchange_weak(c, c - 1, std::memory_order_relaxed)) return c == 0;
    return false;
  }
};

// What every layer runs with: the kernel table and the translator's thread pool.
struct Exec {
  const kernels::KernelTable* K = nullptr;
  const ThreadPool* pool = nullptr;
  FaultInjector* fault = nullptr;
  void* xnn_pool = nullptr;  // pthreadpool_t for XNNPACK operators (f32/f16 with threads), or null
  Profiler* prof = nullptr;  // non-null while a profiled call runs
};

// Arena scratch of a linear layer, sized for the most rows it runs with (arena_plan.cc).
struct LinearScratch {
  int8_t* quantized = nullptr;  // int8: [rows][RoundUp(k, 4)]
  float* quant_scales = nullptr;
  float* staging = nullptr;     // f32/f16: [rows][n] output before the residual add
};

class Linear {
 public:
  Linear() = default;
  Linear(const Linear&) = delete;
  Linear& operator=(const Linear&) = delete;
  ~Linear();

  Status Init(const WeightView& w, const VectorView& bias);
  // y[m][n] = act(x[m][k] W^T + bias (+ residual[m][n])); residual may alias y exactly.
  Status Run(const Exec& ex, const float* x, int m, float* y, const float* residual, kernels::Act act,
             const LinearScratch& scratch) const;

  // int8 only: the output rows of `nblocks` 8-row blocks (ascending block indices), written as
  // y[m][nblocks * 8] (column c = row blocks[c / 8] * 8 + c % 8; rows beyond out_features() give
  // 0). Reads only those blocks' weights: the vocabulary shortlist's projection.
  Status RunBlocks(const Exec& ex, const float* x, int m, const int32_t* blocks, int nblocks, float* y,
                   const LinearScratch& scratch) const;
  size_t block_bytes(int nblocks) const;  // weight bytes RunBlocks streams
  // int8 only: Run without residual or activation, output row r written to y's column col[r]
  // (y[m][out_features()]): a projection stored in a shortlist's row order, back in token order.
  Status RunScattered(const Exec& ex, const float* x, int m, const int32_t* col, float* y,
                      const LinearScratch& scratch) const;

  // int8 only, for threads that share one layer (a row-parallel decoder step's team,
  // decoder_step.cc). QuantizeRows: rows [r0, r1) of x (k inputs each) as the kernels' int8
  // activations, row i at q + i * RoundUp(k, 4), its scale at q_scales[i]. RunColumns: Run's
  // output columns of the part-th of `parts` even shares of the 8-row weight blocks, for all m
  // rows quantized so (the same values as Run gives them).
  void QuantizeRows(const Exec& ex, const float* x, int r0, int r1, int8_t* q, float* q_scales) const;
  void RunColumns(const Exec& ex, const int8_t* q, const float* q_scales, int m, int part, int parts, float* y,
                  const float* residual, kernels::Act act) const;

  bool int8() const { return w_ && w_->dtype == WeightType::kInt8; }
  int in_features() const { return w_ ? w_->cols : 0; }
  int out_features() const { return w_ ? w_->rows : 0; }
  size_t weight_bytes() const;  // bytes of the weights (and scales) one Run streams

 private:
  // int8: y's output rows [n0, n1) (from 8-row block b0) for m rows quantized at q (stride
  // RoundUp(k, 4)), residual and y with stride out_features().
  void GemmOutputs(const Exec& ex, const int8_t* q, const float* q_scales, int m, int b0, int n0, int n1, float* y,
                   const float* residual, kernels::Act act) const;

  const WeightView* w_ = nullptr;
  const float* bias_ = nullptr;
  void* xnn_op_ = nullptr;  // xnn_operator_t (f32/f16 with XNNPACK)
};

kernels::Act ToAct(ActivationKind a);

}  // namespace detail
}  // namespace mtlite

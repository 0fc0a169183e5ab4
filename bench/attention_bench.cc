// Float kernels of attention / layer plumbing, every kernel table (reference vs SIMD):
// softmax_masked, layer_norm, dot_f32, activation, quantize_rows_s8, the search kernels over a
// vocabulary row, and one decoder self-attention step built from them (attn_scores_heads,
// softmax, attn_context_heads), as the translator runs it.
// items_per_second counts elements (for attention_step: keys x heads).
// Suggested: --benchmark_repetitions=3 --benchmark_report_aggregates_only=true (medians).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kernels.h"

namespace {

using mtlite::kernels::Act;
using mtlite::kernels::KernelTable;

std::vector<float> Random(size_t n, float scale, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = nd(rng);
  return v;
}

// In-place kernels work on a batch of rows (64K floats, L2 resident) that is refilled outside
// the timed region: copying one small row per iteration measured the copy (and its 4K-aliasing
// stalls), not the kernel.
constexpr size_t kBatchFloats = 65536;

void BM_Softmax(benchmark::State& st, const KernelTable* t, int n) {
  const int rows = int(kBatchFloats / size_t(n));
  const std::vector<float> src = Random(size_t(rows) * n, 3.0f, 1);
  std::vector<float> mask(n, 0.0f), x = src;
  for (int j = n - n / 8; j < n; ++j) mask[j] = -INFINITY;  // padded keys
  for (auto _ : st) {
    for (int r = 0; r < rows; ++r) t->softmax_masked(x.data() + size_t(r) * n, n, mask.data());
    benchmark::DoNotOptimize(x.data());
    st.PauseTiming();
    x = src;
    st.ResumeTiming();
  }
  st.SetItemsProcessed(int64_t(st.iterations()) * rows * n);
}

void BM_LayerNorm(benchmark::State& st, const KernelTable* t, int m, int d) {
  const std::vector<float> x = Random(size_t(m) * d, 2.0f, 2), g = Random(d, 1.0f, 3),
                           b = Random(d, 0.1f, 4);
  std::vector<float> y(x.size());
  for (auto _ : st) {
    t->layer_norm(x.data(), m, d, g.data(), b.data(), 1e-5f, y.data());
    benchmark::DoNotOptimize(y.data());
  }
  st.SetItemsProcessed(int64_t(st.iterations()) * m * d);
}

void BM_Dot(benchmark::State& st, const KernelTable* t, int n) {
  const std::vector<float> a = Random(n, 1.0f, 5), b = Random(n, 1.0f, 6);
  for (auto _ : st) benchmark::DoNotOptimize(t->dot_f32(a.data(), b.data(), n));
  st.SetItemsProcessed(int64_t(st.iterations()) * n);
}

// The search kernels over one vocabulary row of logits.
void BM_MaxSumExp(benchmark::State& st, const KernelTable* t, int n) {
  const std::vector<float> x = Random(n, 3.0f, 7);
  float mx;
  for (auto _ : st) benchmark::DoNotOptimize(t->max_sum_exp(x.data(), n, &mx));
  st.SetItemsProcessed(int64_t(st.iterations()) * n);
}

void BM_Argmax(benchmark::State& st, const KernelTable* t, int n) {
  const std::vector<float> x = Random(n, 3.0f, 8);
  for (auto _ : st) benchmark::DoNotOptimize(t->argmax(x.data(), n));
  st.SetItemsProcessed(int64_t(st.iterations()) * n);
}

void BM_Activation(benchmark::State& st, const KernelTable* t, Act act, int n) {
  const int rows = int(kBatchFloats / size_t(n));
  const std::vector<float> src = Random(size_t(rows) * n, 3.0f, 9);
  std::vector<float> x = src;
  for (auto _ : st) {
    for (int r = 0; r < rows; ++r) t->activation(x.data() + size_t(r) * n, n, act);
    benchmark::DoNotOptimize(x.data());
    st.PauseTiming();
    x = src;
    st.ResumeTiming();
  }
  st.SetItemsProcessed(int64_t(st.iterations()) * rows * n);
}

void BM_Quantize(benchmark::State& st, const KernelTable* t, int m, int k) {
  const std::vector<float> x = Random(size_t(m) * k, 2.0f, 10);
  const int kp = (k + 3) / 4 * 4;
  std::vector<int8_t> q(size_t(m) * kp);
  std::vector<float> s(m);
  for (auto _ : st) {
    t->quantize_rows_s8(x.data(), m, k, k, q.data(), kp, s.data());
    benchmark::DoNotOptimize(q.data());
  }
  st.SetItemsProcessed(int64_t(st.iterations()) * m * k);
}

// One decoder self-attention step for one query, as the translator runs it over its KV cache
// (rows of heads x head_dim floats): every head's scores over T cached keys (attn_scores_heads),
// masked softmax per head, then the weighted sums of T cached values (attn_context_heads).
void BM_AttentionStep(benchmark::State& st, const KernelTable* t, int heads, int head_dim, int T) {
  const int d = heads * head_dim;
  const std::vector<float> q = Random(size_t(d), 1.0f, 11), K = Random(size_t(T) * d, 1.0f, 12),
                           V = Random(size_t(T) * d, 1.0f, 13);
  std::vector<float> scores(size_t(heads) * T), out(static_cast<size_t>(d));
  const float scale = 1.0f / std::sqrt(float(head_dim));
  for (auto _ : st) {
    t->attn_scores_heads(q.data(), K.data(), d, nullptr, T, head_dim, heads, scale, scores.data(), T);
    for (int h = 0; h < heads; ++h) t->softmax_masked(scores.data() + size_t(h) * T, T, nullptr);
    t->attn_context_heads(scores.data(), T, V.data(), d, nullptr, T, head_dim, heads, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  st.SetItemsProcessed(int64_t(st.iterations()) * heads * T);
}

// The two halves of BM_AttentionStep alone: every head's scores over T keys, or the weighted sums.
void BM_AttentionScores(benchmark::State& st, const KernelTable* t, int heads, int head_dim, int T) {
  const int d = heads * head_dim;
  const std::vector<float> q = Random(size_t(d), 1.0f, 11), K = Random(size_t(T) * d, 1.0f, 12);
  std::vector<float> scores(size_t(heads) * T);
  const float scale = 1.0f / std::sqrt(float(head_dim));
  for (auto _ : st) {
    t->attn_scores_heads(q.data(), K.data(), d, nullptr, T, head_dim, heads, scale, scores.data(), T);
    benchmark::DoNotOptimize(scores.data());
  }
  st.SetItemsProcessed(int64_t(st.iterations()) * heads * T);
}
void BM_AttentionContext(benchmark::State& st, const KernelTable* t, int heads, int head_dim, int T) {
  const int d = heads * head_dim;
  const std::vector<float> p = Random(size_t(heads) * T, 1.0f, 14), V = Random(size_t(T) * d, 1.0f, 13);
  std::vector<float> out(static_cast<size_t>(d));
  for (auto _ : st) {
    t->attn_context_heads(p.data(), T, V.data(), d, nullptr, T, head_dim, heads, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  st.SetItemsProcessed(int64_t(st.iterations()) * heads * T);
}

void RegisterAll() {
  const KernelTable* tables[8];
  const int nt = mtlite::kernels::AvailableKernels(tables, 8);
  char name[160];
  for (int i = 0; i < nt; ++i) {
    const KernelTable* t = tables[i];
    for (int n : {8, 16, 33, 64, 128, 256}) {
      std::snprintf(name, sizeof name, "softmax/%s/n%d", t->name, n);
      benchmark::RegisterBenchmark(name, BM_Softmax, t, n);
    }
    for (auto md : {std::pair<int, int>{1, 256}, {16, 256}, {1, 512}, {64, 512}}) {
      std::snprintf(name, sizeof name, "layer_norm/%s/m%d/d%d", t->name, md.first, md.second);
      benchmark::RegisterBenchmark(name, BM_LayerNorm, t, md.first, md.second);
    }
    for (int n : {64, 256}) {
      std::snprintf(name, sizeof name, "dot/%s/n%d", t->name, n);
      benchmark::RegisterBenchmark(name, BM_Dot, t, n);
    }
    const std::pair<Act, const char*> acts[] = {
        {Act::kSiLU, "silu"}, {Act::kReLU, "relu"}, {Act::kGELU, "gelu"}, {Act::kGELUTanh, "gelu_tanh"}};
    for (auto a : acts) {
      std::snprintf(name, sizeof name, "activation/%s/%s/n1024", t->name, a.second);
      benchmark::RegisterBenchmark(name, BM_Activation, t, a.first, 1024);
    }
    for (auto mk : {std::pair<int, int>{1, 256}, {1, 1024}, {16, 256}, {64, 512}}) {
      std::snprintf(name, sizeof name, "quantize/%s/m%d/k%d", t->name, mk.first, mk.second);
      benchmark::RegisterBenchmark(name, BM_Quantize, t, mk.first, mk.second);
    }
    for (int n : {8001, 58101}) {
      std::snprintf(name, sizeof name, "max_sum_exp/%s/n%d", t->name, n);
      benchmark::RegisterBenchmark(name, BM_MaxSumExp, t, n);
      std::snprintf(name, sizeof name, "argmax/%s/n%d", t->name, n);
      benchmark::RegisterBenchmark(name, BM_Argmax, t, n);
    }
    for (int T : {16, 64}) {
      std::snprintf(name, sizeof name, "attention_step/%s/h4/d64/T%d", t->name, T);
      benchmark::RegisterBenchmark(name, BM_AttentionStep, t, 4, 64, T);
    }
    // OPUS-MT base's decoder: 8 heads of 64
    std::snprintf(name, sizeof name, "attention_step/%s/h8/d64/T32", t->name);
    benchmark::RegisterBenchmark(name, BM_AttentionStep, t, 8, 64, 32);
    std::snprintf(name, sizeof name, "attention_scores/%s/h8/d64/T32", t->name);
    benchmark::RegisterBenchmark(name, BM_AttentionScores, t, 8, 64, 32);
    std::snprintf(name, sizeof name, "attention_context/%s/h8/d64/T32", t->name);
    benchmark::RegisterBenchmark(name, BM_AttentionContext, t, 8, 64, 32);
  }
}

}  // namespace

int main(int argc, char** argv) {
  RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

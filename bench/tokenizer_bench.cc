// SentencePiece encode / decode speed of the runtime tokenizer over the dev set (the model's own
// tables, no protobuf). MTLITE_BENCH_MODEL (default build/models/demo.int8.mtlite) and
// MTLITE_BENCH_TEXT (default tests/data/dev/multi30k.val.en) name the inputs, relative to the
// working directory.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "model_data.h"
#include "mtlite/mtlite.hpp"
#include "tokenizer.h"

namespace {

const char* Env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

struct Inputs {
  std::shared_ptr<const mtlite::Model> model;
  std::vector<std::string> lines;
  size_t bytes = 0;
};

const Inputs* Load() {
  static Inputs in = [] {
    Inputs r;
    auto m = mtlite::Model::Load(Env("MTLITE_BENCH_MODEL", "build/models/demo.int8.mtlite"));
    if (m.ok()) r.model = m.value();
    std::ifstream f(Env("MTLITE_BENCH_TEXT", "tests/data/dev/multi30k.val.en"));
    for (std::string line; std::getline(f, line);) {
      r.bytes += line.size();
      r.lines.push_back(line);
    }
    return r;
  }();
  return in.model && !in.lines.empty() ? &in : nullptr;
}

void BM_Encode(benchmark::State& state) {
  const Inputs* in = Load();
  if (!in) return state.SkipWithError("model or text not found (MTLITE_BENCH_MODEL / MTLITE_BENCH_TEXT)");
  const mtlite::SpmTokenizer tok(in->model->data().source_spm, in->model->data().source_vocab);
  constexpr size_t kMaxInput = 4096;
  std::vector<unsigned char> ws(mtlite::SpmTokenizer::WorkspaceBytes(kMaxInput));
  std::vector<int32_t> ids(kMaxInput);
  size_t tokens = 0;
  for (auto _ : state) {
    for (const std::string& l : in->lines) {
      int n = 0;
      if (!tok.Encode(l, ws.data(), ws.size(), ids.data(), int(ids.size()), &n).ok())
        return state.SkipWithError("encode failed");
      tokens += size_t(n);
    }
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(in->bytes));
  state.counters["sentences/s"] =
      benchmark::Counter(double(state.iterations()) * double(in->lines.size()), benchmark::Counter::kIsRate);
  state.counters["tokens/s"] = benchmark::Counter(double(tokens), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Encode)->Unit(benchmark::kMillisecond);

void BM_EncodeDecode(benchmark::State& state) {
  const Inputs* in = Load();
  if (!in) return state.SkipWithError("model or text not found (MTLITE_BENCH_MODEL / MTLITE_BENCH_TEXT)");
  const auto& md = in->model->data();
  const mtlite::SpmTokenizer src(md.source_spm, md.source_vocab), tgt(md.target_spm, md.target_vocab);
  constexpr size_t kMaxInput = 4096;
  std::vector<unsigned char> ws(mtlite::SpmTokenizer::WorkspaceBytes(kMaxInput));
  std::vector<int32_t> ids(kMaxInput);
  std::vector<char> text(kMaxInput * 8);
  for (auto _ : state) {
    for (const std::string& l : in->lines) {
      int n = 0;
      size_t len = 0;
      if (!src.Encode(l, ws.data(), ws.size(), ids.data(), int(ids.size()), &n).ok() ||
          !tgt.Decode(ids.data(), n, text.data(), text.size(), &len).ok())
        return state.SkipWithError("encode/decode failed");
      benchmark::DoNotOptimize(len);
    }
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(in->bytes));
}
BENCHMARK(BM_EncodeDecode)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();

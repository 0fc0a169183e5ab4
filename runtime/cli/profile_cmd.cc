// mtlite profile -m MODEL [--input FILE | TEXT ...] [--beam --batch --threads --max-length]
//                [--repeat N] [--trace FILE] [--json FILE] [--layers] [--roofline] [--shortlist]
// Translates the input with profiling on (TranslateOptions::profile) and reports where the time
// goes: a table per op kind and per layer (calls, time, share, bytes read, GB/s, GOPS), time per
// component, latency percentiles, time to first token, ms per decoder step, tokens/s and memory;
// optionally a Chrome Trace Event Format trace and the same report as JSON (docs/profiling.md
// documents both formats and every field).
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commands.h"
#include "json_writer.h"
#include "kernels.h"
#include "line_input.h"
#include "marian_layout.h"
#include "measure.h"
#include "mtlite/mtlite.hpp"
#include "output_file.h"
#include "profile_trace.h"

namespace mtlite {
namespace cli {

// `mtlite profile --help`: what the command does.
constexpr char kProfileSummary[] =
    "Translates the input with the profiler on and prints where the time goes: per op kind and\n"
    "per layer (calls, total ms, mean us, % of translation time, bytes read, GB/s, GOPS), per\n"
    "component, latency p50/p90/p99, time to first token, ms per decoder step, tokens/s, model\n"
    "file, arena and peak RSS. --trace writes a Chrome trace (Perfetto, chrome://tracing), --json\n"
    "the report. Blank input lines are skipped. See docs/profiling.md.";

namespace {

using Clock = std::chrono::steady_clock;

uint64_t NsBetween(Clock::time_point a, Clock::time_point b) {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
}

// One (op, layer) row of the runtime's aggregates, summed over the measured calls.
struct Row {
  std::string op, component, parent;
  int layer = -1;
  uint64_t calls = 0, ns = 0;
  uint64_t bytes = 0, macs = 0;  // the row's own spans
  uint64_t incl_bytes = 0, incl_macs = 0;  // with the rows nested in it
};

// One op kind: its rows summed over layers.
struct OpRow {
  std::string op, component, parent;
  int depth = 0;
  uint64_t calls = 0, ns = 0, self_ns = 0, incl_bytes = 0, incl_macs = 0;
};

// One measured translate call.
struct Call {
  uint64_t start_ns = 0, wall_ns = 0;  // CLI clock around TranslateViews, from the run's start
  uint64_t translate_ns = 0;           // the runtime's top-level span
  int64_t ttft_ns = -1;                // end of the first search step (first token chosen)
  int sentences = 0, steps = 0;
  int64_t tokens = 0;                  // generated target tokens incl. </s>
};

struct Roofline {
  double cache_gbs = 0, memory_gbs = 0, gemm_gops = 0;
  size_t cache_bytes = 0, memory_bytes = 0;
  int m = 0, n = 0, k = 0;
  std::string kernels;
};

// Everything a run measured.
struct Measured {
  std::vector<Row> rows;  // ProfileView entry order (op-major)
  std::vector<Call> calls;
  size_t sentences = 0, skipped_blank = 0, dropped_events = 0, trace_events = 0;
  int passes = 1, warmup_passes = 0;
  double warmup_ms = 0;
  size_t arena_bytes = 0, arena_bytes_unprofiled = 0, file_bytes = 0;
  long peak_rss_kb = -1, vm_hwm_kb = -1;
  bool roofline = false;
  Roofline roof;
};

// ---------------------------------------------------------------------------- derived numbers

double Ms(uint64_t ns) { return double(ns) * 1e-6; }
double Gbs(uint64_t bytes, uint64_t ns) { return ns ? double(bytes) / double(ns) : 0; }      // bytes/ns = GB/s
double Gops(uint64_t macs, uint64_t ns) { return ns ? 2.0 * double(macs) / double(ns) : 0; }  // 2 ops per MAC

const Row* FindRow(const std::vector<Row>& rows, const std::string& op, int layer) {
  for (const Row& r : rows)
    if (r.op == op && r.layer == layer) return &r;
  return nullptr;
}

// Adds every row's own bytes and MACs to the rows it nests in: the parent op at the same layer
// when that op is per-layer (recorded at this layer), else at layer -1.
void RollUp(std::vector<Row>* rows) {
  std::map<std::pair<std::string, int>, size_t> index;
  for (size_t i = 0; i < rows->size(); ++i) index[{(*rows)[i].op, (*rows)[i].layer}] = i;
  for (Row& r : *rows) {
    r.incl_bytes = 0;
    r.incl_macs = 0;
  }
  for (size_t i = 0; i < rows->size(); ++i) {
    const Row& r = (*rows)[i];
    if (!r.bytes && !r.macs) continue;
    size_t at = i;
    for (int guard = 0; guard < 64; ++guard) {
      Row& a = (*rows)[at];
      a.incl_bytes += r.bytes;
      a.incl_macs += r.macs;
      if (a.parent.empty()) break;
      auto p = index.find({a.parent, a.layer});
      if (p == index.end() || (*rows)[p->second].calls == 0) p = index.find({a.parent, -1});
      if (p == index.end()) break;
      at = p->second;
    }
  }
}

// Rows summed over layers, in first-appearance order, with nesting depth and self time.
std::vector<OpRow> ByOp(const std::vector<Row>& rows) {
  std::vector<OpRow> ops;
  std::map<std::string, size_t> index;
  for (const Row& r : rows) {
    auto it = index.find(r.op);
    if (it == index.end()) {
      it = index.emplace(r.op, ops.size()).first;
      OpRow o;
      o.op = r.op;
      o.component = r.component;
      o.parent = r.parent;
      ops.push_back(o);
    }
    OpRow& o = ops[it->second];
    o.calls += r.calls;
    o.ns += r.ns;
    o.incl_bytes += r.incl_bytes;
    o.incl_macs += r.incl_macs;
  }
  for (OpRow& o : ops) {
    uint64_t children = 0;
    for (const OpRow& c : ops)
      if (c.parent == o.op) children += c.ns;
    o.self_ns = o.ns > children ? o.ns - children : 0;
    std::string p = o.parent;
    for (int guard = 0; !p.empty() && guard < 64; ++guard) {
      ++o.depth;
      auto it = index.find(p);
      p = it == index.end() ? std::string() : ops[it->second].parent;
    }
  }
  return ops;
}

// Components in report order; the root's self time (work outside every named span) is "other".
const char* const kComponents[] = {"tokenizer",          "encoder", "cross_kv",          "decoder.self_attn",
                                   "decoder.cross_attn", "decoder.ffn", "decoder.other", "output_projection",
                                   "search",             "finish",  "other"};

std::vector<std::pair<std::string, uint64_t>> Components(const std::vector<OpRow>& ops) {
  std::vector<std::pair<std::string, uint64_t>> out;
  for (const char* c : kComponents) out.push_back({c, 0});
  for (const OpRow& o : ops) {
    if (o.calls == 0) continue;
    const std::string name = o.parent.empty() ? "other" : o.component;
    for (auto& [c, ns] : out)
      if (c == name) ns += o.self_ns;
  }
  return out;
}

struct Stats {
  double p50 = 0, p90 = 0, p99 = 0, mean = 0, max = 0;
  size_t n = 0;
};
Stats Summarize(const std::vector<double>& v) {
  Stats s;
  s.n = v.size();
  if (v.empty()) return s;
  s.p50 = Percentile(v, 50);
  s.p90 = Percentile(v, 90);
  s.p99 = Percentile(v, 99);
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / double(v.size());
  s.max = *std::max_element(v.begin(), v.end());
  return s;
}

// The numbers of the summary, shared by the table and the JSON report.
struct Summary {
  uint64_t wall_ns = 0, translate_ns = 0;
  Stats latency_ms, ttft_ms;
  uint64_t steps = 0, step_ns = 0, search_ns = 0, step_bytes = 0;
  int64_t tokens = 0;
  int sentences = 0;
};

Summary Summarize(const Measured& m, const std::vector<OpRow>& ops) {
  Summary s;
  std::vector<double> lat, ttft;
  for (const Call& c : m.calls) {
    s.wall_ns += c.wall_ns;
    s.translate_ns += c.translate_ns;
    s.steps += uint64_t(c.steps);
    s.tokens += c.tokens;
    s.sentences += c.sentences;
    lat.push_back(Ms(c.wall_ns));
    if (c.ttft_ns >= 0) ttft.push_back(Ms(uint64_t(c.ttft_ns)));
  }
  s.latency_ms = Summarize(lat);
  s.ttft_ms = Summarize(ttft);
  for (const OpRow& o : ops) {
    if (o.op == "decoder.step") {
      s.step_ns = o.ns;
      s.step_bytes = o.incl_bytes;
    }
    if (o.op == "search") s.search_ns = o.ns;
  }
  return s;
}

// ---------------------------------------------------------------------------- text report

std::string Cell(double v, const char* fmt, bool show) {
  if (!show) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

void PrintHeader(const char* first) {
  std::printf("%-40s %8s %11s %10s %7s %10s %7s %7s\n", first, "calls", "total ms", "mean us", "% time", "MB read",
              "GB/s", "GOPS");
}

void PrintLine(const std::string& name, uint64_t calls, uint64_t ns, uint64_t bytes, uint64_t macs, uint64_t total_ns) {
  std::printf("%-40s %8" PRIu64 " %11.3f %10.2f %7.2f %10s %7s %7s\n", name.c_str(), calls, Ms(ns),
              calls ? double(ns) * 1e-3 / double(calls) : 0.0, total_ns ? 100.0 * double(ns) / double(total_ns) : 0.0,
              Cell(double(bytes) * 1e-6, "%.2f", bytes > 0).c_str(), Cell(Gbs(bytes, ns), "%.2f", bytes > 0).c_str(),
              Cell(Gops(macs, ns), "%.2f", macs > 0).c_str());
}

void PrintText(const ProfileArgs& a, const Model& model, const Measured& m, const std::vector<OpRow>& ops,
               const Summary& s) {
  const ModelConfig& c = model.config();
  std::printf("mtlite profile: %s (%s, %zu bytes), kernels %s\n", a.model.c_str(), layout::DTypeName(c.weight_type),
              m.file_bytes, m.roof.kernels.c_str());
  std::printf("beam %d, batch %d, %d thread%s, max length %d%s; %zu sentences x %d pass%s", a.beam, a.batch,
              a.threads, a.threads == 1 ? "" : "s", a.max_length, a.shortlist ? ", shortlist" : "", m.sentences,
              m.passes, m.passes == 1 ? "" : "es");
  if (m.warmup_passes) std::printf(" (pass 1: warm-up, %.1f ms, excluded)", m.warmup_ms);
  std::printf("; %zu calls measured%s\n\n", m.calls.size(), m.skipped_blank ? " (blank lines skipped)" : "");

  const uint64_t total = s.translate_ns;
  PrintHeader("op (summed over layers)");
  for (const OpRow& o : ops) {
    if (o.calls == 0) continue;
    PrintLine(std::string(size_t(2 * o.depth), ' ') + o.op, o.calls, o.ns, o.incl_bytes, o.incl_macs, total);
  }

  std::printf("\n");
  PrintHeader(a.layers ? "layer / op" : "layer");
  for (const char* layer_op : {"encoder.layer", "decoder.layer"}) {
    for (int l = 0;; ++l) {
      const Row* r = FindRow(m.rows, layer_op, l);
      if (!r || r->calls == 0) break;
      PrintLine(std::string(layer_op) + " " + std::to_string(l), r->calls, r->ns, r->incl_bytes, r->incl_macs, total);
      if (!a.layers) continue;
      for (const Row& x : m.rows)
        if (x.layer == l && x.parent == layer_op && x.calls)
          PrintLine("  " + x.op, x.calls, x.ns, x.incl_bytes, x.incl_macs, total);
    }
  }

  std::printf("\ntime per component (self time of its ops; %% of translation time):\n");
  for (const auto& [name, ns] : Components(ops))
    std::printf("  %-20s %10.3f ms %6.2f %%\n", name.c_str(), Ms(ns), total ? 100.0 * double(ns) / double(total) : 0.0);

  const char* unit = a.batch == 1 ? "per sentence" : "per call";
  std::printf("\nlatency %s%s: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, mean %.3f ms, max %.3f ms (%zu calls)\n", unit,
              a.batch == 1 ? "" : (" of " + std::to_string(a.batch) + " sentences").c_str(), s.latency_ms.p50,
              s.latency_ms.p90, s.latency_ms.p99, s.latency_ms.mean, s.latency_ms.max, s.latency_ms.n);
  std::printf("time to first token (tokenize + encoder + cross K/V + first step and its search): p50 %.3f ms, "
              "p90 %.3f ms, mean %.3f ms\n",
              s.ttft_ms.p50, s.ttft_ms.p90, s.ttft_ms.mean);
  if (s.steps) {
    std::printf("decoder step: %.2f us mean (+ search %.2f us); %.1f steps per call; %.2f MB read per step\n",
                double(s.step_ns) * 1e-3 / double(s.steps), double(s.search_ns) * 1e-3 / double(s.steps),
                double(s.steps) / double(std::max<size_t>(1, m.calls.size())),
                double(s.step_bytes) * 1e-6 / double(s.steps));
  }
  const double secs = double(s.wall_ns) * 1e-9;
  std::printf("throughput: %.1f target tokens/s (incl. </s>), %.2f sentences/s; %" PRId64 " tokens in %.3f s\n",
              secs > 0 ? double(s.tokens) / secs : 0.0, secs > 0 ? s.sentences / secs : 0.0, s.tokens, secs);
  std::printf("memory: model file %zu bytes (mapped), arena %zu bytes (%zu without the profiler's records), "
              "peak RSS %.1f MiB\n",
              m.file_bytes, m.arena_bytes, m.arena_bytes_unprofiled, double(m.peak_rss_kb) / 1024.0);
  std::printf("coverage: top-level spans %.2f %% of the measured call time", s.wall_ns ? 100.0 * double(s.translate_ns) / double(s.wall_ns) : 0.0);
  if (m.dropped_events) std::printf("; %zu trace events dropped (buffer full)", m.dropped_events);
  std::printf("\n");
  if (m.roofline) {
    std::printf("roofline (this host, 1 thread): read %.2f GB/s (%zu MiB buffer), %.2f GB/s (%zu MiB buffer); "
                "int8 GEMM %.1f GOPS (m=%d n=%d k=%d, %s)\n",
                m.roof.cache_gbs, m.roof.cache_bytes >> 20, m.roof.memory_gbs, m.roof.memory_bytes >> 20,
                m.roof.gemm_gops, m.roof.m, m.roof.n, m.roof.k, m.roof.kernels.c_str());
  }
}

// ---------------------------------------------------------------------------- JSON report

void StatsJson(JsonWriter* w, const char* key, const Stats& s) {
  w->Key(key).BeginObject(JsonWriter::kInline).Key("p50").Fixed(s.p50, 4).Key("p90").Fixed(s.p90, 4);
  w->Key("p99").Fixed(s.p99, 4).Key("mean").Fixed(s.mean, 4).Key("max").Fixed(s.max, 4).Key("n").Uint(s.n);
  w->EndObject();
}

void RowJson(JsonWriter* w, uint64_t calls, uint64_t ns, uint64_t bytes, uint64_t macs, uint64_t total) {
  w->Key("calls").Uint(calls).Key("total_ms").Fixed(Ms(ns), 6);
  w->Key("mean_us").Fixed(calls ? double(ns) * 1e-3 / double(calls) : 0.0, 4);
  w->Key("percent").Fixed(total ? 100.0 * double(ns) / double(total) : 0.0, 4);
  w->Key("bytes").Uint(bytes).Key("macs").Uint(macs).Key("gbs").Fixed(Gbs(bytes, ns), 4).Key("gops").Fixed(Gops(macs, ns), 4);
}

std::string ReportJson(const ProfileArgs& a, const Model& model, const Measured& m, const std::vector<OpRow>& ops,
                       const Summary& s) {
  const ModelConfig& c = model.config();
  const uint64_t total = s.translate_ns;
  JsonWriter w;
  w.BeginObject().Key("format").String("mtlite-profile").Key("format_version").Int(1).Key("mtlite").String(Version());
  w.Key("model").BeginObject(JsonWriter::kInline).Key("path").String(a.model).Key("file_bytes").Uint(m.file_bytes);
  w.Key("weight_type").String(layout::DTypeName(c.weight_type)).Key("d_model").Int(c.d_model);
  w.Key("encoder_layers").Int(c.encoder_layers).Key("decoder_layers").Int(c.decoder_layers);
  w.Key("heads").Int(c.decoder_heads).Key("ffn").Int(c.decoder_ffn_dim).Key("target_vocab").Int(c.target_vocab_size);
  w.EndObject();
  w.Key("config").BeginObject(JsonWriter::kInline).Key("beam").Int(a.beam).Key("batch").Int(a.batch);
  w.Key("threads").Int(a.threads).Key("max_length").Int(a.max_length).Key("repeat").Int(a.repeat);
  w.Key("shortlist").Bool(a.shortlist).Key("warmup_passes").Int(m.warmup_passes).Key("kernels").String(m.roof.kernels).EndObject();
  w.Key("input").BeginObject(JsonWriter::kInline).Key("sentences").Uint(m.sentences);
  w.Key("blank_lines_skipped").Uint(m.skipped_blank).Key("calls").Uint(m.calls.size());
  w.Key("warmup_ms").Fixed(m.warmup_ms, 3).EndObject();

  const double secs = double(s.wall_ns) * 1e-9;
  w.Key("summary").BeginObject();
  w.Key("wall_ms").Fixed(Ms(s.wall_ns), 6).Key("translate_ms").Fixed(Ms(s.translate_ns), 6);
  w.Key("coverage").Fixed(s.wall_ns ? double(s.translate_ns) / double(s.wall_ns) : 0.0, 6);
  w.Key("latency_unit").String(a.batch == 1 ? "sentence" : "call");
  StatsJson(&w, "latency_ms", s.latency_ms);
  StatsJson(&w, "ttft_ms", s.ttft_ms);
  w.Key("decoder_steps").Uint(s.steps);
  w.Key("decoder_step_us").Fixed(s.steps ? double(s.step_ns) * 1e-3 / double(s.steps) : 0.0, 4);
  w.Key("search_us_per_step").Fixed(s.steps ? double(s.search_ns) * 1e-3 / double(s.steps) : 0.0, 4);
  w.Key("decoder_step_bytes").Uint(s.steps ? s.step_bytes / s.steps : 0);
  w.Key("target_tokens").Int(s.tokens).Key("sentences").Int(s.sentences);
  w.Key("tokens_per_s").Fixed(secs > 0 ? double(s.tokens) / secs : 0.0, 3);
  w.Key("sentences_per_s").Fixed(secs > 0 ? s.sentences / secs : 0.0, 3);
  w.Key("model_file_bytes").Uint(m.file_bytes).Key("arena_bytes").Uint(m.arena_bytes);
  w.Key("arena_bytes_without_profiling").Uint(m.arena_bytes_unprofiled);
  w.Key("peak_rss_kb").Int(m.peak_rss_kb).Key("vm_hwm_kb").Int(m.vm_hwm_kb);
  w.Key("trace_events").Uint(m.trace_events).Key("dropped_events").Uint(m.dropped_events);
  w.EndObject();

  w.Key("roofline");
  if (m.roofline) {
    w.BeginObject(JsonWriter::kInline).Key("cache_read_gbs").Fixed(m.roof.cache_gbs, 3);
    w.Key("cache_buffer_bytes").Uint(m.roof.cache_bytes).Key("memory_read_gbs").Fixed(m.roof.memory_gbs, 3);
    w.Key("memory_buffer_bytes").Uint(m.roof.memory_bytes).Key("gemm_gops").Fixed(m.roof.gemm_gops, 3);
    w.Key("gemm_m").Int(m.roof.m).Key("gemm_n").Int(m.roof.n).Key("gemm_k").Int(m.roof.k).EndObject();
  } else {
    w.Null();
  }

  w.Key("components").BeginArray();
  for (const auto& [name, ns] : Components(ops)) {
    w.BeginObject(JsonWriter::kInline).Key("name").String(name).Key("total_ms").Fixed(Ms(ns), 6);
    w.Key("percent").Fixed(total ? 100.0 * double(ns) / double(total) : 0.0, 4).EndObject();
  }
  w.EndArray();

  w.Key("ops").BeginArray();
  for (const OpRow& o : ops) {
    if (o.calls == 0) continue;
    w.BeginObject(JsonWriter::kInline).Key("op").String(o.op).Key("component").String(o.component);
    w.Key("parent").String(o.parent).Key("depth").Int(o.depth);
    RowJson(&w, o.calls, o.ns, o.incl_bytes, o.incl_macs, total);
    w.Key("self_ms").Fixed(Ms(o.self_ns), 6).EndObject();
  }
  w.EndArray();

  w.Key("layers").BeginArray();
  for (const Row& r : m.rows) {
    if (r.calls == 0 || r.layer < 0) continue;
    w.BeginObject(JsonWriter::kInline).Key("op").String(r.op).Key("layer").Int(r.layer);
    w.Key("component").String(r.component).Key("parent").String(r.parent);
    RowJson(&w, r.calls, r.ns, r.incl_bytes, r.incl_macs, total);
    w.EndObject();
  }
  w.EndArray();

  w.Key("model_size").BeginArray();
  for (const SizeComponent& sc : model.SizeProfile()) {
    w.BeginObject(JsonWriter::kInline).Key("name").String(sc.name).Key("bytes").Uint(sc.bytes);
    w.Key("dtype").String(JoinDTypes(sc.dtypes)).EndObject();
  }
  w.EndArray();
  return w.EndObject().str();
}

// otherData of the trace: what the checks compare the spans with.
std::string TraceOtherData(const ProfileArgs& a, const Measured& m, const Summary& s) {
  JsonWriter w;
  w.BeginObject().Key("tool").String("mtlite profile").Key("mtlite").String(Version()).Key("model").String(a.model);
  w.Key("beam").Int(a.beam).Key("batch").Int(a.batch).Key("threads").Int(a.threads);
  w.Key("measured_wall_us").Fixed(double(s.wall_ns) * 1e-3, 3).Key("dropped_events").Uint(m.dropped_events);
  w.Key("calls").BeginArray();
  for (const Call& c : m.calls) {
    w.BeginObject(JsonWriter::kInline).Key("ts").Fixed(double(c.start_ns) * 1e-3, 3);
    w.Key("dur").Fixed(double(c.wall_ns) * 1e-3, 3).Key("sentences").Int(c.sentences).EndObject();
  }
  w.EndArray();
  return w.EndObject().str();
}

// ---------------------------------------------------------------------------- run

bool Blank(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char ch) { return std::isspace(static_cast<unsigned char>(ch)) != 0; });
}

bool ReadLines(const ProfileArgs& a, std::vector<std::string>* lines) {
  if (!a.texts.empty()) {
    *lines = a.texts;
    return true;
  }
  std::FILE* in = stdin;
  if (!a.input.empty() && a.input != "-") {
    in = std::fopen(a.input.c_str(), "rb");
    if (in == nullptr) return false;
  }
  std::string line;
  while (ReadTextLine(in, &line)) lines->push_back(std::move(line));  // ReadLine clears it
  const bool ok = !std::ferror(in);
  if (in != stdin) std::fclose(in);
  return ok;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "mtlite profile: %s\n", message.c_str());
  return 1;
}

}  // namespace

ParseResult ParseProfileArgs(int argc, const char* const* argv, ProfileArgs* a) {
  ArgParser p("mtlite profile", kProfileSummary);
  p.Rest("TEXT", &a->texts, "sentences to translate (default: --input, else stdin)");
  AddTranslationOptions(&p, a, 1024);
  p.String("--input", "FILE", &a->input, "source sentences, one per line ('-': stdin)");
  p.Int("--repeat", "N", 1, 100000, &a->repeat,
        "passes over the input; with N > 1 the first pass is a warm-up and is excluded from every number");
  p.String("--trace", "FILE", &a->trace, "write a Chrome Trace Event Format JSON trace of the measured calls");
  p.String("--json", "FILE", &a->json, "write the report as JSON ('-': to stdout instead of the tables)");
  p.Flag("--shortlist", &a->shortlist,
         "restrict the output vocabulary to the batch's candidates (the model's shortlist section, made by "
         "`mtlite shortlist`)");
  p.Flag("--layers", &a->layers, "list every op of every layer under the layer table");
  p.Flag("--roofline", &a->roofline,
         "measure this host's single-thread read bandwidth and int8 GEMM speed (the kernel table's, m=64)");
  p.Int("--roofline-mib", "N", 1, 65536, &a->roofline_mib,
        "buffer for the memory bandwidth (much larger than the last-level cache)");
  p.Flag("-q,--quiet", &a->quiet, "no tables on stdout (with --json FILE / --trace FILE)");
  p.Check([a] {
    return !a->input.empty() && !a->texts.empty() ? "give --input or TEXT arguments, not both" : std::string();
  });
  return p.Parse(argc, argv);
}

int ProfileMain(int argc, char** argv) {
  ProfileArgs a;
  const ParseResult parsed = ParseProfileArgs(argc, argv, &a);
  if (!parsed.ok()) return PrintParseResult(parsed, "mtlite profile");

  std::vector<std::string> all;
  if (!ReadLines(a, &all)) return Fail("cannot read " + a.input);
  Measured m;
  std::vector<std::string> lines;
  std::vector<size_t> line_no;  // 1-based input line of each kept sentence
  size_t max_bytes = 4096;
  for (size_t i = 0; i < all.size(); ++i) {
    if (Blank(all[i])) {
      ++m.skipped_blank;
      continue;
    }
    max_bytes = std::max(max_bytes, all[i].size());
    lines.push_back(std::move(all[i]));
    line_no.push_back(i + 1);
  }
  if (lines.empty()) return Fail("no sentences to translate (the input is empty or blank)");
  m.sentences = lines.size();

  auto model = Model::Load(a.model);
  if (!model.ok()) return Fail(a.model + ": " + model.status().ToString());
  const Model& md = *model.value();
  if (a.shortlist && !md.has_shortlist())
    return Fail(a.model + " has no shortlist section (add one with `mtlite shortlist`)");
  TranslatorLimits lim = TranslationLimits(a, md.config());
  lim.max_input_bytes = int(std::min<size_t>(max_bytes, size_t(1) << 24));
  auto unprofiled = Translator::ArenaBytes(md, lim);
  lim.profiling = true;
  auto tr = Translator::Create(model.value(), lim);
  if (!tr.ok()) return Fail(tr.status().ToString());
  Translator& translator = *tr.value();
  m.arena_bytes = translator.arena_bytes();
  m.arena_bytes_unprofiled = unprofiled.ok() ? unprofiled.value() : 0;
  m.file_bytes = md.file_size();
  m.roof.kernels = kernels::BestKernels().name;

  TraceWriter trace;
  if (!a.trace.empty() && !trace.Open(a.trace, a.model, a.threads)) return Fail(trace.error());

  TranslateOptions opt;
  opt.beam_size = a.beam;
  opt.max_length = lim.max_target_tokens;
  opt.profile = true;
  opt.use_shortlist = a.shortlist;
  m.passes = a.repeat;
  m.warmup_passes = a.repeat > 1 ? 1 : 0;
  std::map<std::string, std::string> category;  // op -> component, for the trace
  const size_t bsz = size_t(a.batch);
  std::vector<std::string_view> views(lines.begin(), lines.end());
  const auto run0 = Clock::now();
  for (int pass = 0; pass < a.repeat; ++pass) {
    const bool measured = pass >= m.warmup_passes;
    const auto pass0 = Clock::now();
    for (size_t i0 = 0; i0 < lines.size(); i0 += bsz) {
      const size_t n = std::min(bsz, lines.size() - i0);
      const SentenceResultView* res = nullptr;
      const auto t0 = Clock::now();
      const Status s = translator.TranslateViews(views.data() + i0, n, opt, &res);
      const auto t1 = Clock::now();
      if (!s.ok()) {
        const std::string where = n == 1 ? "line " + std::to_string(line_no[i0])
                                         : "lines " + std::to_string(line_no[i0]) + ".." +
                                               std::to_string(line_no[i0 + n - 1]);
        return Fail(where + ": " + s.ToString());
      }
      const ProfileView* v = translator.last_profile();
      if (!v) return Fail("the runtime returned no profile");
      if (!measured) continue;
      if (m.rows.empty()) {
        m.rows.resize(v->num_entries);
        for (size_t e = 0; e < v->num_entries; ++e) {
          const ProfileEntry& pe = v->entries[e];
          m.rows[e].op = pe.op;
          m.rows[e].component = pe.component;
          m.rows[e].parent = pe.parent;
          m.rows[e].layer = pe.layer;
          category[pe.op] = pe.component;
        }
      }
      if (m.rows.size() != v->num_entries) return Fail("the profile's layout changed between calls");
      for (size_t e = 0; e < v->num_entries; ++e) {
        const ProfileEntry& pe = v->entries[e];
        Row& r = m.rows[e];
        r.calls += pe.calls;
        r.ns += pe.total_ns;
        r.bytes += pe.bytes;
        r.macs += pe.macs;
      }
      Call c;
      c.start_ns = NsBetween(run0, t0);
      c.wall_ns = NsBetween(t0, t1);
      c.sentences = int(n);
      c.steps = v->steps;
      for (size_t j = 0; j < n; ++j)
        if (res[j].num_hypotheses > 0) c.tokens += res[j].hypotheses[0].num_ids + 1;  // + </s>
      for (size_t e = 0; e < v->num_entries; ++e)
        if (!std::strcmp(v->entries[e].op, "translate")) c.translate_ns += v->entries[e].total_ns;
      for (size_t e = 0; e < v->num_events && c.ttft_ns < 0; ++e) {
        const ProfileEvent& ev = v->events[e];
        if (ev.lane == 0 && ev.step == 0 && !std::strcmp(ev.op, "search")) c.ttft_ns = int64_t(ev.end_ns);
      }
      m.dropped_events += v->dropped_events;
      if (trace.is_open()) trace.Call(*v, uint32_t(m.calls.size()), c.start_ns, category);
      m.calls.push_back(c);
    }
    if (!measured) m.warmup_ms = Ms(NsBetween(pass0, Clock::now()));
  }
  m.peak_rss_kb = MaxRssKb();
  m.vm_hwm_kb = ProcStatusKb("VmHWM");
  m.trace_events = trace.events();
  if (a.roofline) {
    m.roofline = true;
    m.roof.cache_bytes = size_t(4) << 20;
    m.roof.memory_bytes = size_t(a.roofline_mib) << 20;
    m.roof.cache_gbs = ReadBandwidthGBs(m.roof.cache_bytes, 3);
    m.roof.memory_gbs = ReadBandwidthGBs(m.roof.memory_bytes, 3);
    m.roof.m = 64;
    m.roof.n = std::max(8, md.config().decoder_ffn_dim);
    m.roof.k = std::max(4, md.config().d_model);
    m.roof.gemm_gops = GemmGops(m.roof.m, m.roof.n, m.roof.k, 3, &m.roof.kernels);
  }

  RollUp(&m.rows);
  const std::vector<OpRow> ops = ByOp(m.rows);
  const Summary s = Summarize(m, ops);
  int rc = 0;
  if (trace.is_open() && !trace.Finish(TraceOtherData(a, m, s))) rc = Fail(trace.error());
  if (!a.json.empty()) {
    OutputFile out;
    if (a.json == "-") {
      out.OpenStdout();
    } else {
      out.Open(a.json);
    }
    out.Write(ReportJson(a, md, m, ops, s) + "\n");
    if (!out.Close()) rc = Fail(out.error());
  }
  if (!a.quiet && a.json != "-") PrintText(a, md, m, ops, s);
  return rc;
}

}  // namespace cli
}  // namespace mtlite

// End-to-end translation benchmark driver (its own main, no Google Benchmark; linked like the
// mtlite CLI, with the C++ runtime built in: see MTLITE_STATIC_CXX_RUNTIME).
//
//   e2e_bench -m model.mtlite --input FILE --output FILE [--batch N] [--beam N] [--threads N]
//             [--max-length N] [--repeat R] [--no-warmup] [--ids-output FILE] [--profile]
//   e2e_bench -m model.mtlite --roofline [--bw-reps N] [--bw-mib N]
//
// Translate mode: one Model::Load, one Translator::Create with limits from the flags, then every
// input line is translated with TranslateViews in calls of --batch lines, --repeat times (after one
// untimed warm-up call on the first batch unless --no-warmup); --profile turns the profiler on
// (TranslatorLimits::profiling, TranslateOptions::profile). Prints one JSON object on stdout:
//   total_s            median over the repetitions of the summed TranslateViews wall time
//                      (text in -> text out, tokenizer included; model load excluded)
//   total_s_runs       every repetition's total
//   cpu_s              median over the repetitions of this process's CPU time (user + system,
//                      all threads) in the same calls: on a shared machine the work without the
//                      waiting for a core (cpu_s_runs: every repetition's)
//   latency_p50_ms/p90 per TranslateViews call over all repetitions (batch 1: per sentence),
//                      linear interpolation between order statistics (numpy's default)
//   target_tokens      generated target tokens of the returned best hypotheses, incl. </s>
//   sentences_per_s, target_tokens_per_s   (from total_s); target_tokens_per_cpu_s (from cpu_s)
//   ru_maxrss_kb, vm_hwm_kb   peak RSS of this process (getrusage, /proc/self/status)
//   code_rss_kb              resident KiB of the executable and shared libraries (in the RSS)
//   arena_bytes, model_file_bytes, load_s, create_s, deterministic (all repetitions gave the
//   same text)
// Translations (text, one line per input line) of the last repetition go to --output;
// --ids-output writes the target ids (space separated, without the final </s>).
//
// Roofline mode: bytes of weights a batch-1 decoder step streams (per tensor group, from the
// loaded model's own tensors), and single-thread read bandwidth measured over buffers of several
// sizes (L2, L3, DRAM resident: --bw-mib, default 256 MiB), as one JSON object.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <time.h>

#include "args.h"
#include "commands.h"
#include "json_writer.h"
#include "kernels.h"
#include "line_input.h"
#include "marian_layout.h"
#include "measure.h"
#include "model_data.h"
#include "mtlite/mtlite.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Args : mtlite::cli::TranslationArgs {
  std::string input, output, ids_output;
  int repeat = 1, bw_reps = 5, bw_mib = 256;
  bool no_warmup = false, roofline = false, profile = false, shortlist = false;
};

// -1: go on; otherwise the exit code (help printed: 0, bad arguments: 2).
int ParseArgs(int argc, char** argv, Args* a) {
  mtlite::cli::ArgParser p("e2e_bench",
                           "Translate mode (--input/--output): times TranslateViews over every input line and\n"
                           "prints one JSON object. Roofline mode (--roofline): decoder-step weight bytes and\n"
                           "single-thread read bandwidth, as JSON.");
  mtlite::cli::AddTranslationOptions(&p, a, 4096);
  p.String("--input", "FILE", &a->input, "source sentences, one per line (translate mode)");
  p.String("--output", "FILE", &a->output, "translations of the last repetition (translate mode)");
  p.String("--ids-output", "FILE", &a->ids_output, "target ids of the last repetition");
  p.Int("--repeat", "R", 1, 1000, &a->repeat, "timed repetitions");
  p.Int("--bw-reps", "N", 1, 1000, &a->bw_reps, "bandwidth passes per buffer size (roofline mode)");
  p.Int("--bw-mib", "N", 16, 65536, &a->bw_mib, "the largest (DRAM) buffer in MiB (roofline mode; >> L3)");
  p.Flag("--no-warmup", &a->no_warmup, "no untimed warm-up call");
  p.Flag("--roofline", &a->roofline, "roofline mode");
  p.Flag("--profile", &a->profile, "translate with the profiler on (its overhead: bench/profile_overhead.py)");
  p.Flag("--shortlist", &a->shortlist, "restrict the output vocabulary to the batch's candidates (the model's shortlist)");
  p.Check([a] {
    return a->roofline || (!a->input.empty() && !a->output.empty()) ? std::string()
                                                                     : "--input and --output are required";
  });
  const mtlite::cli::ParseResult r = p.Parse(argc, argv);
  return r.ok() ? -1 : mtlite::cli::PrintParseResult(r, "e2e_bench");
}

// Writes data to path (created or truncated); false on any failure.
bool WriteFile(const std::string& path, const std::string& data) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool written = std::fwrite(data.data(), 1, data.size(), f) == data.size();
  return std::fclose(f) == 0 && written;
}

bool HasNonSpace(const std::string& s) {
  for (char c : s)
    if (c != ' ' && c != '\t') return true;
  return false;
}

// ------------------------------------------------------------------------------- roofline

// Bytes the kernels read for one weight matrix (data + int8 per-row scales).
size_t WeightBytes(const mtlite::detail::WeightView& w) {
  switch (w.dtype) {
    case mtlite::WeightType::kInt8:
      return (w.blocked ? mtlite::kernels::BlockedN8K4Bytes(w.rows, w.cols) : size_t(w.rows) * w.cols) +
             size_t(w.rows) * sizeof(float);
    case mtlite::WeightType::kF16: return size_t(w.rows) * w.cols * 2;
    case mtlite::WeightType::kF32: return size_t(w.rows) * w.cols * 4;
  }
  return 0;
}
size_t VecBytes(const mtlite::detail::VectorView& v) { return v.data ? size_t(v.size) * sizeof(float) : 0; }
size_t LnBytes(const mtlite::detail::LayerNormView& l) { return VecBytes(l.gamma) + VecBytes(l.beta); }

int Roofline(const Args& a, const mtlite::Model& model) {
  const auto& md = model.data();
  size_t self_attn = 0, ssru = 0, cross_q_o = 0, cross_kv = 0, ffn = 0, norms_bias = 0;
  const bool ssru_layers = md.config.decoder_layer == mtlite::DecoderLayerKind::kSsru;
  for (const auto& L : md.decoder) {
    self_attn += WeightBytes(L.self_attn.q) + WeightBytes(L.self_attn.k) + WeightBytes(L.self_attn.v) +
                 WeightBytes(L.self_attn.o);
    ssru += WeightBytes(L.ssru.w) + WeightBytes(L.ssru.wf);  // SSRU decoder layers
    norms_bias += VecBytes(L.ssru.bf) + LnBytes(L.ssru.ln);
    cross_q_o += WeightBytes(L.cross_attn.q) + WeightBytes(L.cross_attn.o);
    cross_kv += WeightBytes(L.cross_attn.k) + WeightBytes(L.cross_attn.v);  // once per sentence
    ffn += WeightBytes(L.ffn.fc1) + WeightBytes(L.ffn.fc2);
    norms_bias += VecBytes(L.self_attn.q_bias) + VecBytes(L.self_attn.k_bias) + VecBytes(L.self_attn.v_bias) +
                  VecBytes(L.self_attn.o_bias) + VecBytes(L.cross_attn.q_bias) + VecBytes(L.cross_attn.o_bias) +
                  VecBytes(L.ffn.fc1_bias) + VecBytes(L.ffn.fc2_bias) + LnBytes(L.self_attn.ln) +
                  LnBytes(L.cross_attn.ln) + LnBytes(L.ffn.ln);
  }
  norms_bias += LnBytes(md.decoder_final_ln);
  const size_t out_proj = WeightBytes(md.output_proj) + VecBytes(md.final_logits_bias);
  const size_t per_token = self_attn + ssru + cross_q_o + ffn + norms_bias + out_proj;
  size_t encoder = 0;
  for (const auto& L : md.encoder)
    encoder += WeightBytes(L.self_attn.q) + WeightBytes(L.self_attn.k) + WeightBytes(L.self_attn.v) +
               WeightBytes(L.self_attn.o) + WeightBytes(L.ffn.fc1) + WeightBytes(L.ffn.fc2);
  const auto& c = md.config;
  mtlite::cli::JsonWriter w;
  w.BeginObject().Key("model").String(a.model).Key("weight_type").String(mtlite::layout::QuantizationName(c.weight_type));
  w.Key("kernels").String(mtlite::kernels::BestKernels().name).Key("d_model").Int(c.d_model);
  w.Key("decoder_layers").Int(c.decoder_layers).Key("target_vocab").Int(c.target_vocab_size);
  w.Key("decoder_ffn").Int(c.decoder_ffn_dim).Key("decoder_step_bytes").BeginObject(mtlite::cli::JsonWriter::kInline);
  w.Key("self_attn_qkvo").Uint(self_attn);
  if (ssru_layers) w.Key("ssru_w_wf").Uint(ssru);
  w.Key("cross_attn_q_o").Uint(cross_q_o).Key("ffn").Uint(ffn);
  w.Key("biases_norms").Uint(norms_bias).Key("output_projection").Uint(out_proj).Key("total").Uint(per_token);
  w.EndObject().Key("per_sentence_bytes").BeginObject(mtlite::cli::JsonWriter::kInline);
  w.Key("cross_attn_kv").Uint(cross_kv).Key("encoder_matrices").Uint(encoder).EndObject();
  w.Key("read_bandwidth_gbs").BeginObject(mtlite::cli::JsonWriter::kInline);
  const size_t sizes[] = {size_t(256) << 10, size_t(4) << 20, size_t(16) << 20, size_t(a.bw_mib) << 20};
  const std::string names[] = {"256KiB", "4MiB", "16MiB", std::to_string(a.bw_mib) + "MiB"};
  for (int i = 0; i < 4; ++i) w.Key(names[i]).Fixed(mtlite::cli::ReadBandwidthGBs(sizes[i], a.bw_reps), 2);
  std::printf("%s\n", w.EndObject().EndObject().str().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (const int rc = ParseArgs(argc, argv, &a); rc >= 0) return rc;

  const auto tl0 = Clock::now();
  auto model = mtlite::Model::Load(a.model);
  if (!model.ok()) {
    std::fprintf(stderr, "e2e_bench: %s: %s\n", a.model.c_str(), model.status().ToString().c_str());
    return 1;
  }
  const double load_s = std::chrono::duration<double>(Clock::now() - tl0).count();
  if (a.roofline) return Roofline(a, *model.value());

  std::vector<std::string> lines;
  {
    std::FILE* in = std::fopen(a.input.c_str(), "rb");
    std::string line;
    while (in != nullptr && mtlite::cli::ReadTextLine(in, &line)) lines.push_back(std::move(line));
    if (in == nullptr || std::ferror(in)) {
      std::fprintf(stderr, "e2e_bench: cannot read %s\n", a.input.c_str());
      if (in != nullptr) std::fclose(in);
      return 1;
    }
    std::fclose(in);
  }
  if (lines.empty()) {
    std::fprintf(stderr, "e2e_bench: %s has no lines\n", a.input.c_str());
    return 1;
  }
  size_t max_bytes = 4096;
  for (const auto& l : lines) max_bytes = std::max(max_bytes, l.size());

  const mtlite::ModelConfig& cfg = model.value()->config();
  mtlite::TranslatorLimits lim = mtlite::cli::TranslationLimits(a, cfg);
  lim.max_input_bytes = int(std::min<size_t>(max_bytes, size_t(1) << 24));
  lim.profiling = a.profile;
  const auto tc0 = Clock::now();
  auto tr = mtlite::Translator::Create(model.value(), lim);
  if (!tr.ok()) {
    std::fprintf(stderr, "e2e_bench: Translator::Create: %s\n", tr.status().ToString().c_str());
    return 1;
  }
  const double create_s = std::chrono::duration<double>(Clock::now() - tc0).count();
  mtlite::Translator& translator = *tr.value();
  const long rss_after_create_kb = mtlite::cli::ProcStatusKb("VmRSS");

  mtlite::TranslateOptions opt;
  opt.beam_size = a.beam;
  opt.max_length = lim.max_target_tokens;
  opt.n_best = 1;
  opt.profile = a.profile;
  opt.use_shortlist = a.shortlist;

  const size_t n = lines.size();
  const size_t bsz = size_t(a.batch);
  std::vector<std::string_view> views(lines.begin(), lines.end());
  auto fail = [&](size_t i0, const mtlite::Status& s) {
    std::fprintf(stderr, "e2e_bench: lines %zu..%zu: %s\n", i0 + 1, std::min(n, i0 + bsz), s.ToString().c_str());
    return 1;
  };
  if (!a.no_warmup) {
    const mtlite::SentenceResultView* res = nullptr;
    mtlite::Status s = translator.TranslateViews(views.data(), std::min(n, bsz), opt, &res);
    if (!s.ok()) return fail(0, s);
  }

  auto process_cpu_s = [] {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
  };
  std::vector<double> run_totals, run_cpu, latencies;
  latencies.reserve(((n + bsz - 1) / bsz) * size_t(a.repeat));
  std::vector<std::string> texts(n), first_texts;
  std::vector<std::vector<int32_t>> ids(n);
  long long target_tokens = 0;
  bool deterministic = true;
  for (int r = 0; r < a.repeat; ++r) {
    double total = 0, cpu = 0;
    long long tokens = 0;
    for (size_t i0 = 0; i0 < n; i0 += bsz) {
      const size_t m = std::min(bsz, n - i0);
      const mtlite::SentenceResultView* res = nullptr;
      const double c0 = process_cpu_s();
      const auto t0 = Clock::now();
      mtlite::Status s = translator.TranslateViews(views.data() + i0, m, opt, &res);
      const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
      cpu += process_cpu_s() - c0;
      if (!s.ok()) return fail(i0, s);
      total += dt;
      latencies.push_back(dt);
      for (size_t j = 0; j < m; ++j) {
        if (res[j].num_hypotheses < 1) {
          std::fprintf(stderr, "e2e_bench: line %zu: no hypothesis returned\n", i0 + j + 1);
          return 1;
        }
        const mtlite::HypothesisView& h = res[j].hypotheses[0];
        if (HasNonSpace(lines[i0 + j])) tokens += h.num_ids + 1;  // + the final </s>
        texts[i0 + j].assign(h.text.data(), h.text.size());
        ids[i0 + j].assign(h.ids, h.ids + h.num_ids);
      }
    }
    run_totals.push_back(total);
    run_cpu.push_back(cpu);
    target_tokens = tokens;
    if (r == 0) first_texts = texts;
    else if (texts != first_texts) deterministic = false;
  }

  {
    std::string text;
    for (const auto& t : texts) text += t + '\n';
    if (!WriteFile(a.output, text)) {
      std::fprintf(stderr, "e2e_bench: cannot write %s\n", a.output.c_str());
      return 1;
    }
  }
  if (!a.ids_output.empty()) {
    std::string text;
    for (const auto& v : ids) {
      for (size_t i = 0; i < v.size(); ++i) text += (i ? " " : "") + std::to_string(v[i]);
      text += '\n';
    }
    if (!WriteFile(a.ids_output, text)) {
      std::fprintf(stderr, "e2e_bench: cannot write %s\n", a.ids_output.c_str());
      return 1;
    }
  }

  const double total_s = mtlite::cli::Percentile(run_totals, 50);
  const double cpu_s = mtlite::cli::Percentile(run_cpu, 50);
  mtlite::cli::JsonWriter w;
  w.BeginObject().Key("engine").String("mtlite").Key("model").String(a.model);
  w.Key("weight_type").String(mtlite::layout::QuantizationName(cfg.weight_type));
  w.Key("kernels").String(mtlite::kernels::BestKernels().name);
  w.Key("batch").Int(a.batch).Key("beam").Int(a.beam).Key("threads").Int(a.threads);
  w.Key("max_length").Int(opt.max_length).Key("repeat").Int(a.repeat).Key("warmup").Bool(!a.no_warmup);
  w.Key("profile").Bool(a.profile).Key("shortlist").Bool(a.shortlist);
  w.Key("sentences").Uint(n).Key("calls_per_run").Uint((n + bsz - 1) / bsz).Key("target_tokens").Int(target_tokens);
  w.Key("total_s").Fixed(total_s, 6).Key("total_s_runs").BeginArray(mtlite::cli::JsonWriter::kInline);
  for (double t : run_totals) w.Fixed(t, 6);
  w.EndArray().Key("cpu_s").Fixed(cpu_s, 6).Key("cpu_s_runs").BeginArray(mtlite::cli::JsonWriter::kInline);
  for (double t : run_cpu) w.Fixed(t, 6);
  w.EndArray().Key("sentences_per_s").Fixed(double(n) / total_s, 3);
  w.Key("target_tokens_per_s").Fixed(double(target_tokens) / total_s, 3);
  w.Key("target_tokens_per_cpu_s").Fixed(cpu_s > 0 ? double(target_tokens) / cpu_s : 0.0, 3);
  w.Key("latency_p50_ms").Fixed(mtlite::cli::Percentile(latencies, 50) * 1e3, 4);
  w.Key("latency_p90_ms").Fixed(mtlite::cli::Percentile(latencies, 90) * 1e3, 4);
  w.Key("latency_max_ms").Fixed(*std::max_element(latencies.begin(), latencies.end()) * 1e3, 4);
  w.Key("load_s").Fixed(load_s, 6).Key("create_s").Fixed(create_s, 6).Key("arena_bytes").Uint(translator.arena_bytes());
  w.Key("model_file_bytes").Uint(model.value()->file_size()).Key("rss_after_create_kb").Int(rss_after_create_kb);
  w.Key("ru_maxrss_kb").Int(mtlite::cli::MaxRssKb()).Key("vm_hwm_kb").Int(mtlite::cli::ProcStatusKb("VmHWM"));
  w.Key("code_rss_kb").Int(mtlite::cli::CodeRssKb()).Key("deterministic").Bool(deterministic);
  std::printf("%s\n", w.EndObject().str().c_str());
  return deterministic ? 0 : 3;
}

// Vocabulary shortlist: candidate-set sizes and translation speed with and without it.
//
//   shortlist_bench --model M.mtlite --input DEV.en [--batch 1,16] [--beam 1] [--repeat 3]
//                   [--threads 1] [--max-length 256]
//
// Per batch size: the mean number of candidate target ids per translate call (the union the
// run-time selector builds: frequent ids, each source token's list, the source ids with a shared
// vocabulary, </s>; never pad or a bad word) and, for int8, the mean number of logits columns
// actually computed (whole 8-row blocks); then the time to translate the whole input with and
// without TranslateOptions::use_shortlist, interleaved run by run (full, shortlist, full, ...),
// the minimum of --repeat runs each. One JSON object per batch size on stdout.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "args.h"
#include "model_data.h"
#include "mtlite/mtlite.hpp"
#include "search.h"
#include "shortlist.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  std::string model, input, batches = "1,16";
  int beam = 1, repeat = 3, threads = 1, max_length = 256;
};

std::vector<int> ParseList(const std::string& s) {
  std::vector<int> out;
  size_t i = 0;
  while (i <= s.size()) {
    const size_t j = std::min(s.find(',', i), s.size());
    const std::string item = s.substr(i, j - i);
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > 1024) return {};
    out.push_back(int(v));
    i = j + 1;
  }
  return out;
}

struct Sizes {
  double candidates = 0, columns = 0;  // means per translate call
};

// The selector of the runtime on every batch of the input.
Sizes CandidateSizes(const mtlite::Model& model, const std::vector<std::vector<int32_t>>& ids, int batch) {
  const mtlite::detail::ModelData& md = model.data();
  const int V = md.config.target_vocab_size, V8 = (V + 7) / 8 * 8;
  std::vector<uint8_t> marks(static_cast<size_t>(V));
  std::vector<int32_t> blocks(static_cast<size_t>(V8 / 8)), columns(static_cast<size_t>(V8)), masked(static_cast<size_t>(V8));
  mtlite::detail::ShortlistSelector sel;
  sel.Bind(marks.data(), blocks.data(), columns.data(), masked.data());
  Sizes out;
  size_t calls = 0;
  for (size_t i0 = 0; i0 < ids.size(); i0 += size_t(batch)) {
    const int nb = int(std::min(ids.size() - i0, size_t(batch)));
    int stride = 1;
    for (int b = 0; b < nb; ++b) stride = std::max(stride, int(ids[i0 + size_t(b)].size()));
    std::vector<int32_t> flat(size_t(nb) * size_t(stride), md.config.pad_id);
    std::vector<int> len(static_cast<size_t>(nb));
    for (int b = 0; b < nb; ++b) {
      const auto& s = ids[i0 + size_t(b)];
      std::copy(s.begin(), s.end(), flat.begin() + std::ptrdiff_t(size_t(b) * size_t(stride)));
      len[size_t(b)] = int(s.size());
    }
    mtlite::detail::SearchSpec spec;
    spec.vocab = V;
    sel.Build(md, flat.data(), stride, len.data(), nb, &spec);
    int n = 0;
    for (uint8_t m : marks) n += m;
    out.candidates += n;
    out.columns += md.config.weight_type == mtlite::WeightType::kInt8 ? spec.vocab : V;
    ++calls;
  }
  out.candidates /= double(calls);
  out.columns /= double(calls);
  return out;
}

// Seconds to translate every line once in calls of `batch`.
double TimeRun(mtlite::Translator& tr, const std::vector<std::string_view>& lines, int batch,
               const mtlite::TranslateOptions& opt, bool* ok) {
  const auto t0 = Clock::now();
  for (size_t i0 = 0; i0 < lines.size(); i0 += size_t(batch)) {
    const mtlite::SentenceResultView* res = nullptr;
    const mtlite::Status s = tr.TranslateViews(lines.data() + i0, std::min(lines.size() - i0, size_t(batch)), opt, &res);
    if (!s.ok()) {
      std::fprintf(stderr, "shortlist_bench: %s\n", s.ToString().c_str());
      *ok = false;
      return 0;
    }
  }
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  mtlite::cli::ArgParser p("shortlist_bench",
                           "Candidate-set sizes and translation time with and without the model's shortlist.");
  p.String("-m,--model", "MODEL", &a.model, "a .mtlite model with a shortlist section").Required();
  p.String("--input", "FILE", &a.input, "source sentences, one per line").Required();
  p.String("--batch", "B,...", &a.batches, "batch sizes (default 1,16)");
  p.Int("--beam", "N", 1, 64, &a.beam, "beam size (default 1)");
  p.Int("--repeat", "R", 1, 100, &a.repeat, "timed runs of each variant (default 3)");
  p.Int("--threads", "N", 1, 256, &a.threads, "worker threads (default 1)");
  p.Int("--max-length", "N", 1, 65536, &a.max_length, "generated tokens per sentence (default 256)");
  const mtlite::cli::ParseResult parsed = p.Parse(argc, argv);
  if (!parsed.ok()) return mtlite::cli::PrintParseResult(parsed, "shortlist_bench");
  const std::vector<int> batches = ParseList(a.batches);
  if (batches.empty()) {
    std::fprintf(stderr, "shortlist_bench: --batch needs sizes in 1..1024, comma-separated\n");
    return 2;
  }

  auto loaded = mtlite::Model::Load(a.model);
  if (!loaded.ok()) {
    std::fprintf(stderr, "shortlist_bench: %s: %s\n", a.model.c_str(), loaded.status().ToString().c_str());
    return 1;
  }
  std::shared_ptr<const mtlite::Model> model = std::move(loaded).value();
  if (!model->has_shortlist()) {
    std::fprintf(stderr, "shortlist_bench: %s has no shortlist section (see `mtlite shortlist`)\n", a.model.c_str());
    return 1;
  }
  std::vector<std::string> lines;
  {
    std::ifstream in(a.input, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "shortlist_bench: cannot read %s\n", a.input.c_str());
      return 1;
    }
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines.push_back(line);
    }
  }
  if (lines.empty()) {
    std::fprintf(stderr, "shortlist_bench: %s has no lines\n", a.input.c_str());
    return 1;
  }
  std::vector<std::vector<int32_t>> ids(lines.size());
  size_t max_bytes = 4096;
  for (size_t i = 0; i < lines.size(); ++i) {
    max_bytes = std::max(max_bytes, lines[i].size());
    const mtlite::Status s = mtlite::EncodeSource(*model, lines[i], &ids[i]);
    if (!s.ok()) {
      std::fprintf(stderr, "shortlist_bench: %s:%zu: %s\n", a.input.c_str(), i + 1, s.ToString().c_str());
      return 1;
    }
  }
  const std::vector<std::string_view> views(lines.begin(), lines.end());

  for (const int batch : batches) {
    const Sizes sizes = CandidateSizes(*model, ids, batch);
    mtlite::TranslatorLimits lim;
    lim.max_batch = batch;
    lim.max_beam = a.beam;
    lim.max_n_best = 1;
    lim.num_threads = a.threads;
    lim.max_target_tokens = a.max_length;
    lim.max_input_bytes = int(std::min<size_t>(max_bytes, size_t(1) << 24));
    auto tr = mtlite::Translator::Create(model, lim);
    if (!tr.ok()) {
      std::fprintf(stderr, "shortlist_bench: Translator::Create: %s\n", tr.status().ToString().c_str());
      return 1;
    }
    mtlite::TranslateOptions full, shortlist;
    full.beam_size = shortlist.beam_size = a.beam;
    full.max_length = shortlist.max_length = a.max_length;
    shortlist.use_shortlist = true;
    bool ok = true;
    TimeRun(*tr.value(), views, batch, full, &ok);  // warm-up
    double best_full = 1e300, best_short = 1e300;
    for (int r = 0; r < a.repeat && ok; ++r) {
      best_full = std::min(best_full, TimeRun(*tr.value(), views, batch, full, &ok));
      best_short = std::min(best_short, TimeRun(*tr.value(), views, batch, shortlist, &ok));
    }
    if (!ok) return 1;
    const int V = model->config().target_vocab_size;
    std::printf(
        "{\"input\": \"%s\", \"sentences\": %zu, \"batch\": %d, \"beam\": %d, \"threads\": %d, \"vocab\": %d, "
        "\"mean_candidates\": %.1f, \"mean_columns\": %.1f, \"full_s\": %.4f, \"shortlist_s\": %.4f, "
        "\"speedup\": %.3f}\n",
        a.input.c_str(), lines.size(), batch, a.beam, a.threads, V, sizes.candidates, sizes.columns, best_full,
        best_short, best_full / best_short);
    std::fflush(stdout);
  }
  return 0;
}

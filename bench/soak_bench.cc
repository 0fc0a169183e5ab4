// Soak run: pushes many sentences (default 100,000) through ONE Translator and checks that it
// neither grows nor drifts. A benchmark-side program (its own main; bench/CMakeLists.txt links
// every bench/*_bench.cc with Google Benchmark, which this one does not use), not a unit test.
//
//   soak_bench -m model.mtlite [--sentences N] [--batch B] [--beam K] [--threads T]
//              [--warmup N] [--sample-every N] [--rss-csv FILE] [--data DIR]
//
// Input: the English dev sets (tests/data/dev/*.en, 2,014 lines) cycled, each cycle varied by a
// seeded generator (case changes, two sentences joined, first half only, no final punctuation,
// extra spaces, words reversed), so later cycles are not repeats of the first; about 1 line in
// 500 is bad input on purpose (invalid UTF-8, or beyond max_input_bytes) and must fail with the
// right code without disturbing the lines around it.
// Checks (exit 1 when one fails):
//   - resident memory (/proc/self/statm, sampled every --sample-every sentences) stays within
//     +-1 MiB of its value after warm-up (--warmup sentences) until the end;
//   - a fixed probe set (the first 32 dev lines, batch 1, greedy and beam 4) translated
//     right after creation and again at the end gives identical ids, text and scores (bit-exact);
//   - every good line translates, every bad line fails with kInvalidArgument / kOutOfRange.
// Prints a summary and one JSON object (last line) with the numbers.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "mtlite/mtlite.hpp"

namespace {

using mtlite::StatusCode;

// tests/data/dev next to this source file (the build passes sources by absolute path).
std::string DefaultDataDir() {
  std::string f = __FILE__;
  const size_t slash = f.rfind('/');
  return (slash == std::string::npos ? std::string(".") : f.substr(0, slash)) + "/../tests/data/dev";
}

struct Args {
  std::string model, data = DefaultDataDir(), rss_csv;
  long sentences = 100000, warmup = 5000, sample_every = 1000;
  int batch = 8, beam = 1, threads = 1;
};

int Usage() {
  std::fprintf(stderr,
               "usage: soak_bench -m model.mtlite [--sentences N] [--batch B] [--beam K] [--threads T]\n"
               "                  [--warmup N] [--sample-every N] [--rss-csv FILE] [--data DIR]\n");
  return 2;
}

bool ParseLong(const char* s, long lo, long hi, long* out) {
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (!*s || *end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

int ParseArgs(int argc, char** argv, Args* a) {
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (i + 1 >= argc) return Usage();
    const char* v = argv[++i];
    long x = 0;
    auto num = [&](long lo, long hi) {
      if (ParseLong(v, lo, hi, &x)) return true;
      std::fprintf(stderr, "soak_bench: %s must be an integer in [%ld, %ld], got '%s'\n", k.c_str(), lo, hi, v);
      return false;
    };
    if (k == "-m") a->model = v;
    else if (k == "--data") a->data = v;
    else if (k == "--rss-csv") a->rss_csv = v;
    else if (k == "--sentences") { if (!num(1, 1L << 40)) return 2; a->sentences = x; }
    else if (k == "--warmup") { if (!num(0, 1L << 40)) return 2; a->warmup = x; }
    else if (k == "--sample-every") { if (!num(1, 1L << 40)) return 2; a->sample_every = x; }
    else if (k == "--batch") { if (!num(1, 256)) return 2; a->batch = int(x); }
    else if (k == "--beam") { if (!num(1, 16)) return 2; a->beam = int(x); }
    else if (k == "--threads") { if (!num(1, 64)) return 2; a->threads = int(x); }
    else return Usage();
  }
  if (a->model.empty()) return Usage();
  if (a->warmup >= a->sentences) {
    std::fprintf(stderr, "soak_bench: --warmup must be below --sentences\n");
    return 2;
  }
  return 0;
}

long ResidentBytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return -1;
  long size = 0, resident = -1;
  if (std::fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
  std::fclose(f);
  return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(f, line)) out.push_back(line);
  return out;
}

// One varied input line; `bad` tells whether it must fail, and with which code.
struct Line {
  std::string text;
  StatusCode expect = StatusCode::kOk;
};

class InputStream {
 public:
  InputStream(std::vector<std::string> dev, int max_input_bytes)
      : dev_(std::move(dev)), max_input_bytes_(max_input_bytes), rng_(20240607) {}

  Line Next() {
    const size_t i = next_++ % dev_.size();
    const uint32_t r = rng_();
    Line l;
    if (r % 500 == 0) {  // bad input on purpose
      if ((r >> 9) % 2 == 0) {
        l.text = dev_[i] + " \xed\xa0\x80";  // a surrogate: invalid UTF-8
        l.expect = StatusCode::kInvalidArgument;
      } else {
        l.text.assign(size_t(max_input_bytes_) + 1 + (r >> 10) % 100, 'a');
        l.expect = StatusCode::kOutOfRange;
      }
      return l;
    }
    if (next_ <= dev_.size()) {  // the first cycle as is
      l.text = dev_[i];
      return l;
    }
    const std::string& s = dev_[i];
    switch ((r >> 3) % 7) {
      case 0: l.text = s; break;
      case 1: l.text = s; for (char& c : l.text) c = char(std::tolower(static_cast<unsigned char>(c))); break;
      case 2: l.text = s; for (char& c : l.text) c = char(std::toupper(static_cast<unsigned char>(c))); break;
      case 3: l.text = s + " " + dev_[(i + 1 + (r >> 8) % 50) % dev_.size()]; break;  // two joined
      case 4: l.text = s.substr(0, s.find(' ', s.size() / 2)); break;                  // first half
      case 5: l.text = s; while (!l.text.empty() && std::ispunct(static_cast<unsigned char>(l.text.back()))) l.text.pop_back(); break;
      default: {  // words reversed, extra spaces
        std::vector<std::string> words;
        size_t p = 0;
        while (p < s.size()) {
          const size_t q = std::min(s.find(' ', p), s.size());
          if (q > p) words.push_back(s.substr(p, q - p));
          p = q + 1;
        }
        std::reverse(words.begin(), words.end());
        for (const std::string& w : words) l.text += "  " + w;
        break;
      }
    }
    return l;
  }

 private:
  std::vector<std::string> dev_;
  int max_input_bytes_;
  std::mt19937 rng_;
  size_t next_ = 0;
};

struct ProbeResult {
  std::vector<int32_t> ids;
  std::string text;
  float score = 0;
  bool operator==(const ProbeResult& o) const {
    return ids == o.ids && text == o.text && std::memcmp(&score, &o.score, sizeof score) == 0;
  }
};

bool TranslateProbes(mtlite::Translator* tr, const std::vector<std::string>& probes, int beam,
                     std::vector<ProbeResult>* out) {
  out->clear();
  mtlite::TranslateOptions opt;
  opt.beam_size = beam;
  opt.return_scores = true;
  for (const std::string& p : probes) {
    std::string_view v = p;
    const mtlite::SentenceResultView* res = nullptr;
    mtlite::Status s = tr->TranslateViews(&v, 1, opt, &res);
    if (!s.ok()) {
      std::fprintf(stderr, "soak_bench: probe '%s': %s\n", p.c_str(), s.ToString().c_str());
      return false;
    }
    const mtlite::HypothesisView& h = res[0].hypotheses[0];
    out->push_back({std::vector<int32_t>(h.ids, h.ids + h.num_ids), std::string(h.text), h.score});
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (int rc = ParseArgs(argc, argv, &a)) return rc;
  std::vector<std::string> dev = ReadLines(a.data + "/multi30k.val.en");
  const std::vector<std::string> tatoeba = ReadLines(a.data + "/tatoeba.dev.en");
  dev.insert(dev.end(), tatoeba.begin(), tatoeba.end());
  if (dev.size() < 32) {
    std::fprintf(stderr, "soak_bench: no dev sets under %s\n", a.data.c_str());
    return 2;
  }
  const long rss_start = ResidentBytes();
  auto model = mtlite::Model::Load(a.model);
  if (!model.ok()) {
    std::fprintf(stderr, "soak_bench: %s: %s\n", a.model.c_str(), model.status().ToString().c_str());
    return 1;
  }
  mtlite::TranslatorLimits lim;
  lim.max_batch = a.batch;
  lim.max_beam = std::max(a.beam, 4);  // the probes also run beam 4
  lim.max_n_best = 1;
  lim.num_threads = a.threads;
  lim.max_input_bytes = 1024;
  auto created = mtlite::Translator::Create(model.value(), lim);
  if (!created.ok()) {
    std::fprintf(stderr, "soak_bench: %s\n", created.status().ToString().c_str());
    return 1;
  }
  mtlite::Translator* tr = created.value().get();

  const std::vector<std::string> probes(dev.begin(), dev.begin() + 32);
  std::vector<ProbeResult> probe_start[2], probe_end[2];
  const int probe_beams[2] = {1, 4};
  for (int k = 0; k < 2; ++k)
    if (!TranslateProbes(tr, probes, probe_beams[k], &probe_start[k])) return 1;
  const long rss_after_probes = ResidentBytes();

  mtlite::TranslateOptions opt;
  opt.beam_size = a.beam;
  InputStream input(dev, lim.max_input_bytes);
  std::vector<Line> batch;
  std::vector<std::string_view> views;
  std::vector<std::pair<long, long>> samples;  // (sentences done, resident bytes)
  long done = 0, translated = 0, failed_as_expected = 0, target_tokens = 0, errors = 0;
  long rss_warm = -1, rss_min = 0, rss_max = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (done < a.sentences) {
    batch.clear();
    bool any_bad = false;
    while (long(batch.size()) < a.batch && done + long(batch.size()) < a.sentences) {
      batch.push_back(input.Next());
      any_bad = any_bad || batch.back().expect != StatusCode::kOk;
    }
    // A batch with a bad line fails as a whole (the error names the sentence): translate its
    // lines one by one, as the CLI does, so every good line is still translated.
    const size_t calls = any_bad ? batch.size() : 1;
    for (size_t c = 0; c < calls; ++c) {
      views.clear();
      if (any_bad) views.push_back(batch[c].text);
      else for (const Line& l : batch) views.push_back(l.text);
      const mtlite::SentenceResultView* res = nullptr;
      const mtlite::Status s = tr->TranslateViews(views.data(), views.size(), opt, &res);
      const StatusCode want = any_bad ? batch[c].expect : StatusCode::kOk;
      if (s.code() != want) {
        if (++errors <= 10)
          std::fprintf(stderr, "soak_bench: sentence %ld: expected %s, got %s\n", done + long(c),
                       mtlite::StatusCodeName(want), s.ToString().c_str());
        continue;
      }
      if (!s.ok()) {
        ++failed_as_expected;
        continue;
      }
      for (size_t j = 0; j < views.size(); ++j) {
        target_tokens += res[j].hypotheses[0].num_ids + 1;
        ++translated;
      }
    }
    const long before = done;
    done += long(batch.size());
    if (done / a.sample_every != before / a.sample_every || done == a.sentences) {
      const long rss = ResidentBytes();
      samples.emplace_back(done, rss);
      if (done >= a.warmup) {
        if (rss_warm < 0) rss_warm = rss_min = rss_max = rss;
        rss_min = std::min(rss_min, rss);
        rss_max = std::max(rss_max, rss);
      }
      if (done % (a.sample_every * 10) < long(batch.size()) || done == a.sentences) {
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::fprintf(stderr, "soak_bench: %ld sentences, %.0f s, RSS %.2f MiB\n", done, secs, rss / 1048576.0);
      }
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (int k = 0; k < 2; ++k)
    if (!TranslateProbes(tr, probes, probe_beams[k], &probe_end[k])) return 1;
  const long rss_end = ResidentBytes();

  int probe_diffs = 0;
  for (int k = 0; k < 2; ++k)
    for (size_t i = 0; i < probes.size(); ++i)
      if (!(probe_start[k][i] == probe_end[k][i])) {
        ++probe_diffs;
        std::fprintf(stderr, "soak_bench: probe %zu (beam %d) differs: '%s' vs '%s'\n", i, probe_beams[k],
                     probe_start[k][i].text.c_str(), probe_end[k][i].text.c_str());
      }
  if (!a.rss_csv.empty()) {
    std::FILE* f = std::fopen(a.rss_csv.c_str(), "w");
    if (f) {
      std::fprintf(f, "sentences,rss_bytes\n");
      for (const auto& [n, rss] : samples) std::fprintf(f, "%ld,%ld\n", n, rss);
      std::fclose(f);
    }
  }
  const long spread = rss_max - rss_min;
  const bool flat = rss_warm >= 0 && spread <= 1048576 && std::labs(rss_end - rss_warm) <= 1048576;
  const bool ok = flat && probe_diffs == 0 && errors == 0;
  const double mib = 1048576.0;
  std::printf("soak: %ld sentences (%ld translated, %ld bad lines rejected as expected, %ld unexpected results) "
              "in %.1f s, %.0f sentences/s, %.0f target tokens/s; batch %d, beam %d, threads %d\n",
              done, translated, failed_as_expected, errors, secs, done / secs, target_tokens / secs, a.batch, a.beam,
              a.threads);
  std::printf("soak: RSS before load %.2f MiB, after create + probes %.2f MiB, after warm-up (%ld) %.2f MiB, "
              "min/max after warm-up %.2f / %.2f MiB (spread %.3f MiB), end %.2f MiB -> %s\n",
              rss_start / mib, rss_after_probes / mib, a.warmup, rss_warm / mib, rss_min / mib, rss_max / mib,
              spread / mib, rss_end / mib, flat ? "flat (within 1 MiB)" : "NOT FLAT");
  std::printf("soak: probe set (%zu sentences x greedy and beam 4): %s\n", probes.size(),
              probe_diffs == 0 ? "identical at start and end (ids, text, scores bit-exact)" : "DIFFERS");
  std::printf("{\"sentences\": %ld, \"translated\": %ld, \"rejected_as_expected\": %ld, \"unexpected\": %ld, "
              "\"seconds\": %.1f, \"batch\": %d, \"beam\": %d, \"threads\": %d, \"arena_bytes\": %zu, "
              "\"rss_before_load\": %ld, \"rss_after_probes\": %ld, \"rss_after_warmup\": %ld, \"rss_min\": %ld, "
              "\"rss_max\": %ld, \"rss_end\": %ld, \"rss_flat\": %s, \"probe_diffs\": %d, \"ok\": %s}\n",
              done, translated, failed_as_expected, errors, secs, a.batch, a.beam, a.threads, tr->arena_bytes(),
              rss_start, rss_after_probes, rss_warm, rss_min, rss_max, rss_end, flat ? "true" : "false", probe_diffs,
              ok ? "true" : "false");
  return ok ? 0 : 1;
}

// A Model is shared by threads: 8 threads, each creating its own Translator on one shared int8
// Model (one of them with num_threads = 2, i.e. its own worker pool), translate the same
// sentences in different orders and batch sizes, greedy and beam, while other calls that read
// the Model (EncodeSource, DecodeTarget, ArenaBytes) run beside them. Every output must equal
// the serial one. Built in every tree; scripts/test.sh also runs it under ThreadSanitizer
// (build-tsan), which is what checks that the sharing is race-free.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "mtlite/mtlite.hpp"
#include "testing_hooks.h"
#include "unit/translator_test_util.h"

namespace mtlite {
namespace {

using testing_util::DevLines;
using testing_util::LoadOrDie;

#ifdef MTLITE_EMULATED_TESTS
constexpr int kSentences = 4;  // under qemu: the same structure, less work
#else
constexpr int kSentences = 8;
#endif
constexpr int kThreads = 8;
constexpr int kMaxBatch = 4;

struct Output {
  std::vector<int32_t> ids;
  std::string text;
  float score = 0;
};

TranslatorLimits Limits(int threads) {
  TranslatorLimits lim;
  lim.max_batch = kMaxBatch;
  lim.max_beam = 2;
  lim.max_n_best = 2;
  lim.max_target_tokens = 48;
  lim.alignments = true;
  lim.num_threads = threads;
  return lim;
}

TranslateOptions Options(int beam) {
  TranslateOptions opt;
  opt.beam_size = beam;
  opt.max_length = 48;
  opt.return_scores = true;
  opt.return_alignments = true;
  return opt;
}

// Translates lines[order[i]] in calls of `batch` sentences; out[order[i]] gets the best hypothesis.
Status TranslateInOrder(Translator* tr, const std::vector<std::string>& lines, const std::vector<int>& order,
                        int batch, int beam, std::vector<Output>* out) {
  out->assign(lines.size(), Output());
  std::string_view views[kMaxBatch];
  for (size_t i0 = 0; i0 < order.size(); i0 += size_t(batch)) {
    const size_t n = std::min(order.size() - i0, size_t(batch));
    for (size_t j = 0; j < n; ++j) views[j] = lines[size_t(order[i0 + j])];
    const SentenceResultView* res = nullptr;
    Status s = tr->TranslateViews(views, n, Options(beam), &res);
    if (!s.ok()) return s;
    for (size_t j = 0; j < n; ++j) {
      const HypothesisView& h = res[j].hypotheses[0];
      Output& o = (*out)[size_t(order[i0 + j])];
      o.ids.assign(h.ids, h.ids + h.num_ids);
      o.text.assign(h.text.data(), h.text.size());
      o.score = h.score;
    }
  }
  return Status::Ok();
}

// Releases all waiting threads at once, so that the translators really run side by side.
class StartGate {
 public:
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return open_; });
  }
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

TEST(Concurrency, EightTranslatorsOnOneModelMatchSerial) {
  auto model = LoadOrDie("int8");
  ASSERT_TRUE(model);
  const std::vector<std::string> lines = DevLines(kSentences);
  ASSERT_EQ(int(lines.size()), kSentences);
  std::vector<int> in_order(lines.size());
  for (size_t i = 0; i < in_order.size(); ++i) in_order[i] = int(i);

  // Serial reference: one translator, one sentence per call, in order.
  std::vector<Output> serial[2];
  {
    auto tr = Translator::Create(model, Limits(1));
    ASSERT_TRUE(tr.ok()) << tr.status().ToString();
    for (int beam : {1, 2}) {
      Status s = TranslateInOrder(tr.value().get(), lines, in_order, 1, beam, &serial[beam - 1]);
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
  }
  std::vector<int32_t> probe_ids;
  ASSERT_TRUE(EncodeSource(*model, lines[0], &probe_ids).ok());

  struct ThreadResult {
    Status status;
    std::vector<Output> out[2];
    bool side_calls_ok = true;
  };
  std::vector<ThreadResult> results(kThreads);
  StartGate gate;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ThreadResult& r = results[size_t(t)];
      // Thread 3 runs its translator on a pool of 2 worker threads.
      auto tr = Translator::Create(model, Limits(t == 3 ? 2 : 1));
      if (!tr.ok()) {
        r.status = tr.status();
        return;
      }
      std::vector<int> order = in_order;
      std::mt19937 rng(unsigned(t) + 1);
      if (t % 2 == 1) std::reverse(order.begin(), order.end());
      if (t >= 4) std::shuffle(order.begin(), order.end(), rng);
      const int batch = 1 + t % kMaxBatch;
      gate.Wait();
      for (int beam : {1, 2}) {
        r.status = TranslateInOrder(tr.value().get(), lines, order, batch, beam, &r.out[beam - 1]);
        if (!r.status.ok()) return;
        // Other readers of the shared Model, between translations.
        std::vector<int32_t> ids;
        std::string text;
        r.side_calls_ok = r.side_calls_ok && EncodeSource(*model, lines[size_t(t) % lines.size()], &ids).ok() &&
                          DecodeTarget(*model, r.out[0][0].ids.data(), int(r.out[0][0].ids.size()), &text).ok() &&
                          text == r.out[0][0].text && Translator::ArenaBytes(*model, Limits(2)).ok();
      }
    });
  }
  gate.Open();
  for (auto& th : threads) th.join();

  for (int t = 0; t < kThreads; ++t) {
    const ThreadResult& r = results[size_t(t)];
    ASSERT_TRUE(r.status.ok()) << "thread " << t << ": " << r.status.ToString();
    EXPECT_TRUE(r.side_calls_ok) << "thread " << t;
    for (int beam : {1, 2}) {
      for (size_t i = 0; i < lines.size(); ++i) {
        const Output& got = r.out[beam - 1][i];
        const Output& want = serial[beam - 1][i];
        EXPECT_EQ(got.ids, want.ids) << "thread " << t << " beam " << beam << " sentence " << i;
        EXPECT_EQ(got.text, want.text) << "thread " << t << " beam " << beam << " sentence " << i;
        EXPECT_TRUE(std::isfinite(got.score));
        EXPECT_NEAR(got.score, want.score, 1e-4) << "thread " << t << " beam " << beam << " sentence " << i;
      }
    }
  }
}

// Many translators created and destroyed at once on one Model (creation reads the Model and
// allocates the arena; destruction must not touch what other translators use).
TEST(Concurrency, TranslatorsCreatedAndDestroyedConcurrently) {
  auto model = LoadOrDie("int8");
  ASSERT_TRUE(model);
  std::atomic<int> failures{0};
  StartGate gate;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      gate.Wait();
      for (int round = 0; round < 2; ++round) {
        auto tr = Translator::Create(model, Limits(1 + (t + round) % 2));
        if (!tr.ok()) {
          ++failures;
          continue;
        }
        std::string_view text = "A dog runs.";
        const SentenceResultView* res = nullptr;
        if (!tr.value()->TranslateViews(&text, 1, Options(1), &res).ok() || res[0].hypotheses[0].num_ids == 0)
          ++failures;
      }
    });
  }
  gate.Open();
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

// Decoder steps of >= 16 rows on 2 threads run row-parallel (each thread every layer over its own
// rows, decoder_step.cc), with the profiler's lane-0 spans recorded by whichever thread runs the
// first rows. Under ThreadSanitizer this checks that split for races; here, that it changes no
// bit and that the profile still has one layer span per layer and step.
TEST(Concurrency, RowParallelStepsMatchOneThread) {
  auto model = LoadOrDie("int8");
  ASSERT_TRUE(model);
  const std::vector<std::string> lines = DevLines(kSentences);
  TranslatorLimits lim = Limits(1);
  lim.max_batch = kSentences;
  lim.max_beam = 4;
  lim.profiling = true;
  auto one = Translator::Create(model, lim);
  lim.num_threads = 2;
  auto two = Translator::Create(model, lim);
  ASSERT_TRUE(one.ok() && two.ok());
  TranslateOptions opt = Options(4);
  opt.profile = true;
  std::vector<TranslationResult> a, b;
  ASSERT_TRUE(one.value()->Translate(lines, opt, &a).ok());
  ASSERT_TRUE(two.value()->Translate(lines, opt, &b).ok());
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].hypotheses[0].ids, b[i].hypotheses[0].ids) << i;
    EXPECT_EQ(a[i].hypotheses[0].score, b[i].hypotheses[0].score) << i;
    EXPECT_EQ(a[i].hypotheses[0].alignment, b[i].hypotheses[0].alignment) << i;
  }
  // The same steps with the larger layers split by output columns (a team per step, as the
  // avx512-amx table asks for), and never so: the same bits again.
  for (int mode : {1, -1}) {
    detail::SetDecoderColumnSplitForTesting(*two.value(), mode);
    ASSERT_TRUE(two.value()->Translate(lines, opt, &b).ok()) << mode;
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].hypotheses[0].ids, b[i].hypotheses[0].ids) << i << " mode " << mode;
      EXPECT_EQ(a[i].hypotheses[0].score, b[i].hypotheses[0].score) << i << " mode " << mode;
      EXPECT_EQ(a[i].hypotheses[0].alignment, b[i].hypotheses[0].alignment) << i << " mode " << mode;
    }
  }
  detail::SetDecoderColumnSplitForTesting(*two.value(), 0);
  const ProfileView* p = two.value()->last_profile();
  ASSERT_NE(p, nullptr);
  // Lane 0 records one span per layer and step (decoder) or per layer and call (encoder: the
  // sentences of one call are split by rows when there are enough of them).
  uint64_t layers = 0, enc_layers = 0, enc_calls = 0;
  for (size_t e = 0; e < p->num_entries; ++e) {
    const std::string op = p->entries[e].op;
    if (op == "decoder.layer") layers += p->entries[e].calls;
    if (op == "encoder.layer") enc_layers += p->entries[e].calls;
    if (op == "encoder") enc_calls += p->entries[e].calls;
  }
  EXPECT_EQ(layers, uint64_t(p->steps) * uint64_t(model->config().decoder_layers));
  EXPECT_GT(enc_calls, 0u);
  EXPECT_EQ(enc_layers, enc_calls * uint64_t(model->config().encoder_layers));
}

}  // namespace
}  // namespace mtlite

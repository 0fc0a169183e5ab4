// The search layer on synthetic logits, without a model: greedy and beam search against plain
// re-implementations of HF (transformers 4.2x) greedy_search / BeamSearchScorer and of Marian's
// beam search (translator/beam_search.cpp, history.h) that keep whole prefixes, recomputes every row and sorts all beam*vocab candidates (no SIMD scan, no step-0
// sharing, no history table). The synthetic logits of a row are a function of the row's whole
// prefix, so a search that hands the network a wrong history gets different logits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "beam_history.h"
#include "kernels.h"
#include "search.h"
#include "thread_pool.h"

namespace mtlite {
namespace detail {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr int kStart = 1;

// Logits of a prefix: a hash of the prefix picks a pseudo-random row. `levels` > 0 quantizes the
// logits to that many values (many exact ties); eos_boost shifts </s> up with the length.
struct SyntheticLogits {
  int vocab = 16;
  int eos = 0;
  int levels = 0;
  float eos_boost = 0.3f;
  float eos_offset = 0.0f;
  uint64_t seed = 1;
  std::vector<float> Row(const std::vector<int32_t>& prefix) const {
    uint64_t h = seed * 0x9E3779B97F4A7C15ull;
    for (int32_t tok : prefix) h = (h ^ uint64_t(tok + 1)) * 0x100000001B3ull;
    std::mt19937_64 rng(h);
    std::normal_distribution<float> nd(0.0f, 2.0f);
    std::vector<float> row(static_cast<size_t>(vocab));
    for (float& v : row) {
      v = nd(rng);
      if (levels > 0) v = std::round(v * float(levels) / 8.0f) * (8.0f / float(levels));
    }
    row[size_t(eos)] += eos_boost * float(prefix.size()) - eos_offset;
    return row;
  }
};

// The search's network: reconstructs each row's prefix through the history's ancestor table.
class SyntheticModel : public StepModel {
 public:
  SyntheticModel(const SyntheticLogits& f, const BeamHistory* h, int R) : f_(f), h_(h), logits_(size_t(R) * f.vocab) {}
  Status Step(int t, int n, const int32_t* slots, const int32_t* tokens, float** logits) override {
    ++steps;
    rows_seen += n;
    std::vector<int32_t> anc(size_t(t) + 1);
    for (int i = 0; i < n; ++i) {
      h_->Ancestors(t, slots[i], anc.data());
      std::vector<int32_t> prefix;
      const int R = h_->slots();
      for (int p = 0; p < t; ++p) prefix.push_back(h_->token(p, anc[size_t(p)] % R));
      prefix.push_back(tokens[i]);
      EXPECT_EQ(h_->token(t, slots[i]), tokens[i]);
      const std::vector<float> row = f_.Row(prefix);
      std::copy(row.begin(), row.end(), logits_.begin() + long(i) * f_.vocab);
    }
    *logits = logits_.data();
    return Status::Ok();
  }
  int steps = 0;
  long rows_seen = 0;

 private:
  SyntheticLogits f_;
  const BeamHistory* h_;
  std::vector<float> logits_;
};

struct RefHyp {
  float score;
  std::vector<int32_t> ids;  // generated tokens without the final </s>
};

struct Config {
  int beam = 4, W = 4, T = 12, n_best = 4;
  float lp = 1.0f;
  int pad = 3;
  std::vector<int> bad = {4};  // a bad word besides pad (every vocabulary here has >= 5 tokens)
  bool greedy_scores = true;
  bool marian = false;  // Marian's search; <unk> (id 2) is then banned too
  int unk = 2;
};

const kernels::KernelTable& K() { return kernels::ReferenceKernels(); }

float Lse(const std::vector<float>& row) {
  float mx;
  const float sum = K().max_sum_exp(row.data(), int(row.size()), &mx);
  return mx + std::log(sum);
}

// HF greedy_search for one sentence.
RefHyp RefGreedy(const SyntheticLogits& f, const Config& s, int max_len) {
  std::vector<int32_t> prefix = {kStart};
  float sum = 0;
  for (int t = 0;; ++t) {
    std::vector<float> row = f.Row(prefix);
    const bool force = t + 1 >= max_len;
    row[size_t(s.pad)] = kNegInf;
    const float lse = s.greedy_scores && !force ? Lse(row) : 0.0f;
    for (int b : s.bad) row[size_t(b)] = kNegInf;
    int best = 0;
    for (int j = 1; j < f.vocab; ++j)
      if (row[size_t(j)] > row[size_t(best)]) best = j;
    if (force) best = f.eos;
    if (s.greedy_scores) sum += force ? 0.0f : row[size_t(best)] - lse;
    if (best == f.eos) {
      return {sum / std::pow(float(t + 1), s.lp), std::vector<int32_t>(prefix.begin() + 1, prefix.end())};
    }
    prefix.push_back(best);
  }
}

// HF BeamSearchScorer (early_stopping=False) for one sentence: n-best list, best first.
std::vector<RefHyp> RefBeam(const SyntheticLogits& f, const Config& s, int max_len) {
  struct Beam {
    std::vector<int32_t> prefix;
    float score;
  };
  std::vector<Beam> beams;
  for (int w = 0; w < s.beam; ++w) beams.push_back({{kStart}, w == 0 ? 0.0f : -1e9f});
  std::vector<RefHyp> hyps;  // BeamHypotheses.beams, in list order
  float worst = 1e9f;
  auto add = [&](float sum_logprobs, const std::vector<int32_t>& prefix) {
    const float score = sum_logprobs / std::pow(float(prefix.size()), s.lp);
    if (int(hyps.size()) < s.beam || score > worst) {
      hyps.push_back({score, std::vector<int32_t>(prefix.begin() + 1, prefix.end())});
      if (int(hyps.size()) > s.beam) {
        int wi = 0;  // sorted((score, idx))[0]: the lowest score, lowest index among equals
        for (int i = 1; i < int(hyps.size()); ++i)
          if (hyps[size_t(i)].score < hyps[size_t(wi)].score) wi = i;
        hyps.erase(hyps.begin() + wi);
        worst = hyps[0].score;
        for (const RefHyp& h : hyps) worst = std::min(worst, h.score);
      } else {
        worst = std::min(score, worst);
      }
    }
  };
  for (int t = 0;; ++t) {
    const bool force = t + 1 >= max_len;
    struct Cand {
      float score;
      int w, tok;
    };
    std::vector<Cand> cands;
    for (int w = 0; w < s.beam; ++w) {
      std::vector<float> row = f.Row(beams[size_t(w)].prefix);
      float lse = 0;
      if (!force) {
        row[size_t(s.pad)] = kNegInf;
        lse = Lse(row);
        for (int b : s.bad) row[size_t(b)] = kNegInf;
      }
      for (int j = 0; j < f.vocab; ++j) {
        const float lp = force ? (j == f.eos ? 0.0f : kNegInf) : row[size_t(j)] - lse;
        cands.push_back({force ? lp + beams[size_t(w)].score : (row[size_t(j)] - lse) + beams[size_t(w)].score, w, j});
      }
    }
    std::stable_sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) { return a.score > b.score; });
    cands.resize(std::min(cands.size(), size_t(2 * s.beam)));
    std::vector<Beam> next;
    for (size_t rank = 0; rank < cands.size() && int(next.size()) < s.beam; ++rank) {
      const Cand& c = cands[rank];
      if (c.tok == f.eos) {
        if (int(rank) >= s.beam) continue;
        add(c.score, beams[size_t(c.w)].prefix);
      } else {
        std::vector<int32_t> p = beams[size_t(c.w)].prefix;
        p.push_back(c.tok);
        next.push_back({p, c.score});
      }
    }
    while (int(next.size()) < s.beam) {  // every candidate was </s> or -inf: dead beams
      std::vector<int32_t> p = beams[0].prefix;
      p.push_back(f.eos);
      next.push_back({p, kNegInf});
    }
    bool done = false;
    if (int(hyps.size()) >= s.beam)
      done = worst >= (cands.empty() ? kNegInf : cands[0].score) / std::pow(float(t + 1), s.lp);
    if (force || done || t + 1 >= max_len) break;
    beams = next;
  }
  std::stable_sort(hyps.begin(), hyps.end(), [](const RefHyp& a, const RefHyp& b) { return a.score > b.score; });
  if (int(hyps.size()) > s.n_best) hyps.resize(size_t(s.n_best));
  return hyps;
}

// Marian's beam search for one sentence: k running hypotheses (beam at the start); each step the
// top k of their k*vocab candidates (path score + log-prob; a stable sort: ties to the earlier
// (hypothesis, token)); </s> ones finish with path / (t+1)^lp and leave the beam, -inf ones are
// dropped; at the cap every running one finishes with its path / t^lp. Greedy is its beam 1.
std::vector<RefHyp> RefMarian(const SyntheticLogits& f, const Config& s, int max_len) {
  struct Hyp {
    std::vector<int32_t> prefix;
    float score;
  };
  std::vector<Hyp> beams = {{{kStart}, 0.0f}};
  std::vector<RefHyp> done;
  for (int t = 0;; ++t) {
    if (t + 1 >= max_len) {
      for (const Hyp& h : beams)
        done.push_back({h.score / std::pow(float(std::max(t, 1)), s.lp),
                        std::vector<int32_t>(h.prefix.begin() + 1, h.prefix.end())});
      break;
    }
    struct Cand {
      float score;
      int w, tok;
    };
    std::vector<Cand> cands;
    for (int w = 0; w < int(beams.size()); ++w) {
      std::vector<float> row = f.Row(beams[size_t(w)].prefix);
      row[size_t(s.pad)] = kNegInf;
      const float lse = Lse(row);
      for (int b : s.bad) row[size_t(b)] = kNegInf;
      row[size_t(s.unk)] = kNegInf;
      for (int j = 0; j < f.vocab; ++j) cands.push_back({(row[size_t(j)] - lse) + beams[size_t(w)].score, w, j});
    }
    std::stable_sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) { return a.score > b.score; });
    const size_t k = t == 0 ? size_t(s.beam) : beams.size();
    std::vector<Hyp> next;
    for (size_t r = 0; r < std::min(k, cands.size()); ++r) {
      const Cand& c = cands[r];
      if (c.score == kNegInf) continue;
      const std::vector<int32_t>& p = beams[size_t(c.w)].prefix;
      if (c.tok == f.eos) {
        done.push_back({c.score / std::pow(float(t + 1), s.lp), std::vector<int32_t>(p.begin() + 1, p.end())});
      } else {
        next.push_back({p, c.score});
        next.back().prefix.push_back(c.tok);
      }
    }
    if (next.empty()) break;
    beams = next;
  }
  std::stable_sort(done.begin(), done.end(), [](const RefHyp& a, const RefHyp& b) { return a.score > b.score; });
  if (int(done.size()) > s.n_best) done.resize(size_t(s.n_best));
  return done;
}

// Runs the search layer over nb sentences with the given caps; returns the n-best per sentence.
struct SearchRun {
  std::vector<std::vector<RefHyp>> out;
  int steps = 0;
  long rows = 0;
  Status status;
};

SearchRun RunLayer(const std::vector<SyntheticLogits>& fs, const Config& s, const std::vector<int>& max_len,
                   const std::vector<uint8_t>& skip, const ThreadPool* pool = nullptr) {
  const int nb = int(fs.size()), W = s.W, R = std::max(nb, 1) * W, T = s.T, V = fs.empty() ? 8 : fs[0].vocab;
  std::vector<int32_t> tokens(size_t(T) * R, -7), parents(size_t(T) * R, -7);
  BeamHistory h;
  h.Bind(tokens.data(), parents.data(), nullptr, T, R, W, 1);
  const size_t r = static_cast<size_t>(R), c = static_cast<size_t>(nb + 1) * 2 * W;
  std::vector<int32_t> active(r), row_tok(r), cand_tok(c), cand_par(c);
  std::vector<float> beam_score(r), cand_score(c), worst(static_cast<size_t>(nb + 1));
  std::vector<SearchHyp> hyps(r);
  std::vector<int> num_hyps(size_t(nb + 1), 12345);
  std::vector<uint8_t> done(size_t(nb + 1));
  std::vector<float> row_score(r);
  std::vector<int32_t> row_best(r), sentence_rows(size_t(nb + 1), -7);
  SearchBuffers buf{active.data(),   row_tok.data(), beam_score.data(), cand_score.data(), cand_tok.data(),
                    cand_par.data(), hyps.data(),    num_hyps.data(),   worst.data(),      done.data(),
                    row_score.data(), row_best.data(), sentence_rows.data()};
  SearchSpec spec;
  spec.beam = s.beam;
  spec.kind = s.marian ? SearchKind::kMarian : SearchKind::kHF;
  spec.unk_id = s.marian ? s.unk : -1;
  spec.length_penalty = s.lp;
  spec.greedy_scores = s.greedy_scores;
  spec.vocab = V;
  spec.eos_id = fs.empty() ? 0 : fs[0].eos;
  spec.pad_id = s.pad;
  spec.decoder_start_id = kStart;
  spec.bad_ids = s.bad.data();
  spec.num_bad = int(s.bad.size());
  // One synthetic function per sentence: the model picks it by the row's sentence.
  class Multi : public StepModel {
   public:
    Multi(const std::vector<SyntheticLogits>& fs, const BeamHistory* h, int R, int W) : W_(W) {
      for (const auto& f : fs) models.emplace_back(f, h, R);
      logits.resize(size_t(R) * (fs.empty() ? 1 : fs[0].vocab));
    }
    Status Step(int t, int n, const int32_t* slots, const int32_t* tokens, float** out) override {
      ++steps;
      rows += n;
      const int V = int(logits.size()) / std::max(1, int(models.size()) * W_);
      for (int i = 0; i < n; ++i) {
        float* row = nullptr;
        if (Status s = models[size_t(slots[i] / W_)].Step(t, 1, slots + i, tokens + i, &row); !s.ok()) return s;
        std::copy(row, row + V, logits.begin() + long(i) * V);
      }
      *out = logits.data();
      return Status::Ok();
    }
    std::vector<SyntheticModel> models;
    std::vector<float> logits;
    int steps = 0;
    long rows = 0;
    int W_;
  } model(fs, &h, R, W);
  SearchRun run;
  run.status = RunSearch(spec, nb, max_len.data(), skip.data(), K(), &h, &buf, &model, nullptr, nullptr, pool);
  run.steps = model.steps;
  run.rows = model.rows;
  if (!run.status.ok()) return run;
  for (int b = 0; b < nb; ++b) {
    std::vector<RefHyp> list;
    SearchHyp* hb = hyps.data() + size_t(b) * W;
    const int k = SortHypotheses(hb, num_hyps[size_t(b)], s.beam == 1 ? 1 : s.n_best);
    for (int j = 0; j < k; ++j) {
      std::vector<int32_t> ids(size_t(hb[j].t_end));
      h.Backtrack(hb[j].t_end, hb[j].slot, ids.data(), nullptr, 0);
      list.push_back({hb[j].score, ids});
    }
    run.out.push_back(list);
  }
  return run;
}

void ExpectSame(const std::vector<RefHyp>& got, const std::vector<RefHyp>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t j = 0; j < got.size(); ++j) {
    EXPECT_EQ(got[j].ids, want[j].ids) << what << " hypothesis " << j;
    EXPECT_EQ(got[j].score, want[j].score) << what << " hypothesis " << j;  // same arithmetic: exact
  }
}

TEST(Search, GreedyEqualsReference) {
  for (int levels : {0, 3}) {
    for (float lp : {1.0f, 0.6f, 1.7f}) {
      Config s;
      s.beam = 1;
      s.W = 2;
      s.lp = lp;
      std::vector<SyntheticLogits> fs;
      std::vector<int> caps;
      for (int b = 0; b < 5; ++b) {
        SyntheticLogits f;
        f.vocab = 13;
        f.levels = levels;
        f.seed = uint64_t(100 + b);
        fs.push_back(f);
        caps.push_back(2 + 2 * b);
      }
      std::vector<uint8_t> skip(fs.size(), 0);
      SearchRun run = RunLayer(fs, s, caps, skip);
      ASSERT_TRUE(run.status.ok()) << run.status.ToString();
      for (size_t b = 0; b < fs.size(); ++b) {
        RefHyp want = RefGreedy(fs[b], s, caps[b]);
        ExpectSame(run.out[b], {want}, "greedy sentence " + std::to_string(b) + " lp " + std::to_string(lp));
        for (int32_t tok : run.out[b][0].ids) {
          EXPECT_NE(tok, s.pad);
          EXPECT_NE(tok, s.bad[0]);
        }
        EXPECT_LT(int(run.out[b][0].ids.size()), caps[b]);
      }
    }
  }
}

TEST(Search, BeamEqualsReferenceOverShapesPenaltiesAndTies) {
  int cases = 0;
  for (int beam : {2, 3, 4, 5}) {
    for (int vocab : {5, 9, 40, 301}) {
      for (float lp : {1.0f, 0.6f, 1.5f}) {
        for (int levels : {0, 2}) {
          Config s;
          s.beam = beam;
          s.W = beam + 1;  // max_beam larger than the beam in use
          s.n_best = beam;
          s.lp = lp;
          s.T = 10;
          std::vector<SyntheticLogits> fs;
          std::vector<int> caps;
          for (int b = 0; b < 3; ++b) {
            SyntheticLogits f;
            f.vocab = vocab;
            f.levels = levels;
            f.eos_boost = 0.15f * float(b + 1);
            f.seed = uint64_t(7 * beam + vocab + b + 1000 * levels);
            fs.push_back(f);
            caps.push_back(b == 0 ? s.T : 3 + b);
          }
          std::vector<uint8_t> skip(fs.size(), 0);
          SearchRun run = RunLayer(fs, s, caps, skip);
          ASSERT_TRUE(run.status.ok()) << run.status.ToString();
          for (size_t b = 0; b < fs.size(); ++b) {
            const std::string what = "beam " + std::to_string(beam) + " vocab " + std::to_string(vocab) + " lp " +
                                     std::to_string(lp) + " levels " + std::to_string(levels) + " sentence " +
                                     std::to_string(b);
            ExpectSame(run.out[b], RefBeam(fs[b], s, caps[b]), what);
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 4 * 4 * 3 * 2 * 3);
}

// Marian's search (beam 1 = greedy) against its plain re-implementation, over beams, vocabularies,
// normalize exponents, ties and caps: the rows each step runs are the running hypotheses only.
TEST(Search, MarianEqualsReferenceOverShapesPenaltiesAndTies) {
  int cases = 0;
  for (int beam : {1, 2, 3, 5}) {
    for (int vocab : {6, 9, 40, 301}) {
      for (float lp : {1.0f, 0.6f, 0.0f}) {
        for (int levels : {0, 2}) {
          Config s;
          s.marian = true;
          s.beam = beam;
          s.W = beam + 1;
          s.n_best = beam;
          s.lp = lp;
          s.T = 10;
          std::vector<SyntheticLogits> fs;
          std::vector<int> caps;
          for (int b = 0; b < 3; ++b) {
            SyntheticLogits f;
            f.vocab = vocab;
            f.levels = levels;
            f.eos_boost = 0.15f * float(b + 1);
            f.seed = uint64_t(11 * beam + vocab + b + 1000 * levels);
            fs.push_back(f);
            caps.push_back(b == 0 ? s.T : 2 + b);
          }
          std::vector<uint8_t> skip(fs.size(), 0);
          SearchRun run = RunLayer(fs, s, caps, skip);
          ASSERT_TRUE(run.status.ok()) << run.status.ToString();
          for (size_t b = 0; b < fs.size(); ++b) {
            const std::string what = "marian beam " + std::to_string(beam) + " vocab " + std::to_string(vocab) +
                                     " lp " + std::to_string(lp) + " levels " + std::to_string(levels) +
                                     " sentence " + std::to_string(b);
            const std::vector<RefHyp> want = RefMarian(fs[b], s, caps[b]);
            ExpectSame(run.out[b], want, what);
            for (const RefHyp& h : run.out[b])
              for (int32_t tok : h.ids) EXPECT_TRUE(tok != s.unk && tok != s.pad && tok != s.bad[0]) << what;
            // exactly `beam` hypotheses finish (each running one once), unless the vocabulary has
            // fewer allowed tokens than the beam (vocab 6: </s>, 1 and 5), whose -inf candidates drop
            if (beam > 1 && vocab - 3 >= beam) {
              EXPECT_EQ(int(want.size()), beam) << what;
            }
            if (beam > 1 && vocab == 6) {
              EXPECT_LE(int(want.size()), beam) << what;
            }
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 4 * 4 * 3 * 2 * 3);
}

// Marian's beam shrinks: one row per sentence at step 0, then one per running hypothesis. With
// </s> likely from the start, hypotheses finish early and later steps run fewer rows than HF's.
TEST(Search, MarianBeamRunsOnlyTheRunningHypotheses) {
  Config s;
  s.marian = true;
  s.beam = 4;
  s.W = 4;
  s.n_best = 4;
  s.T = 12;
  SyntheticLogits f;
  f.vocab = 12;
  f.eos_boost = 0.0f;
  f.eos_offset = -3.0f;  // </s> near the top at every step
  std::vector<uint8_t> skip = {0};
  SearchRun marian = RunLayer({f}, s, {s.T}, skip);
  ASSERT_TRUE(marian.status.ok()) << marian.status.ToString();
  s.marian = false;
  SearchRun hf = RunLayer({f}, s, {s.T}, skip);
  ASSERT_TRUE(hf.status.ok());
  EXPECT_LT(marian.rows, hf.rows);
  EXPECT_LE(marian.rows, 1 + long(marian.steps - 1) * s.beam);
  EXPECT_EQ(int(marian.out[0].size()), s.beam);
}

// With a pool the per-row and per-sentence work runs across threads: every hypothesis (ids and
// score, exactly) equals the 1-thread run's and the reference's. The vocabulary is large enough
// that the rows are split (a task covers >= 32 Ki logits); ties (levels) and sentences that end
// at different steps (caps, </s> boosts) change the rows of a step as the search goes.
TEST(Search, ThreadsGiveTheSameHypotheses) {
  for (int threads : {2, 3}) {
    ThreadPool pool;
    ASSERT_TRUE(pool.Init(threads).ok());
    ASSERT_EQ(pool.threads(), threads);
    for (int mode : {1, 3, -3}) {  // -3: Marian's beam 3
      for (int levels : {0, 2}) {
        for (int sentences : {1, 5}) {  // batch 1 beam: the rows are prepared across the threads
          const int beam = std::abs(mode);
          Config s;
          s.marian = mode < 0;
          s.beam = beam;
          s.W = beam;
          s.n_best = beam;
          s.T = 6;
          std::vector<SyntheticLogits> fs;
          std::vector<int> caps;
          for (int b = 0; b < sentences; ++b) {
            SyntheticLogits f;
            f.vocab = 20011;
            f.levels = levels;
            f.eos_boost = 1.5f * float(b);
            f.seed = uint64_t(31 * b + levels + 1);
            fs.push_back(f);
            caps.push_back(b == 1 ? 3 : s.T);
          }
          std::vector<uint8_t> skip(fs.size(), 0);
          if (sentences > 3) skip[3] = 1;
          SearchRun one = RunLayer(fs, s, caps, skip);
          SearchRun many = RunLayer(fs, s, caps, skip, &pool);
          ASSERT_TRUE(one.status.ok() && many.status.ok());
          EXPECT_EQ(many.steps, one.steps);
          EXPECT_EQ(many.rows, one.rows);
          for (size_t b = 0; b < fs.size(); ++b) {
            const std::string what = std::to_string(threads) + " threads, beam " + std::to_string(beam) + " levels " +
                                     std::to_string(levels) + " sentence " + std::to_string(b) + " of " +
                                     std::to_string(sentences);
            ExpectSame(many.out[b], one.out[b], what);
            if (skip[b]) continue;
            if (s.marian)
              ExpectSame(many.out[b], RefMarian(fs[b], s, caps[b]), what);
            else if (beam == 1)
              ExpectSame(many.out[b], {RefGreedy(fs[b], s, caps[b])}, what);
            else
              ExpectSame(many.out[b], RefBeam(fs[b], s, caps[b]), what);
          }
        }
      }
    }
  }
}

TEST(Search, BeamStepZeroRunsOneRowPerSentenceAndAllBeamsEndAtOnce) {
  Config s;
  SyntheticLogits f;
  f.vocab = 30;
  f.eos_boost = 20.0f;  // </s>: -10 at step 0, +10 at step 1: every beam ends at step 1
  f.eos_offset = 30.0f;
  std::vector<SyntheticLogits> fs = {f, f};
  fs[1].seed = 9;
  SearchRun run = RunLayer(fs, s, {8, 8}, {0, 0});
  ASSERT_TRUE(run.status.ok());
  // step 0: one row per sentence; step 1: every beam ends, but HF's is_done compares the worst
  // hypothesis with the best candidate of the step (a finished one), so one more step runs,
  // whose candidates cannot beat the hypotheses.
  EXPECT_EQ(run.steps, 3);
  EXPECT_EQ(run.rows, 2 * 1 + 2 * s.beam + 2 * s.beam);
  for (size_t b = 0; b < fs.size(); ++b) {
    ASSERT_EQ(int(run.out[b].size()), s.n_best);
    for (const RefHyp& h : run.out[b]) EXPECT_EQ(h.ids.size(), 1u);
    ExpectSame(run.out[b], RefBeam(fs[b], s, 8), "all beams end at once");
  }
}

TEST(Search, ForcedEndAtTheCap) {
  for (int beam : {1, 4}) {
    Config s;
    s.beam = beam;
    s.n_best = beam;
    SyntheticLogits f;
    f.vocab = 20;
    f.eos_boost = -50.0f;  // </s> never chosen freely: every hypothesis ends at the cap
    for (int cap : {1, 2, 7}) {
      SearchRun run = RunLayer({f}, s, {cap}, {0});
      ASSERT_TRUE(run.status.ok());
      ASSERT_FALSE(run.out[0].empty());
      for (const RefHyp& h : run.out[0]) EXPECT_EQ(int(h.ids.size()), cap - 1) << "beam " << beam << " cap " << cap;
      if (beam > 1) ExpectSame(run.out[0], RefBeam(f, s, cap), "forced end");
    }
  }
}

TEST(Search, EmptyBatchAndSkippedSentences) {
  Config s;
  SearchRun empty = RunLayer({}, s, {}, {});
  EXPECT_TRUE(empty.status.ok());
  EXPECT_EQ(empty.steps, 0);
  SyntheticLogits f;
  for (int beam : {1, 4}) {
    s.beam = beam;
    SearchRun run = RunLayer({f, f, f}, s, {6, 6, 6}, {1, 0, 1});
    ASSERT_TRUE(run.status.ok());
    EXPECT_TRUE(run.out[0].empty());  // skipped: no hypothesis, count initialised (was 12345)
    EXPECT_FALSE(run.out[1].empty());
    EXPECT_TRUE(run.out[2].empty());
    SearchRun all = RunLayer({f, f}, s, {6, 6}, {1, 1});
    ASSERT_TRUE(all.status.ok());
    EXPECT_EQ(all.steps, 0);
    EXPECT_TRUE(all.out[0].empty() && all.out[1].empty());
  }
}

TEST(Search, NBestIsSortedBestFirstAndStable) {
  SearchHyp h[6] = {{-3, 1, 0}, {-1, 2, 1}, {-2, 3, 2}, {-1, 4, 3}, {kNegInf, 5, 4}, {-0.5f, 6, 5}};
  EXPECT_EQ(SortHypotheses(h, 6, 4), 4);
  const int order[6] = {5, 1, 3, 2, 0, 4};  // equal scores keep their order (slots 1 before 3)
  for (int i = 0; i < 6; ++i) EXPECT_EQ(h[i].slot, order[i]) << i;
  EXPECT_EQ(SortHypotheses(h, 2, 4), 2);
  EXPECT_EQ(SortHypotheses(h, 0, 4), 0);
}

TEST(Search, MaxTargetLength) {
  TranslateOptions o;
  o.max_length = 50;
  EXPECT_EQ(MaxTargetLength(o, 10, 256), 50);
  EXPECT_EQ(MaxTargetLength(o, 10, 20), 20);  // the translator's limit
  o.max_length_ratio = 1.5f;
  o.max_length_offset = 10;
  EXPECT_EQ(MaxTargetLength(o, 10, 256), 25);  // 1.5 * 10 + 10
  EXPECT_EQ(MaxTargetLength(o, 7, 256), 20);   // floor(10.5) + 10
  EXPECT_EQ(MaxTargetLength(o, 40, 256), 50);  // the absolute cap wins
  o.max_length_offset = -30;
  EXPECT_EQ(MaxTargetLength(o, 4, 256), 1);  // never below one token (the forced </s>)
}

TEST(Search, RejectsInconsistentArguments) {
  Config s;
  s.beam = 9;  // more than max_beam (W = 4)
  SyntheticLogits f;
  SearchRun run = RunLayer({f}, s, {5}, {0});
  EXPECT_EQ(run.status.code(), StatusCode::kInvalidArgument);
  s.beam = 2;
  run = RunLayer({f}, s, {s.T + 1}, {0});  // cap beyond the history
  EXPECT_FALSE(run.status.ok());
  EXPECT_FALSE(run.status.message().empty());
}

}  // namespace
}  // namespace detail
}  // namespace mtlite

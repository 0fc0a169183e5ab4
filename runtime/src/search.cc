#include "search.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mtlite {
namespace detail {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// lse = max + log(sum exp(x - max)) over a logits row (torch's log_softmax: log-prob = x - lse).
float RowLogSumExp(const kernels::KernelTable& K, const float* row, int n) {
  float mx;
  const float sum = K.max_sum_exp(row, n, &mx);
  return mx + std::log(sum);
}

// Time of the search's sub-parts (aggregates only: they interleave row by row).
struct SubTimer {
  Profiler* prof;
  Op op;
  uint64_t t0;
  SubTimer(Profiler* p, Op o) : prof(p), op(o), t0(p ? p->Now() : 0) {}
  ~SubTimer() {
    if (!prof) return;
    const uint64_t t1 = prof->Now();
    prof->Add(op, t1 > t0 ? t1 - t0 : 0, 1);  // 0, not a wrapped difference, as Close() does
  }
};

// Logits a task of the per-row phases should at least cover to be worth a fork-join (~4-8 us
// of scanning): small batches of a small vocabulary stay on the calling thread.
constexpr size_t kMinLogitsPerTask = size_t(1) << 15;

// Tasks for n units of `logits` logits each: the pool's threads when there is enough work, else 1.
int Tasks(const ThreadPool* pool, int n, size_t logits) {
  if (!pool || !pool->parallel() || n <= 1) return 1;
  return int(std::min({size_t(pool->threads()), size_t(n), std::max<size_t>(1, size_t(n) * logits / kMinLogitsPerTask)}));
}

// fn(u, prof) for units u in [0, n) of `logits` logits each, in contiguous ranges over Tasks()
// tasks; the calling thread's units get the profiler (the aggregates are lane 0's), the
// workers' get none.
template <class F>
void ForUnits(const ThreadPool* pool, int n, size_t logits, Profiler* prof, F&& fn) {
  const size_t tasks = size_t(Tasks(pool, n, logits));
  if (tasks <= 1) {
    for (int u = 0; u < n; ++u) fn(u, prof);
    return;
  }
  pool->ParallelFor(int(tasks), [&](int task, int thread) {
    Profiler* p = thread == 0 ? prof : nullptr;
    const int u0 = int(size_t(n) * size_t(task) / tasks), u1 = int(size_t(n) * size_t(task + 1) / tasks);
    for (int u = u0; u < u1; ++u) fn(u, p);
  });
}

// The model's bad words and (Marian) <unk>: -inf after the log-softmax.
void BanAfterLogSoftmax(const SearchSpec& sp, float* row) {
  for (int j = 0; j < sp.num_bad; ++j) row[sp.bad_ids[j]] = kNegInf;
  if (sp.unk_id >= 0) row[sp.unk_id] = kNegInf;
}

// A logits row before its candidate scan: pad -inf, the log-sum-exp into *lse, the bans.
void PrepareRow(const SearchSpec& sp, const kernels::KernelTable& K, float* row, float* lse, Profiler* p) {
  if (sp.pad_id >= 0) row[sp.pad_id] = kNegInf;
  SubTimer timer(p, Op::kSearchLogSoftmax);
  *lse = RowLogSumExp(K, row, sp.vocab);
  BanAfterLogSoftmax(sp, row);
}

// Sorted insertion into the best-first candidate list (cs, ct, cp) of nc entries and capacity
// cap; ties keep the earlier entry. Returns the new count.
int InsertCandidate(float* cs, int32_t* ct, int32_t* cp, int nc, int cap, float sc, int tok, int w) {
  int pos = nc < cap ? nc++ : cap - 1;
  while (pos > 0 && sc > cs[pos - 1]) {
    cs[pos] = cs[pos - 1];
    ct[pos] = ct[pos - 1];
    cp[pos] = cp[pos - 1];
    --pos;
  }
  cs[pos] = sc;
  ct[pos] = tok;
  cp[pos] = w;
  return nc;
}

// Adds the candidates (row[j] - lse) + base of one logits row to the best-first list of nc
// entries and capacity cap: every token until cap are held, then those above the cut-off, which
// the SIMD scan finds. Returns the new count.
int ScanRow(const kernels::KernelTable& K, const float* row, int V, float lse, float base, int w, float* cs,
            int32_t* ct, int32_t* cp, int nc, int cap) {
  int j = 0;
  for (; j < V && nc < cap; ++j) nc = InsertCandidate(cs, ct, cp, nc, cap, (row[j] - lse) + base, j, w);
  while (j < V) {
    float sc;
    j = K.scan_gt(row, j, V, lse, base, cs[cap - 1], &sc);
    if (j >= V) break;
    nc = InsertCandidate(cs, ct, cp, nc, cap, sc, j, w);
    ++j;
  }
  return nc;
}

// Greedy search (HF greedy_search): argmax over the processed logits, stop at </s>.
Status Greedy(const SearchSpec& sp, int nb, const int* max_len, const uint8_t* skip, const kernels::KernelTable& K,
              BeamHistory* h, SearchBuffers* s, StepModel* model, SearchObserver* obs,
              Profiler* prof, const ThreadPool* pool) {
  const int W = h->slots_per_sentence(), V = sp.vocab;
  for (int b = 0; b < nb; ++b) {
    const int slot = b * W;
    s->num_hyps[b] = 0;
    s->done[b] = skip[b] ? 1 : 0;
    s->beam_score[slot] = 0;
    h->token(0, slot) = sp.decoder_start_id;
    h->parent(0, slot) = slot;
  }
  for (int t = 0;; ++t) {
    int n_active = 0;
    for (int b = 0; b < nb; ++b)
      if (!s->done[b]) {
        s->active[n_active] = b * W;
        s->row_tokens[n_active] = h->token(t, b * W);
        ++n_active;
      }
    if (n_active == 0) break;
    float* logits = nullptr;
    if (Status st = model->Step(t, n_active, s->active, s->row_tokens, &logits); !st.ok()) return st;
    Span span(prof, Op::kSearch);
    // Per row, independently (across the pool's threads): the chosen column and its log-prob.
    ForUnits(pool, n_active, size_t(V), prof, [&](int i, Profiler* p) {
      float* row = logits + size_t(i) * V;
      const bool force = t + 1 >= max_len[s->active[i] / W];
      // The score is the log-prob of the chosen token (0 for the forced </s>).
      if (sp.pad_id >= 0) row[sp.pad_id] = kNegInf;
      if (t < sp.min_length && !force) row[sp.eos_id] = kNegInf;
      float lse = 0.0f;
      if (sp.greedy_scores && !force) {
        SubTimer timer(p, Op::kSearchLogSoftmax);
        lse = RowLogSumExp(K, row, V);
      }
      BanAfterLogSoftmax(sp, row);
      int best = sp.eos_id;
      if (!force) {
        SubTimer timer(p, Op::kSearchScan);
        best = K.argmax(row, V);
      }
      s->row_best[i] = best;
      s->row_score[i] = force ? 0.0f : row[best] - lse;
    });
    for (int i = 0; i < n_active; ++i) {
      const int slot = s->active[i], b = slot / W;
      const bool force = t + 1 >= max_len[b];
      const int best = s->row_best[i];
      const float lp = s->row_score[i];
      if (sp.greedy_scores) s->beam_score[slot] += lp;
      if (best == sp.eos_id || force) {
        // t+1 tokens generated (the last one is </s>, forced at the limit, where Marian counts
        // the t before it)
        const float len = float(force && sp.kind == SearchKind::kMarian ? std::max(t, 1) : t + 1);
        // CTranslate2: the length counts </s>, not the forced one at the cap
        const float ct2_len = float(force ? std::max(t, 1) : t + 1);
        s->hyps[size_t(b) * W] = {s->beam_score[slot] / std::pow(sp.kind == SearchKind::kCT2 ? ct2_len : len, sp.length_penalty), t, slot};
        s->num_hyps[b] = 1;
        s->done[b] = 1;
      } else {
        h->token(t + 1, slot) = sp.Token(best);
        h->parent(t + 1, slot) = slot;
        h->set_score(t + 1, slot, s->beam_score[slot]);
        if (obs) obs->OnToken(b, t + 1, sp.Token(best));
      }
    }
  }
  return Status::Ok();
}

// Beam search with HF BeamSearchScorer semantics: beam scores start at [0, -1e9, ...]; the top
// 2*beam candidates over beam*vocab are scanned best first; a </s> candidate ranked < beam
// finishes a hypothesis scored sum_logprobs / len^length_penalty (len = tokens including the
// decoder start, excluding </s>); the others refill the beams; a sentence is done once it has
// `beam` hypotheses and none of the running beams can beat the worst (early_stopping = false);
// beams still running at max length are finalised.
Status Beam(const SearchSpec& sp, int nb, const int* max_len, const uint8_t* skip, const kernels::KernelTable& K,
            BeamHistory* h, SearchBuffers* s, StepModel* model, SearchObserver* obs,
            Profiler* prof, const ThreadPool* pool) {
  const int W = h->slots_per_sentence(), beam = sp.beam, V = sp.vocab;
  for (int b = 0; b < nb; ++b) {
    s->num_hyps[b] = 0;
    s->done[b] = skip[b] ? 1 : 0;
    s->worst[b] = 1e9f;
    for (int w = 0; w < beam; ++w) {
      const int slot = b * W + w;
      s->beam_score[slot] = w == 0 ? 0.0f : -1e9f;
      h->token(0, slot) = sp.decoder_start_id;
      h->parent(0, slot) = slot;
    }
  }
  // HF BeamHypotheses.add: keep the best `beam` hypotheses; worst is the lowest kept score.
  auto add_hyp = [&](int b, float sum_logprobs, int t_end, int slot, int cur_len) {
    const float score = sum_logprobs / std::pow(float(cur_len), sp.length_penalty);
    SearchHyp* hy = s->hyps + size_t(b) * W;
    int& n = s->num_hyps[b];
    if (n < beam) {
      hy[n++] = {score, t_end, slot};
      s->worst[b] = std::min(s->worst[b], score);
    } else if (score > s->worst[b]) {
      // as HF: append, then delete the worst (the first of equal worst ones), so the list order
      // (which orders equal final scores) is HF's; the new worst is the lowest remaining
      int wi = 0;
      for (int i = 1; i < n; ++i)
        if (hy[i].score < hy[wi].score) wi = i;
      for (int i = wi; i + 1 < n; ++i) hy[i] = hy[i + 1];
      hy[n - 1] = {score, t_end, slot};
      s->worst[b] = hy[0].score;
      for (int i = 1; i < n; ++i) s->worst[b] = std::min(s->worst[b], hy[i].score);
    }
  };
  // Step 0: every beam of a sentence holds the same single token (the decoder start) and the
  // same empty history, so their rows would be bit-identical (a row's arithmetic does not depend
  // on the other rows): the decoder runs one row per sentence (slot b*W, which every path reads
  // position 0 from: BeamHistory), and each beam still scores its own candidates below (beams
  // 1.. start at -1e9), exactly as if all rows had run.
  const int K2 = 2 * beam;
  for (int t = 0;; ++t) {
    const bool first = t == 0;
    const int rows_per = first ? 1 : beam;  // decoder rows per running sentence
    int n_active = 0;
    for (int b = 0; b < nb; ++b)
      if (!s->done[b])
        for (int w = 0; w < rows_per; ++w) {
          const int slot = b * W + w;
          s->active[n_active] = slot;
          s->row_tokens[n_active] = h->token(t, slot);
          ++n_active;
        }
    if (n_active == 0) break;
    float* logits = nullptr;
    if (Status st = model->Step(t, n_active, s->active, s->row_tokens, &logits); !st.ok()) return st;
    Span span(prof, Op::kSearch);
    // Per row: pad, log-sum-exp, bad words. At step 0 a sentence's one row serves all its beams.
    auto prepare_row = [&](int i, Profiler* p) { PrepareRow(sp, K, logits + size_t(i) * V, s->row_score + i, p); };
    // Per sentence, independently: the top 2*beam candidates over beam*V, kept sorted best
    // first; ties keep the earlier (beam, token), as a stable sort of HF's flattened scores
    // does. Every token enters until 2*beam are held, so a sentence ends with
    // min(2*beam, beam*V) candidates. Each row is prepared right before its scan (while in
    // cache) unless `prepared`.
    auto scan_sentence = [&](int u, Profiler* p, bool prepared) {
      const int i0 = u * rows_per, b = s->active[i0] / W;
      const bool force = t + 1 >= max_len[b];
      float* cs = s->cand_score + size_t(b) * K2;
      int32_t* ct = s->cand_tok + size_t(b) * K2;
      int32_t* cp = s->cand_par + size_t(b) * K2;
      int nc = 0;
      for (int w = 0; w < beam; ++w) {
        const int i = first ? i0 : i0 + w;
        const float base = s->beam_score[b * W + w];
        if (force) {  // every token -inf, </s> log-prob 0 (the row is not read)
          for (int j = 0; j < V; ++j) {
            const float sc = (j == sp.eos_id ? 0.0f : kNegInf) + base;
            if (nc < K2 || sc > cs[K2 - 1]) nc = InsertCandidate(cs, ct, cp, nc, K2, sc, j, w);
          }
          continue;
        }
        if (!prepared && (w == 0 || !first)) prepare_row(i, p);
        // candidate score = log-prob + beam score = (x - lse) + base
        SubTimer timer(p, Op::kSearchScan);
        nc = ScanRow(K, logits + size_t(i) * V, V, s->row_score[i], base, w, cs, ct, cp, nc, K2);
      }
    };
    // Across the pool's threads by sentence; when there are fewer sentences than threads to
    // keep busy (batch 1), the rows are prepared across the threads first.
    const int n_sent = n_active / rows_per;
    const bool rows_first = Tasks(pool, n_sent, size_t(beam) * size_t(V)) < Tasks(pool, n_active, size_t(V));
    if (rows_first)
      ForUnits(pool, n_active, size_t(V), prof, [&](int i, Profiler* p) {
        if (t + 1 < max_len[s->active[i] / W]) prepare_row(i, p);
      });
    ForUnits(pool, n_sent, size_t(beam) * size_t(V), prof,
             [&](int u, Profiler* p) { scan_sentence(u, p, rows_first); });
    // In sentence order, on the calling thread: hypotheses, running beams, history. Every
    // sentence holds min(2*beam, beam*V) candidates.
    const int nc = int(std::min<int64_t>(K2, int64_t(beam) * V));
    for (int i0 = 0; i0 < n_active; i0 += rows_per) {
      const int b = s->active[i0] / W;
      const bool force = t + 1 >= max_len[b];
      const float* cs = s->cand_score + size_t(b) * K2;
      const int32_t* ct = s->cand_tok + size_t(b) * K2;
      const int32_t* cp = s->cand_par + size_t(b) * K2;
      const int cur_len = t + 1;
      int next = 0;
      float new_score[kMaxBeam];
      int32_t new_tok[kMaxBeam], new_par[kMaxBeam];
      for (int rank = 0; rank < nc && next < beam; ++rank) {
        const int parent_slot = b * W + cp[rank];
        if (ct[rank] == sp.eos_id) {
          if (rank >= beam) continue;
          add_hyp(b, cs[rank], t, parent_slot, cur_len);
        } else {
          new_score[next] = cs[rank];
          new_tok[next] = ct[rank];
          new_par[next] = parent_slot;
          ++next;
        }
      }
      for (; next < beam; ++next) {  // only when every candidate was -inf/eos: keep dead beams
        new_score[next] = kNegInf;
        new_tok[next] = sp.eos_id;
        new_par[next] = b * W;
      }
      bool done = false;
      if (s->num_hyps[b] >= beam) {
        const float best_running = nc > 0 ? cs[0] : kNegInf;
        done = s->worst[b] >= best_running / std::pow(float(cur_len), sp.length_penalty);
      }
      if (force) done = true;  // every hypothesis ends at max length
      if (!done && t + 1 < max_len[b]) {
        for (int w = 0; w < beam; ++w) {
          const int slot = b * W + w;
          s->beam_score[slot] = new_score[w];
          h->token(t + 1, slot) = sp.Token(new_tok[w]);
          h->parent(t + 1, slot) = new_par[w];
          h->set_score(t + 1, slot, new_score[w]);
        }
        if (obs) obs->OnBest(b, t + 1, b * W);
      } else if (!done) {
        done = true;
      }
      s->done[b] = done ? 1 : 0;
    }
  }
  return Status::Ok();
}

// Marian's beam search (translator/beam_search.cpp, history.h): sentence b keeps k unfinished
// hypotheses in slots b*W .. b*W+k-1 (k = beam at the start; a dead slot's beam score is -inf).
// A step scores their k rows (one at step 0, the decoder start) and takes the top k of the k*V
// candidates (path score + log-prob, best first, ties to the earlier (row, token)); those ending
// in </s> finish with score = path / len^length_penalty (len = t+1, counting </s>) and the beam
// shrinks by them, as does a -inf candidate (dropped). The sentence ends when no hypothesis runs,
// so it has exactly `beam` finished ones unless candidates were dropped. At the length cap the
// running ones finish with a forced </s> of log-prob 0 that their length does not count: Marian
// ends them on their last word, one step earlier (its cap is max-length-factor * source length
// words; max_len = that + 1 gives the same hypotheses).
Status MarianBeam(const SearchSpec& sp, int nb, const int* max_len, const uint8_t* skip, const kernels::KernelTable& K,
                  BeamHistory* h, SearchBuffers* s, StepModel* model, SearchObserver* obs, Profiler* prof,
                  const ThreadPool* pool) {
  const int W = h->slots_per_sentence(), beam = sp.beam, V = sp.vocab;
  for (int b = 0; b < nb; ++b) {
    s->num_hyps[b] = 0;
    s->done[b] = skip[b] ? 1 : 0;
    for (int w = 0; w < beam; ++w) {
      const int slot = b * W + w;
      s->beam_score[slot] = w == 0 ? 0.0f : kNegInf;
      h->token(0, slot) = sp.decoder_start_id;
      h->parent(0, slot) = slot;
    }
  }
  auto live = [&](int b) {  // running hypotheses of sentence b (slots b*W ..)
    int k = 0;
    while (k < beam && s->beam_score[b * W + k] != kNegInf) ++k;
    return k;
  };
  for (int t = 0;; ++t) {
    int n_active = 0, n_sent = 0;
    for (int b = 0; b < nb; ++b) {
      if (s->done[b]) continue;
      s->sentence_rows[n_sent++] = n_active;
      const int rows = t == 0 ? 1 : live(b);
      for (int w = 0; w < rows; ++w) {
        const int slot = b * W + w;
        s->active[n_active] = slot;
        s->row_tokens[n_active] = h->token(t, slot);
        ++n_active;
      }
    }
    s->sentence_rows[n_sent] = n_active;
    if (n_active == 0) break;
    float* logits = nullptr;
    if (Status st = model->Step(t, n_active, s->active, s->row_tokens, &logits); !st.ok()) return st;
    Span span(prof, Op::kSearch);
    // Per row: pad, log-sum-exp, bans. Per sentence: the top k of its rows' candidates (k = beam
    // at step 0), each row prepared right before its scan unless the rows were prepared across
    // the pool's threads first (fewer running sentences than threads to keep busy: batch 1).
    auto prepare_row = [&](int i, Profiler* p) { PrepareRow(sp, K, logits + size_t(i) * V, s->row_score + i, p); };
    const bool rows_first = Tasks(pool, n_sent, size_t(beam) * size_t(V)) < Tasks(pool, n_active, size_t(V));
    if (rows_first)
      ForUnits(pool, n_active, size_t(V), prof, [&](int i, Profiler* p) {
        if (t + 1 < max_len[s->active[i] / W]) prepare_row(i, p);
      });
    ForUnits(pool, n_sent, size_t(beam) * size_t(V), prof, [&](int u, Profiler* p) {
      const int i0 = s->sentence_rows[u], i1 = s->sentence_rows[u + 1], b = s->active[i0] / W;
      if (t + 1 >= max_len[b]) return;  // forced </s>: the rows are not read
      const int k = t == 0 ? beam : i1 - i0;
      float* cs = s->cand_score + size_t(b) * 2 * W;
      int32_t* ct = s->cand_tok + size_t(b) * 2 * W;
      int32_t* cp = s->cand_par + size_t(b) * 2 * W;
      int nc = 0;
      for (int i = i0; i < i1; ++i) {
        if (!rows_first) prepare_row(i, p);
        SubTimer timer(p, Op::kSearchScan);
        nc = ScanRow(K, logits + size_t(i) * V, V, s->row_score[i], s->beam_score[s->active[i]], s->active[i] - b * W,
                     cs, ct, cp, nc, k);
      }
      for (int r = nc; r < k; ++r) cs[r] = kNegInf;  // fewer tokens than the beam: dropped
    });
    // In sentence order, on the calling thread: finished hypotheses, running beams, history.
    for (int u = 0; u < n_sent; ++u) {
      const int i0 = s->sentence_rows[u], i1 = s->sentence_rows[u + 1], b = s->active[i0] / W;
      SearchHyp* hy = s->hyps + size_t(b) * W;
      int& nh = s->num_hyps[b];
      if (t + 1 >= max_len[b]) {  // the cap: every running hypothesis ends here
        const float len = float(std::max(t, 1));
        for (int i = i0; i < i1; ++i)
          if (nh < W) hy[nh++] = {s->beam_score[s->active[i]] / std::pow(len, sp.length_penalty), t, s->active[i]};
        s->done[b] = 1;
        continue;
      }
      const int k = t == 0 ? beam : i1 - i0;
      const float* cs = s->cand_score + size_t(b) * 2 * W;
      const int32_t* ct = s->cand_tok + size_t(b) * 2 * W;
      const int32_t* cp = s->cand_par + size_t(b) * 2 * W;
      const float norm = std::pow(float(t + 1), sp.length_penalty);
      float new_score[kMaxBeam];
      int32_t new_tok[kMaxBeam], new_par[kMaxBeam];
      int next = 0;
      for (int r = 0; r < k; ++r) {
        if (cs[r] == kNegInf) continue;
        const int parent_slot = b * W + cp[r];
        if (ct[r] == sp.eos_id) {
          if (nh < W) hy[nh++] = {cs[r] / norm, t, parent_slot};
          continue;
        }
        new_score[next] = cs[r];
        new_tok[next] = ct[r];
        new_par[next] = parent_slot;
        ++next;
      }
      for (int w = 0; w < beam; ++w) {
        const int slot = b * W + w;
        s->beam_score[slot] = w < next ? new_score[w] : kNegInf;
        if (w >= next) continue;
        h->token(t + 1, slot) = sp.Token(new_tok[w]);
        h->parent(t + 1, slot) = new_par[w];
        h->set_score(t + 1, slot, new_score[w]);
      }
      s->done[b] = next == 0 ? 1 : 0;
      if (next > 0 && obs) obs->OnBest(b, t + 1, b * W);
    }
  }
  return Status::Ok();
}

// CTranslate2's beam search (decoding.cc BeamSearch, patience 1, no coverage penalty): each
// step takes the top 2*beam candidates over the beam*V continuations (path score + log-prob, best
// first, ties to the earlier (row, token); at step 0 the decoder start's one row). Of the first
// `beam`, each </s> registers a finished hypothesis (score = its path score, </s> included;
// tokens without </s>) and hands its slot to the next candidate of rank >= beam that is no </s>
// (none left: the </s> itself stays as a running beam, as there); the others keep their slot. A
// sentence ends at the step where it has registered `beam` hypotheses in all (not when they beat
// the running ones), or at the cap: CTranslate2's max_decoding_length L is max_len - 1 here (mtlite
// counts the final </s>), and at step L - 1 each of the first `beam` candidates registers as it is
// (a </s> without it, any other token with it). Final score = path / length^length_penalty, the
// length counting the </s> (CTranslate2 keeps it in the hypothesis while searching); best first. Nothing is banned but the
// model's bad words and pad (as every mtlite search). Of more than `beam` registered hypotheses
// (the last step can add up to beam to beam - 1), the `beam` best by final score are kept, which
// hold the n-best CTranslate2 returns.
Status Ct2Beam(const SearchSpec& sp, int nb, const int* max_len, const uint8_t* skip, const kernels::KernelTable& K,
               BeamHistory* h, SearchBuffers* s, StepModel* model, SearchObserver* obs, Profiler* prof,
               const ThreadPool* pool) {
  const int W = h->slots_per_sentence(), beam = sp.beam, V = sp.vocab, K2 = 2 * beam;
  for (int b = 0; b < nb; ++b) {
    s->num_hyps[b] = 0;
    s->done[b] = skip[b] ? 1 : 0;
    for (int w = 0; w < beam; ++w) {
      const int slot = b * W + w;
      s->beam_score[slot] = w == 0 ? 0.0f : kNegInf;
      h->token(0, slot) = sp.decoder_start_id;
      h->parent(0, slot) = slot;
    }
  }
  auto final_score = [&](float path, int len) { return path / std::pow(float(len), sp.length_penalty); };
  // Keeps the `beam` best by final score (earlier ones first among equal scores).
  auto add_hyp = [&](int b, float score, int t_end, int slot) {
    SearchHyp* hy = s->hyps + size_t(b) * W;
    int& n = s->num_hyps[b];
    if (n < beam) {
      hy[n++] = {score, t_end, slot};
      return;
    }
    int wi = 0;
    for (int i = 1; i < n; ++i)
      if (hy[i].score <= hy[wi].score) wi = i;
    if (score > hy[wi].score) hy[wi] = {score, t_end, slot};
  };
  for (int t = 0;; ++t) {
    const int rows_per = t == 0 ? 1 : beam;
    int n_active = 0;
    for (int b = 0; b < nb; ++b)
      if (!s->done[b])
        for (int w = 0; w < rows_per; ++w) {
          const int slot = b * W + w;
          s->active[n_active] = slot;
          s->row_tokens[n_active] = h->token(t, slot);
          ++n_active;
        }
    if (n_active == 0) break;
    float* logits = nullptr;
    if (Status st = model->Step(t, n_active, s->active, s->row_tokens, &logits); !st.ok()) return st;
    Span span(prof, Op::kSearch);
    auto prepare_row = [&](int i, Profiler* p) {
      if (t < sp.min_length) logits[size_t(i) * V + sp.eos_id] = kNegInf;
      PrepareRow(sp, K, logits + size_t(i) * V, s->row_score + i, p);
    };
    const int n_sent = n_active / rows_per;
    const bool rows_first = Tasks(pool, n_sent, size_t(beam) * size_t(V)) < Tasks(pool, n_active, size_t(V));
    if (rows_first)
      ForUnits(pool, n_active, size_t(V), prof, [&](int i, Profiler* p) {
        if (t + 1 < max_len[s->active[i] / W]) prepare_row(i, p);
      });
    ForUnits(pool, n_sent, size_t(beam) * size_t(V), prof, [&](int u, Profiler* p) {
      const int i0 = u * rows_per, b = s->active[i0] / W;
      if (t + 1 >= max_len[b]) return;  // max_len 1: </s> forced below, the row is not read
      float* cs = s->cand_score + size_t(b) * K2;
      int32_t* ct = s->cand_tok + size_t(b) * K2;
      int32_t* cp = s->cand_par + size_t(b) * K2;
      int nc = 0;
      for (int w = 0; w < rows_per; ++w) {
        const int i = i0 + w;
        if (!rows_first) prepare_row(i, p);
        SubTimer timer(p, Op::kSearchScan);
        nc = ScanRow(K, logits + size_t(i) * V, V, s->row_score[i], s->beam_score[s->active[i]], w, cs, ct, cp, nc, K2);
      }
      for (int r = nc; r < K2; ++r) {  // fewer continuations than 2*beam: never chosen
        cs[r] = kNegInf;
        ct[r] = sp.eos_id;
        cp[r] = 0;
      }
    });
    for (int u = 0; u < n_sent; ++u) {
      const int i0 = u * rows_per, b = s->active[i0] / W;
      if (t + 1 >= max_len[b]) {  // only max_len 1: the empty hypothesis
        add_hyp(b, kNegInf, t, b * W);
        s->done[b] = 1;
        continue;
      }
      const float* cs = s->cand_score + size_t(b) * K2;
      const int32_t* ct = s->cand_tok + size_t(b) * K2;
      const int32_t* cp = s->cand_par + size_t(b) * K2;
      const bool last = t + 2 >= max_len[b];
      int registered = s->num_hyps[b];  // all registered before this step (< beam)
      float new_score[kMaxBeam];
      int32_t new_tok[kMaxBeam], new_par[kMaxBeam];
      int secondary = beam;
      for (int k = 0; k < beam; ++k) {
        int pick = k;
        const int parent_slot = b * W + cp[k];
        if (cs[k] != kNegInf && (ct[k] == sp.eos_id || last)) {
          ++registered;
          if (ct[k] == sp.eos_id) {
            add_hyp(b, final_score(cs[k], t + 1), t, parent_slot);  // t tokens and </s>
          } else {  // the cap: the token is part of the hypothesis
            const int slot = b * W + k;
            h->token(t + 1, slot) = sp.Token(ct[k]);
            h->parent(t + 1, slot) = parent_slot;
            h->set_score(t + 1, slot, cs[k]);
            add_hyp(b, final_score(cs[k], t + 1), t + 1, slot);
          }
          for (int j = secondary; j < K2; ++j)
            if (ct[j] != sp.eos_id) {
              pick = j;
              secondary = j + 1;
              break;
            }
        }
        new_score[k] = cs[pick];
        new_tok[k] = ct[pick];
        new_par[k] = b * W + cp[pick];
      }
      const bool done = last || registered >= beam;
      s->done[b] = done ? 1 : 0;
      if (done) continue;
      for (int w = 0; w < beam; ++w) {
        const int slot = b * W + w;
        s->beam_score[slot] = new_score[w];
        h->token(t + 1, slot) = sp.Token(new_tok[w]);
        h->parent(t + 1, slot) = new_par[w];
        h->set_score(t + 1, slot, new_score[w]);
      }
      if (obs) obs->OnBest(b, t + 1, b * W);
    }
  }
  return Status::Ok();
}

}  // namespace

Status RunSearch(const SearchSpec& spec, int nb, const int* max_len, const uint8_t* skip,
                 const kernels::KernelTable& K, BeamHistory* history, SearchBuffers* buf, StepModel* model,
                 SearchObserver* observer, Profiler* prof, const ThreadPool* pool) {
  if (nb < 0 || nb * history->slots_per_sentence() > history->slots())
    return Status(StatusCode::kInternal, "search: batch exceeds the history's slots");
  if (spec.beam < 1 || spec.beam > history->slots_per_sentence() || spec.beam > kMaxBeam)
    return Status(StatusCode::kInvalidArgument, "search: beam size outside [1, max_beam]");
  if (spec.vocab < 1 || spec.eos_id < 0 || spec.eos_id >= spec.vocab || spec.pad_id < -1 || spec.pad_id >= spec.vocab)
    return Status(StatusCode::kInternal, "search: special token outside the vocabulary");
  for (int b = 0; b < nb; ++b)
    if (!skip[b] && (max_len[b] < 1 || max_len[b] > history->max_steps()))
      return Status(StatusCode::kInternal, "search: max length outside [1, max_target_tokens]");
  if (spec.beam == 1) return Greedy(spec, nb, max_len, skip, K, history, buf, model, observer, prof, pool);
  if (spec.kind == SearchKind::kCT2) return Ct2Beam(spec, nb, max_len, skip, K, history, buf, model, observer, prof, pool);
  if (spec.kind == SearchKind::kMarian) return MarianBeam(spec, nb, max_len, skip, K, history, buf, model, observer, prof, pool);
  return Beam(spec, nb, max_len, skip, K, history, buf, model, observer, prof, pool);
}

int MaxTargetLength(const TranslateOptions& opt, int src_len, int max_target_tokens) {
  long long cap = std::min(opt.max_length, max_target_tokens);
  if (opt.max_length_ratio > 0)
    cap = std::min<long long>(cap, (long long)(opt.max_length_ratio * src_len) + opt.max_length_offset);
  return int(std::max<long long>(cap, 1));
}

int SortHypotheses(SearchHyp* hyps, int n, int k) {
  // Insertion sort: stable, no allocation (n <= kMaxBeam).
  for (int i = 1; i < n; ++i) {
    const SearchHyp x = hyps[i];
    int j = i;
    while (j > 0 && x.score > hyps[j - 1].score) {
      hyps[j] = hyps[j - 1];
      --j;
    }
    hyps[j] = x;
  }
  return std::min(n, k);
}

}  // namespace detail
}  // namespace mtlite

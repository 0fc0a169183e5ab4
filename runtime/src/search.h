// Greedy and beam search with HF (transformers 4.2x) or Marian semantics (SearchSpec::marian)
// over a "logits for these rows" callback: the search knows nothing of the network, so it is
// tested on synthetic logits.
//
// Rows and slots: sentence b owns row slots [b*W, b*W + W) (W = max beam). Each step the search
// asks the StepModel for the logits of its running rows (slot + input token); the history of
// every slot is in a BeamHistory. The logits the StepModel returns are processed in place: pad is
// -inf before the log-softmax (MarianMTModel.adjust_logits_during_generation), the model's other
// bad words after it (NoBadWordsLogitsProcessor), and at the length cap </s> is forced with
// log-prob 0 (ForcedEOSTokenLogitsProcessor).
#pragma once

#include <cstdint>

#include "beam_history.h"
#include "kernels.h"
#include "mtlite/mtlite.hpp"
#include "profiler.h"
#include "thread_pool.h"
#include "translator_bounds.h"

namespace mtlite {
namespace detail {

// A finished hypothesis: score (length-penalised), last step, slot at that step.
struct SearchHyp {
  float score;
  int t_end;
  int slot;
};

// The network side of a search.
class StepModel {
 public:
  virtual ~StepModel() = default;
  // Decoder position t for n rows: row i continues slot slots[i] (its past is in the history)
  // with input token tokens[i]. *logits receives [n][vocab] floats the search may modify.
  virtual Status Step(int t, int n, const int32_t* slots, const int32_t* tokens, float** logits) = 0;
};

// Told after every step, for streaming: greedy calls OnToken for each new non-final token of a
// sentence; beam calls OnBest when the sentence's best running hypothesis changes (`slot` at
// step t). Both are optional (default: nothing).
class SearchObserver {
 public:
  virtual ~SearchObserver() = default;
  virtual void OnToken(int sentence, int t, int32_t token) {}
  virtual void OnBest(int sentence, int t, int slot) {}
};

// Logits columns are tokens (columns == null) or, with a vocabulary shortlist, the candidates:
// column j is token columns[j]; vocab, eos_id, pad_id and bad_ids are then column indices (pad_id
// -1: no pad column).
struct SearchSpec {
  int beam = 1;                // 1: greedy
  // The model's search (ModelConfig::search): HF's beam (Beam in search.cc), Marian's
  // (translator/beam_search.cpp, history.h: MarianBeam) or CTranslate2's (decoding.cc BeamSearch:
  // Ct2Beam). Greedy is the same search for all three, except the length a score is divided by:
  // Marian does not count the </s> forced at the cap, CTranslate2 counts the generated </s>.
  SearchKind kind = SearchKind::kHF;
  // </s> is -inf before the log-softmax while fewer tokens were generated (CTranslate2's
  // min_decoding_length, 1 by default there: no empty translation). Greedy and Ct2Beam.
  int min_length = 0;
  float length_penalty = 1.0f; // score = sum_logprob / length^penalty (Marian's `normalize`)
  bool greedy_scores = false;  // greedy: compute log-probs (beam always does)
  int vocab = 0;               // logits columns
  int eos_id = 0, pad_id = 0, decoder_start_id = 0;
  const int* bad_ids = nullptr;  // besides pad; -inf after the log-softmax
  int num_bad = 0;
  int unk_id = -1;               // also -inf after the log-softmax (Marian: no --allow-unk); -1: none
  const int32_t* columns = nullptr;
  int32_t Token(int column) const { return columns ? columns[column] : column; }
};

// Arena memory of the search state (sizes in arena_plan.cc).
struct SearchBuffers {
  int32_t* active = nullptr;      // [R] slots of this step's rows
  int32_t* row_tokens = nullptr;  // [R]
  float* beam_score = nullptr;    // [R]
  float* cand_score = nullptr;    // [B][2W]
  int32_t* cand_tok = nullptr;
  int32_t* cand_par = nullptr;
  SearchHyp* hyps = nullptr;      // [B][W]
  int* num_hyps = nullptr;        // [B]
  float* worst = nullptr;         // [B]
  uint8_t* done = nullptr;        // [B]
  float* row_score = nullptr;     // [R] this step, per row: greedy the chosen log-prob, beam the log-sum-exp
  int32_t* row_best = nullptr;    // [R] greedy: this step's argmax column per row
  int32_t* sentence_rows = nullptr;  // [B+1] Marian beam: first row of each running sentence
};

// Runs the search for nb sentences. max_len[b] caps the generated tokens of sentence b
// (including </s>, which is forced at the cap); skip[b] != 0 marks a sentence with nothing to
// translate (it gets no hypothesis). Results: hyps[b*W .. b*W + num_hyps[b]) (unsorted),
// token/parent history in `history`.
//
// With a pool the per-row work of a step (logits processing, log-softmax, argmax / candidate
// scan over the vocabulary) runs across its threads: rows (and, for the candidate scan,
// sentences) are independent and each is computed exactly as on one thread, so the results do
// not depend on the number of threads. The bookkeeping that follows (hypotheses, history,
// observer) stays on the calling thread. The profile's search sub-part aggregates count the
// calling thread's share, as every aggregate does.
Status RunSearch(const SearchSpec& spec, int nb, const int* max_len, const uint8_t* skip,
                 const kernels::KernelTable& K, BeamHistory* history, SearchBuffers* buf, StepModel* model,
                 SearchObserver* observer = nullptr, Profiler* prof = nullptr, const ThreadPool* pool = nullptr);

// Generated-token cap of a sentence with src_len source tokens (including </s>):
// min(max_length, max_target_tokens, floor(max_length_ratio * src_len) + max_length_offset when the
// ratio is > 0), at least 1.
int MaxTargetLength(const TranslateOptions& opt, int src_len, int max_target_tokens);

// Sorts hyps[0..n) best first (stable for equal scores) and returns min(n, k).
int SortHypotheses(SearchHyp* hyps, int n, int k);

}  // namespace detail
}  // namespace mtlite

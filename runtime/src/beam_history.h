// Token / parent history of a search, in arena memory, and the two walks over it:
//  * the ancestor table the decoder reads its KV cache through (beam reordering never copies
//    the cache: the K/V of step t and row slot r are written once, at cache row t*R + r);
//  * backtracking a finished hypothesis into its ids (and alignment rows).
// Slots: sentence b owns slots [b*W, b*W + W). Position 0 (the decoder start token) is the same
// for every beam of a sentence, so it is computed once, in the sentence's first slot b*W, and
// every beam's path reads position 0 from there.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mtlite {
namespace detail {

class BeamHistory {
 public:
  // tokens/parents: [T][R]; align: [T][R][S] or null.
  void Bind(int32_t* tokens, int32_t* parents, float* align, int T, int R, int W, int S) {
    tokens_ = tokens;
    parents_ = parents;
    align_ = align;
    T_ = T;
    R_ = R;
    W_ = W;
    S_ = S;
  }

  // [T][R] path scores: the summed log-probability of the path ending in `slot` at step t (the
  // search writes it with each token; 0 at step 0). Optional (null: not recorded).
  void BindScores(float* scores) { scores_ = scores; }
  void set_score(int t, int slot, float v) {
    if (scores_) scores_[size_t(t) * R_ + slot] = v;
  }

  int max_steps() const { return T_; }
  int slots() const { return R_; }
  int slots_per_sentence() const { return W_; }
  bool has_alignments() const { return align_ != nullptr; }

  // Input token of step t in `slot` (t = 0: the decoder start), and the slot it continues.
  int32_t& token(int t, int slot) { return tokens_[size_t(t) * R_ + slot]; }
  int32_t token(int t, int slot) const { return tokens_[size_t(t) * R_ + slot]; }
  int32_t& parent(int t, int slot) { return parents_[size_t(t) * R_ + slot]; }
  int32_t parent(int t, int slot) const { return parents_[size_t(t) * R_ + slot]; }
  // Cross-attention weights of step t in `slot` (S floats), or null without alignments.
  float* align_row(int t, int slot) { return align_ ? align_ + (size_t(t) * R_ + slot) * S_ : nullptr; }
  const float* align_row(int t, int slot) const {
    return align_ ? align_ + (size_t(t) * R_ + slot) * S_ : nullptr;
  }

  int FirstSlot(int slot) const { return slot / W_ * W_; }

  // rows[p] = KV-cache row (p * R + slot that processed position p) for p = 0..t on the path
  // that ends in `slot` at step t.
  void Ancestors(int t, int slot, int32_t* rows) const;

  // Hypothesis ending at step t_end in `slot` (its step-t_end token was </s>): ids[0..t_end) are
  // the tokens of positions 1..t_end; with `align` (rows of `width` floats), align[p] is the
  // cross-attention row of step p, for p = 0..t_end.
  void Backtrack(int t_end, int slot, int32_t* ids, float* align, int width) const;
  // The log-probability of each token of that hypothesis (positions 1..t_end, without </s>):
  // differences of the path scores along it. False when no scores are recorded.
  bool TokenScores(int t_end, int slot, float* out) const;

 private:
  int32_t* tokens_ = nullptr;
  int32_t* parents_ = nullptr;
  float* align_ = nullptr;
  float* scores_ = nullptr;
  int T_ = 0, R_ = 0, W_ = 1, S_ = 0;
};

}  // namespace detail
}  // namespace mtlite

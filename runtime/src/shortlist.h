// The vocabulary shortlist at run time (TranslateOptions::use_shortlist): a batch's candidate
// target tokens are every source token's list, the model's always-allowed tokens and </s> (and,
// with a shared vocabulary, the source tokens themselves); never pad or a bad word. The
// log-softmax and the search run over the candidates only (as Marian's shortlist does).
//  int8:    the output projection reads only the 8-row blocks of the vocabulary that hold a
//           candidate (BlockedN8K4), the logits have one column per row of those blocks, and the
//           block-mates that are not candidates are masked to -inf. With a row order
//           (ShortlistView::row_order) the rows are grouped so that one sentence's candidates
//           share fewer blocks; column order follows the rows;
//  f32/f16: the full projection, every non-candidate masked to -inf.
#pragma once

#include <cstdint>

#include "model_data.h"
#include "search.h"

namespace mtlite {
namespace detail {

class ShortlistSelector {
 public:
  // Arena buffers (arena_plan.cc): marks [V], blocks [V8/8], columns [V8], masked [V8].
  void Bind(uint8_t* marks, int32_t* blocks, int32_t* columns, int32_t* masked) {
    marks_ = marks;
    blocks_ = blocks;
    columns_ = columns;
    masked_ = masked;
  }
  void Clear() {
    num_blocks_ = 0;
    num_masked_ = 0;
  }
  // The candidates of nb sentences (ids at src_ids + b * stride, lengths src_len); rewrites the
  // search's columns, eos/pad and bad words for them.
  void Build(const ModelData& md, const int32_t* src_ids, int stride, const int* src_len, int nb, SearchSpec* spec);
  // Sets the non-candidate columns of n logits rows of `cols` columns to -inf.
  void Mask(float* logits, int n, int cols) const;

  const int32_t* blocks() const { return num_blocks_ ? blocks_ : nullptr; }  // null: every row
  int num_blocks() const { return num_blocks_; }

 private:
  uint8_t* marks_ = nullptr;
  int32_t *blocks_ = nullptr, *columns_ = nullptr, *masked_ = nullptr;
  int num_blocks_ = 0, num_masked_ = 0;
};

}  // namespace detail
}  // namespace mtlite

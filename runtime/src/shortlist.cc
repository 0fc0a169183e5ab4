#include "shortlist.h"

#include <cstring>
#include <limits>

namespace mtlite {
namespace detail {

void ShortlistSelector::Build(const ModelData& md, const int32_t* src_ids, int stride, const int* src_len, int nb,
                              SearchSpec* spec) {
  const ShortlistView& sl = md.shortlist;
  const ModelConfig& cfg = md.config;
  const int V = cfg.target_vocab_size;
  Clear();
  std::memset(marks_, 0, size_t(V));
  for (int i = 0; i < sl.num_frequent; ++i) marks_[sl.frequent[i]] = 1;
  for (int b = 0; b < nb; ++b)
    for (int i = 0; i < src_len[b]; ++i) {
      const int32_t s = src_ids[size_t(b) * stride + i];
      for (uint32_t j = sl.offsets[s]; j < sl.offsets[s + 1]; ++j) marks_[sl.targets[j]] = 1;
      if (sl.include_source_ids && s < V) marks_[s] = 1;
    }
  marks_[cfg.pad_id] = 0;
  for (int id : cfg.bad_word_ids) marks_[id] = 0;
  if (spec->unk_id >= 0) marks_[spec->unk_id] = 0;
  marks_[cfg.eos_id] = 1;
  spec->bad_ids = nullptr;  // never candidates
  spec->num_bad = 0;
  spec->unk_id = -1;
  spec->pad_id = -1;
  if (cfg.weight_type != WeightType::kInt8) {  // full projection, non-candidates masked
    for (int t = 0; t < V; ++t)
      if (!marks_[t]) masked_[num_masked_++] = t;
    return;
  }
  // Row r of the projection is token order[r] (token r without a row order); rows past V pad the
  // last block.
  const int32_t* order = sl.row_order;
  auto token = [&](int r) { return r >= V ? -1 : order ? order[r] : r; };
  for (int blk = 0; blk * 8 < V; ++blk) {
    bool any = false;
    for (int j = 0; j < 8 && blk * 8 + j < V; ++j) any = any || marks_[token(blk * 8 + j)];
    if (!any) continue;
    for (int j = 0; j < 8; ++j) {
      const int t = token(blk * 8 + j), c = num_blocks_ * 8 + j;
      columns_[c] = t >= 0 ? t : cfg.eos_id;
      if (t < 0 || !marks_[t]) masked_[num_masked_++] = c;
      if (t == cfg.eos_id) spec->eos_id = c;
    }
    blocks_[num_blocks_++] = blk;
  }
  spec->vocab = num_blocks_ * 8;
  spec->columns = columns_;
}

void ShortlistSelector::Mask(float* logits, int n, int cols) const {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  for (int i = 0; i < n; ++i) {
    float* row = logits + size_t(i) * cols;
    for (int j = 0; j < num_masked_; ++j) row[masked_[j]] = neg_inf;
  }
}

}  // namespace detail
}  // namespace mtlite

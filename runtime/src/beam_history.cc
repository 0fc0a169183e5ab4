#include "beam_history.h"

#include <cstring>

namespace mtlite {
namespace detail {

void BeamHistory::Ancestors(int t, int slot, int32_t* rows) const {
  rows[t] = slot;
  for (int p = t; p > 0; --p) rows[p - 1] = parent(p, rows[p]);
  rows[0] = FirstSlot(rows[0]);
  for (int p = 0; p <= t; ++p) rows[p] = p * R_ + rows[p];
}

void BeamHistory::Backtrack(int t_end, int slot, int32_t* ids, float* align, int width) const {
  for (int p = t_end; p >= 0; --p) {
    if (p >= 1) ids[p - 1] = token(p, slot);
    if (align && align_) {
      const int s = p == 0 ? FirstSlot(slot) : slot;
      std::memcpy(align + size_t(p) * width, align_row(p, s), sizeof(float) * size_t(width));
    }
    if (p >= 1) slot = parent(p, slot);
  }
}

bool BeamHistory::TokenScores(int t_end, int slot, float* out) const {
  if (!scores_) return false;
  for (int p = t_end; p >= 1; --p) {
    const int prev = parent(p, slot);
    const float before = p >= 2 ? scores_[size_t(p - 1) * R_ + prev] : 0.0f;
    out[p - 1] = scores_[size_t(p) * R_ + slot] - before;
    slot = prev;
  }
  return true;
}

}  // namespace detail
}  // namespace mtlite

// The loader's binding of the optional shortlist section (detail::LoaderBase, model_internal.h),
// viewed in place for the runtime shortlist (shortlist.{h,cc}): its buffers, then its lists:
// offsets from 0 to the targets' end, non-decreasing, no list longer than top_k, every id inside
// the target vocabulary and none twice in one list; an optional row order that permutes the
// target ids.
#include <cstdint>
#include <string>
#include <utility>

#include "model_internal.h"
#include "status_macros.h"

namespace mtlite {
namespace {

constexpr auto Invalid = detail::InvalidModel;

// Ids of one list inside [0, vocab) and distinct; `marks` (vocab bytes, all zero) is zero
// again on return. Returns the index of the first bad id, or n when all are good.
uint64_t FirstBadId(const int32_t* ids, uint64_t n, int vocab, uint8_t* marks, bool* repeated) {
  uint64_t bad = n;
  *repeated = false;
  for (uint64_t i = 0; i < n; ++i) {
    const int32_t id = ids[i];
    if (id < 0 || id >= vocab || marks[id]) {
      bad = i;
      *repeated = id >= 0 && id < vocab;
      break;
    }
    marks[id] = 1;
  }
  for (uint64_t i = 0; i < bad; ++i) marks[ids[i]] = 0;
  return bad;
}

Status BadIdError(std::string what, const int32_t* ids, uint64_t i, bool repeated) {
  if (repeated) return Invalid(what + " lists target id " + std::to_string(ids[i]) + " twice");
  return Invalid(what + "[" + std::to_string(i) + "] = " + std::to_string(ids[i]) + " is outside the target vocabulary");
}

// `marks`: vt zero bytes, zero again on return.
Status CheckShortlistLists(const int32_t* frequent, uint64_t num_frequent, const uint32_t* offsets,
                           const int32_t* targets, uint64_t num_targets, int vs, int vt, int top_k, uint8_t* marks) {
  if (offsets[0] != 0) return Invalid("shortlist.offsets[0] = " + std::to_string(offsets[0]) + ", expected 0");
  if (offsets[vs] != num_targets) {
    return Invalid("shortlist.offsets[" + std::to_string(vs) + "] = " + std::to_string(offsets[vs]) +
                   " but shortlist.targets has " + std::to_string(num_targets) + " ids");
  }
  for (int s = 0; s < vs; ++s) {
    if (offsets[s + 1] < offsets[s]) {
      return Invalid("shortlist.offsets decrease at source id " + std::to_string(s) + " (" + std::to_string(offsets[s]) +
                     " > " + std::to_string(offsets[s + 1]) + ")");
    }
    if (offsets[s + 1] - offsets[s] > uint32_t(top_k)) {
      return Invalid("shortlist: source id " + std::to_string(s) + " has " + std::to_string(offsets[s + 1] - offsets[s]) +
                     " targets, more than top_k " + std::to_string(top_k));
    }
  }
  // Non-decreasing from 0 to num_targets: every list lies inside targets.
  bool repeated = false;
  if (const uint64_t i = FirstBadId(frequent, num_frequent, vt, marks, &repeated); i < num_frequent) {
    return BadIdError("shortlist.frequent", frequent, i, repeated);
  }
  for (int s = 0; s < vs; ++s) {
    const int32_t* list = targets + offsets[s];
    const uint64_t n = offsets[s + 1] - offsets[s];
    if (const uint64_t i = FirstBadId(list, n, vt, marks, &repeated); i < n) {
      return BadIdError("shortlist.targets of source id " + std::to_string(s), list, i, repeated);
    }
  }
  return Status::Ok();
}

}  // namespace

namespace detail {

// An int32/uint32 array buffer `name` (a static string: the BufferCheck keeps a view of it):
// size a multiple of 4 (exactly `count` elements when count >= 0); returns the element count.
Status LoaderBase::ArrayRef(const fb::BufferRef* ref, const char* name, const char* dtype, int64_t count,
                            uint64_t* elements) {
  if (!ref) return Invalid(std::string(name) + " missing");
  if (ref->size() % 4 != 0) {
    return Invalid(std::string(name) + " has " + std::to_string(ref->size()) + " bytes, not a multiple of 4");
  }
  MTLITE_RETURN_IF_ERROR(CheckRef(ref, name, false, {layout::Part::kShortlist}, dtype, count >= 0 ? count * 4 : -1));
  *elements = ref->size() / 4;
  return Status::Ok();
}

Status LoaderBase::BindShortlist() {
  md_->shortlist = {};
  const fb::Shortlist* sl = root_->shortlist();
  if (!sl) return Status::Ok();
  const int vs = md_->config.source_vocab_size, vt = md_->config.target_vocab_size;
  uint64_t num_frequent = 0, num_offsets = 0, num_targets = 0;
  MTLITE_RETURN_IF_ERROR(ArrayRef(sl->frequent(), "shortlist.frequent", "int32", -1, &num_frequent));
  MTLITE_RETURN_IF_ERROR(ArrayRef(sl->offsets(), "shortlist.offsets", "uint32", int64_t(vs) + 1, &num_offsets));
  MTLITE_RETURN_IF_ERROR(ArrayRef(sl->targets(), "shortlist.targets", "int32", -1, &num_targets));
  if (num_frequent > uint64_t(vt)) {
    return Invalid("shortlist.frequent has " + std::to_string(num_frequent) + " ids, more than the target vocabulary");
  }
  const auto* frequent = reinterpret_cast<const int32_t*>(base_ + sl->frequent()->offset());
  const auto* offsets = reinterpret_cast<const uint32_t*>(base_ + sl->offsets()->offset());
  const auto* targets = reinterpret_cast<const int32_t*>(base_ + sl->targets()->offset());
  MTLITE_RETURN_IF_ERROR(CheckRange("shortlist.top_k", sl->top_k(), 0, vt));
  uint8_t* marks = tables_->Take<uint8_t>(uint64_t(vt));
  if (!marks) return TablesTooSmall();
  MTLITE_RETURN_IF_ERROR(CheckShortlistLists(frequent, num_frequent, offsets, targets, num_targets, vs, vt,
                                                     sl->top_k(), marks));
  if (sl->include_source_ids() && !SameVocabularies()) {
    return Invalid("shortlist.include_source_ids is set but the source and target vocabularies differ");
  }
  const int32_t* row_order = nullptr;
  int32_t* token_row = nullptr;
  if (sl->row_order()) {
    if (root_->format_version() < layout::kFormatVersionRowOrder) {
      return Invalid("shortlist.row_order needs format_version " + std::to_string(layout::kFormatVersionRowOrder) +
                     " (the file says " + std::to_string(root_->format_version()) + ")");
    }
    uint64_t n = 0;
    MTLITE_RETURN_IF_ERROR(ArrayRef(sl->row_order(), "shortlist.row_order", "int32", int64_t(vt), &n));
    row_order = reinterpret_cast<const int32_t*>(base_ + sl->row_order()->offset());
    token_row = tables_->Take<int32_t>(uint64_t(vt));
    if (!token_row) return TablesTooSmall();
    for (int t = 0; t < vt; ++t) token_row[t] = -1;
    for (int r = 0; r < vt; ++r) {
      const int32_t t = row_order[r];
      if (t < 0 || t >= vt || token_row[t] >= 0) {
        return Invalid("shortlist.row_order is not a permutation of the target ids (row " + std::to_string(r) +
                       ": " + std::to_string(t) + (t >= 0 && t < vt ? ", seen before)" : ")"));
      }
      token_row[t] = r;
    }
    // every view of the projection's rows reads token t at row token_row[t]
    const void* proj = md_->output_proj.data;
    for (WeightView* w : {&md_->output_proj, &md_->target_embed, &md_->source_embed})
      if (w->data == proj) w->row_of = token_row;
  }
  ShortlistView& v = md_->shortlist;
  v.present = true;
  v.row_order = row_order;
  v.token_row = token_row;
  v.frequent = frequent;
  v.num_frequent = static_cast<int>(num_frequent);
  v.offsets = offsets;
  v.targets = targets;
  v.include_source_ids = sl->include_source_ids();
  return Status::Ok();
}

bool LoaderBase::SameVocabularies() const {
  const VocabView &a = md_->source_vocab, &b = md_->target_vocab;
  if (a.id_to_piece.size() != b.id_to_piece.size()) return false;
  for (size_t i = 0; i < a.id_to_piece.size(); ++i) {
    if (a.id_to_piece[i] != b.id_to_piece[i]) return false;
  }
  return true;
}

}  // namespace detail
}  // namespace mtlite

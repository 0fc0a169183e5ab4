// Validation of a model's shortlist lists (the loader binds the section's buffers first, see
// model.cc BindShortlist): offsets from 0 to the targets' end, non-decreasing, no list longer
// than top_k, every id inside the target vocabulary and none twice in one list.
#include <cstdint>
#include <string>
#include <utility>

#include "model_internal.h"

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

}  // namespace

Status detail::CheckShortlistLists(const int32_t* frequent, uint64_t num_frequent, const uint32_t* offsets,
                                   const int32_t* targets, uint64_t num_targets, int vs, int vt, int top_k,
                                   uint8_t* marks) {
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

}  // namespace mtlite

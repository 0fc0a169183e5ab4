// The translator's memory plan: every working buffer of a translation is a named buffer with a
// size computed from the model and the declared TranslatorLimits, and a live range over the
// phases of a translate call. Buffers whose live ranges do not intersect share memory: a greedy
// planner (largest first, lowest offset that clears every placed buffer it is live with, as
// TFLite Micro's GreedyMemoryPlanner does) assigns offsets, and the arena is the highest end.
// The encoder's activations are dead once the cross-attention K/V are projected, so the
// decoder's KV cache reuses their memory.
//
// The plan is built without heap allocation (fixed tables), once at Translator creation; the
// same code answers Translator::ArenaBytes / PlanArena and `mtlite info --limits`.
#pragma once

#include <cstddef>
#include <cstdint>

#include <string>

#include "checked_size.h"
#include "model_data.h"
#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace detail {

// Phases of one translate call, in order. "Persistent" buffers live across calls (position
// tables written at creation, results read by the caller after the call).
enum Phase : int { kPhaseTokenize = 0, kPhaseEncode, kPhaseCrossKV, kPhaseDecode, kPhaseFinish, kNumPhases };
const char* PhaseName(int phase);

enum BufferId : int {
  // persistent
  kBufPosEncoder, kBufPosDecoder,
  kBufLayerOps, kBufProfileEntries, kBufProfileEvents, kBufOutIds, kBufOutText, kBufOutAlign, kBufOutTokenScores, kBufHypViews, kBufSentViews,
  // source side
  kBufSrcIds, kBufSrcLen, kBufTokWorkspace, kBufSrcOffsets,
  // encoder
  kBufEncHidden, kBufEncQ, kBufEncK, kBufEncV, kBufEncCtx, kBufEncFfn,
  kBufEncQuant, kBufEncQuantScale, kBufEncStaging,
  kBufAttnScores,
  // cross-attention K/V, projected once per sentence
  kBufCrossK, kBufCrossV,
  // decoder step
  kBufDecHidden, kBufDecQ, kBufDecK, kBufDecV, kBufDecCtx, kBufDecFfn,
  kBufDecQuant, kBufDecQuantScale, kBufDecStaging,
  kBufLogits, kBufKCache, kBufVCache, kBufAncestors, kBufSsruState,
  // search and beam history
  kBufHistTokens, kBufHistParents, kBufHistAlign, kBufHistScores,
  kBufActive, kBufRowTokens, kBufBeamScore, kBufCandScore, kBufCandTok, kBufCandPar,
  kBufHyps, kBufNumHyps, kBufWorst, kBufDone, kBufRowScore, kBufRowBest, kBufSentenceRows,
  kBufStreamIds, kBufStreamText,
  kBufShortlistMarks, kBufShortlistBlocks, kBufShortlistColumns, kBufShortlistMasked, kBufTokenOrderRow,
  // text layer (text_translate.h): persistent across the translate calls of one text call
  kBufTextSpans, kBufTextSentences, kBufTextOutput, kBufTextPieceOutput, kBufTextPieces, kBufTextAllPieces,
  kBufTextOrder, kBufTextBatchViews,
  kBufTextSourceIds, kBufTextTokenSpans, kBufTextDecode, kBufTextWords,
  kBufTextPlain, kBufTextHtml, kBufTextMarkup, kBufTextSegments, kBufTextTokens, kBufTextPairs, kBufTextRenderScratch,
  kNumBuffers
};

struct PlannedBuffer {
  const char* name = "";
  size_t bytes = 0;      // requested (0: not needed for these limits/model)
  int first = 0, last = 0;  // live phases [first, last]
  bool persistent = false;
  size_t offset = 0;     // assigned by the planner (64-byte aligned)
};

// Dimensions every layer derives from the model and the limits.
struct Dims {
  int d = 0;           // d_model
  int B = 0, S = 0, T = 0;  // max batch, source tokens, target tokens
  int W = 0, NB = 0;   // max beam (row slots per sentence), max n-best
  int R = 0;           // decoder row slots = B * W
  int V = 0;           // target vocabulary
  int F_enc = 0, F_dec = 0;
  int C = 0;           // encoder FFN row chunk
  int Le = 0, Ld = 0;  // layers
  int Hmax = 1;        // attention heads (the larger of encoder and decoder)
  int threads = 1;
  int text_cap = 0;    // output text bytes per hypothesis
  size_t profile_events = 0;  // trace capacity (0: profiling not reserved)
  size_t tok_ws_bytes = 0;
};

class ArenaPlan {
 public:
  // Validates the limits against the model (kInvalidArgument names the field) and plans.
  static Result<ArenaPlan> Make(const ModelData& md, const TranslatorLimits& limits);

  size_t total_bytes() const { return total_; }
  // Sum of all buffers as if none shared memory (what a plan without lifetimes would need).
  size_t unshared_bytes() const;
  const Dims& dims() const { return dims_; }
  const PlannedBuffer& buffer(int id) const { return bufs_[id]; }
  // Pointer of a buffer inside `arena`, or null for a buffer these limits do not need.
  template <class T>
  T* Get(uint8_t* arena, int id) const {
    return bufs_[id].bytes ? reinterpret_cast<T*>(arena + bufs_[id].offset) : nullptr;
  }
  // The public description (allocates; not for the translate path).
  ArenaPlanInfo Describe() const;

 private:
  void Place();
  Dims dims_;
  PlannedBuffer bufs_[kNumBuffers];
  size_t total_ = 0;
};

Status CheckLimits(const ModelConfig& c, const TranslatorLimits& l);
// kOutOfRange: `what` (a buffer, or the arena) is larger than size_t can count.
Status ArenaTooLarge(const std::string& what);

}  // namespace detail
}  // namespace mtlite

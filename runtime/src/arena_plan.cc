#include "arena_plan.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "html_markup.h"
#include "kernels.h"
#include "search.h"
#include "text_translate.h"
#include "profiler.h"
#include "tokenizer.h"
#include "transformer.h"
#include "translator_bounds.h"

namespace mtlite {
namespace detail {

namespace {

constexpr size_t kAlign = 64;
size_t AlignUp(size_t x) { return (x + kAlign - 1) & ~(kAlign - 1); }

Status Bad(const char* what, long long v, long long lo, long long hi) {
  return Status(StatusCode::kInvalidArgument, std::string("TranslatorLimits.") + what + " = " + std::to_string(v) +
                                                  " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

}  // namespace

Status ArenaTooLarge(const std::string& what) {
  return Status(StatusCode::kOutOfRange, "TranslatorLimits: " + what + " exceeds addressable memory (" +
                                             std::to_string(sizeof(size_t) * 8) + "-bit size_t); lower the limits");
}

const char* PhaseName(int phase) {
  switch (phase) {
    case kPhaseTokenize: return "tokenize";
    case kPhaseEncode: return "encode";
    case kPhaseCrossKV: return "cross_kv";
    case kPhaseDecode: return "decode";
    case kPhaseFinish: return "finish";
  }
  return "?";
}

Status CheckLimits(const ModelConfig& c, const TranslatorLimits& l) {
  if (l.max_batch < 1 || l.max_batch > kMaxBatch) return Bad("max_batch", l.max_batch, 1, kMaxBatch);
  if (l.max_beam < 1 || l.max_beam > kMaxBeam) return Bad("max_beam", l.max_beam, 1, kMaxBeam);
  if (l.max_n_best < 1 || l.max_n_best > l.max_beam) return Bad("max_n_best", l.max_n_best, 1, l.max_beam);
  if (l.max_source_tokens < 1 || l.max_source_tokens > 65536)
    return Bad("max_source_tokens", l.max_source_tokens, 1, 65536);
  if (l.max_target_tokens < 1 || l.max_target_tokens > 65536)
    return Bad("max_target_tokens", l.max_target_tokens, 1, 65536);
  if (l.max_input_bytes < 1 || l.max_input_bytes > (1 << 24))
    return Bad("max_input_bytes", l.max_input_bytes, 1, 1 << 24);
  if (l.max_text_bytes < 0 || l.max_text_bytes > (1 << 24)) return Bad("max_text_bytes", l.max_text_bytes, 0, 1 << 24);
  if (l.num_threads < 1 || l.num_threads > 256) return Bad("num_threads", l.num_threads, 1, 256);
  if (l.profile_events < 0 || l.profile_events > (1 << 26)) return Bad("profile_events", l.profile_events, 0, 1 << 26);
  // KV cache rows (batch x beam slots x target positions) are indexed with int32.
  const long long cache_rows = (long long)l.max_batch * l.max_beam * l.max_target_tokens;
  if (cache_rows > 0x7fffffffLL)
    return Status(StatusCode::kInvalidArgument,
                  "TranslatorLimits: max_batch * max_beam * max_target_tokens = " + std::to_string(cache_rows) +
                      " exceeds 2^31 - 1 (the decoder KV cache alone would need " +
                      std::to_string(cache_rows / (1LL << 30)) + " GiB per float of d_model)");
  if (c.positions == PositionKind::kTable) {  // a stored table has max_positions rows
    if (l.max_source_tokens > c.max_positions)
      return Bad("max_source_tokens (model max_positions)", l.max_source_tokens, 1, c.max_positions);
    if (l.max_target_tokens > c.max_positions)
      return Bad("max_target_tokens (model max_positions)", l.max_target_tokens, 1, c.max_positions);
  }
  return Status::Ok();
}

Result<ArenaPlan> ArenaPlan::Make(const ModelData& md, const TranslatorLimits& lim) {
  const ModelConfig& c = md.config;
  if (Status s = CheckLimits(c, lim); !s.ok()) return s;
  ArenaPlan p;
  Dims& x = p.dims_;
  x.d = c.d_model;
  x.B = lim.max_batch;
  x.S = lim.max_source_tokens;
  x.T = lim.max_target_tokens;
  x.W = lim.max_beam;
  x.NB = lim.max_n_best;
  x.R = x.B * x.W;
  x.V = c.target_vocab_size;
  x.F_enc = c.encoder_ffn_dim;
  x.F_dec = c.decoder_ffn_dim;
  x.C = std::min(x.B * x.S, 64);
  x.Le = c.encoder_layers;
  x.Ld = c.decoder_layers;
  x.Hmax = std::max(c.encoder_heads, c.decoder_heads);
  x.threads = std::max(1, lim.num_threads);
  x.text_cap = x.T * 64 + 16;  // at most 64 bytes of text per token (pieces are short)
  x.tok_ws_bytes = SpmTokenizer::WorkspaceBytes(size_t(lim.max_input_bytes));

  const bool int8 = c.weight_type == WeightType::kInt8;
  // Every size is a CheckedSize: on 32-bit targets the limits' products can exceed size_t, and
  // a wrapped size would plan a buffer too small (or none at all).
  const CheckedSize f = sizeof(float), i32 = sizeof(int32_t);
  const CheckedSize d = x.d, B = x.B, S = x.S, T = x.T, W = x.W;
  const CheckedSize R = x.R, V = x.V, NB = x.NB, Ld = x.Ld, C = x.C;
  const CheckedSize BS = B * S;
  auto kp = [](int k) { return CheckedSize(kernels::RoundUp(k, 4)); };
  const bool al = lim.alignments;

  const char* too_large = nullptr;  // the first buffer whose size overflows
  auto set = [&](int id, const char* name, CheckedSize bytes, int first, int last) {
    if (!bytes.ok() && !too_large) too_large = name;
    p.bufs_[id] = {name, bytes.value(), first, last, false, 0};
  };
  auto keep = [&](int id, const char* name, CheckedSize bytes) {
    set(id, name, bytes, 0, kNumPhases - 1);
    p.bufs_[id].persistent = true;
  };
  const int kTok = kPhaseTokenize, kEnc = kPhaseEncode, kKV = kPhaseCrossKV, kDec = kPhaseDecode,
            kFin = kPhaseFinish;
  const bool stored = c.positions == PositionKind::kTable;  // else the sinusoid, computed at Create
  keep(kBufPosEncoder, "positions.encoder", stored ? 0 : S * d * f);
  keep(kBufPosDecoder, "positions.decoder", stored ? 0 : T * d * f);
  keep(kBufLayerOps, "layers.ops", CheckedSize(Transformer::OpsBytes(c)));
  const CheckedSize events = !lim.profiling            ? CheckedSize(0)
                             : lim.profile_events > 0 ? CheckedSize(lim.profile_events)
                                                      : ProfileEventsFor(x.Le, x.Ld, x.T, x.threads);
  x.profile_events = events.value();
  keep(kBufProfileEntries, "profile.entries",
       lim.profiling ? CheckedSize(int(Op::kNumOps)) * (std::max(x.Le, x.Ld) + 1) * sizeof(ProfileEntry) : 0);
  keep(kBufProfileEvents, "profile.events", events * sizeof(ProfileEvent));
  keep(kBufOutIds, "result.ids", B * NB * T * i32);
  keep(kBufOutText, "result.text", B * NB * x.text_cap);
  keep(kBufOutAlign, "result.alignments", al ? B * NB * T * S * f : 0);
  keep(kBufOutTokenScores, "result.token_scores", B * NB * T * f);
  keep(kBufHypViews, "result.hypotheses", B * NB * sizeof(HypothesisView));
  keep(kBufSentViews, "result.sentences", B * sizeof(SentenceResultView));

  set(kBufSrcIds, "source.ids", BS * i32, kTok, kEnc);
  set(kBufSrcLen, "source.lengths", B * sizeof(int), kTok, kFin);
  set(kBufTokWorkspace, "tokenizer.workspace", x.tok_ws_bytes, kTok, kTok);
  set(kBufSrcOffsets, "source.row_offsets", (B + 1) * sizeof(int), kEnc, kDec);

  const CheckedSize Fe = x.F_enc, Fd = x.F_dec;
  set(kBufEncHidden, "encoder.hidden", BS * d * f, kEnc, kKV);
  set(kBufEncQ, "encoder.q", BS * d * f, kEnc, kEnc);
  set(kBufEncK, "encoder.k", BS * d * f, kEnc, kEnc);
  set(kBufEncV, "encoder.v", BS * d * f, kEnc, kEnc);
  set(kBufEncCtx, "encoder.context", BS * d * f, kEnc, kEnc);
  set(kBufEncFfn, "encoder.ffn", C * Fe * f, kEnc, kEnc);
  // int8: activations quantized per row (q/k/v/o and the cross K/V: BS x d; fc2: C x F).
  set(kBufEncQuant, "encoder.quantized", int8 ? Max(BS * kp(x.d), C * kp(x.F_enc)) : 0, kEnc, kKV);
  set(kBufEncQuantScale, "encoder.quant_scales", int8 ? Max(BS, C) * f : 0, kEnc, kKV);
  // f32/f16 (XNNPACK): the residual layers' output before the residual add.
  set(kBufEncStaging, "encoder.residual_staging", int8 ? 0 : BS * d * f, kEnc, kEnc);
  set(kBufAttnScores, "attention.scores", CheckedSize(x.threads) * x.Hmax * std::max(x.S, x.T) * f, kEnc, kDec);

  set(kBufCrossK, "cross.k", Ld * BS * d * f, kKV, kDec);
  set(kBufCrossV, "cross.v", Ld * BS * d * f, kKV, kDec);

  set(kBufDecHidden, "decoder.hidden", R * d * f, kDec, kDec);
  set(kBufDecQ, "decoder.q", R * d * f, kDec, kDec);
  set(kBufDecK, "decoder.k", R * d * f, kDec, kDec);
  set(kBufDecV, "decoder.v", R * d * f, kDec, kDec);
  set(kBufDecCtx, "decoder.context", R * d * f, kDec, kDec);
  set(kBufDecFfn, "decoder.ffn", R * Fd * f, kDec, kDec);
  set(kBufDecQuant, "decoder.quantized", int8 ? R * kp(std::max(x.d, x.F_dec)) : 0, kDec, kDec);
  set(kBufDecQuantScale, "decoder.quant_scales", int8 ? R * f : 0, kDec, kDec);
  set(kBufDecStaging, "decoder.residual_staging", int8 ? 0 : R * d * f, kDec, kDec);
  // with a shortlist, int8 logits cover whole 8-row blocks of the vocabulary
  const bool shortlist = md.shortlist.present;
  const CheckedSize V8 = kernels::RoundUp(x.V, 8);
  set(kBufLogits, "decoder.logits", R * (shortlist ? V8 : V) * f, kDec, kDec);
  // SSRU decoder layers keep no KV cache: one state row per slot and layer, in two generations
  // (a step reads its parents' states from the previous step's and writes its own)
  const bool ssru = c.decoder_layer == DecoderLayerKind::kSsru;
  set(kBufKCache, "decoder.k_cache", ssru ? CheckedSize(0) : Ld * T * R * d * f, kDec, kDec);
  set(kBufVCache, "decoder.v_cache", ssru ? CheckedSize(0) : Ld * T * R * d * f, kDec, kDec);
  set(kBufSsruState, "decoder.ssru_state", ssru ? 2 * Ld * R * d * f : CheckedSize(0), kDec, kDec);
  set(kBufAncestors, "decoder.ancestors", R * T * i32, kDec, kDec);

  set(kBufHistTokens, "history.tokens", T * R * i32, kDec, kFin);
  set(kBufHistParents, "history.parents", T * R * i32, kDec, kFin);
  set(kBufHistAlign, "history.alignments", al ? T * R * S * f : 0, kDec, kFin);
  set(kBufHistScores, "history.scores", T * R * f, kDec, kFin);
  set(kBufActive, "search.active_rows", R * i32, kDec, kDec);
  set(kBufRowTokens, "search.row_tokens", R * i32, kDec, kDec);
  set(kBufBeamScore, "search.beam_scores", R * f, kDec, kDec);
  set(kBufCandScore, "search.candidate_scores", B * 2 * W * f, kDec, kDec);
  set(kBufCandTok, "search.candidate_tokens", B * 2 * W * i32, kDec, kDec);
  set(kBufCandPar, "search.candidate_parents", B * 2 * W * i32, kDec, kDec);
  set(kBufHyps, "search.hypotheses", B * W * sizeof(SearchHyp), kDec, kFin);
  set(kBufNumHyps, "search.hypothesis_counts", B * sizeof(int), kDec, kFin);
  set(kBufWorst, "search.worst_scores", B * f, kDec, kDec);
  set(kBufDone, "search.done", B, kDec, kDec);
  set(kBufRowScore, "search.row_scores", R * f, kDec, kDec);
  set(kBufRowBest, "search.row_best", R * i32, kDec, kDec);
  set(kBufSentenceRows, "search.sentence_rows", (B + 1) * i32, kDec, kDec);
  // streaming: the last reported hypothesis per sentence, and one decoded text
  set(kBufStreamIds, "stream.ids", (B + 1) * T * i32, kDec, kFin);
  set(kBufStreamText, "stream.text", x.text_cap, kDec, kFin);
  // vocabulary shortlist: the batch's candidates, their blocks, the token of each logits column and
  // the columns that are not candidates (masked to -inf)
  set(kBufShortlistMarks, "shortlist.marks", shortlist ? V : 0, kTok, kTok);
  set(kBufShortlistBlocks, "shortlist.blocks", shortlist ? CheckedSize(kernels::RoundUp(x.V, 8) / 8) * i32 : 0, kTok, kDec);
  set(kBufShortlistColumns, "shortlist.columns", shortlist ? V8 * i32 : 0, kTok, kDec);
  set(kBufShortlistMasked, "shortlist.masked_columns", shortlist ? V8 * i32 : 0, kTok, kDec);
  // f32/f16 projection rows in a shortlist's order: one logits row at a time goes back to token
  // order (int8 projections write token order directly: gemm_s8_blocked_scatter)
  set(kBufTokenOrderRow, "decoder.token_order_row",
      md.shortlist.row_order && md.output_proj.dtype != WeightType::kInt8 ? V * f : 0, kDec, kDec);
  // text layer (TranslateText): live across the translate calls of one text call
  const TextCapacities tc = TextCapacitiesFor(lim);
  const CheckedSize ns = tc.sentences, span = sizeof(text::ByteSpan);
  keep(kBufTextSpans, "text.sentence_spans", ns * span);
  keep(kBufTextSentences, "text.sentences", ns * sizeof(TextSentenceView));
  keep(kBufTextOutput, "text.output", tc.output_bytes);
  keep(kBufTextPieceOutput, "text.piece_output", tc.output_bytes);
  keep(kBufTextPieces, "text.piece_text", CheckedSize(tc.batch) * tc.piece_bytes);
  keep(kBufTextAllPieces, "text.pieces", CheckedSize(tc.pieces) * sizeof(TextPiece));
  keep(kBufTextOrder, "text.piece_order", CheckedSize(tc.pieces) * sizeof(uint32_t));
  keep(kBufTextBatchViews, "text.batch_views", CheckedSize(tc.batch) * sizeof(std::string_view));
  // ids: a piece's, or (html through a pivot) the first model's output as the second's source
  keep(kBufTextSourceIds, "text.source_ids",
       CheckedSize(tc.markup_items ? std::max(tc.source_tokens, tc.pivot_source_tokens) : tc.source_tokens) * i32);
  // token spans: source [S], target [T]; html also the pivot's two sides [T] [pivot source]
  keep(kBufTextTokenSpans, "text.token_spans",
       !tc.text_bytes ? CheckedSize(0)
       : tc.markup_items ? (S + 2 * T + CheckedSize(tc.pivot_source_tokens) + 1) * span
                         : (S + T + 1) * span);
  keep(kBufTextDecode, "text.decode", tc.text_bytes ? CheckedSize(x.text_cap) : CheckedSize(0));
  keep(kBufTextWords, "text.words", CheckedSize(tc.words) * sizeof(TextWordView));
  keep(kBufTextPlain, "text.html_plain", tc.markup_items ? tc.text_bytes : 0);
  keep(kBufTextHtml, "text.html_output", tc.markup_items ? CheckedSize(tc.output_bytes) + tc.text_bytes : CheckedSize(0));
  keep(kBufTextMarkup, "text.markup_items", CheckedSize(tc.markup_items) * sizeof(text::MarkupItem));
  keep(kBufTextSegments, "text.segments", CheckedSize(tc.segments) * span);
  keep(kBufTextTokens, "text.aligned_tokens", CheckedSize(tc.tokens) * sizeof(text::AlignedToken));
  keep(kBufTextPairs, "text.sentence_pairs", tc.markup_items ? ns * sizeof(text::SentencePair) : CheckedSize(0));
  keep(kBufTextRenderScratch, "text.render_scratch", tc.render_scratch);
  if (too_large) return ArenaTooLarge(std::string("buffer '") + too_large + "'");
  // The buffers one after another (each aligned) bound every offset the placement computes.
  CheckedSize unshared = 0;
  for (const PlannedBuffer& b : p.bufs_) unshared += CheckedSize(b.bytes) + (kAlign - 1);
  if (!unshared.ok()) return ArenaTooLarge("the sum of the buffers");
  p.Place();
  return p;
}

void ArenaPlan::Place() {
  // Order: largest first, then declaration order (deterministic).
  int order[kNumBuffers];
  for (int i = 0; i < kNumBuffers; ++i) order[i] = i;
  // std::sort with the index as tie-break: the stable order without std::stable_sort's temporary
  // buffer (a heap allocation; creating a translator in a caller-owned arena allocates nothing).
  std::sort(order, order + kNumBuffers, [&](int a, int b) {
    const size_t sa = AlignUp(bufs_[a].bytes), sb = AlignUp(bufs_[b].bytes);
    return sa != sb ? sa > sb : a < b;
  });
  int placed[kNumBuffers];
  int num_placed = 0;
  total_ = 0;
  for (int oi = 0; oi < kNumBuffers; ++oi) {
    PlannedBuffer& cur = bufs_[order[oi]];
    const size_t need = AlignUp(cur.bytes);
    if (need == 0) {
      cur.offset = 0;
      continue;
    }
    // Placed buffers live at the same time as this one, by offset.
    int live[kNumBuffers];
    int n = 0;
    for (int j = 0; j < num_placed; ++j) {
      const PlannedBuffer& o = bufs_[placed[j]];
      if (o.first <= cur.last && cur.first <= o.last) live[n++] = placed[j];
    }
    std::sort(live, live + n, [&](int a, int b) { return bufs_[a].offset < bufs_[b].offset; });
    size_t offset = 0;
    for (int j = 0; j < n; ++j) {
      const PlannedBuffer& o = bufs_[live[j]];
      if (o.offset >= offset + need) break;  // the gap before o fits
      offset = std::max(offset, o.offset + AlignUp(o.bytes));
    }
    cur.offset = offset;
    placed[num_placed++] = order[oi];
    total_ = std::max(total_, offset + need);
  }
}

size_t ArenaPlan::unshared_bytes() const {
  size_t sum = 0;
  for (const PlannedBuffer& b : bufs_) sum += AlignUp(b.bytes);
  return sum;
}

ArenaPlanInfo ArenaPlan::Describe() const {
  ArenaPlanInfo info;
  info.total_bytes = total_;
  info.unshared_bytes = unshared_bytes();
  for (int i = 0; i < kNumPhases; ++i) info.phases.push_back(PhaseName(i));
  for (const PlannedBuffer& b : bufs_) {
    if (!b.bytes) continue;
    ArenaBufferInfo o;
    o.name = b.name;
    o.offset = b.offset;
    o.bytes = b.bytes;
    o.persistent = b.persistent;
    o.first_phase = PhaseName(b.first);
    o.last_phase = PhaseName(b.last);
    info.buffers.push_back(std::move(o));
  }
  return info;
}

}  // namespace detail
}  // namespace mtlite

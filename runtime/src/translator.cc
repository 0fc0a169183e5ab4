// The translator: thin orchestration of the layers for one translate call.
//   options and inputs checked -> tokenize (tokenizer.h) -> encoder + cross K/V
//   (transformer.h) -> greedy or beam search (search.h) over decoder steps -> backtracking
//   (beam_history.h) and detokenization into result views.
// Memory: one arena, planned from TranslatorLimits (arena_plan.h), with the Translator's own
// objects at its head (translator_placement.cc); Create() allocates it as one block, or
// takes the caller's. translate() never touches the heap.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <string>

#include "arena_plan.h"
#include "beam_history.h"
#include "kernels.h"
#include "linear.h"
#include "model_data.h"
#include "profiler.h"
#include "mtlite/mtlite.hpp"
#include "search.h"
#include "shortlist.h"
#include "streamer.h"
#include "thread_pool.h"
#include "tokenizer.h"
#include "transformer.h"
#include "translator_impl.h"

#ifdef MTLITE_USE_XNNPACK
#include <pthreadpool.h>
#include <xnnpack.h>
#endif

namespace mtlite {

using detail::ArenaPlan;
using detail::ModelData;

namespace {

Status Err(StatusCode c, std::string m) { return Status(c, std::move(m)); }
std::string Sentence(size_t b) { return "sentence " + std::to_string(b) + ": "; }

}  // namespace

Status TranslatorImpl::Init(std::shared_ptr<const Model> model, const TranslatorLimits& limits, uint8_t* arena,
                           size_t arena_bytes) {
  model_ = std::move(model);
  md_ = &model_->data();
  cfg_ = &md_->config;
  lim = limits;
  auto planned = ArenaPlan::Make(*md_, lim);
  if (!planned.ok()) return planned.status();
  plan = std::move(planned).value();
  x_ = plan.dims();
#ifdef MTLITE_USE_XNNPACK
  if (cfg_->weight_type != WeightType::kInt8) {
    static const xnn_status init = xnn_initialize(nullptr);
    if (init != xnn_status_success) return Err(StatusCode::kInternal, "xnn_initialize failed");
    if (lim.num_threads > 1) {
      xnn_pool_.reset(pthreadpool_create(size_t(lim.num_threads)));
      if (!xnn_pool_) return Err(StatusCode::kResourceExhausted, "cannot create XNNPACK's thread pool");
    }
  }
#endif
  if (plan.total_bytes() > arena_bytes)
    return Err(StatusCode::kResourceExhausted, "arena too small for the plan (" + std::to_string(plan.total_bytes()) +
                                                   " bytes needed)");
  arena_ = arena;
  uint8_t* a = arena_;
  if (Status s = pool_.Init(lim.num_threads); !s.ok()) return s;
  exec_ = {&kernels::BestKernels(), &pool_, &fault, nullptr};
#ifdef MTLITE_USE_XNNPACK
  exec_.xnn_pool = xnn_pool_.get();
#endif
  src_tok_.emplace(md_->source_spm, md_->source_vocab);
  tgt_tok_.emplace(md_->target_spm, md_->target_vocab);
  if (!src_tok_->status().ok()) return src_tok_->status();
  if (!tgt_tok_->status().ok()) return tgt_tok_->status();
  if (Status s = net_.Init(*md_, plan, a, exec_); !s.ok()) return s;

  using namespace detail;
  history_.Bind(plan.Get<int32_t>(a, kBufHistTokens), plan.Get<int32_t>(a, kBufHistParents),
                plan.Get<float>(a, kBufHistAlign), x_.T, x_.R, x_.W, x_.S);
  history_.BindScores(plan.Get<float>(a, kBufHistScores));
  out_token_scores_ = plan.Get<float>(a, kBufOutTokenScores);
  search_ = {plan.Get<int32_t>(a, kBufActive),   plan.Get<int32_t>(a, kBufRowTokens),
             plan.Get<float>(a, kBufBeamScore),  plan.Get<float>(a, kBufCandScore),
             plan.Get<int32_t>(a, kBufCandTok),  plan.Get<int32_t>(a, kBufCandPar),
             plan.Get<SearchHyp>(a, kBufHyps),   plan.Get<int>(a, kBufNumHyps),
             plan.Get<float>(a, kBufWorst),      plan.Get<uint8_t>(a, kBufDone),
             plan.Get<float>(a, kBufRowScore),   plan.Get<int32_t>(a, kBufRowBest),
             plan.Get<int32_t>(a, kBufSentenceRows)};
  src_ids_ = plan.Get<int32_t>(a, kBufSrcIds);
  src_len_ = plan.Get<int>(a, kBufSrcLen);
  tok_ws_ = plan.Get<uint8_t>(a, kBufTokWorkspace);
  out_ids_ = plan.Get<int32_t>(a, kBufOutIds);
  out_text_ = plan.Get<char>(a, kBufOutText);
  out_align_ = plan.Get<float>(a, kBufOutAlign);
  hyp_views_ = plan.Get<HypothesisView>(a, kBufHypViews);
  sent_views_ = plan.Get<SentenceResultView>(a, kBufSentViews);
  shortlist_.Bind(plan.Get<uint8_t>(a, kBufShortlistMarks), plan.Get<int32_t>(a, kBufShortlistBlocks),
                  plan.Get<int32_t>(a, kBufShortlistColumns), plan.Get<int32_t>(a, kBufShortlistMasked));
  streamer_.Bind(&history_, &*tgt_tok_, plan.Get<int32_t>(a, kBufStreamIds), plan.Get<char>(a, kBufStreamText),
                 x_.text_cap, x_.T);
  text.Bind(plan, a, lim);
  prof_.Bind(plan.Get<ProfileEntry>(a, kBufProfileEntries), std::max(x_.Le, x_.Ld),
             plan.Get<ProfileEvent>(a, kBufProfileEvents), x_.profile_events);
  return Status::Ok();
}

Status TranslatorImpl::EncodeSources(const std::string_view* texts, const int32_t* const* ids, const int* lens,
                                     size_t n, int* smax) {
  const int S = x_.S;
  *smax = 0;
  for (size_t b = 0; b < n; ++b) {
    int32_t* dst = src_ids_ + b * S;
    int len = 0;
    if (texts) {
      if (texts[b].size() > size_t(lim.max_input_bytes))
        return Err(StatusCode::kOutOfRange, Sentence(b) + std::to_string(texts[b].size()) +
                                                " bytes exceed max_input_bytes " + std::to_string(lim.max_input_bytes));
      Status s = src_tok_->Encode(texts[b], tok_ws_, x_.tok_ws_bytes, dst, S - 1, &len);
      if (!s.ok()) {
        if (s.code() == StatusCode::kOutOfRange)
          return Err(StatusCode::kOutOfRange, Sentence(b) + "more than " + std::to_string(S - 1) +
                                                  " source tokens (max_source_tokens " + std::to_string(S) +
                                                  " includes </s>)");
        return Err(s.code(), Sentence(b) + s.message());
      }
      if (len > 0 && cfg_->source_eos) dst[len++] = cfg_->eos_id;  // empty input stays empty: translated to ""
    } else {
      len = lens[b];
      if (len < 0 || len > S)
        return Err(StatusCode::kOutOfRange, Sentence(b) + std::to_string(len) +
                                                " source tokens exceed max_source_tokens " + std::to_string(S));
      if (len > 0 && !ids[b]) return Err(StatusCode::kInvalidArgument, Sentence(b) + "null source ids");
      for (int i = 0; i < len; ++i) {
        const int32_t id = ids[b][i];
        if (id < 0 || id >= cfg_->source_vocab_size)
          return Err(StatusCode::kInvalidArgument,
                     Sentence(b) + "token id " + std::to_string(id) + " outside the source vocabulary");
        dst[i] = id;
      }
    }
    src_len_[b] = len;
    *smax = std::max(*smax, len);
  }
  *smax = std::max(*smax, 1);
  return Status::Ok();
}

Status TranslatorImpl::Run(const std::string_view* texts, const int32_t* const* ids, const int* lens, size_t n,
                           const TranslateOptions& opt, const SentenceResultView** out) {
  profiled_ = false;
  if (!opt.profile) return RunImpl(texts, ids, lens, n, opt, out);
  if (!lim.profiling)
    return Err(StatusCode::kInvalidArgument, "profile requested but TranslatorLimits.profiling is false");
  uint64_t steady_ns = 0, ticks = 0;
  prof_.ReadClocks(&steady_ns, &ticks);
  prof_.Begin(x_.threads, steady_ns, ticks);
  exec_.prof = &prof_;
  net_.set_exec(exec_);
  Status s;
  {
    detail::Span root(&prof_, detail::Op::kTranslate);
    s = RunImpl(texts, ids, lens, n, opt, out);
  }
  exec_.prof = nullptr;
  net_.set_exec(exec_);
  prof_.ReadClocks(&steady_ns, &ticks);
  prof_.End(int(n), steps_, steady_ns, ticks);
  profiled_ = s.ok();
  return s;
}

Status TranslatorImpl::RunChain(const std::string_view* texts, const int32_t* const* ids, const int* lens, size_t n,
                                const TranslateOptions& opt, const SentenceResultView** out,
                                const SentenceResultView** first_out) {
  if (!next) {
    if (first_out) *first_out = nullptr;
    return Run(texts, ids, lens, n, opt, out);
  }
  if (!out) return Err(StatusCode::kInvalidArgument, "null result pointer");
  *out = nullptr;
  TranslateOptions first = opt;  // the best translation into the pivot language
  first.n_best = 1;
  first.return_scores = false;
  first.stream = nullptr;
  first.profile = false;
  const SentenceResultView* r1 = nullptr;
  if (Status s = Run(texts, ids, lens, n, first, &r1); !s.ok()) return s;
  for (size_t j = 0; j < n; ++j) pivot_views[j] = r1[j].hypotheses[0].text;
  if (first_out) *first_out = r1;
  Status s = next->Run(pivot_views, nullptr, nullptr, n, opt, out);
  if (!s.ok()) return Status(s.code(), s.message() + " (second model, translating the pivot text)");
  return s;
}

Status TranslatorImpl::RunImpl(const std::string_view* texts, const int32_t* const* ids, const int* lens, size_t n,
                               const TranslateOptions& opt, const SentenceResultView** out) {
  if (!out) return Err(StatusCode::kInvalidArgument, "null result pointer");
  *out = nullptr;
  if (n > 0 && !texts && (!ids || !lens))
    return Err(StatusCode::kInvalidArgument, "null inputs for " + std::to_string(n) + " sentences");
  if (n > size_t(x_.B))
    return Err(StatusCode::kOutOfRange, std::to_string(n) + " sentences exceed max_batch " + std::to_string(x_.B));
  if (opt.beam_size < 1 || opt.beam_size > x_.W)
    return Err(StatusCode::kInvalidArgument, "beam_size " + std::to_string(opt.beam_size) +
                                                 " outside [1, max_beam=" + std::to_string(x_.W) + "]");
  if (opt.n_best < 1 || opt.n_best > opt.beam_size || opt.n_best > x_.NB)
    return Err(StatusCode::kInvalidArgument, "n_best " + std::to_string(opt.n_best) +
                                                 " must be in [1, min(beam_size, max_n_best)]");
  if (opt.max_length < 1) return Err(StatusCode::kInvalidArgument, "max_length must be >= 1");
  if (!(opt.length_penalty > -100.0f && opt.length_penalty < 100.0f) || !(opt.max_length_ratio >= 0.0f) ||
      opt.max_length_ratio > 1e6f)
    return Err(StatusCode::kInvalidArgument, "length_penalty / max_length_ratio out of range");
  if (opt.return_alignments && !history_.has_alignments())
    return Err(StatusCode::kInvalidArgument, "alignments requested but TranslatorLimits.alignments is false");
  const int Ld = x_.Ld;
  const int align_layer = opt.alignment_layer < 0 ? Ld + opt.alignment_layer : opt.alignment_layer;
  if (opt.return_alignments && (align_layer < 0 || align_layer >= Ld))
    return Err(StatusCode::kInvalidArgument, "alignment_layer out of range");
  if (opt.use_shortlist && !md_->shortlist.present)
    return Err(StatusCode::kUnsupported, "use_shortlist: the model has no shortlist section (see `mtlite shortlist`)");
  align_layer_ = opt.return_alignments ? align_layer : -1;
  texts_mode_ = texts != nullptr;

  int smax = 0;
  steps_ = 0;
  detail::SearchSpec spec;
  spec.beam = opt.beam_size;
  spec.kind = cfg_->search;
  spec.min_length = spec.kind == SearchKind::kCT2 ? 1 : 0;  // CTranslate2's min_decoding_length default
  spec.unk_id = spec.kind == SearchKind::kMarian ? cfg_->unk_id : -1;
  spec.length_penalty = opt.length_penalty;
  spec.greedy_scores = opt.return_scores;
  spec.vocab = x_.V;
  spec.eos_id = cfg_->eos_id;
  spec.pad_id = spec.kind == SearchKind::kCT2 ? -1 : cfg_->pad_id;  // CTranslate2 does not ban its padding token
  spec.decoder_start_id = cfg_->decoder_start_id;
  spec.bad_ids = cfg_->bad_word_ids.data();
  spec.num_bad = int(cfg_->bad_word_ids.size());
  shortlist_.Clear();
  {
    detail::Span tokenize(exec_.prof, detail::Op::kTokenize);
    if (Status s = EncodeSources(texts, ids, lens, n, &smax); !s.ok()) return s;
    if (opt.use_shortlist) shortlist_.Build(*md_, src_ids_, x_.S, src_len_, int(n), &spec);  // source ids: live until encode
  }
  steps_cols_ = spec.vocab;
  net_.SetOutputBlocks(shortlist_.blocks(), shortlist_.num_blocks());
  bool any = false;
  for (size_t b = 0; b < n; ++b) {
    max_len_[b] = detail::MaxTargetLength(opt, src_len_[b], x_.T);
    skip_[b] = texts_mode_ && src_len_[b] == 0;  // empty text: translated to ""
    any = any || !skip_[b];
  }
  if (any) {
    if (Status s = net_.Encode(src_ids_, src_len_, int(n), smax); !s.ok()) return s;
  }
  streamer_.Start(opt, texts_mode_, int(n));
  if (Status s = detail::RunSearch(spec, int(n), max_len_, skip_, *exec_.K, &history_, &search_, this,
                                   streamer_.active() ? &streamer_ : nullptr, exec_.prof, exec_.pool);
      !s.ok())
    return s;
  if (exec_.prof) exec_.prof->set_step(-1);
  {
    detail::Span finish(exec_.prof, detail::Op::kFinish);
    if (Status s = Finish(int(n), opt); !s.ok()) return s;
  }
  if (streamer_.active())
    for (size_t b = 0; b < n; ++b) streamer_.Final(int(b), sent_views_[b].hypotheses[0]);
  *out = sent_views_;
  return Status::Ok();
}

// Backtracks the best hypotheses of every sentence into ids, text and alignment views.
Status TranslatorImpl::Finish(int nb, const TranslateOptions& opt) {
  const int W = x_.W, NB = x_.NB, T = x_.T, S = x_.S, smax = net_.smax();
  const bool greedy = opt.beam_size == 1;
  for (int b = 0; b < nb; ++b) {
    SentenceResultView& sv = sent_views_[b];
    sv.hypotheses = hyp_views_ + size_t(b) * NB;
    sv.num_hypotheses = 0;
    if (skip_[b]) {  // empty text -> one empty translation
      HypothesisView& hv = hyp_views_[size_t(b) * NB];
      hv = HypothesisView();
      hv.ids = out_ids_ + size_t(b) * NB * T;
      hv.text = std::string_view(out_text_ + size_t(b) * NB * x_.text_cap, 0);
      sv.num_hypotheses = 1;
      continue;
    }
    detail::SearchHyp* h = search_.hyps + size_t(b) * W;
    const int k = detail::SortHypotheses(h, search_.num_hyps[b], greedy ? 1 : opt.n_best);
    for (int j = 0; j < k; ++j) {
      HypothesisView& hv = hyp_views_[size_t(b) * NB + j];
      int32_t* ids = out_ids_ + (size_t(b) * NB + j) * T;
      float* al = opt.return_alignments ? out_align_ + (size_t(b) * NB + j) * size_t(T) * S : nullptr;
      history_.Backtrack(h[j].t_end, h[j].slot, ids, al, smax);
      hv.ids = ids;
      hv.num_ids = h[j].t_end;
      hv.score = h[j].score;
      hv.alignment = al;
      hv.source_tokens = smax;
      float* ts = out_token_scores_ + (size_t(b) * NB + j) * T;
      hv.token_scores = opt.return_scores && history_.TokenScores(h[j].t_end, h[j].slot, ts) ? ts : nullptr;
      char* text = out_text_ + (size_t(b) * NB + j) * x_.text_cap;
      size_t len = 0;
      if (texts_mode_) {
        Status s = tgt_tok_->Decode(ids, hv.num_ids, text, size_t(x_.text_cap), &len);
        if (!s.ok()) return Err(s.code(), Sentence(b) + "decoding the output: " + s.message());
      }
      hv.text = std::string_view(text, len);
      ++sv.num_hypotheses;
    }
  }
  return Status::Ok();
}

Status TranslatorImpl::Forced(const int32_t* src, int src_len, const int32_t* tgt, int tgt_len, float* logits_out) {
  if (!src || !tgt || !logits_out) return Err(StatusCode::kInvalidArgument, "null argument");
  if (tgt_len < 1 || tgt_len > x_.T)
    return Err(StatusCode::kOutOfRange, "target length " + std::to_string(tgt_len) + " outside [1, max_target_tokens]");
  for (int i = 0; i < tgt_len; ++i)
    if (tgt[i] < 0 || tgt[i] >= x_.V) return Err(StatusCode::kInvalidArgument, "target id out of range");
  texts_mode_ = false;
  // every column, in token order: a shortlist of an earlier translate call must not select the
  // output projection's blocks here
  shortlist_.Clear();
  net_.SetOutputBlocks(nullptr, 0);
  steps_cols_ = x_.V;
  int smax = 0;
  const int32_t* ids[1] = {src};
  if (Status s = EncodeSources(nullptr, ids, &src_len, 1, &smax); !s.ok()) return s;
  if (Status s = net_.Encode(src_ids_, src_len_, 1, smax); !s.ok()) return s;
  const int32_t slot = 0;
  for (int t = 0; t < tgt_len; ++t) {
    const int32_t token = t == 0 ? cfg_->decoder_start_id : tgt[t - 1];
    history_.parent(t, slot) = slot;
    float* logits = nullptr;
    if (Status s = net_.DecoderStep(t, 1, &slot, &token, &history_, -1, &logits); !s.ok()) return s;
    std::memcpy(logits_out + size_t(t) * x_.V, logits, sizeof(float) * x_.V);
  }
  return Status::Ok();
}

}  // namespace mtlite

// TranslatorImpl: the state of one Translator (its layers, tokenizers, search buffers and the
// views into its arena) and one translate call's orchestration (translator.cc). It lives in the
// Translator's arena, after the Translator itself (translator_placement.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "arena_plan.h"
#include "beam_history.h"
#include "linear.h"
#include "model_data.h"
#include "mtlite/mtlite.hpp"
#include "profiler.h"
#include "search.h"
#include "shortlist.h"
#include "streamer.h"
#include "text_translate.h"
#include "thread_pool.h"
#include "tokenizer.h"
#include "transformer.h"
#include "translator_bounds.h"

#ifdef MTLITE_USE_XNNPACK
#include <pthreadpool.h>
#endif

namespace mtlite {

#ifdef MTLITE_USE_XNNPACK
struct XnnPoolDeleter {
  void operator()(pthreadpool* p) const { pthreadpool_destroy(p); }
};
using XnnPool = std::unique_ptr<pthreadpool, XnnPoolDeleter>;
#endif

class TranslatorImpl : public detail::StepModel {
 public:
  // `arena`: 64-byte aligned, `arena_bytes` >= the plan's total (checked).
  Status Init(std::shared_ptr<const Model> model, const TranslatorLimits& limits, uint8_t* arena,
              size_t arena_bytes);
  ~TranslatorImpl() {
    if (next) next->~TranslatorImpl();  // placed in the same block (pivot)
  }
  Status Run(const std::string_view* texts, const int32_t* const* ids, const int* lens, size_t n,
             const TranslateOptions& opt, const SentenceResultView** out);
  // Run, through the second translator of a pivot chain when there is one (`next`): the first's
  // best translations are its inputs; *first_out (if given) gets the first's results.
  Status RunChain(const std::string_view* texts, const int32_t* const* ids, const int* lens, size_t n,
                  const TranslateOptions& opt, const SentenceResultView** out,
                  const SentenceResultView** first_out = nullptr);
  Status RunImpl(const std::string_view* texts, const int32_t* const* ids, const int* lens, size_t n,
                 const TranslateOptions& opt, const SentenceResultView** out);
  Status Forced(const int32_t* src, int src_len, const int32_t* tgt, int tgt_len, float* logits_out);
  // StepModel: one decoder step for the search.
  Status Step(int t, int n, const int32_t* slots, const int32_t* tokens, float** logits) override {
    steps_ = t + 1;
    Status s = net_.DecoderStep(t, n, slots, tokens, &history_, align_layer_, logits);
    if (s.ok()) shortlist_.Mask(*logits, n, steps_cols_);  // non-candidates never win
    return s;
  }

  TranslatorLimits lim;
  detail::ArenaPlan plan;
  detail::FaultInjector fault;

  uint8_t* arena() const { return arena_; }
  // For the text layer (text_translate.cc), between translate calls.
  const SpmTokenizer& source_tokenizer() const { return *src_tok_; }
  const SpmTokenizer& target_tokenizer() const { return *tgt_tok_; }
  const detail::ModelData& model_data() const { return *md_; }
  uint8_t* tokenizer_workspace() const { return tok_ws_; }  // free between calls
  size_t tokenizer_workspace_bytes() const { return x_.tok_ws_bytes; }
  const detail::Dims& dims() const { return x_; }
  detail::TextLayer text;
  // Pivot: the second model's translator (placed after this one's buffers) and max_batch views
  // of this one's results, its inputs.
  TranslatorImpl* next = nullptr;
  const TranslatorImpl& chain_end() const { return next ? *next : *this; }
  std::string_view* pivot_views = nullptr;
  void set_column_split(int mode) { net_.set_column_split(mode); }  // testing_hooks.h
  const ProfileView* last_profile() const { return profiled_ ? &prof_.view() : nullptr; }

 private:
  Status EncodeSources(const std::string_view* texts, const int32_t* const* ids, const int* lens, size_t n,
                       int* smax);
  Status Finish(int nb, const TranslateOptions& opt);

  std::shared_ptr<const Model> model_;
  const detail::ModelData* md_ = nullptr;
  const ModelConfig* cfg_ = nullptr;
  detail::ThreadPool pool_;
#ifdef MTLITE_USE_XNNPACK
  XnnPool xnn_pool_;  // XNNPACK's own workers (f32/f16 linear layers only)
#endif
  detail::Exec exec_;
  std::optional<SpmTokenizer> src_tok_, tgt_tok_;
  uint8_t* arena_ = nullptr;    // the planned buffers (not owned: see Translator::operator delete)
  detail::Transformer net_;
  detail::BeamHistory history_;
  detail::SearchBuffers search_;
  detail::Dims x_;
  detail::Profiler prof_;
  detail::Streamer streamer_;
  bool profiled_ = false;       // the last call was profiled and succeeded

  int32_t* src_ids_ = nullptr;  // [B][S]
  int* src_len_ = nullptr;      // [B]
  uint8_t* tok_ws_ = nullptr;
  int32_t* out_ids_ = nullptr;  // [B][NB][T]
  char* out_text_ = nullptr;    // [B][NB][text_cap]
  float* out_align_ = nullptr;  // [B][NB][T][S]
  float* out_token_scores_ = nullptr;  // [B][NB][T]
  HypothesisView* hyp_views_ = nullptr;
  SentenceResultView* sent_views_ = nullptr;
  uint8_t skip_[detail::kMaxBatch] = {};  // per sentence of the current call: nothing to translate
  int max_len_[detail::kMaxBatch] = {};   // per sentence: generated-token cap
  detail::ShortlistSelector shortlist_;
  int steps_ = 0;               // decoder steps of the current call
  int steps_cols_ = 0;          // logits columns of the current call
  int align_layer_ = -1;        // decoder layer whose cross-attention is recorded (-1: none)
  bool texts_mode_ = false;     // inputs were text (decode outputs to text)
};

}  // namespace mtlite

// Token streaming (TranslateOptions::stream) over the search's observer hook: reports a sentence's
// current hypothesis when it differs from the last one reported, then its final result. Arena
// buffers only: no allocation.
#pragma once

#include <cstdint>

#include "beam_history.h"
#include "mtlite/mtlite.hpp"
#include "search.h"
#include "tokenizer.h"
#include "translator_bounds.h"

namespace mtlite {
namespace detail {

class Streamer : public SearchObserver {
 public:
  // ids: [(max_batch + 1) * T] (the last reported hypothesis per sentence, then a scratch row);
  // text: text_cap bytes.
  void Bind(const BeamHistory* h, const SpmTokenizer* tok, int32_t* ids, char* text, int text_cap, int T);
  void Start(const TranslateOptions& opt, bool texts_mode, int nb);
  bool active() const { return fn_ != nullptr; }
  void OnToken(int sentence, int t, int32_t token) override;
  void OnBest(int sentence, int t, int slot) override;
  void Final(int sentence, const HypothesisView& h);

 private:
  void Report(int b, int t, int slot);  // the hypothesis ending at step t in `slot`

  const BeamHistory* history_ = nullptr;
  const SpmTokenizer* tok_ = nullptr;
  int32_t* ids_ = nullptr;
  char* text_ = nullptr;
  int text_cap_ = 0, T_ = 0, nb_ = 0;
  bool texts_mode_ = false;
  StreamCallback fn_ = nullptr;
  void* user_ = nullptr;
  int reported_[kMaxBatch] = {};  // per sentence: length of the last reported hypothesis (-1: none)
};

}  // namespace detail
}  // namespace mtlite

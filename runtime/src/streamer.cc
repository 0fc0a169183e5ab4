#include "streamer.h"

#include <cstring>

namespace mtlite {
namespace detail {

void Streamer::Bind(const BeamHistory* h, const SpmTokenizer* tok, int32_t* ids, char* text, int text_cap, int T) {
  history_ = h;
  tok_ = tok;
  ids_ = ids;
  text_ = text;
  text_cap_ = text_cap;
  T_ = T;
}

void Streamer::Start(const TranslateOptions& opt, bool texts_mode, int nb) {
  fn_ = opt.stream;
  user_ = opt.stream_user;
  texts_mode_ = texts_mode;
  nb_ = nb;
  for (int b = 0; b < nb; ++b) reported_[b] = -1;
}

void Streamer::OnToken(int sentence, int t, int32_t) { Report(sentence, t, sentence * history_->slots_per_sentence()); }
void Streamer::OnBest(int sentence, int t, int slot) { Report(sentence, t, slot); }

void Streamer::Final(int sentence, const HypothesisView& h) {
  StreamEvent e;
  e.sentence = size_t(sentence);
  e.ids = h.ids;
  e.num_ids = h.num_ids;
  e.text = h.text;
  e.final = true;
  fn_(e, user_);
}

void Streamer::Report(int b, int t, int slot) {
  int32_t* scratch = ids_ + size_t(nb_) * T_;
  int32_t* last = ids_ + size_t(b) * T_;
  history_->Backtrack(t, slot, scratch, nullptr, 0);
  if (reported_[b] == t && std::memcmp(scratch, last, sizeof(int32_t) * size_t(t)) == 0) return;
  std::memcpy(last, scratch, sizeof(int32_t) * size_t(t));
  reported_[b] = t;
  size_t len = 0;
  if (texts_mode_ && !tok_->Decode(last, t, text_, size_t(text_cap_), &len).ok()) len = 0;
  StreamEvent e;
  e.sentence = size_t(b);
  e.ids = last;
  e.num_ids = t;
  e.text = std::string_view(text_, len);
  fn_(e, user_);
}

}  // namespace detail
}  // namespace mtlite

// libFuzzer target: Translator::TranslateViews on arbitrary text.
// The input is split at '\n' into 1-4 sentences (the 4th keeps any further newlines) and
// translated by one long-lived Translator with small limits: greedy, then beam 2 with n-best 2;
// both with scores and alignments.
// Properties:
//   - the status is OK, or an error with a message: kInvalidArgument only when a sentence is not
//     valid UTF-8 (independent validator), kOutOfRange only for a limit (bytes, tokens);
//   - every hypothesis: ids inside the target vocabulary, at most max_length - 1 of them, a
//     finite score, n-best sorted by score, text == DecodeTarget(ids) and valid UTF-8;
//   - alignments: one row per generated token plus </s>, finite and >= 0, summing to 1 over the
//     sentence's real source tokens and 0 on padding columns;
//   - greedy in a batch gives the same ids as each sentence alone.
// Needs MTLITE_FUZZ_MODEL (see fuzz_util.h).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.h"

namespace mtlite {
namespace {

using fuzz::Fail;
using fuzz::IsValidUtf8;

constexpr int kMaxSentences = 4;

struct State {
  std::shared_ptr<const Model> model;
  std::unique_ptr<Translator> translator;
  TranslatorLimits limits;
};
State* g_state = nullptr;

// Real source tokens of a text as the translator counts them (EncodeSource: ids + </s>; none
// for a text without tokens).
int SourceTokens(std::string_view text) {
  std::vector<int32_t> ids;
  if (!EncodeSource(*g_state->model, text, &ids).ok()) return -1;
  return int(ids.size());
}

void CheckHypothesis(const HypothesisView& h, int real_source, const TranslateOptions& opt, std::string_view input,
                     size_t b, int k) {
  const ModelConfig& cfg = g_state->model->config();
  if (h.num_ids < 0 || h.num_ids > opt.max_length - 1)
    Fail(input, "sentence %zu hyp %d: %d ids for max_length %d", b, k, h.num_ids, opt.max_length);
  for (int i = 0; i < h.num_ids; ++i) {
    if (h.ids[i] < 0 || h.ids[i] >= cfg.target_vocab_size)
      Fail(input, "sentence %zu hyp %d: id %d outside the target vocabulary", b, k, h.ids[i]);
  }
  if (!std::isfinite(h.score)) Fail(input, "sentence %zu hyp %d: score %f", b, k, double(h.score));
  if (!IsValidUtf8(h.text)) Fail(input, "sentence %zu hyp %d: text is not valid UTF-8", b, k);
  std::string decoded;
  const Status d = DecodeTarget(*g_state->model, h.ids, h.num_ids, &decoded);
  if (!d.ok() || decoded != h.text)
    Fail(input, "sentence %zu hyp %d: text differs from DecodeTarget(ids) (%s)", b, k, d.ToString().c_str());
  if (real_source == 0) return;  // empty text: no decoding ran, no alignment
  if (!opt.return_alignments) return;
  if (h.alignment == nullptr) Fail(input, "sentence %zu hyp %d: no alignment", b, k);
  if (h.source_tokens < real_source)
    Fail(input, "sentence %zu hyp %d: alignment has %d columns for %d source tokens", b, k, h.source_tokens,
         real_source);
  for (int t = 0; t <= h.num_ids; ++t) {
    const float* row = h.alignment + size_t(t) * size_t(h.source_tokens);
    double sum = 0;
    for (int j = 0; j < h.source_tokens; ++j) {
      if (!std::isfinite(row[j]) || row[j] < 0)
        Fail(input, "sentence %zu hyp %d: alignment[%d][%d] = %f", b, k, t, j, double(row[j]));
      if (j >= real_source && row[j] != 0.0f)
        Fail(input, "sentence %zu hyp %d: padding column %d of row %d has weight %g", b, k, j, t, double(row[j]));
      sum += row[j];
    }
    if (std::fabs(sum - 1.0) > 1e-3) Fail(input, "sentence %zu hyp %d: alignment row %d sums to %.6f", b, k, t, sum);
  }
}

// Translates; checks the status or every result. Returns whether it succeeded.
bool TranslateChecked(const std::vector<std::string_view>& s, const TranslateOptions& opt, std::string_view input,
                      const SentenceResultView** out) {
  const Status st = g_state->translator->TranslateViews(s.data(), s.size(), opt, out);
  const TranslatorLimits& lim = g_state->limits;
  if (!st.ok()) {
    if (st.message().empty()) Fail(input, "error %s without a message", StatusCodeName(st.code()));
    bool any_invalid = false, any_too_long = false;
    for (std::string_view t : s) {
      any_invalid = any_invalid || !IsValidUtf8(t);
      any_too_long = any_too_long || t.size() > size_t(lim.max_input_bytes);
    }
    if (st.code() == StatusCode::kInvalidArgument && any_invalid) return false;
    if (st.code() == StatusCode::kOutOfRange) {
      if (any_too_long) return false;
      for (std::string_view t : s) {  // otherwise some sentence must have too many tokens
        std::vector<int32_t> ids;
        if (EncodeSource(*g_state->model, t, &ids).ok() && int(ids.size()) > lim.max_source_tokens) return false;
      }
      // kOutOfRange is also right for a normalized form beyond the tokenizer workspace bound.
      if (st.message().find("normalized") != std::string::npos) return false;
    }
    Fail(input, "unexpected error %s", st.ToString().c_str());
  }
  for (size_t b = 0; b < s.size(); ++b) {
    if (!IsValidUtf8(s[b])) Fail(input, "sentence %zu is invalid UTF-8 but was translated", b);
    const SentenceResultView& r = (*out)[b];
    const int real = SourceTokens(s[b]);
    const int want = real == 0 ? 1 : opt.n_best;
    if (r.num_hypotheses < 1 || r.num_hypotheses > want)
      Fail(input, "sentence %zu: %d hypotheses for n_best %d", b, r.num_hypotheses, opt.n_best);
    for (int k = 0; k < r.num_hypotheses; ++k) {
      CheckHypothesis(r.hypotheses[k], real, opt, input, b, k);
      if (k > 0 && r.hypotheses[k].score > r.hypotheses[k - 1].score)
        Fail(input, "sentence %zu: n-best not sorted by score", b);
    }
  }
  return true;
}

void InitTranslator() {
  g_state = new State;
  g_state->model = fuzz::LoadFuzzModel();
  TranslatorLimits& lim = g_state->limits;
  lim.max_batch = kMaxSentences;
  lim.max_source_tokens = 24;
  lim.max_target_tokens = 10;
  lim.max_beam = 2;
  lim.max_n_best = 2;
  lim.max_input_bytes = 96;
  lim.alignments = true;
  auto tr = Translator::Create(g_state->model, lim);
  if (!tr.ok()) {
    std::fprintf(stderr, "Translator::Create: %s\n", tr.status().ToString().c_str());
    std::exit(2);
  }
  g_state->translator = std::move(tr.value());
}

}  // namespace
}  // namespace mtlite

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  mtlite::InitTranslator();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mtlite;
  if (size > 512) return 0;  // beyond 4 x max_input_bytes: only the byte limit is left to hit
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> sentences;
  size_t start = 0;
  while (int(sentences.size()) < kMaxSentences - 1) {
    const size_t nl = input.find('\n', start);
    if (nl == std::string_view::npos) break;
    sentences.push_back(input.substr(start, nl - start));
    start = nl + 1;
  }
  sentences.push_back(input.substr(start));

  const int max_length = g_state->limits.max_target_tokens;
  TranslateOptions greedy;
  greedy.max_length = max_length;
  greedy.return_scores = true;
  greedy.return_alignments = true;
  const SentenceResultView* out = nullptr;
  if (TranslateChecked(sentences, greedy, input, &out) && sentences.size() > 1) {
    // Copy the batch's ids (the next call reuses the arena), then each sentence alone.
    std::vector<std::vector<int32_t>> batched;
    for (size_t b = 0; b < sentences.size(); ++b)
      batched.emplace_back(out[b].hypotheses[0].ids, out[b].hypotheses[0].ids + out[b].hypotheses[0].num_ids);
    for (size_t b = 0; b < sentences.size(); ++b) {
      if (!TranslateChecked({sentences[b]}, greedy, input, &out)) Fail(input, "sentence %zu fails alone", b);
      const HypothesisView& h = out[0].hypotheses[0];
      if (std::vector<int32_t>(h.ids, h.ids + h.num_ids) != batched[b])
        Fail(input, "sentence %zu: greedy ids in the batch differ from the sentence alone", b);
    }
  }
  TranslateOptions beam = greedy;
  beam.beam_size = 2;
  beam.n_best = 2;
  (void)TranslateChecked(sentences, beam, input, &out);
  return 0;
}

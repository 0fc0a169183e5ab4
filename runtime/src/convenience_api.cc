// The allocating convenience API: owning copies of results, and text <-> ids with the model's
// tokenizer. The zero-allocation entry points are in translator.cc.
#include <string>
#include <vector>

#include "model_data.h"
#include "mtlite/mtlite.hpp"
#include "tokenizer.h"

namespace mtlite {

namespace {

void CopyResults(const SentenceResultView* v, size_t n, std::vector<TranslationResult>* out) {
  out->clear();
  out->resize(n);
  for (size_t i = 0; i < n; ++i)
    for (int j = 0; j < v[i].num_hypotheses; ++j) {
      const HypothesisView& h = v[i].hypotheses[j];
      Hypothesis o;
      o.ids.assign(h.ids, h.ids + h.num_ids);
      o.text.assign(h.text);
      o.score = h.score;
      o.source_tokens = h.source_tokens;
      if (h.alignment) o.alignment.assign(h.alignment, h.alignment + size_t(h.num_ids + 1) * h.source_tokens);
      (*out)[i].hypotheses.push_back(std::move(o));
    }
}

}  // namespace

bool Model::has_shortlist() const { return data_->shortlist.present; }

Status Translator::Translate(const std::vector<std::string>& inputs, const TranslateOptions& options,
                             std::vector<TranslationResult>* out) {
  if (!out) return Status(StatusCode::kInvalidArgument, "null output");
  std::vector<std::string_view> views(inputs.begin(), inputs.end());
  const SentenceResultView* v = nullptr;
  Status s = TranslateViews(views.data(), views.size(), options, &v);
  if (s.ok()) CopyResults(v, inputs.size(), out);
  return s;
}

Status Translator::TranslateIds(const std::vector<std::vector<int32_t>>& source_ids, const TranslateOptions& options,
                                std::vector<TranslationResult>* out) {
  if (!out) return Status(StatusCode::kInvalidArgument, "null output");
  std::vector<const int32_t*> ptrs;
  std::vector<int> lens;
  for (const auto& s : source_ids) {
    ptrs.push_back(s.data());
    lens.push_back(int(s.size()));
  }
  const SentenceResultView* v = nullptr;
  Status s = TranslateIdsViews(ptrs.data(), lens.data(), source_ids.size(), options, &v);
  if (s.ok()) CopyResults(v, source_ids.size(), out);
  return s;
}

Status EncodeSource(const Model& model, std::string_view text, std::vector<int32_t>* ids) {
  const detail::ModelData& md = model.data();
  SpmTokenizer tok(md.source_spm, md.source_vocab);
  if (!tok.status().ok()) return tok.status();
  // The workspace assumes a bounded NFKC expansion; the rare input that expands more gets a
  // larger workspace (there are never more ids than normalized bytes).
  for (size_t budget = std::max<size_t>(text.size(), 16);; budget *= 4) {
    std::vector<uint8_t> ws(SpmTokenizer::WorkspaceBytes(budget));
    const size_t cap = budget * SpmTokenizer::kMaxNormalizedPerInputByte + 16;
    ids->assign(cap + 1, 0);
    int n = 0;
    Status s = tok.Encode(text, ws.data(), ws.size(), ids->data(), int(cap), &n);
    if (s.code() == StatusCode::kOutOfRange && budget < text.size() * 64) continue;
    if (!s.ok()) return s;
    ids->resize(size_t(n));
    if (n > 0 && md.config.source_eos) ids->push_back(md.config.eos_id);  // as the translator
    return Status::Ok();
  }
}

Status DecodeTarget(const Model& model, const int32_t* ids, int n, std::string* text) {
  const detail::ModelData& md = model.data();
  SpmTokenizer tok(md.target_spm, md.target_vocab);
  for (size_t cap = size_t(std::max(n, 0)) * 32 + 64;; cap *= 2) {
    text->assign(cap, '\0');
    size_t len = 0;
    Status s = tok.Decode(ids, n, text->data(), cap, &len);
    if (s.code() == StatusCode::kOutOfRange && cap < (size_t(1) << 28)) continue;
    if (!s.ok()) return s;
    text->resize(len);
    return Status::Ok();
  }
}

}  // namespace mtlite

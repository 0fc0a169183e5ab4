// The loader's binding of the tokenizer tables (detail::LoaderBase, model_internal.h): the
// source and target SentencePiece models and vocabularies, checked and viewed in place for the
// runtime tokenizer (tokenizer.{h,cc}). A missing target side shares the source's tables.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "model_internal.h"
#include "status_macros.h"

namespace mtlite {
namespace detail {
namespace {

using layout::Part;
constexpr auto Invalid = InvalidModel;

}  // namespace

// A table of n string views for a piece or vocab list.
Status LoaderBase::TakeViews(size_t n, Table<std::string_view>* out) {
  std::string_view* v = tables_->Take<std::string_view>(n);
  if (!v) return TablesTooSmall();
  out->Bind(v, n);
  return Status::Ok();
}

// `what`: "tokenizer.source_spm" / "tokenizer.target_spm"; `scores_name`, `charsmap_name`: the
// names of its two data buffers (static strings: a BufferCheck keeps a view of them).
Status LoaderBase::BindSpm(const fb::SentencePieceModel* m, const char* what, const char* scores_name,
                           const char* charsmap_name, int vocab_size, SpmView* v) {
  const auto* pieces = m->pieces();
  if (!pieces || pieces->size() == 0) return Invalid(std::string(what) + ".pieces missing or empty");
  if (pieces->size() > static_cast<flatbuffers::uoffset_t>(kMaxVocab)) return Invalid(std::string(what) + ".pieces: too many pieces");
  const int n = static_cast<int>(pieces->size());
  const auto* types = m->types();
  const auto* sorted = m->sorted_pieces();
  const auto* to_vocab = m->to_vocab();
  if (!types || types->size() != pieces->size()) return Invalid(std::string(what) + ".types length does not match the piece count");
  if (!sorted || sorted->size() != pieces->size()) return Invalid(std::string(what) + ".sorted_pieces length does not match the piece count");
  if (!to_vocab || to_vocab->size() != pieces->size()) return Invalid(std::string(what) + ".to_vocab length does not match the piece count");
  if (!m->scores()) return Invalid(std::string(what) + ".scores missing");
  MTLITE_RETURN_IF_ERROR(CheckRef(m->scores(), scores_name, false, {Part::kTokenizer}, "f32", int64_t(n) * 4));
  MTLITE_RETURN_IF_ERROR(CheckRange(Name(what) + ".unk_id", m->unk_id(), 0, n - 1));
  MTLITE_RETURN_IF_ERROR(CheckRange(Name(what) + ".bos_id", m->bos_id(), -1, n - 1));
  MTLITE_RETURN_IF_ERROR(CheckRange(Name(what) + ".eos_id", m->eos_id(), -1, n - 1));
  MTLITE_RETURN_IF_ERROR(CheckRange(Name(what) + ".pad_id", m->pad_id(), -1, n - 1));

  v->num_pieces = n;
  MTLITE_RETURN_IF_ERROR(TakeViews(size_t(n), &v->pieces));
  for (int i = 0; i < n; ++i) v->pieces[size_t(i)] = View(pieces->Get(flatbuffers::uoffset_t(i)));
  v->scores = reinterpret_cast<const float*>(base_ + m->scores()->offset());
  for (int i = 0; i < n; ++i) {
    if (!std::isfinite(v->scores[i])) return Invalid(std::string(what) + ".scores[" + std::to_string(i) + "] is not finite");
  }
  const int8_t* t = reinterpret_cast<const int8_t*>(types->Data());
  for (int i = 0; i < n; ++i) {
    if (t[i] < int8_t(PieceKind::kNormal) || t[i] > int8_t(PieceKind::kByte)) {
      return Invalid(std::string(what) + ".types[" + std::to_string(i) + "] = " + std::to_string(t[i]) + " is not a piece type");
    }
  }
  v->types = reinterpret_cast<const PieceKind*>(t);
  v->sorted_pieces = reinterpret_cast<const int32_t*>(sorted->Data());
  v->to_vocab = reinterpret_cast<const int32_t*>(to_vocab->Data());
  // In range and strictly ascending: then the pieces are distinct, so the indices are too, and
  // n distinct indices in [0, n) are a permutation (no "seen" table needed).
  for (int i = 0; i < n; ++i) {
    const int32_t p = v->sorted_pieces[i];
    if (p < 0 || p >= n) return Invalid(std::string(what) + ".sorted_pieces is not a permutation");
    if (i > 0 && !(v->pieces[size_t(v->sorted_pieces[i - 1])] < v->pieces[size_t(p)])) {
      if (std::find(v->sorted_pieces, v->sorted_pieces + i, p) != v->sorted_pieces + i) {
        return Invalid(std::string(what) + ".sorted_pieces is not a permutation");
      }
      return Invalid(std::string(what) + ".sorted_pieces is not in ascending bytewise piece order at position " +
                     std::to_string(i));
    }
    const int32_t id = v->to_vocab[i];
    if (id < 0 || id >= vocab_size) {
      return Invalid(std::string(what) + ".to_vocab[" + std::to_string(i) + "] = " + std::to_string(id) +
                     " is outside the vocabulary");
    }
  }
  v->unk_id = m->unk_id();
  v->bos_id = m->bos_id();
  v->eos_id = m->eos_id();
  v->pad_id = m->pad_id();
  v->add_dummy_prefix = m->add_dummy_prefix();
  v->remove_extra_whitespaces = m->remove_extra_whitespaces();
  v->escape_whitespaces = m->escape_whitespaces();
  v->treat_whitespace_as_suffix = m->treat_whitespace_as_suffix();
  v->byte_fallback = m->byte_fallback();
  switch (m->model_type()) {
    case fb::SpmModelType::Unigram: v->model_type = SpmModelType::kUnigram; break;
    case fb::SpmModelType::BPE:
      if (root_->format_version() < layout::kFormatVersionBpeTokenizer) {
        return Invalid(std::string(what) + ".model_type BPE needs format_version " +
                       std::to_string(layout::kFormatVersionBpeTokenizer) + " (the file says " +
                       std::to_string(root_->format_version()) + ")");
      }
      v->model_type = SpmModelType::kBpe;
      break;
    default:
      return Invalid(std::string(what) + ".model_type = " + std::to_string(int(m->model_type())) +
                     " is not a SentencePiece model type this runtime implements (1 unigram, 2 BPE)");
  }
  v->charsmap = nullptr;
  v->charsmap_size = 0;
  if (const fb::BufferRef* cm = m->precompiled_charsmap(); cm && cm->size() > 0) {
    MTLITE_RETURN_IF_ERROR(CheckRef(cm, charsmap_name, false, {Part::kTokenizer}, "bytes"));
    v->charsmap = base_ + cm->offset();
    v->charsmap_size = static_cast<size_t>(cm->size());
  }
  return Status::Ok();
}

Status LoaderBase::BindVocab(const fb::Vocab* vocab, const char* what, int vocab_size, VocabView* v) {
  const auto* ids = vocab->id_to_piece();
  if (!ids || ids->size() != static_cast<flatbuffers::uoffset_t>(vocab_size)) {
    return Invalid(std::string(what) + ".id_to_piece has " + std::to_string(ids ? ids->size() : 0) +
                   " entries, config says " + std::to_string(vocab_size));
  }
  MTLITE_RETURN_IF_ERROR(TakeViews(size_t(vocab_size), &v->id_to_piece));
  for (int i = 0; i < vocab_size; ++i) v->id_to_piece[size_t(i)] = View(ids->Get(flatbuffers::uoffset_t(i)));
  return Status::Ok();
}

Status LoaderBase::BindTokenizer() {
  const fb::Tokenizer* tok = root_->tokenizer();
  if (!tok) return Invalid("tokenizer table missing");
  if (!tok->source_spm()) return Invalid("tokenizer.source_spm missing");
  if (!tok->source_vocab()) return Invalid("tokenizer.source_vocab missing");
  const ModelConfig& c = md_->config;
  MTLITE_RETURN_IF_ERROR(BindVocab(tok->source_vocab(), "tokenizer.source_vocab", c.source_vocab_size, &md_->source_vocab));
  if (tok->target_vocab()) {
    MTLITE_RETURN_IF_ERROR(BindVocab(tok->target_vocab(), "tokenizer.target_vocab", c.target_vocab_size, &md_->target_vocab));
  } else if (c.target_vocab_size != c.source_vocab_size) {
    return Invalid("tokenizer.target_vocab is absent but target_vocab_size differs from source_vocab_size");
  } else {
    md_->target_vocab = md_->source_vocab;  // shares the table
  }
  MTLITE_RETURN_IF_ERROR(BindSpm(tok->source_spm(), "tokenizer.source_spm", "tokenizer.source_spm.scores",
                                 "tokenizer.source_spm.precompiled_charsmap", c.source_vocab_size, &md_->source_spm));
  if (tok->target_spm()) {
    MTLITE_RETURN_IF_ERROR(BindSpm(tok->target_spm(), "tokenizer.target_spm", "tokenizer.target_spm.scores",
                                   "tokenizer.target_spm.precompiled_charsmap", c.target_vocab_size, &md_->target_spm));
  } else if (tok->target_vocab()) {
    // The source spm's to_vocab maps into the source vocabulary, not the target one.
    return Invalid("tokenizer.target_spm is absent but a separate tokenizer.target_vocab is present");
  } else {
    md_->target_spm = md_->source_spm;  // shares the table
  }
  return Status::Ok();
}

}  // namespace detail
}  // namespace mtlite

// Runtime SentencePiece tokenizer (unigram and BPE models), reading the tokenizer tables stored
// in the model file (detail::SpmView + detail::VocabView). No protobuf, no .spm file, no trie
// built at run time. Gives the same ids as libsentencepiece + HF MarianTokenizer:
//   code, rest = remove_language_code(text)
//   ids = [vocab.get(p, vocab["<unk>"]) for p in code + sp.encode(rest, out_type=str)]
// and decodes like MarianTokenizer.decode(ids, skip_special_tokens=True).
//
// Language codes (OPUS-MT multilingual models, e.g. ">>deu<<"), as MarianTokenizer of
// transformers 4.2x handles them: the matches of its regex ">>.+<<" (greedy, not across '\n')
// are removed from the text before sentencepiece; a match at the very start of the text becomes
// the first token, looked up in the vocab (<unk> when absent). A code elsewhere is dropped
// without a token. Greedy means ">>fra<< >>deu<< x" yields the one token ">>fra<< >>deu<<"
// (<unk>) and "x", and ">>deu<< a<<b" yields ">>deu<< a<<" (<unk>) and "b", exactly as HF does.
//
// Encode and Decode never allocate on success and are safe to call concurrently on one
// SpmTokenizer (they only read the views); scratch memory comes from the caller.
//
// Not modelled (MarianTokenizer does these before/after sentencepiece): splitting the input on
// literal special-token text such as "</s>" (encoded here as ordinary characters), and decode's
// optional clean_up_tokenization_spaces (" ." -> ".").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model_data.h"
#include "mtlite/mtlite.hpp"

namespace mtlite {

class SpmTokenizer {
 public:
  // The views must outlive the tokenizer. Inconsistent views (out-of-range indices, unsorted
  // sorted_pieces, a broken charsmap, ...) are recorded in status(); Encode/Decode then fail
  // with it instead of reading out of bounds.
  SpmTokenizer(const detail::SpmView& spm, const detail::VocabView& vocab);

  const Status& status() const { return status_; }

  // Workspace bytes Encode needs for inputs of up to max_input_bytes UTF-8 bytes, assuming the
  // normalized text is at most kMaxNormalizedPerInputByte times longer than the input (always
  // true for ordinary text; some NFKC ligatures such as U+FDFA expand more, and an input whose
  // normalized form does not fit the workspace gets kOutOfRange, never an overflow). The same
  // for unigram and BPE models: BPE keeps its symbols, merge candidates and tournament tree in
  // the unigram path's 13 bytes per normalized byte. (A BPE model with UNUSED pieces also logs
  // the merges that form them, in the room the input leaves free; an input whose log does not
  // fit gets kOutOfRange. libsentencepiece's trainer writes no UNUSED pieces.)
  static constexpr size_t kMaxNormalizedPerInputByte = 4;
  static size_t WorkspaceBytes(size_t max_input_bytes);

  // text -> model vocab ids (via to_vocab), WITHOUT the final </s>; a leading language code
  // is the first id (see above).
  // kInvalidArgument: invalid UTF-8 (the message gives the byte offset).
  // kOutOfRange: workspace too small for this input, or more than `capacity` ids.
  Status Encode(std::string_view text, void* workspace, size_t workspace_bytes, int32_t* ids,
                int capacity, int* num_ids) const;

  // Model vocab ids -> text, like MarianTokenizer.decode(ids, skip_special_tokens=True):
  // drops </s>, <unk> and <pad>, joins the pieces as sentencepiece's DecodePieces does
  // (U+2581 -> space, control pieces invisible, byte pieces -> UTF-8) and strips surrounding
  // whitespace (Python str.strip()). The output is not NUL-terminated.
  // kInvalidArgument: an id outside [0, vocab size). kOutOfRange: more than `capacity` bytes.
  Status Decode(const int32_t* ids, int n, char* out, size_t capacity, size_t* out_len) const;

  // Normalized text exactly as sentencepiece's Normalizer produces it (for tests/diagnostics;
  // language codes are not removed); the view points into `workspace`.
  Status Normalize(std::string_view text, void* workspace, size_t workspace_bytes,
                   std::string_view* normalized) const;

  int vocab_size() const { return static_cast<int>(vocab_->id_to_piece.size()); }
  bool is_bpe() const { return spm_->model_type == detail::SpmModelType::kBpe; }

 private:
  struct Workspace;
  Status Validate();
  Status LayoutWorkspace(void* workspace, size_t workspace_bytes, Workspace* ws) const;
  Status NormalizeInto(std::string_view text, char* out, size_t capacity, size_t* len) const;
  // Unigram: Viterbi over the normalized text; BPE: the merges. Both write the spm pieces' model
  // ids (unknown runs merged or split into bytes as sentencepiece does) to ids[0, capacity) and
  // set *count to the number of ids of the whole text (which may exceed capacity: nothing past it
  // is written).
  void SegmentUnigram(const Workspace& ws, size_t n, int32_t* ids, int capacity, int* count) const;
  Status SegmentBpe(const Workspace& ws, size_t n, int32_t* ids, int capacity, int* count) const;
  // BPE: the spm index of the piece s[0, len) if a merge may form it (NORMAL, USER_DEFINED or
  // UNUSED), else -1.
  int MergePiece(const char* s, size_t len) const;
  // Longest charsmap rule matching a prefix of s: returns the matched length (0: none) and the
  // replacement text.
  size_t CharsMapPrefix(const uint8_t* s, size_t n, std::string_view* replacement) const;
  // Longest USER_DEFINED piece that is a prefix of s (0: none).
  size_t UserDefinedPrefix(const char* s, size_t n) const;
  // Calls f(piece_index, length) for every piece that is a prefix of s, shortest first.
  template <class F>
  void ForEachPrefixPiece(const char* s, size_t n, F&& f) const;
  int FindPiece(std::string_view piece) const;  // exact match, -1 if absent
  int FindVocab(std::string_view piece) const;  // linear scan, -1 if absent
  // Language codes: *code_id = vocab id of the code at the start of `text` (-1: none); *rest =
  // `text` without any code (copied into `scratch` when there was one; kOutOfRange if it does
  // not fit).
  Status StripLanguageCodes(std::string_view text, char* scratch, size_t scratch_bytes, int* code_id,
                            std::string_view* rest) const;
  int VocabForSurface(std::string_view surface) const;

  const detail::SpmView* spm_;
  const detail::VocabView* vocab_;
  Status status_;

  // Derived once at construction (no heap).
  float min_score_ = 0, max_score_ = 0;
  bool has_user_defined_ = false;
  bool has_unused_ = false;                 // BPE: UNUSED pieces are re-split after the merges
  size_t max_merge_piece_ = 0;              // BPE: bytes of the longest piece a merge may form
  int vocab_unk_ = 0;                       // vocab id of "<unk>" (HF unk fallback)
  int skip_ids_[3] = {-1, -1, -1};          // vocab ids of </s>, <unk>, <pad>
  int code_lo_ = 0, code_hi_ = 0;           // vocab ids [lo, hi) hold every ">>...<<" entry
  int32_t first_lo_[256] = {}, first_hi_[256] = {};  // sorted_pieces range per first byte
  int32_t byte_vocab_[256] = {};            // byte fallback: vocab id of "<0xXX>"
  const uint8_t* trie_ = nullptr;           // charsmap double array (little-endian u32 units)
  size_t trie_units_ = 0;
  const char* norm_strings_ = nullptr;      // charsmap replacement strings (NUL-terminated)
  size_t norm_strings_size_ = 0;
};

// The source and target tokenizers of a loaded model.
class Tokenizer {
 public:
  explicit Tokenizer(const detail::ModelData& data)
      : source_(data.source_spm, data.source_vocab), target_(data.target_spm, data.target_vocab) {}
  const SpmTokenizer& source() const { return source_; }
  const SpmTokenizer& target() const { return target_; }

 private:
  SpmTokenizer source_, target_;
};

}  // namespace mtlite

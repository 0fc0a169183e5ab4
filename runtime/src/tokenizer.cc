#include "tokenizer.h"

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>

#include "tokenizer_text.h"

namespace mtlite {
using namespace detail::tokenizer_text;  // NOLINT: the tokenizer's own helpers
using detail::PieceKind;

// Encode's workspace: per normalized byte position, the Viterbi best path ending there.
struct SpmTokenizer::Workspace {
  float* score = nullptr;     // [cap + 1] best path score ending at byte position
  int32_t* start = nullptr;   // [cap + 1] start of the last piece on that path (-1: none yet)
  int32_t* piece = nullptr;   // [cap + 1] that piece's spm index
  char* norm = nullptr;       // [cap] normalized text
  size_t cap = 0;
};

size_t SpmTokenizer::WorkspaceBytes(size_t max_input_bytes) {
  if (max_input_bytes > (SIZE_MAX / 2) / (kMaxNormalizedPerInputByte * kBytesPerPosition)) {
    return SIZE_MAX;
  }
  const size_t positions = kMaxNormalizedPerInputByte * max_input_bytes + kNormalizedSlack;
  return positions * kBytesPerPosition + kFixedBytes;
}

SpmTokenizer::SpmTokenizer(const detail::SpmView& spm, const detail::VocabView& vocab)
    : spm_(&spm), vocab_(&vocab) {
  status_ = Validate();
}

Status SpmTokenizer::Validate() {
  const detail::SpmView& spm = *spm_;
  const int n = spm.num_pieces;
  const int vocab_size = static_cast<int>(vocab_->id_to_piece.size());
  if (n <= 0 || spm.pieces.size() != static_cast<size_t>(n)) return Invalid("no pieces, or piece count mismatch");
  if (spm.model_type != detail::SpmModelType::kUnigram && spm.model_type != detail::SpmModelType::kBpe) {
    return Invalid("unknown model type");
  }
  if (!spm.scores || !spm.types || !spm.sorted_pieces || !spm.to_vocab) return Invalid("missing piece tables");
  if (vocab_size <= 0) return Invalid("empty vocab");

  min_score_ = FLT_MAX;  // as sentencepiece: over NORMAL pieces only
  max_score_ = FLT_MIN;
  int num_unknown = 0;
  for (int i = 0; i < n; ++i) {
    if (spm.pieces[i].empty()) return Invalid("empty piece " + std::to_string(i));
    if (spm.to_vocab[i] < 0 || spm.to_vocab[i] >= vocab_size) {
      return Invalid("to_vocab[" + std::to_string(i) + "] out of range");
    }
    const PieceKind t = spm.types[i];
    if (t == PieceKind::kNormal) {
      min_score_ = spm.scores[i] < min_score_ ? spm.scores[i] : min_score_;
      max_score_ = spm.scores[i] > max_score_ ? spm.scores[i] : max_score_;
    }
    if (t == PieceKind::kUserDefined) has_user_defined_ = true;
    if (t == PieceKind::kUnused) has_unused_ = true;
    if (t == PieceKind::kNormal || t == PieceKind::kUserDefined || t == PieceKind::kUnused) {
      max_merge_piece_ = std::max(max_merge_piece_, spm.pieces[i].size());
    }
    if (t == PieceKind::kUnknown) ++num_unknown;
  }
  if (spm.unk_id < 0 || spm.unk_id >= n || spm.types[spm.unk_id] != PieceKind::kUnknown || num_unknown != 1) {
    return Invalid("unk_id must name the one UNKNOWN piece");
  }

  // sorted_pieces: strictly increasing bytewise (so a permutation of distinct pieces).
  for (int k = 0; k < n; ++k) {
    const int32_t i = spm.sorted_pieces[k];
    if (i < 0 || i >= n) return Invalid("sorted_pieces entry out of range");
    if (k > 0 && !(spm.pieces[spm.sorted_pieces[k - 1]] < spm.pieces[i])) {
      return Invalid("sorted_pieces not strictly sorted at " + std::to_string(k));
    }
  }
  for (int k = 0; k < n; ++k) {
    const uint8_t c = static_cast<uint8_t>(spm.pieces[spm.sorted_pieces[k]][0]);
    if (first_hi_[c] == 0) first_lo_[c] = k;
    first_hi_[c] = k + 1;
  }

  if (const char* problem = CharsmapProblem(spm.charsmap, spm.charsmap_size)) return Invalid(problem);
  if (spm.charsmap_size > 0) {
    const size_t trie_bytes = LoadLE32(spm.charsmap);
    trie_ = spm.charsmap + 4;
    trie_units_ = trie_bytes / 4;
    norm_strings_ = reinterpret_cast<const char*>(trie_ + trie_bytes);
    norm_strings_size_ = spm.charsmap_size - 4 - trie_bytes;
  }

  const int vocab_unk = FindVocab("<unk>");
  vocab_unk_ = vocab_unk >= 0 ? vocab_unk : spm.to_vocab[spm.unk_id];
  skip_ids_[0] = FindVocab("</s>");
  skip_ids_[1] = vocab_unk;
  skip_ids_[2] = FindVocab("<pad>");
  code_lo_ = code_hi_ = 0;
  for (int i = 0; i < vocab_size; ++i) {
    if (!LooksLikeLanguageCode(vocab_->id_to_piece[size_t(i)])) continue;
    if (code_hi_ == 0) code_lo_ = i;
    code_hi_ = i + 1;
  }
  if (spm.byte_fallback) {
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof(name), "<0x%02X>", b);
      const int id = FindVocab(name);
      byte_vocab_[b] = id >= 0 ? id : vocab_unk_;
    }
  }
  return Status::Ok();
}

int SpmTokenizer::FindVocab(std::string_view piece) const {
  const auto& v = vocab_->id_to_piece;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].size() == piece.size() && v[i] == piece) return static_cast<int>(i);
  }
  return -1;
}

int SpmTokenizer::FindPiece(std::string_view piece) const {
  if (piece.empty()) return -1;  // no piece is empty (Validate)
  const uint8_t c0 = static_cast<uint8_t>(piece[0]);
  int lo = first_lo_[c0], hi = first_hi_[c0];  // the pieces starting with that byte
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    const int idx = spm_->sorted_pieces[mid];
    const int c = spm_->pieces[idx].compare(piece);
    if (c == 0) return idx;
    if (c < 0) lo = mid + 1; else hi = mid;
  }
  return -1;
}

Status SpmTokenizer::StripLanguageCodes(std::string_view text, char* scratch, size_t scratch_bytes, int* code_id,
                                        std::string_view* rest) const {
  *code_id = -1;
  *rest = text;
  // remove_language_code: re.sub removes every match (at most one per line); a match at the
  // very start of the text (re.match) becomes the code token, vocab.get(code, unk).
  size_t n = 0;
  bool found = false;
  auto copy = [&](size_t from, size_t to) {
    for (size_t k = from; k < to; ++k, ++n) {
      if (n < scratch_bytes) scratch[n] = text[k];
    }
  };
  for (size_t pos = 0; pos <= text.size();) {
    size_t line_end = text.find('\n', pos);
    if (line_end == std::string_view::npos) line_end = text.size();
    size_t begin = 0, end = 0;
    if (LanguageCodeInLine(text, pos, line_end, &begin, &end)) {
      if (begin == 0) {
        const std::string_view code = text.substr(0, end);
        *code_id = vocab_unk_;
        const auto& v = vocab_->id_to_piece;
        for (int i = code_lo_; i < code_hi_; ++i) {
          if (v[size_t(i)] == code) {
            *code_id = i;
            break;
          }
        }
      }
      found = true;
      copy(pos, begin);
      copy(end, line_end);
    } else {
      copy(pos, line_end);
    }
    if (line_end < text.size()) copy(line_end, line_end + 1);  // the '\n'
    pos = line_end + 1;
  }
  if (!found) return Status::Ok();
  if (n > scratch_bytes) {
    return Status(StatusCode::kOutOfRange, "tokenizer: a " + std::to_string(text.size()) +
                                               "-byte input with language codes exceeds the workspace; size it "
                                               "with SpmTokenizer::WorkspaceBytes");
  }
  *rest = std::string_view(scratch, n);
  return Status::Ok();
}

int SpmTokenizer::VocabForSurface(std::string_view surface) const {
  const int id = FindVocab(surface);
  return id >= 0 ? id : vocab_unk_;
}

template <class F>
void SpmTokenizer::ForEachPrefixPiece(const char* s, size_t n, F&& f) const {
  if (n == 0) return;
  const int32_t* sorted = spm_->sorted_pieces;
  const std::string_view* pieces = spm_->pieces.data();
  const uint8_t c0 = static_cast<uint8_t>(s[0]);
  int lo = first_lo_[c0], hi = first_hi_[c0];
  // Invariant at the top of the loop: pieces in [lo, hi) all start with the d bytes s[0, d).
  for (size_t d = 1; lo < hi; ++d) {
    // The piece equal to s[0..d) (if any) sorts first.
    if (pieces[sorted[lo]].size() == d) {
      f(sorted[lo], d);
      ++lo;
    }
    if (d >= n || lo >= hi) return;
    // The rest are longer than d: keep those whose byte d equals s[d].
    const uint8_t c = static_cast<uint8_t>(s[d]);
    auto byte_at = [&](int k) { return static_cast<uint8_t>(pieces[sorted[k]][d]); };
    if (byte_at(lo) == c && byte_at(hi - 1) == c) continue;  // all match (e.g. inside U+2581)
    int a = lo, b = hi;
    while (a < b) {  // first with byte >= c
      const int mid = a + (b - a) / 2;
      if (byte_at(mid) < c) a = mid + 1; else b = mid;
    }
    if (a == hi || byte_at(a) != c) return;
    lo = a;
    b = hi;
    while (a < b) {  // first with byte > c
      const int mid = a + (b - a) / 2;
      if (byte_at(mid) == c) a = mid + 1; else b = mid;
    }
    hi = a;
  }
}

size_t SpmTokenizer::UserDefinedPrefix(const char* s, size_t n) const {
  size_t best = 0;
  ForEachPrefixPiece(s, n, [&](int idx, size_t len) {
    if (spm_->types[idx] == PieceKind::kUserDefined) best = len;
  });
  return best;
}

// Darts-clone double array, common-prefix search keeping the longest match. Unit layout:
// bit 8 has_leaf; label = bits 0-7 plus bit 31 (set only on value units); offset =
// (unit >> 10) << ((unit & 0x200) >> 6); value unit = unit & 0x7fffffff.
size_t SpmTokenizer::CharsMapPrefix(const uint8_t* s, size_t n, std::string_view* replacement) const {
  auto unit = [this](size_t i) { return LoadLE32(trie_ + 4 * i); };
  auto offset = [](uint32_t u) -> size_t { return (u >> 10) << ((u & (1u << 9)) >> 6); };
  size_t best_len = 0, best_value = 0;
  size_t node = offset(unit(0));
  for (size_t i = 0; i < n; ++i) {
    node ^= s[i];
    if (node >= trie_units_) break;
    const uint32_t u = unit(node);
    if ((u & ((1u << 31) | 0xff)) != s[i]) break;
    node ^= offset(u);
    if (node >= trie_units_) break;
    if ((u >> 8) & 1) {
      const size_t value = unit(node) & 0x7fffffff;
      if (value < norm_strings_size_) {
        best_len = i + 1;
        best_value = value;
      }
    }
  }
  if (best_len > 0) *replacement = std::string_view(norm_strings_ + best_value);
  return best_len;
}

Status SpmTokenizer::NormalizeInto(std::string_view text, char* out, size_t capacity, size_t* len) const {
  const detail::SpmView& spm = *spm_;
  *len = 0;
  size_t n = 0;
  bool overflow = false;
  auto put = [&](const char* p, size_t k) {
    if (k > capacity - n) {
      overflow = true;
      return;
    }
    std::memcpy(out + n, p, k);
    n += k;
  };
  auto add_ws = [&]() {
    if (spm.escape_whitespaces) put(kSpaceSymbol, kSpaceSymbolLen); else put(" ", 1);
  };
  // sentencepiece's NormalizePrefix: user-defined pieces pass through unchanged, else the
  // longest charsmap rule, else one character copied.
  auto prefix = [&](const char* s, size_t rest, std::string_view* rep) -> size_t {
    if (has_user_defined_) {
      const size_t m = UserDefinedPrefix(s, rest);
      if (m > 0) {
        *rep = std::string_view(s, m);
        return m;
      }
    }
    if (trie_ != nullptr) {
      const size_t m = CharsMapPrefix(reinterpret_cast<const uint8_t*>(s), rest, rep);
      if (m > 0) return m;
    }
    size_t m = OneCharLen(static_cast<uint8_t>(s[0]));
    if (m > rest) m = rest;
    *rep = std::string_view(s, m);
    return m;
  };

  const char* s = text.data();
  size_t rest = text.size();
  std::string_view rep;
  if (spm.remove_extra_whitespaces) {  // drop leading spaces
    while (rest > 0) {
      const size_t m = prefix(s, rest, &rep);
      if (rep != " ") break;
      s += m;
      rest -= m;
    }
  }
  if (rest == 0) return Status::Ok();

  if (!spm.treat_whitespace_as_suffix && spm.add_dummy_prefix) add_ws();
  bool is_prev_space = spm.remove_extra_whitespaces;
  while (rest > 0 && !overflow) {
    const size_t m = prefix(s, rest, &rep);
    while (is_prev_space && !rep.empty() && rep[0] == ' ') rep.remove_prefix(1);
    if (!rep.empty()) {
      for (char c : rep) {
        if (spm.escape_whitespaces && c == ' ') put(kSpaceSymbol, kSpaceSymbolLen); else put(&c, 1);
      }
      is_prev_space = rep.back() == ' ';
    }
    s += m;
    rest -= m;
    if (!spm.remove_extra_whitespaces) is_prev_space = false;
  }
  if (!overflow && spm.remove_extra_whitespaces) {  // drop trailing spaces
    const std::string_view space = spm.escape_whitespaces ? std::string_view(kSpaceSymbol, kSpaceSymbolLen) : " ";
    while (n >= space.size() && std::string_view(out + n - space.size(), space.size()) == space) n -= space.size();
  }
  if (spm.treat_whitespace_as_suffix && spm.add_dummy_prefix) add_ws();
  if (overflow) {
    return Status(StatusCode::kOutOfRange,
                  "tokenizer: normalized text of a " + std::to_string(text.size()) +
                      "-byte input exceeds the workspace (room for " + std::to_string(capacity) +
                      " normalized bytes); size it with SpmTokenizer::WorkspaceBytes");
  }
  *len = n;
  return Status::Ok();
}

Status SpmTokenizer::LayoutWorkspace(void* workspace, size_t workspace_bytes, Workspace* ws) const {
  if (workspace == nullptr && workspace_bytes > 0) {
    return Status(StatusCode::kInvalidArgument, "tokenizer: null workspace");
  }
  uintptr_t p = reinterpret_cast<uintptr_t>(workspace);
  const size_t pad = (alignof(float) - p % alignof(float)) % alignof(float);
  if (workspace_bytes < kFixedBytes + kBytesPerPosition) {
    return Status(StatusCode::kOutOfRange, "tokenizer: workspace of " + std::to_string(workspace_bytes) +
                                               " bytes is too small; size it with SpmTokenizer::WorkspaceBytes");
  }
  const size_t cap = (workspace_bytes - kFixedBytes) / kBytesPerPosition;
  p += pad;
  ws->score = reinterpret_cast<float*>(p);
  ws->start = reinterpret_cast<int32_t*>(ws->score + cap + 1);
  ws->piece = ws->start + cap + 1;
  ws->norm = reinterpret_cast<char*>(ws->piece + cap + 1);
  ws->cap = cap;
  return Status::Ok();
}

Status SpmTokenizer::Normalize(std::string_view text, void* workspace, size_t workspace_bytes,
                               std::string_view* normalized) const {
  if (!status_.ok()) return status_;
  Status s = CheckUtf8(text);
  if (!s.ok()) return s;
  Workspace ws;
  s = LayoutWorkspace(workspace, workspace_bytes, &ws);
  if (!s.ok()) return s;
  size_t len = 0;
  s = NormalizeInto(text, ws.norm, ws.cap, &len);
  if (!s.ok()) return s;
  *normalized = std::string_view(ws.norm, len);
  return Status::Ok();
}

Status SpmTokenizer::Encode(std::string_view text, void* workspace, size_t workspace_bytes, int32_t* ids,
                            int capacity, int* num_ids) const {
  if (num_ids == nullptr || (ids == nullptr && capacity > 0) || capacity < 0) {
    return Status(StatusCode::kInvalidArgument, "tokenizer: bad output arguments");
  }
  *num_ids = 0;
  if (!status_.ok()) return status_;
  Status s = CheckUtf8(text);
  if (!s.ok()) return s;
  Workspace ws;
  s = LayoutWorkspace(workspace, workspace_bytes, &ws);
  if (!s.ok()) return s;
  // Language codes first, as MarianTokenizer does before sentencepiece. The text without them is
  // copied into the Viterbi arrays, which are free until normalization is done.
  int code_id = -1;
  std::string_view rest;
  s = StripLanguageCodes(text, reinterpret_cast<char*>(ws.score), size_t(ws.norm - reinterpret_cast<char*>(ws.score)),
                         &code_id, &rest);
  if (!s.ok()) return s;
  const int num_code = code_id >= 0 ? 1 : 0;
  size_t n = 0;
  s = NormalizeInto(rest, ws.norm, ws.cap, &n);
  if (!s.ok()) return s;
  if (n == 0) {
    if (num_code > capacity) return Status(StatusCode::kOutOfRange, "tokenizer: input has 1 token, more than the capacity of 0");
    if (num_code) ids[0] = code_id;
    *num_ids = num_code;
    return Status::Ok();
  }
  int count = 0;
  int32_t* const out = capacity > num_code ? ids + num_code : nullptr;  // the ids after a language code
  const int room = capacity > num_code ? capacity - num_code : 0;
  if (is_bpe()) {
    s = SegmentBpe(ws, n, out, room, &count);
    if (!s.ok()) return s;
  } else {
    SegmentUnigram(ws, n, out, room, &count);
  }
  if (count > capacity - num_code) {
    return Status(StatusCode::kOutOfRange, "tokenizer: input has " + std::to_string(count + num_code) +
                                               " tokens, more than the capacity of " + std::to_string(capacity));
  }
  if (num_code) ids[0] = code_id;
  *num_ids = count + num_code;
  return Status::Ok();
}

void SpmTokenizer::SegmentUnigram(const Workspace& ws, size_t n, int32_t* ids, int capacity, int* num) const {
  const char* norm = ws.norm;
  // Viterbi over byte positions, exactly as sentencepiece's unigram EncodeOptimized (including
  // its mixed float/double score arithmetic and tie-breaking).
  const detail::SpmView& spm = *spm_;
  const int unk = spm.unk_id;
  const float unk_score = min_score_ - kUnkPenalty;
  for (size_t i = 0; i <= n; ++i) {
    ws.score[i] = 0.0f;
    ws.start[i] = -1;
    ws.piece[i] = -1;
  }
  for (size_t pos = 0; pos < n;) {
    const float till_here = ws.score[pos];
    size_t mblen = OneCharLen(static_cast<uint8_t>(norm[pos]));
    if (mblen > n - pos) mblen = n - pos;
    bool has_single_node = false;
    ForEachPrefixPiece(norm + pos, n - pos, [&](int idx, size_t len) {
      const PieceKind t = spm.types[idx];
      if (t != PieceKind::kNormal && t != PieceKind::kUserDefined) return;  // unused / not in trie
      const double score = t == PieceKind::kUserDefined
                               ? static_cast<double>(static_cast<float>(len) * max_score_) - 0.1
                               : static_cast<double>(spm.scores[idx]);
      const double candidate = score + static_cast<double>(till_here);
      const size_t end = pos + len;
      if (ws.start[end] == -1 || candidate > static_cast<double>(ws.score[end])) {
        ws.score[end] = static_cast<float>(candidate);
        ws.start[end] = static_cast<int32_t>(pos);
        ws.piece[end] = idx;
      }
      if (len == mblen) has_single_node = true;
    });
    if (!has_single_node) {
      const size_t end = pos + mblen;
      const float candidate = unk_score + till_here;
      if (ws.start[end] == -1 || candidate > ws.score[end]) {
        ws.score[end] = candidate;
        ws.start[end] = static_cast<int32_t>(pos);
        ws.piece[end] = unk;
      }
    }
    pos += mblen;
  }

  // Backtrack twice: count, then fill from the end. Runs of unknown pieces merge into one
  // piece whose surface HF looks up in the vocab (byte fallback splits them into bytes).
  auto walk = [&](int32_t* out, int count) {
    int k = count;
    size_t end = n;
    while (end > 0) {
      const int idx = ws.piece[end];
      if (idx == unk && spm.byte_fallback) {
        const size_t begin = static_cast<size_t>(ws.start[end]);
        for (size_t b = end; b > begin; --b) {
          --k;
          if (out) out[k] = byte_vocab_[static_cast<uint8_t>(norm[b - 1])];
        }
        end = begin;
      } else if (idx == unk) {
        const size_t run_end = end;
        while (end > 0 && ws.piece[end] == unk) end = static_cast<size_t>(ws.start[end]);
        --k;
        if (out) out[k] = VocabForSurface(std::string_view(norm + end, run_end - end));
      } else {
        --k;
        if (out) out[k] = spm.to_vocab[idx];
        end = static_cast<size_t>(ws.start[end]);
      }
    }
    return count - k;
  };
  *num = walk(nullptr, 0);
  if (*num <= capacity) walk(ids, *num);
}

int SpmTokenizer::MergePiece(const char* s, size_t len) const {
  if (len > max_merge_piece_) return -1;
  const int idx = FindPiece(std::string_view(s, len));
  if (idx < 0) return -1;
  const PieceKind t = spm_->types[idx];
  return t == PieceKind::kNormal || t == PieceKind::kUserDefined || t == PieceKind::kUnused ? idx : -1;
}

// BPE as sentencepiece's bpe::Model encodes (no dropout). The normalized text starts as one
// symbol per character, a user-defined piece being one frozen symbol (never merged). Every
// adjacent pair of unfrozen symbols whose concatenation is a NORMAL, USER_DEFINED or UNUSED
// piece is a candidate; the candidate with the highest piece score merges (on equal scores the
// leftmost), and the merged symbol's pairs with its neighbours become candidates, until none is
// left. sentencepiece keeps the candidates in a priority queue and skips the stale ones when
// they come up; a pair of symbols is never pushed twice with the same lengths, so the order it
// merges in is exactly "best live candidate first", which is what this does with a tournament
// tree over the symbols instead (O(log n) per merge, no allocation).
//
// Workspace, per normalized byte position i (the unigram arrays, reused):
//   sym[i]   (ws.score)  a symbol [s, e): sym[s] = -(e - s); when e - s >= 2, sym[e - 1] = s
//                        (the start of the symbol that ends there, so the previous symbol of
//                        the one starting at i is found from sym[i - 1] in O(1))
//   pair[i]  (ws.start)  for a symbol start: the spm index of its merge with the next symbol,
//                        -1 none, kFrozen for a user-defined symbol
//   tree[k]  (ws.piece)  k in [1, n): the best candidate (a symbol start) below node k; node
//                        k >= n is the leaf of position k - n
// UNUSED pieces: sentencepiece re-splits a final symbol that is an UNUSED piece into the two
// symbols the last candidate forming that piece string joined (anywhere in the text), and those
// again. Those candidates are logged (piece, left length, time) in the positions past n and
// looked up, sorted, at the end.
Status SpmTokenizer::SegmentBpe(const Workspace& ws, size_t n_bytes, int32_t* ids, int capacity, int* num) const {
  if (n_bytes > size_t(INT32_MAX / 4)) {
    return Status(StatusCode::kOutOfRange, "tokenizer: a normalized text of " + std::to_string(n_bytes) +
                                               " bytes is too long for BPE (symbol positions are int32)");
  }
  const detail::SpmView& spm = *spm_;
  const char* norm = ws.norm;
  constexpr int32_t kFrozen = -2;
  const int32_t n = static_cast<int32_t>(n_bytes);
  int32_t* sym = reinterpret_cast<int32_t*>(ws.score);
  int32_t* pair = ws.start;
  int32_t* tree = ws.piece;
  const size_t log_cap = ws.cap - n_bytes;  // entries at [n + 1, cap] of each array
  int32_t* log_piece = sym + n + 1;
  int32_t* log_split = pair + n + 1;
  int32_t* log_time = tree + n + 1;
  size_t log_len = 0;
  bool log_overflow = false;

  auto len_of = [&](int32_t i) { return -sym[i]; };
  auto prev_of = [&](int32_t i) { return sym[i - 1] < 0 ? i - 1 : sym[i - 1]; };  // i > 0
  auto live = [&](int32_t i) { return pair[i] >= 0; };
  auto better = [&](int32_t a, int32_t b) {
    if (!live(a)) return b;
    if (!live(b)) return a;
    const float sa = spm.scores[pair[a]], sb = spm.scores[pair[b]];
    if (sa != sb) return sa > sb ? a : b;
    return a < b ? a : b;
  };
  auto node = [&](int32_t k) { return k >= n ? k - n : tree[k]; };
  // After position i's candidate changed: the nodes above it, up to the first whose winner is
  // another position and stays the same (the nodes above that one see no change).
  auto update = [&](int32_t i) {
    for (int32_t k = (i + n) >> 1; k >= 1; k >>= 1) {
      const int32_t w = better(node(2 * k), node(2 * k + 1));
      if (w == tree[k] && w != i) return;
      tree[k] = w;
    }
  };
  // The candidate of symbol l with the symbol r after it (r == n: none), as MaybeAddNewSymbolPair.
  auto set_pair = [&](int32_t l, int32_t r) {
    if (pair[l] == kFrozen) return;
    pair[l] = r >= n || pair[r] == kFrozen ? -1 : MergePiece(norm + l, size_t(len_of(l) + len_of(r)));
    if (has_unused_ && pair[l] >= 0 && spm.types[pair[l]] == PieceKind::kUnused) {
      if (log_len == log_cap) {
        log_overflow = true;
      } else {
        log_piece[log_len] = pair[l];
        log_split[log_len] = len_of(l);
        log_time[log_len] = static_cast<int32_t>(log_len);
        ++log_len;
      }
    }
  };

  // Characters (and user-defined pieces, frozen), as sentencepiece's PrefixMatcher cuts them.
  // Every leaf of the tree is a position: those inside a symbol are never candidates.
  std::fill(pair, pair + n, -1);
  for (int32_t i = 0; i < n;) {
    int32_t m = 0;
    if (has_user_defined_) m = static_cast<int32_t>(UserDefinedPrefix(norm + i, n_bytes - size_t(i)));
    const bool frozen = m > 0;
    if (!frozen) m = static_cast<int32_t>(std::min(OneCharLen(static_cast<uint8_t>(norm[i])), n_bytes - size_t(i)));
    sym[i] = -m;
    if (m >= 2) sym[i + m - 1] = i;
    pair[i] = frozen ? kFrozen : -1;
    i += m;
  }
  for (int32_t i = 0; i < n; i += len_of(i)) set_pair(i, i + len_of(i));
  for (int32_t k = n - 1; k >= 1; --k) tree[k] = better(node(2 * k), node(2 * k + 1));

  for (;;) {
    const int32_t l = node(1);
    if (!live(l)) break;
    const int32_t r = l + len_of(l);
    const int32_t merged = len_of(l) + len_of(r);
    pair[r] = -1;  // r's start now lies inside l
    update(r);
    sym[l] = -merged;
    sym[l + merged - 1] = l;
    if (l > 0) {
      const int32_t p = prev_of(l);
      set_pair(p, l);
      update(p);
    }
    set_pair(l, l + merged);
    update(l);
  }
  if (log_overflow) {
    return Status(StatusCode::kOutOfRange,
                  "tokenizer: the merges of a " + std::to_string(n_bytes) +
                      "-byte normalized text into this model's UNUSED pieces exceed the workspace; size it with "
                      "SpmTokenizer::WorkspaceBytes for a longer input");
  }

  // UNUSED re-splitting: the log sorted by (piece, time descending), so that the first entry of
  // a piece is its last candidate. Heap sort in place (no allocation, O(L log L)).
  auto log_less = [&](size_t a, size_t b) {
    if (log_piece[a] != log_piece[b]) return log_piece[a] < log_piece[b];
    return log_time[a] > log_time[b];
  };
  auto log_swap = [&](size_t a, size_t b) {
    std::swap(log_piece[a], log_piece[b]);
    std::swap(log_split[a], log_split[b]);
    std::swap(log_time[a], log_time[b]);
  };
  auto sift_down = [&](size_t root, size_t end) {
    for (size_t child; (child = 2 * root + 1) < end; root = child) {
      if (child + 1 < end && log_less(child, child + 1)) ++child;
      if (!log_less(root, child)) return;
      log_swap(root, child);
    }
  };
  for (size_t i = log_len / 2; i-- > 0;) sift_down(i, log_len);
  for (size_t end = log_len; end > 1; --end) {
    log_swap(0, end - 1);
    sift_down(0, end - 1);
  }
  auto split_of = [&](int32_t piece) -> int32_t {  // left length of its last candidate, 0: none
    size_t lo = 0, hi = log_len;
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (log_piece[mid] < piece) lo = mid + 1; else hi = mid;
    }
    return lo < log_len && log_piece[lo] == piece ? log_split[lo] : 0;
  };

  // The pieces, as sentencepiece's PopulateSentencePieceText turns them into ids: a run of
  // unknown pieces is one piece (its surface looked up in the vocab, as HF does), or with byte
  // fallback one byte piece per byte; a control piece ends a run.
  int count = 0;
  auto emit = [&](int32_t id) {
    if (count < capacity) ids[count] = id;
    ++count;
  };
  int32_t run_begin = 0, run_end = -1;  // the pending run of unknown pieces (run_end < 0: none)
  auto end_run = [&]() {
    if (run_end < 0) return;
    emit(VocabForSurface(std::string_view(norm + run_begin, size_t(run_end - run_begin))));
    run_end = -1;
  };
  auto piece_out = [&](int32_t begin, int32_t len, int idx) {  // idx: PieceToId (-1: not a piece)
    if (idx < 0 || idx == spm.unk_id) {
      if (spm.byte_fallback) {
        for (int32_t b = begin; b < begin + len; ++b) emit(byte_vocab_[static_cast<uint8_t>(norm[b])]);
      } else if (run_end == begin) {
        run_end = begin + len;
      } else {
        end_run();
        run_begin = begin;
        run_end = begin + len;
      }
      return;
    }
    end_run();
    emit(spm.to_vocab[idx]);
  };
  int32_t* stack = tree;  // tree[0, n]: free now; lengths of the parts still to resegment
  for (int32_t i = 0; i < n; i += len_of(i)) {
    const int idx = FindPiece(std::string_view(norm + i, size_t(len_of(i))));
    if (!has_unused_ || idx < 0 || spm.types[idx] != PieceKind::kUnused) {
      piece_out(i, len_of(i), idx);
      continue;
    }
    // Left part first, each part again if it is an UNUSED piece a logged candidate formed.
    int32_t depth = 0, at = i;
    stack[depth++] = len_of(i);
    while (depth > 0) {
      const int32_t len = stack[--depth];
      const int part = FindPiece(std::string_view(norm + at, size_t(len)));
      const int32_t split = part >= 0 && spm.types[part] == PieceKind::kUnused ? split_of(part) : 0;
      if (split > 0 && split < len) {  // depth stays <= the symbol's length: one entry per byte
        stack[depth++] = len - split;
        stack[depth++] = split;
        continue;
      }
      piece_out(at, len, part);
      at += len;
    }
  }
  end_run();
  *num = count;
  return Status::Ok();
}

Status SpmTokenizer::Decode(const int32_t* ids, int n, char* out, size_t capacity, size_t* out_len) const {
  if (out_len == nullptr || n < 0 || (ids == nullptr && n > 0) || (out == nullptr && capacity > 0)) {
    return Status(StatusCode::kInvalidArgument, "tokenizer: bad decode arguments");
  }
  *out_len = 0;
  if (!status_.ok()) return status_;
  const detail::SpmView& spm = *spm_;
  const int vocab_size = static_cast<int>(vocab_->id_to_piece.size());
  for (int i = 0; i < n; ++i) {
    if (ids[i] < 0 || ids[i] >= vocab_size) {
      return Status(StatusCode::kInvalidArgument, "tokenizer: id " + std::to_string(ids[i]) + " at position " +
                                                      std::to_string(i) + " is outside the vocab [0, " +
                                                      std::to_string(vocab_size) + ")");
    }
  }
  StripWriter w(out, capacity);
  ByteRun bytes(&w);
  bool ok = true;
  for (int i = 0; i < n && ok; ++i) {
    const int id = ids[i];
    if (id == skip_ids_[0] || id == skip_ids_[1] || id == skip_ids_[2]) continue;
    const std::string_view piece = vocab_->id_to_piece[id];
    const int idx = FindPiece(piece);
    const PieceKind t = idx >= 0 ? spm.types[idx] : PieceKind::kUnknown;  // absent -> PieceToId = unk
    if (t == PieceKind::kByte) {
      const int v = ParseBytePiece(piece);
      if (v >= 0) {
        ok = bytes.Add(static_cast<uint8_t>(v));
        continue;
      }
    }
    ok = bytes.Flush();
    if (!ok) break;
    if (t == PieceKind::kControl) continue;  // invisible
    if (t == PieceKind::kUnknown) {
      ok = w.Append(idx >= 0 ? std::string_view(kUnkSurface) : piece, false);
    } else {
      ok = w.Append(piece, true);
    }
  }
  if (ok) ok = bytes.Flush();
  if (!ok) {
    return Status(StatusCode::kOutOfRange,
                  "tokenizer: decoded text exceeds the output capacity of " + std::to_string(capacity) + " bytes");
  }
  *out_len = w.length();
  return Status::Ok();
}

}  // namespace mtlite

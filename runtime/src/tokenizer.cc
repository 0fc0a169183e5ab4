#include "tokenizer.h"

#include <cfloat>
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
  int lo = 0, hi = spm_->num_pieces;
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
  const int count = walk(nullptr, 0);
  if (count > capacity - num_code) {
    return Status(StatusCode::kOutOfRange, "tokenizer: input has " + std::to_string(count + num_code) +
                                               " tokens, more than the capacity of " + std::to_string(capacity));
  }
  if (num_code) ids[0] = code_id;
  walk(ids + num_code, count);
  *num_ids = count + num_code;
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

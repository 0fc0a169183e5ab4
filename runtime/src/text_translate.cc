// The text layer: Translator::TranslateText (see text_translate.h).
#include "text_translate.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "arena_plan.h"
#include "html_markup.h"
#include "sentence_split.h"
#include "tokenizer.h"
#include "translator_impl.h"

namespace mtlite {
namespace detail {

namespace {

Status Err(StatusCode c, std::string m) { return Status(c, std::move(m)); }

// The line-break and tab bytes a piece gets as spaces (one byte for one byte, so that offsets in
// the piece are offsets in the source).
bool IsSoftSpace(char c) { return c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == '\v'; }
bool IsAsciiSpace(char c) { return c == ' ' || IsSoftSpace(c); }

// A byte of a word: ASCII letters and digits, and every byte of a non-ASCII character.
bool IsWordByte(char c) {
  const unsigned char u = static_cast<unsigned char>(c);
  return u >= 0x80 || (u >= '0' && u <= '9') || ((u | 0x20) >= 'a' && (u | 0x20) <= 'z');
}

// Length of the UTF-8 sequence starting with byte c (1 for a stray or invalid byte).
size_t Utf8Length(unsigned char c) {
  if (c < 0xC0) return 1;
  if (c < 0xE0) return 2;
  if (c < 0xF0) return 3;
  if (c < 0xF8) return 4;
  return 1;
}

// The surface of a vocabulary piece as it appears in text: U+2581 as a space, "<0xXX>" as its
// byte; written to buf (at most cap bytes). Returns its length; *unknown for <unk>-like pieces.
size_t PieceSurface(std::string_view piece, char* buf, size_t cap, bool* unknown) {
  *unknown = false;
  if (piece.size() == 6 && piece[0] == '<' && piece[1] == '0' && piece[2] == 'x' && piece[5] == '>') {
    auto hex = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; };
    const int hi = hex(piece[3]), lo = hex(piece[4]);
    if (hi >= 0 && lo >= 0 && cap > 0) {
      buf[0] = char(hi * 16 + lo);
      return 1;
    }
  }
  if (piece == "<unk>" || piece == "</s>" || piece == "<pad>" || piece == "<s>") {
    *unknown = true;
    return 0;
  }
  size_t n = 0;
  for (size_t i = 0; i < piece.size() && n < cap;) {
    if (i + 3 <= piece.size() && piece.compare(i, 3, "\xE2\x96\x81") == 0) {
      buf[n++] = ' ';
      i += 3;
    } else {
      buf[n++] = piece[i++];
    }
  }
  return n;
}

}  // namespace

void SourceTokenSpans(const VocabView& vocab, std::string_view text, const int32_t* ids, int n,
                      text::ByteSpan* spans) {
  size_t pos = 0;
  char buf[256];
  for (int k = 0; k < n; ++k) {
    while (pos < text.size()) {
      const size_t w = ::mtlite::text::WhitespaceLength(text, pos);
      if (!w) break;
      pos += w;
    }
    bool unknown = true;
    size_t len = 0;
    if (ids[k] >= 0 && size_t(ids[k]) < vocab.id_to_piece.size())
      len = PieceSurface(vocab.id_to_piece[size_t(ids[k])], buf, sizeof buf, &unknown);
    size_t lead = 0;
    while (lead < len && buf[lead] == ' ') ++lead;
    std::string_view surface(buf + lead, len - lead);
    size_t end = pos;
    if (!unknown && !surface.empty() && text.substr(pos, surface.size()) == surface) {
      end = pos + surface.size();
    } else if (pos < text.size()) {  // not found as it is: the next code point
      end = std::min(text.size(), pos + Utf8Length(static_cast<unsigned char>(text[pos])));
    }
    spans[k] = {uint32_t(pos), uint32_t(end)};
    pos = end;
  }
}

TextCapacities TextCapacitiesFor(const TranslatorLimits& lim) {
  TextCapacities c;
  if (lim.max_text_bytes <= 0) return c;
  const size_t n = size_t(lim.max_text_bytes);
  c.text_bytes = n;
  c.sentences = n / 8 + 16;  // more is kOutOfRange (lines of a few bytes each, in sentence mode)
  c.pieces = c.sentences;    // pieces sorted by length at a time: a call with more runs in parts
  c.output_bytes = 4 * n + 4096;
  c.piece_bytes = size_t(std::max(lim.max_input_bytes, 1));
  c.batch = size_t(std::max(lim.max_batch, 1));
  c.source_tokens = size_t(std::max(lim.max_source_tokens, 1));
  c.target_tokens = size_t(std::max(lim.max_target_tokens, 1));
  c.words = n / 2 + 256;
  // a pivot's second model reads the first's output: its tokens (a byte or more each, plus </s>)
  c.pivot_source_tokens = size_t(std::max(lim.max_target_tokens, 1)) * 64 + 17;
  if (lim.alignments) {
    c.markup_items = n * 2 / 3 + 16;  // "<b>" is 3 bytes; an unclosed one gets a synthetic close
    c.segments = c.markup_items + 1;
    c.tokens = n + 256;
    c.render_scratch = text::RenderScratchBytes(c.markup_items, c.tokens);
  }
  return c;
}

void TextLayer::Bind(const ArenaPlan& plan, uint8_t* a, const TranslatorLimits& lim) {
  cap_ = TextCapacitiesFor(lim);
  max_input_bytes_ = size_t(lim.max_input_bytes);
  batch_ = std::max(lim.max_batch, 1);
  spans_ = plan.Get<text::ByteSpan>(a, kBufTextSpans);
  sentences_ = plan.Get<TextSentenceView>(a, kBufTextSentences);
  output_ = plan.Get<char>(a, kBufTextOutput);
  piece_out_ = plan.Get<char>(a, kBufTextPieceOutput);
  piece_text_ = plan.Get<char>(a, kBufTextPieces);
  pieces_ = plan.Get<TextPiece>(a, kBufTextAllPieces);
  order_ = plan.Get<uint32_t>(a, kBufTextOrder);
  batch_views_ = plan.Get<std::string_view>(a, kBufTextBatchViews);
  ids_ = plan.Get<int32_t>(a, kBufTextSourceIds);
  token_spans_ = plan.Get<text::ByteSpan>(a, kBufTextTokenSpans);
  decode_scratch_ = plan.Get<char>(a, kBufTextDecode);
  words_ = plan.Get<TextWordView>(a, kBufTextWords);
  decode_cap_ = plan.buffer(kBufTextDecode).bytes;
  plain_ = plan.Get<char>(a, kBufTextPlain);
  html_out_ = plan.Get<char>(a, kBufTextHtml);
  items_ = plan.Get<text::MarkupItem>(a, kBufTextMarkup);
  segments_ = plan.Get<text::ByteSpan>(a, kBufTextSegments);
  tokens_ = plan.Get<text::AlignedToken>(a, kBufTextTokens);
  pairs_ = plan.Get<text::SentencePair>(a, kBufTextPairs);
  render_scratch_ = plan.Get<uint8_t>(a, kBufTextRenderScratch);
}

Status TextLayer::Append(std::string_view bytes) {
  if (bytes.size() > cap_.output_bytes - out_len_)
    return Err(StatusCode::kOutOfRange, "the translated text exceeds the text layer's output buffer of " +
                                            std::to_string(cap_.output_bytes) +
                                            " bytes (4 x TranslatorLimits.max_text_bytes + 4096)");
  if (!bytes.empty()) std::memcpy(output_ + out_len_, bytes.data(), bytes.size());
  out_len_ += bytes.size();
  return Status::Ok();
}

std::string_view TextLayer::View(std::string_view src, const TextPiece& piece, size_t slot) {
  std::string_view v = src.substr(piece.span.begin, piece.span.size());
  bool soft = false;
  for (char c : v) soft = soft || IsSoftSpace(c);
  if (!soft) return v;
  // line breaks and tabs as spaces, byte for byte (v fits: pieces are <= max_input_bytes)
  char* dst = piece_text_ + slot * cap_.piece_bytes;
  for (size_t i = 0; i < v.size(); ++i) dst[i] = IsSoftSpace(v[i]) ? ' ' : v[i];
  return std::string_view(dst, v.size());
}

Status TextLayer::AddPiece(TranslatorImpl* tr, std::string_view src, const TextPiece& piece) {
  if (num_pieces_ == cap_.pieces)  // full: translate and place what is there first (the pieces of
    if (Status s = ProcessPieces(tr, src); !s.ok()) return s;  // a sentence's end are always kept)
  pieces_[num_pieces_++] = piece;
  return Status::Ok();
}

// Cuts sentence `index` into pieces the translator takes (at most max_input_bytes bytes, at most
// max_tokens source tokens) and adds them, with their token counts (the batches' sort key).
Status TextLayer::CutSentence(TranslatorImpl* tr, std::string_view src, uint32_t index, int max_tokens) {
  const text::ByteSpan sent = spans_[index];
  const SpmTokenizer& tok = tr->source_tokenizer();
  const VocabView& vocab = tr->model_data().source_vocab;
  auto trim = [&](size_t* lo, size_t* hi) {
    while (*lo < *hi && IsAsciiSpace(src[*lo])) ++*lo;
    while (*hi > *lo && IsAsciiSpace(src[*hi - 1])) --*hi;
  };
  // A cut point in (lo, hi]: after the last whitespace byte at or before hi, else the last code
  // point boundary at or before hi (never lo itself).
  auto cut_at = [&](size_t lo, size_t hi) {
    for (size_t k = hi; k > lo + 1; --k)
      if (IsAsciiSpace(src[k - 1])) return k;
    size_t k = hi;
    while (k > lo + 1 && k < src.size() && (static_cast<unsigned char>(src[k]) & 0xC0) == 0x80) --k;
    return k;
  };
  bool added = false;
  auto add = [&](size_t b, size_t e, int tokens) -> Status {
    TextPiece p;
    p.sentence = index;
    p.span = {uint32_t(b), uint32_t(e)};
    p.tokens = uint32_t(std::max(tokens, 0));
    p.first = !added;
    added = true;
    return AddPiece(tr, src, p);
  };
  size_t b = sent.begin, end = sent.end;
  while (b < sent.end) {
    size_t e = end;
    if (e - b > max_input_bytes_) e = cut_at(b, b + max_input_bytes_);
    size_t lo = b, hi = e;
    trim(&lo, &hi);
    if (lo >= hi) {
      b = e;
      end = sent.end;
      continue;
    }
    TextPiece probe;
    probe.span = {uint32_t(lo), uint32_t(hi)};
    const std::string_view view = View(src, probe, 0);
    int n = 0;
    Status s = tok.Encode(view, tr->tokenizer_workspace(), tr->tokenizer_workspace_bytes(), ids_,
                          int(cap_.source_tokens), &n);
    if (s.code() == StatusCode::kOutOfRange && hi - lo > 1) {  // too many tokens to count: halve it
      size_t mid = cut_at(lo, lo + (hi - lo) / 2);
      if (mid >= e) mid = lo + (hi - lo) / 2;
      end = std::max(mid, lo + 1);
      continue;
    }
    if (!s.ok() || n <= max_tokens) {  // one piece (an error is the translator's to report)
      if (Status a = add(lo, hi, s.ok() ? n : 0); !a.ok()) return a;
    } else {
      // More than max_tokens: pieces of at most max_tokens tokens, cut before a token that starts
      // a word where there is one in the second half of the window.
      SourceTokenSpans(vocab, view, ids_, n, token_spans_);
      int k = 0;
      while (k < n) {
        int stop = std::min(n, k + max_tokens);
        if (stop < n) {
          for (int c = stop; c > k + max_tokens / 2; --c) {
            const uint32_t at = token_spans_[c].begin;
            if (at > 0 && IsAsciiSpace(view[at - 1])) {
              stop = c;
              break;
            }
          }
        }
        size_t pb = k == 0 ? lo : lo + token_spans_[k].begin;
        size_t pe = stop == n ? hi : lo + token_spans_[stop].begin;
        trim(&pb, &pe);
        const int count = stop - k;
        k = stop;
        if (pb < pe)
          if (Status a = add(pb, pe, count); !a.ok()) return a;
      }
    }
    b = e;
    end = sent.end;
  }
  if (!added) {  // nothing to translate (the splitter gives no such span): keep it as it is
    if (Status a = add(sent.begin, sent.end, 0); !a.ok()) return a;
  }
  pieces_[num_pieces_ - 1].last = true;  // the sentence's last piece (AddPiece keeps it here)
  return Status::Ok();
}

// Spans of a hypothesis' tokens in its text: the decoded text grows token by token (Decode is what
// made the text); a word's token starts at the word, not at the space before it.
void TextLayer::TargetSpans(const SpmTokenizer& tok, const HypothesisView& hyp, text::ByteSpan* spans) {
  size_t prev = 0;
  for (int t = 0; t < hyp.num_ids; ++t) {
    size_t len = prev;
    if (!tok.Decode(hyp.ids, t + 1, decode_scratch_, decode_cap_, &len).ok()) len = prev;
    len = std::min(std::max(len, prev), hyp.text.size());
    size_t b = prev;
    while (b < len && hyp.text[b] == ' ') ++b;
    spans[t] = {uint32_t(b), uint32_t(len)};
    prev = len;
  }
}

namespace {

// The source token (< n) a target token's alignment row puts most weight on; -1 when n is 0.
int Argmax(const float* row, int n) {
  int best = -1;
  for (int j = 0; j < n; ++j)
    if (best < 0 || row[j] > row[best]) best = j;
  return best;
}

}  // namespace

// The piece's target tokens with the source token each is aligned to (hard alignment: the argmax
// of its cross-attention row). Through a pivot (hyp1: the first model's translation, the second's
// input): target token -> pivot token of the second model's source -> the first model's target
// token that overlaps it in the pivot text -> its source token.
Status TextLayer::AlignPiece(TranslatorImpl* tr, std::string_view view, TextPiece* piece, const HypothesisView& hyp,
                             const HypothesisView* hyp1) {
  piece->first_token = uint32_t(num_tokens_);
  piece->num_tokens = 0;
  if (!hyp.alignment || hyp.num_ids == 0) return Status::Ok();
  const HypothesisView& first = hyp1 ? *hyp1 : hyp;
  if (!first.alignment) return Status::Ok();
  int ns = 0;
  Status s = tr->source_tokenizer().Encode(view, tr->tokenizer_workspace(), tr->tokenizer_workspace_bytes(), ids_,
                                           int(cap_.source_tokens), &ns);
  if (!s.ok() || ns + 1 > first.source_tokens) return Status::Ok();  // no alignment: the tags stay in the gaps
  const size_t S = cap_.source_tokens, T = cap_.target_tokens;
  text::ByteSpan* src_spans = token_spans_;             // [S] the piece's source tokens
  text::ByteSpan* tgt_spans = token_spans_ + S;         // [T] the (final) target tokens
  text::ByteSpan* piv_tgt = token_spans_ + S + T;       // [T] the first model's target tokens (pivot)
  text::ByteSpan* piv_src = token_spans_ + S + 2 * T;   // [S2] the second model's source tokens (pivot)
  SourceTokenSpans(tr->model_data().source_vocab, view, ids_, ns, src_spans);
  int np = 0;
  if (hyp1) {
    TranslatorImpl* second = tr->next;
    TargetSpans(tr->target_tokenizer(), *hyp1, piv_tgt);
    const size_t cap2 = std::min(cap_.pivot_source_tokens, size_t(second->dims().S));
    if (!second->source_tokenizer()
             .Encode(hyp1->text, second->tokenizer_workspace(), second->tokenizer_workspace_bytes(), ids_, int(cap2), &np)
             .ok() ||
        np + 1 > hyp.source_tokens)
      return Status::Ok();
    SourceTokenSpans(second->model_data().source_vocab, hyp1->text, ids_, np, piv_src);
    TargetSpans(second->target_tokenizer(), hyp, tgt_spans);
  } else {
    TargetSpans(tr->target_tokenizer(), hyp, tgt_spans);
  }
  // Markup goes around whole words: a token inside a word (a subword piece) stands for the word,
  // so that a tag never lands between two letters ("Welche<b>r</b>" -> "<b>Welcher</b>").
  for (int t = 0; t < hyp.num_ids; ++t) {
    const std::string_view w = hyp.text;
    uint32_t b = tgt_spans[t].begin, e = tgt_spans[t].end;
    if (b == e) continue;
    while (b > 0 && IsWordByte(w[b - 1]) && IsWordByte(w[b])) --b;
    while (e < w.size() && IsWordByte(w[e - 1]) && IsWordByte(w[e])) ++e;
    tgt_spans[t] = {b, e};
  }
  if (num_tokens_ + size_t(hyp.num_ids) > cap_.tokens)
    return Err(StatusCode::kOutOfRange, "html: the translation has more than " + std::to_string(cap_.tokens) +
                                            " target tokens (the capacity for TranslatorLimits.max_text_bytes " +
                                            std::to_string(cap_.text_bytes) + ")");
  for (int t = 0; t < hyp.num_ids; ++t) {
    int best = -1;
    if (!hyp1) {
      best = Argmax(hyp.alignment + size_t(t) * size_t(hyp.source_tokens), ns);
    } else {
      const int p = Argmax(hyp.alignment + size_t(t) * size_t(hyp.source_tokens), np);
      int u = -1;  // the first model's target token overlapping pivot token p (else the nearest before it)
      for (int k = 0; p >= 0 && k < hyp1->num_ids; ++k) {
        if (piv_tgt[k].begin < piv_src[p].end && piv_tgt[k].end > piv_src[p].begin) {
          u = k;
          break;
        }
        if (piv_tgt[k].begin <= piv_src[p].begin) u = k;
      }
      if (u >= 0) best = Argmax(hyp1->alignment + size_t(u) * size_t(hyp1->source_tokens), ns);
    }
    text::AlignedToken& a = tokens_[num_tokens_++];
    a.target = tgt_spans[t];  // relative to the piece's translation until it is placed
    if (best >= 0) {
      a.source = {piece->span.begin + src_spans[best].begin, piece->span.begin + src_spans[best].end};
    } else {
      a.source = {piece->span.begin, piece->span.begin};
    }
  }
  piece->num_tokens = uint32_t(hyp.num_ids);
  return Status::Ok();
}

// The words of a piece's translation (tokens up to the next one that starts after a space) and
// the mean log-probability of their tokens (Bergamot's simple quality estimator), relative to the
// piece's translation until it is placed.
void TextLayer::ScoreWords(TranslatorImpl* tr, TextPiece* piece, const HypothesisView& hyp) {
  piece->first_word = uint32_t(num_words_);
  piece->num_words = 0;
  if (!hyp.token_scores || hyp.num_ids == 0) return;
  text::ByteSpan* spans = token_spans_ + cap_.source_tokens;
  TargetSpans(tr->chain_end().target_tokenizer(), hyp, spans);
  int t = 0;
  while (t < hyp.num_ids) {
    while (t < hyp.num_ids && spans[t].empty()) ++t;  // tokens without text (</s>, control) start nothing
    if (t >= hyp.num_ids) break;
    const uint32_t begin = spans[t].begin;
    uint32_t end = spans[t].end;
    float sum = hyp.token_scores[t];
    int n = 1;
    for (++t; t < hyp.num_ids; ++t) {
      if (!spans[t].empty() && spans[t].begin > end) break;  // a space before it: a new word
      end = std::max(end, spans[t].end);
      sum += hyp.token_scores[t];
      ++n;
    }
    if (num_words_ >= cap_.words) {
      words_truncated_ = true;
      return;
    }
    words_[num_words_++] = {begin, end, sum / float(n)};
    ++piece->num_words;
  }
}

void TextLayer::RecordError(const TextPiece& p, const Status& s) {
  if (first_error_len_ && p.sentence >= first_error_sentence_) return;
  std::string msg = s.message();
  if (msg.compare(0, 12, "sentence 0: ") == 0) msg.erase(0, 12);
  msg = "sentence " + std::to_string(p.sentence + 1) + ": " + StatusCodeName(s.code()) + ": " + msg;
  first_error_len_ = std::min(msg.size(), sizeof first_error_ - 1);
  std::memcpy(first_error_, msg.data(), first_error_len_);
  first_error_sentence_ = p.sentence;
}

// Translates the pieces added so far: in batches of max_batch pieces of similar length (sorted by
// source tokens, ties by position; with markup in text order, which keeps the aligned tokens in
// order), each translation kept in piece_out_; then puts them in place, in text order.
Status TextLayer::ProcessPieces(TranslatorImpl* tr, std::string_view src) {
  const size_t np = num_pieces_;
  if (np == 0) return Status::Ok();
  for (size_t i = 0; i < np; ++i) order_[i] = uint32_t(i);
  if (!html_)  // std::sort: in place, no allocation (std::stable_sort may allocate)
    std::sort(order_, order_ + np, [this](uint32_t x, uint32_t y) {
      return pieces_[x].tokens != pieces_[y].tokens ? pieces_[x].tokens < pieces_[y].tokens : x < y;
    });
  size_t piece_out_len = 0;
  for (size_t k0 = 0; k0 < np; k0 += size_t(batch_)) {
    const size_t n = std::min(np - k0, size_t(batch_));
    for (size_t j = 0; j < n; ++j) batch_views_[j] = View(src, pieces_[order_[k0 + j]], j);
    const SentenceResultView *res = nullptr, *res1 = nullptr;
    const Status s = tr->RunChain(batch_views_, nullptr, nullptr, n, opt_, &res, &res1);
    for (size_t j = 0; j < n; ++j) {
      TextPiece& p = pieces_[order_[k0 + j]];
      // A failed batch: every piece again alone, so that one bad piece costs only itself.
      Status sj = s;
      const SentenceResultView* r = s.ok() ? &res[j] : nullptr;
      const SentenceResultView* r1 = s.ok() && res1 ? &res1[j] : nullptr;
      if (!s.ok() && n > 1) {
        sj = tr->RunChain(&batch_views_[j], nullptr, nullptr, 1, opt_, &res, &res1);
        r = sj.ok() ? &res[0] : nullptr;
        r1 = sj.ok() && res1 ? &res1[0] : nullptr;
      }
      p.first_token = uint32_t(num_tokens_);
      p.num_tokens = 0;
      p.first_word = uint32_t(num_words_);
      p.num_words = 0;
      if (!sj.ok() || !r || r->num_hypotheses < 1) {
        p.status = sj.ok() ? StatusCode::kInternal : sj.code();
        RecordError(p, sj.ok() ? Status(StatusCode::kInternal, "no hypothesis") : sj);
        continue;
      }
      const HypothesisView& h = r->hypotheses[0];
      if (h.text.size() > cap_.output_bytes - piece_out_len)
        return Err(StatusCode::kOutOfRange, "the translated text exceeds the text layer's output buffer of " +
                                                std::to_string(cap_.output_bytes) +
                                                " bytes (4 x TranslatorLimits.max_text_bytes + 4096)");
      std::memcpy(piece_out_ + piece_out_len, h.text.data(), h.text.size());
      p.out_begin = uint32_t(piece_out_len);
      p.out_len = uint32_t(h.text.size());
      piece_out_len += h.text.size();
      p.status = StatusCode::kOk;
      p.score = h.score;
      if (html_)
        if (Status a = AlignPiece(tr, batch_views_[j], &p, h, r1 ? &r1->hypotheses[0] : nullptr); !a.ok())
          return a;
      if (quality_) ScoreWords(tr, &p, h);
    }
  }
  // In text order: the gap before a sentence, its pieces (the source's whitespace between two
  // pieces, or a space where a word was cut), the gap after the last sentence comes at the end.
  for (size_t i = 0; i < np; ++i) {
    TextPiece& p = pieces_[i];
    TextSentenceView& sv = sentences_[p.sentence];
    if (p.first) {
      if (Status a = Append(src.substr(gap_from_, sv.source_begin - gap_from_)); !a.ok()) return a;
      sv.target_begin = uint32_t(out_len_);
      sv.pieces = 0;
      if (html_) pairs_[p.sentence].first_token = p.first_token;
    } else {
      std::string_view between = src.substr(piece_end_, p.span.begin - piece_end_);
      if (between.empty() && out_len_ > sv.target_begin) between = " ";
      if (Status a = Append(between); !a.ok()) return a;
    }
    ++sv.pieces;
    const uint32_t target_begin = uint32_t(out_len_);
    if (p.status == StatusCode::kOk) {
      if (Status a = Append(std::string_view(piece_out_ + p.out_begin, p.out_len)); !a.ok()) return a;
      sv.score += p.score;
      for (uint32_t t = p.first_token; t < p.first_token + p.num_tokens; ++t) {
        tokens_[t].target.begin += target_begin;
        tokens_[t].target.end += target_begin;
      }
      for (uint32_t w = p.first_word; w < p.first_word + p.num_words; ++w) {
        words_[w].target_begin += target_begin;
        words_[w].target_end += target_begin;
      }
      if (sv.num_words == 0) sv.first_word = p.first_word;
      sv.num_words += p.num_words;
    } else {  // kept as it was, and reported
      if (Status a = Append(src.substr(p.span.begin, p.span.size())); !a.ok()) return a;
      if (sv.status == StatusCode::kOk) {
        sv.status = p.status;
        ++failed_;
      }
    }
    piece_end_ = p.span.end;
    if (p.last) EndSentence(src, p.sentence, p.first_token + p.num_tokens);
  }
  num_pieces_ = 0;
  return Status::Ok();
}

void TextLayer::EndSentence(std::string_view src, uint32_t index, uint32_t tokens_end) {
  TextSentenceView& sv = sentences_[index];
  sv.target_end = uint32_t(out_len_);
  if (sv.num_words) {
    float sum = 0;
    for (uint32_t w = sv.first_word; w < sv.first_word + sv.num_words; ++w) sum += words_[w].score;
    sv.quality = sum / float(sv.num_words);
  }
  gap_from_ = sv.source_end;
  if (html_) pairs_[index].num_tokens = tokens_end - pairs_[index].first_token;
  if (on_sentence_) {
    TextSentenceEvent e;
    e.index = index;
    e.sentence = &sv;
    e.source = src.substr(sv.source_begin, sv.source_end - sv.source_begin);
    e.target = std::string_view(output_ + sv.target_begin, sv.target_end - sv.target_begin);
    on_sentence_(e, on_sentence_user_);
  }
}

Status TextLayer::Run(TranslatorImpl* tr, std::string_view text, const TextOptions& to,
                      const TranslateOptions& options, const TextResultView** out, TextSentenceCallback on_sentence,
                      void* on_sentence_user) {
  if (!out) return Err(StatusCode::kInvalidArgument, "null result pointer");
  *out = nullptr;
  if (cap_.text_bytes == 0)
    return Err(StatusCode::kUnsupported, "this translator has no text layer (TranslatorLimits.max_text_bytes is 0)");
  if (text.size() > cap_.text_bytes)
    return Err(StatusCode::kOutOfRange, "text of " + std::to_string(text.size()) + " bytes exceeds max_text_bytes " +
                                            std::to_string(cap_.text_bytes));
  if (int(to.split) < 0 || int(to.split) > 3) return Err(StatusCode::kInvalidArgument, "unknown split mode");
  if (to.max_length_break < 1)
    return Err(StatusCode::kInvalidArgument, "max_length_break must be >= 1, got " + std::to_string(to.max_length_break));
  if (to.html && !cap_.markup_items)
    return Err(StatusCode::kInvalidArgument,
               "html needs a translator created with alignments (TranslatorLimits.alignments)");
  opt_ = options;
  opt_.n_best = 1;
  opt_.return_alignments = to.html;
  if (to.quality) opt_.return_scores = true;
  html_ = to.html;
  quality_ = to.quality;
  words_truncated_ = false;
  num_words_ = 0;
  on_sentence_ = on_sentence;
  on_sentence_user_ = on_sentence_user;
  out_len_ = num_tokens_ = gap_from_ = piece_end_ = num_pieces_ = 0;
  failed_ = 0;
  first_error_len_ = 0;
  first_error_sentence_ = 0;
  result_ = TextResultView();

  std::string_view src = text;
  size_t num_items = 0, num_segments = 1;
  if (to.html) {
    size_t plain_len = 0, dropped = 0;
    if (Status s = text::ParseMarkup(text, plain_, cap_.text_bytes, &plain_len, items_, cap_.markup_items, &num_items,
                                     &dropped);
        !s.ok())
      return Err(s.code(), "html: " + s.message());
    src = std::string_view(plain_, plain_len);
    if (Status s = text::MarkupSegments(items_, num_items, plain_len, segments_, cap_.segments, &num_segments);
        !s.ok())
      return Err(s.code(), "html: " + s.message());
  }
  // Sentences of every segment (the whole text, or the runs between HTML block items).
  const text::SplitterLanguage& lang =
      text::SplitterLanguageFor(to.language.empty() ? std::string_view(tr->model_data().config.source_lang)
                                                    : to.language);
  size_t ns = 0;
  for (size_t g = 0; g < num_segments; ++g) {
    const text::ByteSpan seg = to.html ? segments_[g] : text::ByteSpan{0, uint32_t(src.size())};
    size_t count = 0;
    Status s = text::SplitSentences(src.substr(seg.begin, seg.size()), to.split, lang, spans_ + ns,
                                    cap_.sentences - ns, &count);
    if (!s.ok()) {
      if (s.code() == StatusCode::kOutOfRange)
        return Err(StatusCode::kOutOfRange, "the text has more than " + std::to_string(cap_.sentences) +
                                                " sentences (the capacity for TranslatorLimits.max_text_bytes " +
                                                std::to_string(cap_.text_bytes) + ")");
      return s;
    }
    for (size_t i = 0; i < count; ++i) {
      spans_[ns + i].begin += seg.begin;
      spans_[ns + i].end += seg.begin;
    }
    ns += count;
  }
  for (size_t i = 0; i < ns; ++i) {
    TextSentenceView& sv = sentences_[i];
    sv = TextSentenceView();
    sv.source_begin = spans_[i].begin;
    sv.source_end = spans_[i].end;
    if (to.html) {
      pairs_[i] = text::SentencePair();
      pairs_[i].source = spans_[i];
    }
  }
  const int S = tr->dims().S;
  const int max_tokens = std::min(to.max_length_break, S - 1);
  if (max_tokens < 1) return Err(StatusCode::kInvalidArgument, "max_source_tokens must be >= 2 for a text call");
  for (size_t i = 0; i < ns; ++i)
    if (Status s = CutSentence(tr, src, uint32_t(i), max_tokens); !s.ok()) return s;
  if (Status s = ProcessPieces(tr, src); !s.ok()) return s;
  if (Status s = Append(src.substr(gap_from_)); !s.ok()) return s;

  result_.sentences = sentences_;
  result_.num_sentences = ns;
  result_.failed_sentences = failed_;
  result_.first_error = std::string_view(first_error_, first_error_len_);
  result_.words = quality_ ? words_ : nullptr;
  result_.num_words = quality_ ? num_words_ : 0;
  result_.words_truncated = words_truncated_;
  result_.text = std::string_view(output_, out_len_);
  if (to.html) {
    for (size_t i = 0; i < ns; ++i) pairs_[i].target = {sentences_[i].target_begin, sentences_[i].target_end};
    size_t len = 0;
    const size_t html_cap = cap_.output_bytes + cap_.text_bytes;
    if (Status s = text::RenderMarkup(text, items_, num_items, src, result_.text, pairs_, ns, tokens_, num_tokens_,
                                      html_out_, html_cap, &len, render_scratch_, cap_.render_scratch);
        !s.ok())
      return Err(s.code(), "html: " + s.message());
    result_.plain_source = src;
    result_.plain_target = result_.text;
    result_.text = std::string_view(html_out_, len);
  }
  *out = &result_;
  return Status::Ok();
}

}  // namespace detail
}  // namespace mtlite

namespace mtlite {

const char* SplitModeName(SplitMode mode) {
  switch (mode) {
    case SplitMode::kNone: return "none";
    case SplitMode::kSentence: return "sentence";
    case SplitMode::kParagraph: return "paragraph";
    case SplitMode::kWrapped: return "wrapped";
  }
  return "?";
}

bool ParseSplitMode(std::string_view name, SplitMode* mode) {
  for (SplitMode m : {SplitMode::kNone, SplitMode::kSentence, SplitMode::kParagraph, SplitMode::kWrapped})
    if (name == SplitModeName(m)) {
      *mode = m;
      return true;
    }
  return false;
}

}  // namespace mtlite

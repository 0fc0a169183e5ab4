// libFuzzer target: the HTML markup layer on arbitrary bytes (no model needed).
//   bytes -> ParseMarkup -> MarkupSegments -> RenderMarkup (identity, then a reordering "translation")
// Properties:
//   - ParseMarkup succeeds with text_cap = item_cap = html.size() (the documented bounds), and is
//     kOutOfRange with a message when either is one short of what it used;
//   - the items nest (partners, parents, depths), text_pos never decreases and stays in the text,
//     the kept items' source bytes are in order and do not overlap, synthetic closes are empty;
//   - the segments tile the text and no segment contains a block item's position;
//   - the identity render (target = source, one token per word aligned to itself) equals the
//     independent serialisation of the parse (each item's bytes at its text_pos, text escaped);
//   - a render with every sentence's words reversed and some alignments dropped or merged is
//     well-formed: escaped text and every item's bytes exactly once, in input order, open and
//     close names nesting (an independent stack of names), decoded text = the target text (but
//     for the spaces kept around an untranslated inline element);
//   - re-parsing the identity render gives the same plain text;
//   - every error carries a message.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "html_markup.h"

namespace mtlite {
namespace {

using fuzz::Fail;
using text::AlignedToken;
using text::ByteSpan;
using text::MarkupItem;
using text::MarkupKind;
using text::SentencePair;

bool Space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

std::string Escape(std::string_view s) {
  std::string o;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '&') o += "&amp;";
    else if (s[i] == '<') o += "&lt;";
    else if (s[i] == '>') o += "&gt;";
    else if (s[i] == '\xC2' && i + 1 < s.size() && s[i + 1] == '\xA0') {
      o += "&nbsp;";
      ++i;
    } else {
      o += s[i];
    }
  }
  return o;
}

std::string ItemBytes(std::string_view html, const MarkupItem& it) {
  if (it.synthetic) return "</" + std::string(html.substr(it.name.begin, it.name.size())) + ">";
  return std::string(html.substr(it.source.begin, it.source.size()));
}

std::string LowerName(std::string_view tag) {
  size_t b = tag.size() > 1 && tag[1] == '/' ? 2 : 1, e = b;
  while (e < tag.size() && !Space(tag[e]) && tag[e] != '/' && tag[e] != '>') ++e;
  std::string n(tag.substr(b, e - b));
  for (char& c : n)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return n;
}

struct Parsed {
  std::string text;
  std::vector<MarkupItem> items;
  size_t dropped = 0;
};

Parsed ParseChecked(std::string_view html, std::string_view input) {
  Parsed p;
  std::vector<char> text(html.size());
  p.items.resize(html.size());
  size_t len = 0, n = 0;
  Status s = text::ParseMarkup(html, text.data(), text.size(), &len, p.items.data(), p.items.size(), &n, &p.dropped);
  if (!s.ok()) Fail(input, "ParseMarkup with the documented capacities: %s", s.ToString().c_str());
  if (len > html.size() || n > html.size()) Fail(input, "ParseMarkup: %zu text bytes, %zu items", len, n);
  p.text.assign(text.data(), len);
  p.items.resize(n);
  // One short of what was used.
  if (len > 0) {
    size_t l2, n2, d2;
    s = text::ParseMarkup(html, text.data(), len - 1, &l2, p.items.data(), html.size(), &n2, &d2);
    if (s.code() != StatusCode::kOutOfRange || s.message().empty())
      Fail(input, "text_cap one short: expected kOutOfRange, got %s", s.ToString().c_str());
  }
  if (n > 0) {
    std::vector<MarkupItem> tmp(n);
    size_t l2, n2, d2;
    s = text::ParseMarkup(html, text.data(), text.size(), &l2, tmp.data(), n - 1, &n2, &d2);
    if (s.code() != StatusCode::kOutOfRange || s.message().empty())
      Fail(input, "item_cap one short: expected kOutOfRange, got %s", s.ToString().c_str());
  }
  // Structure.
  std::vector<int32_t> stack;
  uint32_t last_end = 0, last_pos = 0;
  for (size_t i = 0; i < n; ++i) {
    const MarkupItem& it = p.items[i];
    if (it.text_pos < last_pos || it.text_pos > len) Fail(input, "item %zu: text_pos %u", i, it.text_pos);
    last_pos = it.text_pos;
    const int32_t parent = stack.empty() ? -1 : stack.back();
    if (it.synthetic) {
      if (it.kind != MarkupKind::kClose || !it.source.empty()) Fail(input, "item %zu: bad synthetic item", i);
      if (it.source.begin < last_end || it.source.begin > html.size()) Fail(input, "item %zu: synthetic offset", i);
    } else {
      if (it.source.begin < last_end || it.source.end > html.size() || it.source.empty() ||
          html[it.source.begin] != '<')
        Fail(input, "item %zu: source [%u, %u) after %u", i, it.source.begin, it.source.end, last_end);
      last_end = it.source.end;
    }
    if (it.kind == MarkupKind::kClose) {
      if (stack.empty() || it.partner != stack.back() || p.items[size_t(it.partner)].partner != int32_t(i))
        Fail(input, "item %zu: close does not match the innermost open", i);
      stack.pop_back();
      if (it.parent != (stack.empty() ? -1 : stack.back())) Fail(input, "item %zu: close parent", i);
    } else {
      if (it.parent != parent || it.depth != stack.size()) Fail(input, "item %zu: parent/depth", i);
      if (it.kind == MarkupKind::kOpen) stack.push_back(int32_t(i));
      else if (it.partner != -1) Fail(input, "item %zu: leaf with a partner", i);
    }
  }
  if (!stack.empty()) Fail(input, "%zu elements never closed", stack.size());
  return p;
}

struct Translation {
  std::string target;
  std::vector<SentencePair> sentences;
  std::vector<AlignedToken> tokens;
};

std::vector<ByteSpan> SegmentsChecked(const Parsed& p, std::string_view input) {
  std::vector<ByteSpan> segs(p.items.size() + 1);
  size_t count = 0;
  Status s = text::MarkupSegments(p.items.data(), p.items.size(), p.text.size(), segs.data(), segs.size(), &count);
  if (!s.ok()) Fail(input, "MarkupSegments: %s", s.ToString().c_str());
  segs.resize(count);
  uint32_t at = 0;
  for (const ByteSpan& g : segs) {
    if (g.begin != at || g.end <= g.begin) Fail(input, "segments do not tile the text");
    for (const MarkupItem& it : p.items)
      if (it.block && it.text_pos > g.begin && it.text_pos < g.end) Fail(input, "block item inside a segment");
    at = g.end;
  }
  if (at != p.text.size()) Fail(input, "segments end at %u of %zu", at, p.text.size());
  if (count > 0) {
    size_t c2 = 0;
    s = text::MarkupSegments(p.items.data(), p.items.size(), p.text.size(), segs.data(), count - 1, &c2);
    if (s.code() != StatusCode::kOutOfRange || s.message().empty()) Fail(input, "segments cap one short");
  }
  return segs;
}

// Sentences: segments without surrounding whitespace. reverse: each sentence's words in reverse
// order joined by single spaces; alignments dropped or merged by the input bytes.
Translation MakeTranslation(const Parsed& p, const std::vector<ByteSpan>& segs, bool reverse,
                            std::string_view input) {
  Translation t;
  uint32_t cur = 0;  // source position copied up to
  size_t salt = 0;
  for (const ByteSpan& g : segs) {
    uint32_t b = g.begin, e = g.end;
    while (b < e && Space(p.text[b])) ++b;
    while (e > b && Space(p.text[e - 1])) --e;
    if (b == e) continue;
    t.target.append(p.text, cur, b - cur);  // the gap, verbatim
    std::vector<ByteSpan> words;
    for (uint32_t i = b; i < e;) {
      if (Space(p.text[i])) {
        ++i;
        continue;
      }
      uint32_t j = i;
      while (j < e && !Space(p.text[j])) ++j;
      words.push_back({i, j});
      i = j;
    }
    SentencePair sp;
    sp.source = {b, e};
    sp.first_token = uint32_t(t.tokens.size());
    const uint32_t tb = uint32_t(t.target.size());
    if (!reverse) {
      t.target.append(p.text, b, e - b);
      for (const ByteSpan& w : words) t.tokens.push_back({{tb + (w.begin - b), tb + (w.end - b)}, w});
    } else {
      for (size_t k = words.size(); k-- > 0;) {
        if (k + 1 != words.size()) t.target += ' ';
        const ByteSpan w = words[k];
        const uint32_t at = uint32_t(t.target.size());
        t.target.append(p.text, w.begin, w.size());
        const unsigned char r = input.empty() ? 0 : static_cast<unsigned char>(input[salt++ % input.size()]);
        ByteSpan src = w;
        if (r % 5 == 0) src = {0, 0};                 // unaligned
        else if (r % 5 == 1) src = words[0];          // many-to-one
        t.tokens.push_back({{at, uint32_t(t.target.size())}, src});
      }
    }
    sp.target = {tb, uint32_t(t.target.size())};
    sp.num_tokens = uint32_t(t.tokens.size()) - sp.first_token;
    if (salt % 7 == 3) {  // now and then a verbatim sentence without tokens
      t.tokens.resize(sp.first_token);
      sp.num_tokens = 0;
      t.target.resize(tb);
      t.target.append(p.text, b, e - b);
      sp.target = {tb, uint32_t(t.target.size())};
    }
    t.sentences.push_back(sp);
    cur = e;
  }
  t.target.append(p.text, cur, std::string::npos);
  return t;
}

std::string RenderChecked(std::string_view html, const Parsed& p, const Translation& t, std::string_view input) {
  std::vector<unsigned char> scratch(text::RenderScratchBytes(p.items.size(), t.tokens.size()));
  std::vector<char> out(8 * (html.size() + t.target.size()) + 16);
  size_t len = 0;
  Status s = text::RenderMarkup(html, p.items.data(), p.items.size(), p.text, t.target, t.sentences.data(),
                                t.sentences.size(), t.tokens.data(), t.tokens.size(), out.data(), out.size(), &len,
                                scratch.data(), scratch.size());
  if (!s.ok()) Fail(input, "RenderMarkup: %s", s.ToString().c_str());
  if (len > 0) {
    size_t l2 = 0;
    s = text::RenderMarkup(html, p.items.data(), p.items.size(), p.text, t.target, t.sentences.data(),
                           t.sentences.size(), t.tokens.data(), t.tokens.size(), out.data(), len - 1, &l2,
                           scratch.data(), scratch.size());
    if (s.code() != StatusCode::kOutOfRange || s.message().empty())
      Fail(input, "RenderMarkup out_cap one short: %s", s.ToString().c_str());
  }
  const std::string r(out.data(), len);
  // Well-formed, every item once in order, decoded text = target.
  std::vector<std::string> names;
  std::string decoded;
  size_t i = 0, k = 0;
  while (i < r.size()) {
    if (r[i] == '&') {
      static const char* const kEsc[][2] = {{"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&nbsp;", "\xC2\xA0"}};
      bool found = false;
      for (const auto& e : kEsc) {
        const size_t el = std::strlen(e[0]);
        if (r.compare(i, el, e[0]) == 0) {
          decoded += e[1];
          i += el;
          found = true;
          break;
        }
      }
      if (!found) Fail(input, "render: unescaped '&' at %zu", i);
      continue;
    }
    if (r[i] != '<') {
      decoded += r[i++];
      continue;
    }
    if (k >= p.items.size()) Fail(input, "render: '<' at %zu after all items", i);
    const MarkupItem& it = p.items[k++];
    const std::string bytes = ItemBytes(html, it);
    if (r.compare(i, bytes.size(), bytes) != 0) Fail(input, "render: item %zu not at output byte %zu", k - 1, i);
    if (it.kind == MarkupKind::kOpen) names.push_back(LowerName(bytes));
    if (it.kind == MarkupKind::kClose) {
      if (names.empty() || names.back() != LowerName(bytes)) Fail(input, "render: close %s does not nest", bytes.c_str());
      names.pop_back();
    }
    i += bytes.size();
  }
  if (k != p.items.size()) Fail(input, "render: %zu of %zu items written", k, p.items.size());
  if (!names.empty()) Fail(input, "render: %zu elements left open", names.size());
  // The text is the target's; an untranslated inline element that stood between spaces may get
  // a space added on each side (at most two per such element, nothing else).
  auto no_spaces = [](const std::string& x) {
    std::string o;
    for (char c : x)
      if (c != ' ') o += c;
    return o;
  };
  size_t word_like = 0;
  for (const MarkupItem& it : p.items) word_like += it.kind == MarkupKind::kOpaque && !it.block && !it.name.empty();
  if (no_spaces(decoded) != no_spaces(t.target) || decoded.size() < t.target.size() ||
      decoded.size() > t.target.size() + 2 * word_like)
    Fail(input, "render: decoded text differs from the target");
  return r;
}

}  // namespace
}  // namespace mtlite

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mtlite;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string_view html = input;
  const Parsed p = ParseChecked(html, input);
  const std::vector<ByteSpan> segs = SegmentsChecked(p, input);

  // Identity: exactly the serialisation of the parse.
  const Translation id = MakeTranslation(p, segs, false, input);
  const std::string out = RenderChecked(html, p, id, input);
  std::string expect;
  uint32_t at = 0;
  for (const MarkupItem& it : p.items) {
    expect += Escape(std::string_view(p.text).substr(at, it.text_pos - at));
    at = it.text_pos;
    expect += ItemBytes(html, it);
  }
  expect += Escape(std::string_view(p.text).substr(at));
  if (out != expect) Fail(input, "identity render differs from the serialised parse");

  // Re-parse: the same plain text.
  const Parsed again = ParseChecked(out, input);
  if (again.text != p.text) Fail(input, "re-parsing the identity render changes the plain text");

  // Reordered translation.
  RenderChecked(html, p, MakeTranslation(p, segs, true, input), input);
  return 0;
}

// HTML inline markup: parse into plain text + items, render items back by alignment. The rules
// are in html_markup.h.
#include "html_markup.h"

#include <cstdint>
#include <cstring>
#include <string>

namespace mtlite {
namespace text {
namespace {

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

// ASCII case-insensitive equality of s with a lowercase literal.
bool IEq(std::string_view s, const char* lit) {
  size_t i = 0;
  for (; lit[i] != '\0'; ++i) {
    if (i >= s.size() || Lower(s[i]) != lit[i]) return false;
  }
  return i == s.size();
}

bool IEqViews(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

bool InList(std::string_view name, const char* const* list) {
  for (; *list != nullptr; ++list) {
    if (IEq(name, *list)) return true;
  }
  return false;
}

const char* const kVoidNames[] = {"area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link",
                                  "meta", "param", "source", "track", "wbr", "basefont", "bgsound", "frame",
                                  nullptr};
const char* const kBlockNames[] = {
    "p", "div", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "td", "th", "tr", "table",
    "thead", "tbody", "tfoot", "caption", "col", "colgroup", "section", "article", "header", "footer", "nav",
    "aside", "blockquote", "pre", "figure", "figcaption", "main", "form", "fieldset", "legend", "address", "hr",
    "br", "title", "option", "optgroup", "select", "details", "summary", "dialog", "menu", "html", "head", "body",
    "center", "hgroup", "frameset", nullptr};
const char* const kRawTextNames[] = {"script", "style", "textarea", "xmp", "iframe", "noembed", "noframes",
                                     "noscript", "plaintext", nullptr};
const char* const kOpaqueElementNames[] = {"code", "svg", "math", nullptr};
const char* const kClosesParagraph[] = {
    "address", "article", "aside", "blockquote", "details", "dialog", "div", "dl", "dd", "dt", "fieldset",
    "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "li",
    "main", "menu", "nav", "ol", "p", "pre", "section", "table", "ul", nullptr};

struct NamedRef {
  const char* name;
  uint32_t cp;
};
// Every entry's UTF-8 is shorter than "&name;", so decoding never grows the text.
const NamedRef kNamedRefs[] = {
    {"amp", '&'},        {"lt", '<'},         {"gt", '>'},         {"quot", '"'},       {"apos", '\''},
    {"nbsp", 0xA0},      {"copy", 0xA9},      {"reg", 0xAE},       {"trade", 0x2122},   {"hellip", 0x2026},
    {"mdash", 0x2014},   {"ndash", 0x2013},   {"lsquo", 0x2018},   {"rsquo", 0x2019},   {"sbquo", 0x201A},
    {"ldquo", 0x201C},   {"rdquo", 0x201D},   {"bdquo", 0x201E},   {"laquo", 0xAB},     {"raquo", 0xBB},
    {"lsaquo", 0x2039},  {"rsaquo", 0x203A},  {"euro", 0x20AC},    {"pound", 0xA3},     {"yen", 0xA5},
    {"cent", 0xA2},      {"sect", 0xA7},      {"para", 0xB6},      {"middot", 0xB7},    {"bull", 0x2022},
    {"deg", 0xB0},       {"plusmn", 0xB1},    {"times", 0xD7},     {"divide", 0xF7},    {"shy", 0xAD},
    {"zwj", 0x200D},     {"zwnj", 0x200C},    {"lrm", 0x200E},     {"rlm", 0x200F},     {"ensp", 0x2002},
    {"emsp", 0x2003},    {"thinsp", 0x2009},  {"iexcl", 0xA1},     {"iquest", 0xBF},    {"micro", 0xB5},
    {"ordf", 0xAA},      {"ordm", 0xBA},      {"sup1", 0xB9},      {"sup2", 0xB2},      {"sup3", 0xB3},
    {"frac14", 0xBC},    {"frac12", 0xBD},    {"frac34", 0xBE},    {"dagger", 0x2020},  {"Dagger", 0x2021},
    {"permil", 0x2030},  {"larr", 0x2190},    {"rarr", 0x2192},    {"uarr", 0x2191},    {"darr", 0x2193},
    {"Agrave", 0xC0},    {"Aacute", 0xC1},    {"Acirc", 0xC2},     {"Atilde", 0xC3},    {"Auml", 0xC4},
    {"Aring", 0xC5},     {"AElig", 0xC6},     {"Ccedil", 0xC7},    {"Egrave", 0xC8},    {"Eacute", 0xC9},
    {"Ecirc", 0xCA},     {"Euml", 0xCB},      {"Igrave", 0xCC},    {"Iacute", 0xCD},    {"Icirc", 0xCE},
    {"Iuml", 0xCF},      {"Ntilde", 0xD1},    {"Ograve", 0xD2},    {"Oacute", 0xD3},    {"Ocirc", 0xD4},
    {"Otilde", 0xD5},    {"Ouml", 0xD6},      {"Oslash", 0xD8},    {"Ugrave", 0xD9},    {"Uacute", 0xDA},
    {"Ucirc", 0xDB},     {"Uuml", 0xDC},      {"Yacute", 0xDD},    {"szlig", 0xDF},     {"agrave", 0xE0},
    {"aacute", 0xE1},    {"acirc", 0xE2},     {"atilde", 0xE3},    {"auml", 0xE4},      {"aring", 0xE5},
    {"aelig", 0xE6},     {"ccedil", 0xE7},    {"egrave", 0xE8},    {"eacute", 0xE9},    {"ecirc", 0xEA},
    {"euml", 0xEB},      {"igrave", 0xEC},    {"iacute", 0xED},    {"icirc", 0xEE},     {"iuml", 0xEF},
    {"ntilde", 0xF1},    {"ograve", 0xF2},    {"oacute", 0xF3},    {"ocirc", 0xF4},     {"otilde", 0xF5},
    {"ouml", 0xF6},      {"oslash", 0xF8},    {"ugrave", 0xF9},    {"uacute", 0xFA},    {"ucirc", 0xFB},
    {"uuml", 0xFC},      {"yacute", 0xFD},    {"yuml", 0xFF},      {"OElig", 0x152},    {"oelig", 0x153},
};

size_t EncodeUtf8(uint32_t cp, char* out) {
  if (cp < 0x80) {
    out[0] = char(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = char(0xC0 | (cp >> 6));
    out[1] = char(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = char(0xE0 | (cp >> 12));
    out[1] = char(0x80 | ((cp >> 6) & 0x3F));
    out[2] = char(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = char(0xF0 | (cp >> 18));
  out[1] = char(0x80 | ((cp >> 12) & 0x3F));
  out[2] = char(0x80 | ((cp >> 6) & 0x3F));
  out[3] = char(0x80 | (cp & 0x3F));
  return 4;
}

// A character reference at h[i] == '&': its UTF-8 in out (<= 4 bytes), its length in *consumed;
// 0 when it is not a valid reference (then the '&' is literal).
size_t DecodeReference(std::string_view h, size_t i, char* out, size_t* consumed) {
  size_t j = i + 1;
  if (j < h.size() && h[j] == '#') {
    ++j;
    bool hex = false;
    if (j < h.size() && (h[j] == 'x' || h[j] == 'X')) {
      hex = true;
      ++j;
    }
    uint32_t cp = 0;
    size_t digits = 0;
    while (j < h.size() && digits < 8) {
      const char c = h[j];
      uint32_t d;
      if (c >= '0' && c <= '9') d = uint32_t(c - '0');
      else if (hex && c >= 'a' && c <= 'f') d = uint32_t(c - 'a' + 10);
      else if (hex && c >= 'A' && c <= 'F') d = uint32_t(c - 'A' + 10);
      else break;
      cp = cp * (hex ? 16 : 10) + d;
      ++digits;
      ++j;
    }
    if (digits == 0 || j >= h.size() || h[j] != ';') return 0;
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    *consumed = j + 1 - i;
    return EncodeUtf8(cp, out);
  }
  size_t k = j;
  while (k < h.size() && k - j < 8 && (IsAlpha(h[k]) || (h[k] >= '0' && h[k] <= '9'))) ++k;
  if (k == j || k >= h.size() || h[k] != ';') return 0;
  const std::string_view name = h.substr(j, k - j);
  for (const NamedRef& r : kNamedRefs) {
    if (name == r.name) {
      *consumed = k + 1 - i;
      return EncodeUtf8(r.cp, out);
    }
  }
  return 0;
}

bool HasClassWord(std::string_view value, const char* word) {
  size_t i = 0;
  while (i < value.size()) {
    while (i < value.size() && IsSpace(value[i])) ++i;
    const size_t b = i;
    while (i < value.size() && !IsSpace(value[i])) ++i;
    if (i > b && IEq(value.substr(b, i - b), word)) return true;
  }
  return false;
}

struct TagScan {
  size_t end = 0;            // one past '>'
  bool self_closing = false;
  bool no_translate = false;
};

// Scans the attributes of a tag from h[j] (after its name) to its '>'. False at end of input.
bool ScanAttributes(std::string_view h, size_t j, TagScan* t) {
  const size_t n = h.size();
  while (true) {
    while (j < n && IsSpace(h[j])) ++j;
    if (j >= n) return false;
    if (h[j] == '>') {
      t->end = j + 1;
      return true;
    }
    if (h[j] == '/') {
      if (j + 1 < n && h[j + 1] == '>') {
        t->self_closing = true;
        t->end = j + 2;
        return true;
      }
      ++j;
      continue;
    }
    const size_t ns = j;
    ++j;  // the first character may be '='
    while (j < n && !IsSpace(h[j]) && h[j] != '/' && h[j] != '>' && h[j] != '=') ++j;
    const std::string_view name = h.substr(ns, j - ns);
    while (j < n && IsSpace(h[j])) ++j;
    std::string_view value;
    bool has_value = false;
    if (j < n && h[j] == '=') {
      ++j;
      while (j < n && IsSpace(h[j])) ++j;
      if (j >= n) return false;
      if (h[j] == '"' || h[j] == '\'') {
        const char q = h[j];
        const void* close = std::memchr(h.data() + j + 1, q, n - j - 1);
        if (close == nullptr) return false;
        const size_t ce = size_t(static_cast<const char*>(close) - h.data());
        value = h.substr(j + 1, ce - j - 1);
        j = ce + 1;
      } else {
        const size_t vs = j;
        while (j < n && !IsSpace(h[j]) && h[j] != '>') ++j;
        value = h.substr(vs, j - vs);
      }
      has_value = true;
    }
    if (has_value && IEq(name, "translate") && IEq(value, "no")) t->no_translate = true;
    if (has_value && IEq(name, "class") && HasClassWord(value, "notranslate")) t->no_translate = true;
  }
}

size_t FindLiteral(std::string_view h, size_t from, std::string_view lit) {
  if (from > h.size()) return std::string_view::npos;
  return h.find(lit, from);
}

// The end of a raw-text element whose content starts at `from`: one past the '>' of its end tag,
// or h.size() when it has none.
size_t RawTextEnd(std::string_view h, size_t from, std::string_view name) {
  const size_t n = h.size();
  if (IEq(name, "plaintext")) return n;
  size_t i = from;
  while (true) {
    const size_t lt = FindLiteral(h, i, "</");
    if (lt == std::string_view::npos) return n;
    const size_t ns = lt + 2;
    if (ns + name.size() <= n && IEqViews(h.substr(ns, name.size()), name)) {
      const size_t after = ns + name.size();
      if (after == n) return n;
      const char c = h[after];
      if (IsSpace(c) || c == '/' || c == '>') {
        const size_t gt = h.find('>', after);
        return gt == std::string_view::npos ? n : gt + 1;
      }
    }
    i = lt + 2;
  }
}

class Parser {
 public:
  Parser(std::string_view h, char* text, size_t text_cap, MarkupItem* items, size_t item_cap)
      : h_(h), text_(text), text_cap_(text_cap), items_(items), item_cap_(item_cap) {}

  Status Run(size_t* text_len, size_t* num_items, size_t* dropped);

 private:
  std::string_view Name(const MarkupItem& it) const { return h_.substr(it.name.begin, it.name.size()); }
  void PutText(const char* p, size_t len) {
    if (region_ >= 0) return;
    if (text_len_ + len <= text_cap_ && len > 0) std::memcpy(text_ + text_len_, p, len);
    text_len_ += len;
  }
  // Appends an item; false when item_cap is reached.
  bool Add(const MarkupItem& it) {
    if (n_ >= item_cap_) {
      full_ = true;
      return false;
    }
    items_[n_++] = it;
    return true;
  }
  MarkupItem Make(MarkupKind kind, size_t begin, size_t end, ByteSpan name, bool block) const {
    MarkupItem it;
    it.source = {uint32_t(begin), uint32_t(end)};
    it.text_pos = uint32_t(text_len_);
    it.kind = kind;
    it.block = block;
    it.parent = top_;
    it.depth = depth_;
    it.name = name;
    return it;
  }
  // A leaf item (void or opaque); not stored inside an opaque element.
  bool AddLeaf(MarkupKind kind, size_t begin, size_t end, ByteSpan name, bool block) {
    if (region_ >= 0) return true;
    return Add(Make(kind, begin, end, name, block));
  }
  bool Open(size_t begin, size_t end, ByteSpan name, bool opaque_root);
  bool Close(int32_t open, size_t begin, size_t end, bool synthetic);
  bool StartTag(size_t begin, const TagScan& t, ByteSpan name);
  bool EndTag(size_t begin, size_t end, ByteSpan name);
  bool TopIs(const char* name) const { return top_ >= 0 && IEq(Name(items_[top_]), name); }
  bool TopIn(const char* const* list) const { return top_ >= 0 && InList(Name(items_[top_]), list); }

  std::string_view h_;
  char* text_;
  size_t text_cap_;
  MarkupItem* items_;
  size_t item_cap_;
  size_t n_ = 0, text_len_ = 0, dropped_ = 0;
  int32_t top_ = -1;     // innermost open element
  uint32_t depth_ = 0;
  int32_t region_ = -1;  // the open element whose content is opaque, -1 when none
  int32_t rcdata_ = -1;  // the open <title>
  size_t pos_ = 0;       // scan position in h_
  bool full_ = false;
};

bool Parser::Open(size_t begin, size_t end, ByteSpan name, bool opaque_root) {
  const std::string_view nm = h_.substr(name.begin, name.size());
  MarkupItem it = Make(MarkupKind::kOpen, begin, end, name, InList(nm, kBlockNames));
  if (!Add(it)) return false;
  top_ = int32_t(n_ - 1);
  ++depth_;
  if (opaque_root && region_ < 0) region_ = top_;
  if (region_ < 0 && IEq(nm, "title")) rcdata_ = top_;
  return true;
}

bool Parser::Close(int32_t open, size_t begin, size_t end, bool synthetic) {
  MarkupItem& o = items_[open];
  top_ = o.parent;
  --depth_;
  if (rcdata_ == open) rcdata_ = -1;
  if (region_ == open) {  // the opaque element ends: it becomes one item, its content removed
    o.kind = MarkupKind::kOpaque;
    o.source.end = uint32_t(synthetic ? begin : end);
    o.partner = -1;
    n_ = size_t(open) + 1;
    region_ = -1;
    return true;
  }
  if (region_ >= 0) {  // inside an opaque element: only its open elements are kept, as a stack
    n_ = size_t(open);
    return true;
  }
  MarkupItem c = o;
  c.kind = MarkupKind::kClose;
  c.source = synthetic ? ByteSpan{uint32_t(begin), uint32_t(begin)} : ByteSpan{uint32_t(begin), uint32_t(end)};
  c.text_pos = uint32_t(text_len_);
  c.synthetic = synthetic;
  c.partner = open;
  if (!Add(c)) return false;
  items_[open].partner = int32_t(n_ - 1);
  return true;
}

bool Parser::StartTag(size_t begin, const TagScan& t, ByteSpan name) {
  const std::string_view nm = h_.substr(name.begin, name.size());
  // Optional end tags (rule 3), judged on the innermost open element.
  if (InList(nm, kClosesParagraph) && TopIs("p") && !Close(top_, begin, begin, true)) return false;
  if (IEq(nm, "li") && TopIs("li") && !Close(top_, begin, begin, true)) return false;
  if ((IEq(nm, "dt") || IEq(nm, "dd")) && (TopIs("dt") || TopIs("dd")) && !Close(top_, begin, begin, true))
    return false;
  if ((IEq(nm, "option") || IEq(nm, "optgroup")) && TopIs("option") && !Close(top_, begin, begin, true))
    return false;
  if (IEq(nm, "tr") || IEq(nm, "td") || IEq(nm, "th")) {
    if ((TopIs("td") || TopIs("th")) && !Close(top_, begin, begin, true)) return false;
    if (IEq(nm, "tr") && TopIs("tr") && !Close(top_, begin, begin, true)) return false;
  }
  if (InList(nm, kVoidNames) || t.self_closing)
    return AddLeaf(MarkupKind::kVoid, begin, t.end, name, InList(nm, kBlockNames));
  if (InList(nm, kRawTextNames)) {
    const size_t end = RawTextEnd(h_, t.end, nm);
    pos_ = end;
    return AddLeaf(MarkupKind::kOpaque, begin, end, name, true);
  }
  return Open(begin, t.end, name, t.no_translate || InList(nm, kOpaqueElementNames));
}

bool Parser::EndTag(size_t begin, size_t end, ByteSpan name) {
  const std::string_view nm = h_.substr(name.begin, name.size());
  int32_t k = top_;
  for (size_t level = 0; k >= 0 && level < kMaxCloseSearch; ++level, k = items_[k].parent) {
    if (IEqViews(Name(items_[k]), nm)) break;
  }
  if (k < 0 || !IEqViews(Name(items_[k]), nm)) {  // rule 2: stray close
    if (region_ < 0) ++dropped_;
    return true;
  }
  while (top_ != k) {  // rule 1: close the elements above it first
    if (!Close(top_, begin, begin, true)) return false;
  }
  return Close(k, begin, end, false);
}

Status Parser::Run(size_t* text_len, size_t* num_items, size_t* dropped) {
  const size_t n = h_.size();
  pos_ = 0;
  while (pos_ < n && !full_) {
    const size_t i = pos_;
    const char c = h_[i];
    if (c != '<' && c != '&') {
      size_t j = i + 1;
      while (j < n && h_[j] != '<' && h_[j] != '&') ++j;
      PutText(h_.data() + i, j - i);
      pos_ = j;
      continue;
    }
    if (c == '&') {
      char buf[4];
      size_t consumed = 0;
      const size_t len = region_ >= 0 ? 0 : DecodeReference(h_, i, buf, &consumed);
      if (len > 0) {
        PutText(buf, len);
        pos_ = i + consumed;
      } else {
        PutText("&", 1);
        pos_ = i + 1;
      }
      continue;
    }
    // '<'
    const char c1 = i + 1 < n ? h_[i + 1] : '\0';
    const char c2 = i + 2 < n ? h_[i + 2] : '\0';
    if (rcdata_ >= 0) {  // inside <title>: only its end tag is markup
      const std::string_view nm = Name(items_[rcdata_]);
      const size_t after = i + 2 + nm.size();
      const bool is_end = c1 == '/' && after <= n && IEqViews(h_.substr(i + 2, nm.size()), nm) &&
                          (after == n || IsSpace(h_[after]) || h_[after] == '/' || h_[after] == '>');
      if (!is_end) {
        PutText("<", 1);
        pos_ = i + 1;
        continue;
      }
    }
    if (c1 == '!' || c1 == '?') {
      size_t end;
      if (c1 == '!' && c2 == '-' && i + 3 < n && h_[i + 3] == '-') {
        const size_t e = FindLiteral(h_, i + 2, "-->");
        end = e == std::string_view::npos ? n : e + 3;
      } else if (c1 == '!' && h_.substr(i, 9) == "<![CDATA[") {
        const size_t e = FindLiteral(h_, i + 9, "]]>");
        end = e == std::string_view::npos ? n : e + 3;
      } else {
        const size_t e = h_.find('>', i + 2);
        end = e == std::string_view::npos ? n : e + 1;
      }
      if (!AddLeaf(MarkupKind::kOpaque, i, end, ByteSpan{}, false)) break;
      pos_ = end;
      continue;
    }
    const bool is_end = c1 == '/' && IsAlpha(c2);
    if (!is_end && !IsAlpha(c1)) {  // not a tag
      PutText("<", 1);
      pos_ = i + 1;
      continue;
    }
    const size_t ns = i + (is_end ? 2 : 1);
    size_t ne = ns;
    while (ne < n && !IsSpace(h_[ne]) && h_[ne] != '/' && h_[ne] != '>') ++ne;
    const ByteSpan name{uint32_t(ns), uint32_t(ne)};
    TagScan t;
    if (!ScanAttributes(h_, ne, &t)) {  // unterminated tag: opaque to the end
      if (!AddLeaf(MarkupKind::kOpaque, i, n, ByteSpan{}, false)) break;
      pos_ = n;
      break;
    }
    pos_ = t.end;
    const bool ok = is_end ? EndTag(i, t.end, name) : StartTag(i, t, name);
    if (!ok) break;
  }
  while (!full_ && top_ >= 0) {  // rule 4
    if (!Close(top_, n, n, true)) break;
  }
  *num_items = n_;
  *dropped = dropped_;
  *text_len = text_len_ <= text_cap_ ? text_len_ : 0;
  if (full_) {
    return Status(StatusCode::kOutOfRange, "markup item capacity " + std::to_string(item_cap_) +
                                               " too small (reached at html byte " + std::to_string(pos_) +
                                               "; html.size() = " + std::to_string(n) + " items always suffice)");
  }
  if (text_len_ > text_cap_) {
    *text_len = 0;
    return Status(StatusCode::kOutOfRange, "plain text capacity " + std::to_string(text_cap_) +
                                               " too small: the plain text needs " + std::to_string(text_len_) +
                                               " bytes");
  }
  return Status::Ok();
}

}  // namespace

// ----------------------------------------------------------------------------------------------
Status ParseMarkup(std::string_view html, char* text, size_t text_cap, size_t* text_len, MarkupItem* items,
                   size_t item_cap, size_t* num_items, size_t* dropped) {
  if (text_len == nullptr || num_items == nullptr || dropped == nullptr)
    return Status(StatusCode::kInvalidArgument, "ParseMarkup: null output pointer");
  *text_len = 0;
  *num_items = 0;
  *dropped = 0;
  if (html.size() >= 0x7fffffffu)
    return Status(StatusCode::kOutOfRange, "ParseMarkup: html of " + std::to_string(html.size()) +
                                               " bytes exceeds the 2 GiB limit");
  if ((text == nullptr && text_cap > 0) || (items == nullptr && item_cap > 0))
    return Status(StatusCode::kInvalidArgument, "ParseMarkup: null buffer with a non-zero capacity");
  Parser p(html, text, text_cap, items, item_cap);
  return p.Run(text_len, num_items, dropped);
}

Status MarkupSegments(const MarkupItem* items, size_t num_items, size_t text_len, ByteSpan* segments, size_t cap,
                      size_t* count) {
  if (count == nullptr || (items == nullptr && num_items > 0) || (segments == nullptr && cap > 0))
    return Status(StatusCode::kInvalidArgument, "MarkupSegments: null pointer");
  *count = 0;
  size_t k = 0;
  uint32_t start = 0;
  auto emit = [&](uint32_t end) {
    if (end > start) {
      if (k < cap) segments[k] = {start, end};
      ++k;
    }
    if (end > start) start = end;
  };
  for (size_t i = 0; i < num_items; ++i) {
    if (!items[i].block) continue;
    const uint32_t p = items[i].text_pos;
    if (p > text_len || p < start)
      return Status(StatusCode::kInvalidArgument, "MarkupSegments: item " + std::to_string(i) +
                                                      " has text_pos " + std::to_string(p) +
                                                      " out of order or past text_len " + std::to_string(text_len));
    emit(p);
  }
  emit(uint32_t(text_len));
  *count = k <= cap ? k : 0;
  if (k > cap)
    return Status(StatusCode::kOutOfRange, "MarkupSegments: capacity " + std::to_string(cap) + " too small: " +
                                               std::to_string(k) + " segments");
  return Status::Ok();
}

// ----------------------------------------------------------------------------------------------
// Rendering.
namespace {

struct Writer {
  char* out;
  size_t cap;
  size_t len = 0;
  void Put(const char* p, size_t k) {
    if (k > 0 && len + k <= cap) std::memcpy(out + len, p, k);
    len += k;
  }
  void Escaped(std::string_view s) {
    size_t run = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      const char c = s[i];
      const char* rep = nullptr;
      size_t skip = 1;
      if (c == '&') rep = "&amp;";
      else if (c == '<') rep = "&lt;";
      else if (c == '>') rep = "&gt;";
      else if (c == '\xC2' && i + 1 < s.size() && s[i + 1] == '\xA0') {
        rep = "&nbsp;";
        skip = 2;
      }
      if (rep == nullptr) continue;
      Put(s.data() + run, i - run);
      Put(rep, std::strlen(rep));
      run = i + skip;
      i += skip - 1;
    }
    Put(s.data() + run, s.size() - run);
  }
};

uint32_t TrailingSpace(std::string_view s, uint32_t lo, uint32_t hi) {
  uint32_t k = 0;
  while (hi > lo + k && IsSpace(s[hi - k - 1])) ++k;
  return k;
}
uint32_t LeadingSpace(std::string_view s, uint32_t lo, uint32_t hi) {
  uint32_t k = 0;
  while (lo + k < hi && IsSpace(s[lo + k])) ++k;
  return k;
}
uint32_t Min(uint32_t a, uint32_t b) { return a < b ? a : b; }
uint32_t Max(uint32_t a, uint32_t b) { return a > b ? a : b; }
uint32_t Clamp(uint32_t v, uint32_t lo, uint32_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Source-to-target positions by gaps and alignments (rules in html_markup.h).
class Placer {
 public:
  Placer(std::string_view src, std::string_view tgt, const SentencePair* sent, size_t ns, const AlignedToken* tok)
      : src_(src), tgt_(tgt), sent_(sent), ns_(ns), tok_(tok) {}

  uint32_t Point(uint32_t p) const {
    const int64_t k = Last(p, false);
    if (k >= 0 && sent_[k].source.begin < p && p < sent_[k].source.end) return InSentence(size_t(k), p);
    return MapGap(p);
  }

  void Hull(uint32_t os, uint32_t cs, uint32_t* s_out, uint32_t* e_out) const {
    const int64_t k1 = Last(os, false);
    const int64_t k2 = Last(cs, true);
    const bool in1 = k1 >= 0 && os < sent_[k1].source.end;
    const bool in2 = k2 >= 0 && cs <= sent_[k2].source.end;
    uint32_t s = 0, e = 0, a = 0, b = 0;
    if (!in1) s = MapGap(os);
    if (!in2) e = MapGap(cs);
    if (in1 && in2 && k1 == k2) {
      const SentencePair& x = sent_[k1];
      if (os <= x.source.begin && cs >= x.source.end) {
        s = x.target.begin;
        e = x.target.end;
      } else if (PartialHull(size_t(k1), os, cs, &a, &b)) {
        s = a;
        e = b;
      } else {
        s = Point(os);
        e = Max(Point(cs), s);
      }
    } else {
      if (in1) {
        const SentencePair& x = sent_[k1];
        if (os == x.source.begin) s = x.target.begin;
        else if (PartialHull(size_t(k1), os, x.source.end, &a, &b)) s = a;
        else s = x.target.end;
      }
      if (in2) {
        const SentencePair& x = sent_[k2];
        if (cs == x.source.end) e = x.target.end;
        else if (PartialHull(size_t(k2), x.source.begin, cs, &a, &b)) e = b;
        else e = x.target.begin;
      }
    }
    *s_out = s;
    *e_out = Max(e, s);
  }

 private:
  // The last sentence whose source begins at or before p (strictly before when strict); -1 if none.
  int64_t Last(uint32_t p, bool strict) const {
    size_t lo = 0, hi = ns_;  // first sentence past p
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      const uint32_t b = sent_[mid].source.begin;
      if (strict ? b < p : b <= p) lo = mid + 1;
      else hi = mid;
    }
    return int64_t(lo) - 1;
  }

  // p outside every sentence's interior: the same offset in the corresponding target gap.
  uint32_t MapGap(uint32_t p) const {
    const int64_t k = Last(p, false);
    if (k < 0) return Min(p, ns_ > 0 ? sent_[0].target.begin : uint32_t(tgt_.size()));
    const SentencePair& x = sent_[k];
    if (p < x.source.end) return x.target.begin;  // p == x.source.begin
    const uint32_t limit = size_t(k) + 1 < ns_ ? sent_[k + 1].target.begin : uint32_t(tgt_.size());
    return Min(x.target.end + (p - x.source.end), limit);
  }

  // How far a position keeps its distance from a token across whitespace: the source between
  // them, [lo, hi), must be all whitespace; at most the target's whitespace there (target_space).
  uint32_t SpaceShift(uint32_t lo, uint32_t hi, uint32_t target_space) const {
    return TrailingSpace(src_, lo, hi) == hi - lo ? Min(hi - lo, target_space) : 0;
  }

  bool Identical(const AlignedToken& t) const {
    return t.target.size() == t.source.size() &&
           std::memcmp(tgt_.data() + t.target.begin, src_.data() + t.source.begin, t.source.size()) == 0;
  }

  uint32_t InSentence(size_t k, uint32_t p) const {
    const SentencePair& x = sent_[k];
    if (x.num_tokens == 0) return Min(x.target.begin + (p - x.source.begin), x.target.end);
    int64_t contain = -1, follow = -1;
    uint32_t last_end = x.target.begin;
    for (uint32_t t = x.first_token; t < x.first_token + x.num_tokens; ++t) {
      const AlignedToken& a = tok_[t];
      last_end = Max(last_end, a.target.end);
      if (a.source.empty()) continue;
      if (a.source.begin < p && p < a.source.end) {
        if (contain < 0) contain = t;
      } else if (a.source.begin >= p) {
        if (follow < 0 || a.source.begin < tok_[follow].source.begin) follow = t;
      }
    }
    if (contain >= 0) {
      const AlignedToken& a = tok_[contain];
      return Identical(a) ? a.target.begin + (p - a.source.begin) : a.target.begin;
    }
    if (follow >= 0) {
      const AlignedToken& a = tok_[follow];
      return a.target.begin - SpaceShift(p, a.source.begin, TrailingSpace(tgt_, x.target.begin, a.target.begin));
    }
    return last_end;
  }

  // Hull of the target tokens aligned into source [lo, hi) of sentence k; false when none.
  bool PartialHull(size_t k, uint32_t lo, uint32_t hi, uint32_t* a_out, uint32_t* b_out) const {
    const SentencePair& x = sent_[k];
    if (x.num_tokens == 0) {
      *a_out = Min(x.target.begin + (lo - x.source.begin), x.target.end);
      *b_out = Max(Min(x.target.begin + (hi - x.source.begin), x.target.end), *a_out);
      return true;
    }
    int64_t first = -1, last = -1;
    for (uint32_t t = x.first_token; t < x.first_token + x.num_tokens; ++t) {
      const AlignedToken& a = tok_[t];
      if (a.source.empty() || a.source.begin >= hi || a.source.end <= lo) continue;
      if (first < 0 || a.target.begin < tok_[first].target.begin) first = t;
      if (last < 0 || a.target.end > tok_[last].target.end) last = t;
    }
    if (first < 0) return false;
    const AlignedToken& f = tok_[first];
    uint32_t a = f.target.begin;
    if (lo > f.source.begin) {
      if (Identical(f)) a += lo - f.source.begin;
    } else if (lo < f.source.begin) {
      a -= SpaceShift(lo, f.source.begin, TrailingSpace(tgt_, x.target.begin, f.target.begin));
    }
    const AlignedToken& l = tok_[last];
    uint32_t b = l.target.end;
    if (hi < l.source.end) {
      if (Identical(l)) b = l.target.begin + (hi - l.source.begin);
    } else if (hi > l.source.end) {
      b += SpaceShift(l.source.end, hi, LeadingSpace(tgt_, l.target.end, x.target.end));
    }
    *a_out = a;
    *b_out = Max(a, b);
    return true;
  }

  std::string_view src_, tgt_;
  const SentencePair* sent_;
  size_t ns_;
  const AlignedToken* tok_;
};

Status Invalid(const std::string& what) { return Status(StatusCode::kInvalidArgument, "RenderMarkup: " + what); }

bool SpanIn(ByteSpan s, size_t size) { return s.begin <= s.end && s.end <= size; }
bool SpanWithin(ByteSpan s, ByteSpan outer) { return s.begin <= s.end && s.begin >= outer.begin && s.end <= outer.end; }

}  // namespace

size_t RenderScratchBytes(size_t num_items, size_t /*num_tokens*/) {
  if (num_items > (SIZE_MAX - 8) / 12) return SIZE_MAX;
  return 12 * num_items + 4;
}

Status RenderMarkup(std::string_view html, const MarkupItem* items, size_t num_items, std::string_view source_plain,
                    std::string_view target_plain, const SentencePair* sentences, size_t num_sentences,
                    const AlignedToken* tokens, size_t num_tokens, char* out, size_t out_cap, size_t* out_len,
                    void* scratch, size_t scratch_bytes) {
  if (out_len == nullptr) return Invalid("null out_len");
  *out_len = 0;
  if ((out == nullptr && out_cap > 0) || (items == nullptr && num_items > 0) ||
      (sentences == nullptr && num_sentences > 0) || (tokens == nullptr && num_tokens > 0))
    return Invalid("null buffer with a non-zero size");
  if (html.size() >= 0x7fffffffu || source_plain.size() >= 0x7fffffffu || target_plain.size() >= 0x7fffffffu ||
      num_items >= 0x7fffffffu)
    return Status(StatusCode::kOutOfRange, "RenderMarkup: input beyond the 2 GiB / 2^31 items limit");
  const size_t need = RenderScratchBytes(num_items, num_tokens);
  if (num_items > 0 && (scratch == nullptr || scratch_bytes < need))
    return Status(StatusCode::kOutOfRange, "RenderMarkup: scratch of " + std::to_string(scratch_bytes) +
                                               " bytes too small: needs " + std::to_string(need));
  // Sentences and tokens.
  for (size_t k = 0; k < num_sentences; ++k) {
    const SentencePair& x = sentences[k];
    if (!SpanIn(x.source, source_plain.size()) || !SpanIn(x.target, target_plain.size()))
      return Invalid("sentence " + std::to_string(k) + " out of bounds");
    if (k > 0 && (x.source.begin < sentences[k - 1].source.end || x.target.begin < sentences[k - 1].target.end))
      return Invalid("sentence " + std::to_string(k) + " overlaps or precedes the previous one");
    if (uint64_t(x.first_token) + x.num_tokens > num_tokens)
      return Invalid("sentence " + std::to_string(k) + " names tokens past num_tokens");
    for (uint32_t t = x.first_token; t < x.first_token + x.num_tokens; ++t) {
      const AlignedToken& a = tokens[t];
      if (!SpanWithin(a.target, x.target) || (!a.source.empty() && !SpanWithin(a.source, x.source)) ||
          a.source.begin > a.source.end)
        return Invalid("token " + std::to_string(t) + " lies outside its sentence " + std::to_string(k));
    }
  }
  // Items: nesting, partners, order, bounds; parents.
  uintptr_t base = (reinterpret_cast<uintptr_t>(scratch) + 3) & ~uintptr_t(3);
  uint32_t* pos = reinterpret_cast<uint32_t*>(base);
  int32_t* parent = reinterpret_cast<int32_t*>(pos + num_items);
  uint32_t* cursor = reinterpret_cast<uint32_t*>(parent + num_items);
  int32_t cur = -1;
  for (size_t i = 0; i < num_items; ++i) {
    const MarkupItem& it = items[i];
    const std::string is = "item " + std::to_string(i);
    if (it.text_pos > source_plain.size() || (i > 0 && it.text_pos < items[i - 1].text_pos))
      return Invalid(is + ": text_pos out of order or past the source text");
    if (!SpanIn(it.source, html.size())) return Invalid(is + ": source span outside html");
    if (it.synthetic && (it.kind != MarkupKind::kClose || !SpanIn(it.name, html.size())))
      return Invalid(is + ": bad synthetic item");
    switch (it.kind) {
      case MarkupKind::kOpen:
        if (it.partner <= int32_t(i) || size_t(it.partner) >= num_items ||
            items[it.partner].kind != MarkupKind::kClose || items[it.partner].partner != int32_t(i))
          return Invalid(is + ": open without its close");
        parent[i] = cur;
        cur = int32_t(i);
        break;
      case MarkupKind::kClose:
        if (cur < 0 || it.partner != cur) return Invalid(is + ": close does not match the innermost open");
        parent[i] = parent[cur];
        cur = parent[cur];
        break;
      case MarkupKind::kVoid:
      case MarkupKind::kOpaque:
        parent[i] = cur;
        break;
      default:
        return Invalid(is + ": unknown kind");
    }
  }
  if (cur >= 0) return Invalid("item " + std::to_string(cur) + " is never closed");

  // Desired positions.
  const Placer placer(source_plain, target_plain, sentences, num_sentences, tokens);
  for (size_t i = 0; i < num_items; ++i) {
    const MarkupItem& it = items[i];
    if (it.kind == MarkupKind::kOpen) {
      const uint32_t os = it.text_pos, cs = items[it.partner].text_pos;
      uint32_t s, e;
      if (os == cs) {
        s = placer.Point(os);
        e = s;
      } else {
        placer.Hull(os, cs, &s, &e);
      }
      pos[i] = s;
      pos[it.partner] = e;
    } else if (it.kind != MarkupKind::kClose) {
      pos[i] = placer.Point(it.text_pos);
    }
  }
  // Repair in document order: children inside parents, siblings in order.
  const uint32_t tsize = uint32_t(target_plain.size());
  uint32_t top_cursor = 0;
  for (size_t i = 0; i < num_items; ++i) {
    const MarkupItem& it = items[i];
    const int32_t p = parent[i];
    const uint32_t lo = p >= 0 ? cursor[p] : top_cursor;
    const uint32_t hi = p >= 0 ? pos[items[p].partner] : tsize;
    if (it.kind == MarkupKind::kOpen) {
      uint32_t s = Clamp(pos[i], lo, hi);
      uint32_t e = Clamp(pos[it.partner], s, hi);
      // An inline element wraps words, not the spaces around them (unless its source did).
      const uint32_t os = it.text_pos, cs = items[it.partner].text_pos;
      if (!it.block && os < cs) {
        if (!IsSpace(source_plain[os]))
          while (s < e && IsSpace(target_plain[s])) ++s;
        if (!IsSpace(source_plain[cs - 1]))
          while (e > s && IsSpace(target_plain[e - 1])) --e;
      }
      pos[i] = s;
      pos[it.partner] = e;
      cursor[i] = s;
    } else {
      if (it.kind != MarkupKind::kClose) pos[i] = Clamp(pos[i], lo, hi);
      if (p >= 0) cursor[p] = pos[i];
      else top_cursor = pos[i];
    }
  }
  // Output.
  Writer w{out, out_cap};
  uint32_t tc = 0;
  for (size_t i = 0; i < num_items; ++i) {
    const MarkupItem& it = items[i];
    const uint32_t p = Clamp(pos[i], tc, tsize);
    w.Escaped(target_plain.substr(tc, p - tc));
    tc = p;
    // An untranslated inline element that stood between spaces, as a word does ("stop <span
    // translate=no>Acme</span> him"), keeps a space on each side in the target too.
    const bool word_like = it.kind == MarkupKind::kOpaque && !it.block && !it.name.empty() && it.text_pos > 0 &&
                           it.text_pos < source_plain.size() && IsSpace(source_plain[it.text_pos - 1]) &&
                           IsSpace(source_plain[it.text_pos]);
    if (word_like && p > 0 && !IsSpace(target_plain[p - 1])) w.Put(" ", 1);
    if (it.synthetic) {
      w.Put("</", 2);
      w.Put(html.data() + it.name.begin, it.name.size());
      w.Put(">", 1);
    } else {
      w.Put(html.data() + it.source.begin, it.source.size());
    }
    if (word_like && p < tsize && !IsSpace(target_plain[p])) w.Put(" ", 1);
  }
  w.Escaped(target_plain.substr(tc));
  if (w.len > out_cap)
    return Status(StatusCode::kOutOfRange, "RenderMarkup: output capacity " + std::to_string(out_cap) +
                                               " too small: needs " + std::to_string(w.len) + " bytes");
  *out_len = w.len;
  return Status::Ok();
}

}  // namespace text
}  // namespace mtlite

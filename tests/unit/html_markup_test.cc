// ParseMarkup / MarkupSegments / RenderMarkup: plain text and items of HTML, the repair rules,
// identity renders (the input back up to the documented normalisations), renders by alignment.
#include "html_markup.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#if defined(__GLIBC__)  // counts heap allocations by interposing glibc's malloc
#include "unit/alloc_counter.h"
#endif

namespace mtlite {
namespace text {
namespace {

struct Parsed {
  Status status;
  std::string text;
  std::vector<MarkupItem> items;
  size_t dropped = 0;
};

Parsed Parse(std::string_view html) {
  Parsed p;
  std::vector<char> text(html.size() + 1);
  p.items.resize(html.size() + 1);
  size_t text_len = 0, n = 0;
  p.status = ParseMarkup(html, text.data(), text.size(), &text_len, p.items.data(), p.items.size(), &n, &p.dropped);
  p.text.assign(text.data(), text_len);
  p.items.resize(n);
  return p;
}

std::string Src(std::string_view html, const MarkupItem& it) {
  return std::string(html.substr(it.source.begin, it.source.size()));
}

// Kinds as letters: O open, C close, S synthetic close, V void, Q opaque (block is checked apart).
std::string Kinds(const Parsed& p) {
  std::string s;
  for (const MarkupItem& it : p.items) {
    switch (it.kind) {
      case MarkupKind::kOpen: s += 'O'; break;
      case MarkupKind::kClose: s += it.synthetic ? 'S' : 'C'; break;
      case MarkupKind::kVoid: s += 'V'; break;
      case MarkupKind::kOpaque: s += 'Q'; break;
    }
  }
  return s;
}

std::string Positions(const Parsed& p) {
  std::string s;
  for (const MarkupItem& it : p.items) s += (s.empty() ? "" : ",") + std::to_string(it.text_pos);
  return s;
}

struct Translation {
  std::string target;
  std::vector<SentencePair> sentences;
  std::vector<AlignedToken> tokens;
};

Status Render(std::string_view html, const Parsed& p, const Translation& t, std::string* out) {
  std::vector<char> buf(8 * (html.size() + t.target.size()) + 64);
  std::vector<unsigned char> scratch(RenderScratchBytes(p.items.size(), t.tokens.size()));
  size_t len = 0;
  const Status s = RenderMarkup(html, p.items.data(), p.items.size(), p.text, t.target, t.sentences.data(),
                                t.sentences.size(), t.tokens.data(), t.tokens.size(), buf.data(), buf.size(), &len,
                                scratch.data(), scratch.size());
  out->assign(buf.data(), len);
  return s;
}

bool Space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

// Sentences = the markup segments without surrounding whitespace; one token per word, aligned to
// itself; target = source.
Translation Identity(const Parsed& p) {
  Translation t;
  t.target = p.text;
  std::vector<ByteSpan> segs(p.items.size() + 2);
  size_t count = 0;
  EXPECT_TRUE(MarkupSegments(p.items.data(), p.items.size(), p.text.size(), segs.data(), segs.size(), &count).ok());
  for (size_t k = 0; k < count; ++k) {
    uint32_t b = segs[k].begin, e = segs[k].end;
    while (b < e && Space(p.text[b])) ++b;
    while (e > b && Space(p.text[e - 1])) --e;
    if (b == e) continue;
    SentencePair sp;
    sp.source = sp.target = {b, e};
    sp.first_token = uint32_t(t.tokens.size());
    for (uint32_t i = b; i < e;) {
      if (Space(p.text[i])) {
        ++i;
        continue;
      }
      uint32_t j = i;
      while (j < e && !Space(p.text[j])) ++j;
      t.tokens.push_back({{i, j}, {i, j}});
      i = j;
    }
    sp.num_tokens = uint32_t(t.tokens.size()) - sp.first_token;
    t.sentences.push_back(sp);
  }
  return t;
}

std::string IdentityRender(std::string_view html) {
  const Parsed p = Parse(html);
  EXPECT_TRUE(p.status.ok()) << p.status.ToString();
  std::string out;
  const Status s = Render(html, p, Identity(p), &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

// Translation with words of `target` aligned by `align`: for target word k, the index of its
// source word in the (single) sentence, or -1. The sentence covers the whole text.
Translation Aligned(const std::string& source, const std::string& target, const std::vector<int>& align) {
  auto words = [](const std::string& s) {
    std::vector<ByteSpan> w;
    for (uint32_t i = 0; i < s.size();) {
      if (Space(s[i]) || s[i] == '.') {
        if (s[i] == '.') w.push_back({i, i + 1});
        ++i;
        continue;
      }
      uint32_t j = i;
      while (j < s.size() && !Space(s[j]) && s[j] != '.') ++j;
      w.push_back({i, j});
      i = j;
    }
    return w;
  };
  const std::vector<ByteSpan> sw = words(source), tw = words(target);
  Translation t;
  t.target = target;
  EXPECT_EQ(tw.size(), align.size());
  for (size_t k = 0; k < tw.size() && k < align.size(); ++k)
    t.tokens.push_back({tw[k], align[k] >= 0 ? sw[size_t(align[k])] : ByteSpan{0, 0}});
  SentencePair sp;
  sp.source = {0, uint32_t(source.size())};
  sp.target = {0, uint32_t(target.size())};
  sp.num_tokens = uint32_t(t.tokens.size());
  t.sentences.push_back(sp);
  return t;
}

std::string RenderAligned(const std::string& html, const std::string& target, const std::vector<int>& align) {
  const Parsed p = Parse(html);
  EXPECT_TRUE(p.status.ok());
  std::string out;
  const Status s = Render(html, p, Aligned(p.text, target, align), &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

// Independent well-formedness check of a render: the output is escaped text (no raw '<') and the
// items' bytes in input order; the names of the opens and closes nest; the decoded text is the
// target text.
::testing::AssertionResult WellFormed(std::string_view html, const Parsed& p, std::string_view out,
                                      std::string_view target) {
  std::vector<std::string> stack;
  std::string text;
  size_t i = 0, k = 0;
  auto tag_name = [](std::string_view s) {
    size_t b = s[1] == '/' ? 2 : 1, e = b;
    while (e < s.size() && !Space(s[e]) && s[e] != '/' && s[e] != '>') ++e;
    std::string n(s.substr(b, e - b));
    for (char& c : n) c = char(std::tolower(static_cast<unsigned char>(c)));
    return n;
  };
  while (i < out.size()) {
    if (out[i] == '&') {
      static const char* const kEsc[][2] = {{"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&nbsp;", "\xC2\xA0"}};
      bool found = false;
      for (const auto& e : kEsc) {
        if (out.substr(i, std::strlen(e[0])) == e[0]) {
          text += e[1];
          i += std::strlen(e[0]);
          found = true;
          break;
        }
      }
      if (!found) return ::testing::AssertionFailure() << "unescaped '&' at " << i;
      continue;
    }
    if (out[i] != '<') {
      text += out[i++];
      continue;
    }
    if (k >= p.items.size()) return ::testing::AssertionFailure() << "'<' at " << i << " after all items";
    const MarkupItem& it = p.items[k++];
    std::string bytes = it.synthetic ? "</" + std::string(html.substr(it.name.begin, it.name.size())) + ">"
                                     : std::string(html.substr(it.source.begin, it.source.size()));
    if (out.substr(i, bytes.size()) != bytes)
      return ::testing::AssertionFailure() << "item " << (k - 1) << " (" << bytes << ") not at " << i;
    if (it.kind == MarkupKind::kOpen) stack.push_back(tag_name(bytes));
    if (it.kind == MarkupKind::kClose) {
      if (stack.empty() || stack.back() != tag_name(bytes))
        return ::testing::AssertionFailure() << "close " << bytes << " does not match";
      stack.pop_back();
    }
    i += bytes.size();
  }
  if (k != p.items.size()) return ::testing::AssertionFailure() << "only " << k << " items written";
  if (!stack.empty()) return ::testing::AssertionFailure() << stack.size() << " elements left open";
  if (text != target) return ::testing::AssertionFailure() << "text \"" << text << "\" != \"" << target << "\"";
  return ::testing::AssertionSuccess();
}

// ------------------------------------------------------------------------------------ parsing --

TEST(HtmlMarkupParse, CharacterReferences) {
  const std::string html =
      "a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos; f&nbsp;g &#123; &#x7B; &#X7d; &copy; &eacute; &euro; "
      "&bogus; &amp &#0; &#xD800; &#x110000; &#; &";
  const Parsed p = Parse(html);
  ASSERT_TRUE(p.status.ok());
  EXPECT_TRUE(p.items.empty());
  EXPECT_EQ(p.text,
            "a & b <c> \"d\" 'e' f\xC2\xA0g { { } \xC2\xA9 \xC3\xA9 \xE2\x82\xAC "
            "&bogus; &amp &#0; &#xD800; &#x110000; &#; &");
  EXPECT_EQ(IdentityRender(html),
            "a &amp; b &lt;c&gt; \"d\" 'e' f&nbsp;g { { } \xC2\xA9 \xC3\xA9 \xE2\x82\xAC "
            "&amp;bogus; &amp;amp &amp;#0; &amp;#xD800; &amp;#x110000; &amp;#; &amp;");
  // Re-encoded text parses back to the same text.
  const std::string again = IdentityRender(html);
  EXPECT_EQ(Parse(again).text, p.text);
}

TEST(HtmlMarkupParse, Attributes) {
  const std::string html = "<a href=\"x>y\" title='a\"b' data-x=1 hidden>link</a> <i title=\"&amp;&lt;\">t</i>";
  const Parsed p = Parse(html);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.text, "link t");
  ASSERT_EQ(Kinds(p), "OCOC");
  EXPECT_EQ(Src(html, p.items[0]), "<a href=\"x>y\" title='a\"b' data-x=1 hidden>");
  EXPECT_EQ(Src(html, p.items[1]), "</a>");
  EXPECT_EQ(Src(html, p.items[2]), "<i title=\"&amp;&lt;\">");
  EXPECT_EQ(p.items[0].partner, 1);
  EXPECT_EQ(p.items[1].partner, 0);
  EXPECT_EQ(p.items[2].partner, 3);
  EXPECT_EQ(Positions(p), "0,4,5,6");
  EXPECT_FALSE(p.items[0].block);
  EXPECT_EQ(IdentityRender(html), html);
}

TEST(HtmlMarkupParse, CommentsDoctypeProcessingInstructionsCdata) {
  const std::string html = "<!DOCTYPE html><!-- c <b> -->Hi<?php echo 1 ?><![CDATA[ a<b ]]><!-->x";
  const Parsed p = Parse(html);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.text, "Hix");
  ASSERT_EQ(Kinds(p), "QQQQQ");
  EXPECT_EQ(Src(html, p.items[0]), "<!DOCTYPE html>");
  EXPECT_EQ(Src(html, p.items[1]), "<!-- c <b> -->");
  EXPECT_EQ(Src(html, p.items[2]), "<?php echo 1 ?>");
  EXPECT_EQ(Src(html, p.items[3]), "<![CDATA[ a<b ]]>");
  EXPECT_EQ(Src(html, p.items[4]), "<!-->");
  EXPECT_EQ(Positions(p), "0,0,2,2,2");
  for (const MarkupItem& it : p.items) EXPECT_FALSE(it.block);
  EXPECT_EQ(IdentityRender(html), html);
}

TEST(HtmlMarkupParse, RawTextElementsAreBlockOpaques) {
  const std::string html =
      "<p>x<script>if (a<b) document.write(\"</p>\")</script>y<STYLE>p{}</Style >z</p><textarea>a <b></textarea>";
  const Parsed p = Parse(html);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.text, "xyz");
  ASSERT_EQ(Kinds(p), "OQQCQ");
  EXPECT_EQ(Src(html, p.items[1]), "<script>if (a<b) document.write(\"</p>\")</script>");
  EXPECT_EQ(Src(html, p.items[2]), "<STYLE>p{}</Style >");
  EXPECT_EQ(Src(html, p.items[4]), "<textarea>a <b></textarea>");
  for (const MarkupItem& it : p.items) EXPECT_TRUE(it.block);
  EXPECT_EQ(p.dropped, 0u);
  EXPECT_EQ(IdentityRender(html), html);
}

TEST(HtmlMarkupParse, NoTranslateElementsAreOpaque) {
  const std::string html =
      "Hi <span class=\"a notranslate b\">do <b>not</b> touch</span> there "
      "<div translate=\"NO\">x<span>y</span></div><span translate=yes>ok</span>"
      "<span class=notranslated>ok</span> <code>printf</code>.";
  const Parsed p = Parse(html);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.text, "Hi  there okok .");
  ASSERT_EQ(Kinds(p), "QQOCOCQ");
  EXPECT_EQ(Src(html, p.items[0]), "<span class=\"a notranslate b\">do <b>not</b> touch</span>");
  EXPECT_FALSE(p.items[0].block);  // span: inline
  EXPECT_EQ(Src(html, p.items[1]), "<div translate=\"NO\">x<span>y</span></div>");
  EXPECT_TRUE(p.items[1].block);  // div: block
  EXPECT_EQ(Src(html, p.items[6]), "<code>printf</code>");
  EXPECT_FALSE(p.items[6].block);
  EXPECT_EQ(p.items[0].partner, -1);
  EXPECT_EQ(Positions(p), "3,10,10,12,12,14,15");
  EXPECT_EQ(IdentityRender(html), html);
}

TEST(HtmlMarkupParse, NoTranslateNestingAndRepair) {
  // The same-name nested span does not end it; the stray </i> inside stays in its bytes.
  const std::string a = "<span translate=no>a<span>b</span></i>c</span>d";
  Parsed p = Parse(a);
  ASSERT_EQ(Kinds(p), "Q");
  EXPECT_EQ(Src(a, p.items[0]), "<span translate=no>a<span>b</span></i>c</span>");
  EXPECT_EQ(p.text, "d");
  EXPECT_EQ(p.dropped, 0u);
  // Unclosed: it ends where its parent closes, or at the end.
  const std::string b = "<div><span translate=no>x</div>y<code>z";
  p = Parse(b);
  ASSERT_EQ(Kinds(p), "OQCQ");
  EXPECT_EQ(Src(b, p.items[1]), "<span translate=no>x");
  EXPECT_EQ(Src(b, p.items[3]), "<code>z");
  EXPECT_EQ(p.text, "y");
  EXPECT_EQ(IdentityRender(b), b);
}

TEST(HtmlMarkupParse, VoidAndSelfClosing) {
  const std::string html = "a<br>b<img src=x.png/>c<x-foo/>d<BR/><div/>e<input disabled>";
  const Parsed p = Parse(html);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.text, "abcde");
  ASSERT_EQ(Kinds(p), "VVVVVV");
  EXPECT_EQ(Src(html, p.items[1]), "<img src=x.png/>");
  EXPECT_EQ(Src(html, p.items[2]), "<x-foo/>");
  const bool block[] = {true, false, false, true, true, false};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(p.items[i].block, block[i]) << i;
  EXPECT_EQ(Positions(p), "1,2,3,4,4,5");
  EXPECT_EQ(IdentityRender(html), html);
}

TEST(HtmlMarkupParse, UppercaseNames) {
  const std::string html = "<DIV><B>x</b></Div>";
  const Parsed p = Parse(html);
  ASSERT_EQ(Kinds(p), "OOCC");
  EXPECT_EQ(p.items[0].partner, 3);
  EXPECT_EQ(p.items[1].partner, 2);
  EXPECT_TRUE(p.items[0].block);
  EXPECT_FALSE(p.items[1].block);
  EXPECT_EQ(p.items[1].parent, 0);
  EXPECT_EQ(p.items[1].depth, 1u);
  EXPECT_EQ(IdentityRender(html), html);
}

TEST(HtmlMarkupParse, StrayCloseIsDropped) {
  const Parsed p = Parse("a</b>c</p>");
  EXPECT_EQ(p.text, "ac");
  EXPECT_TRUE(p.items.empty());
  EXPECT_EQ(p.dropped, 2u);
  EXPECT_EQ(IdentityRender("a</b>c</p>"), "ac");
}

TEST(HtmlMarkupParse, UnclosedIsClosedAtTheEndOrByItsParent) {
  Parsed p = Parse("<b>x");
  ASSERT_EQ(Kinds(p), "OS");
  EXPECT_EQ(p.items[1].source.begin, 4u);
  EXPECT_TRUE(p.items[1].source.empty());
  EXPECT_EQ(IdentityRender("<b>x"), "<b>x</b>");
  EXPECT_EQ(IdentityRender("<div><b>x</div>y"), "<div><b>x</b></div>y");
  EXPECT_EQ(IdentityRender("<Em class=a>x"), "<Em class=a>x</Em>");
}

TEST(HtmlMarkupParse, Misnesting) {
  const std::string html = "<b><i>x</b>y</i>";
  const Parsed p = Parse(html);
  ASSERT_EQ(Kinds(p), "OOSC");
  EXPECT_EQ(p.text, "xy");
  EXPECT_EQ(p.dropped, 1u);
  EXPECT_EQ(p.items[0].partner, 3);
  EXPECT_EQ(p.items[1].partner, 2);
  EXPECT_EQ(IdentityRender(html), "<b><i>x</i></b>y");
}

TEST(HtmlMarkupParse, OptionalEndTags) {
  EXPECT_EQ(IdentityRender("<p>a<p>b"), "<p>a</p><p>b</p>");
  EXPECT_EQ(IdentityRender("<ul><li>a<li>b</ul>"), "<ul><li>a</li><li>b</li></ul>");
  EXPECT_EQ(IdentityRender("<dl><dt>a<dd>b<dt>c</dl>"), "<dl><dt>a</dt><dd>b</dd><dt>c</dt></dl>");
  EXPECT_EQ(IdentityRender("<table><tr><td>a<td>b<tr><th>c</table>"),
            "<table><tr><td>a</td><td>b</td></tr><tr><th>c</th></tr></table>");
  EXPECT_EQ(IdentityRender("<p>a<div>b</div>"), "<p>a</p><div>b</div>");
  EXPECT_EQ(IdentityRender("<p>a<b>b</b>"), "<p>a<b>b</b></p>");  // inline does not close p
}

TEST(HtmlMarkupParse, LessThanAsText) {
  const std::string html = "a < b <3 <> </ > <= x</1";
  const Parsed p = Parse(html);
  ASSERT_TRUE(p.status.ok());
  EXPECT_TRUE(p.items.empty());
  EXPECT_EQ(p.text, html);
  EXPECT_EQ(IdentityRender(html), "a &lt; b &lt;3 &lt;&gt; &lt;/ &gt; &lt;= x&lt;/1");
}

TEST(HtmlMarkupParse, UnterminatedAtTheEndIsOpaque) {
  for (const char* tail : {"<b class=\"x", "<!-- b", "<script>x", "</b", "<![CDATA[ x", "<a", "<?x"}) {
    const std::string html = std::string("a <i>b</i> ") + tail;
    const Parsed p = Parse(html);
    ASSERT_TRUE(p.status.ok());
    EXPECT_EQ(p.text, "a b ") << tail;
    ASSERT_EQ(Kinds(p), "OCQ") << tail;
    EXPECT_EQ(Src(html, p.items[2]), tail);
    EXPECT_EQ(IdentityRender(html), html);
  }
  // '>' inside quotes does not end a tag; an unmatched quote runs to the end.
  const Parsed q = Parse("x<a title=\"1>2\">y</a><b title='z>w");
  EXPECT_EQ(Kinds(q), "OCQ");
  EXPECT_EQ(q.text, "xy");
}

TEST(HtmlMarkupParse, TitleContentIsText) {
  const std::string html = "<title>a<b>c &amp; </tit</title>d";
  const Parsed p = Parse(html);
  ASSERT_EQ(Kinds(p), "OC");
  EXPECT_EQ(p.text, "a<b>c & </titd");
  EXPECT_TRUE(p.items[0].block);
  EXPECT_EQ(IdentityRender(html), "<title>a&lt;b&gt;c &amp; &lt;/tit</title>d");
}

TEST(HtmlMarkupParse, InvalidUtf8AndNulPassThrough) {
  const std::string html = std::string("\xff<b>\xc3(\0x</b>", 12);
  const Parsed p = Parse(html);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.text, std::string("\xff\xc3(\0x", 5));
  EXPECT_EQ(IdentityRender(html), html);
}

TEST(HtmlMarkupParse, CapacityErrors) {
  const std::string html = "<b>hello</b>";
  char text[16];
  MarkupItem items[4];
  size_t len = 9, n = 9, dropped = 9;
  Status s = ParseMarkup(html, text, 4, &len, items, 4, &n, &dropped);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find("plain text capacity 4 too small: the plain text needs 5 bytes"), std::string::npos)
      << s.message();
  s = ParseMarkup(html, text, 5, &len, items, 4, &n, &dropped);
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(len, 5u);
  s = ParseMarkup(html, text, 16, &len, items, 1, &n, &dropped);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find("markup item capacity 1 too small"), std::string::npos) << s.message();
  s = ParseMarkup(html, text, 16, &len, items, 2, &n, &dropped);
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(n, 2u);
  // Synthetic closes need room too.
  s = ParseMarkup("<b><i>x", text, 16, &len, items, 3, &n, &dropped);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
}

TEST(HtmlMarkupParse, DeepNesting) {
  std::string html;
  for (int i = 0; i < 1000; ++i) html += "<b>";
  html += "x";
  for (int i = 0; i < 1000; ++i) html += "</b>";
  Parsed p = Parse(html);
  ASSERT_TRUE(p.status.ok());
  ASSERT_EQ(p.items.size(), 2000u);
  EXPECT_EQ(p.items[999].depth, 999u);
  EXPECT_EQ(p.items[999].partner, 1000);
  EXPECT_EQ(p.items[0].partner, 1999);
  EXPECT_EQ(IdentityRender(html), html);
  // Unclosed, and a close far up the stack (beyond kMaxCloseSearch it is a stray close).
  std::string deep = "<i>";
  for (int i = 0; i < 1000; ++i) deep += "<b>";
  deep += "x</i>";
  p = Parse(deep);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.dropped, 1u);
  EXPECT_EQ(p.items.size(), 2002u);
  std::string near = "<i><b><b>x</i>";
  EXPECT_EQ(IdentityRender(near), "<i><b><b>x</b></b></i>");
  std::string out = IdentityRender(deep);
  EXPECT_TRUE(WellFormed(deep, p, out, "x"));
}

TEST(HtmlMarkupSegments, BlockItemsSplit) {
  const Parsed p = Parse("<p>a</p>b<br>c<b>d</b><!-- x -->e<script></script>");
  ASSERT_EQ(p.text, "abcde");
  ByteSpan segs[4];
  size_t count = 0;
  ASSERT_TRUE(MarkupSegments(p.items.data(), p.items.size(), p.text.size(), segs, 4, &count).ok());
  ASSERT_EQ(count, 3u);
  EXPECT_EQ(segs[0].begin, 0u);
  EXPECT_EQ(segs[0].end, 1u);
  EXPECT_EQ(segs[1].begin, 1u);
  EXPECT_EQ(segs[1].end, 2u);
  EXPECT_EQ(segs[2].begin, 2u);
  EXPECT_EQ(segs[2].end, 5u);
  const Status s = MarkupSegments(p.items.data(), p.items.size(), p.text.size(), segs, 2, &count);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find("3 segments"), std::string::npos);
  ASSERT_TRUE(MarkupSegments(nullptr, 0, 0, segs, 4, &count).ok());
  EXPECT_EQ(count, 0u);
}

// ------------------------------------------------------------------------------------ rendering --

TEST(HtmlMarkupRender, IdentityGivesTheInputBack) {
  for (const char* html : {
           "",
           "plain text only",
           "<p>Hello <b>big</b> world.</p>\n<p>Second <i>one</i>.</p>",
           "  <div>\n  <p>One. Two <a href=\"#\">three</a>.</p>\n</div>  ",
           "un<b>believ</b>able and <i> spaced </i> out",
           "a <img src=x> b <wbr>c<br>d",
           "<b></b>x<i> </i>y <span></span> z",
           "<ul><li>one</li><li>two <em>2</em></li></ul>",
           "x<!-- c -->y <script>s()</script> z",
       }) {
    EXPECT_EQ(IdentityRender(html), html);
  }
}

TEST(HtmlMarkupRender, IdentityIsWellFormed) {
  const std::string html = "<div><b>a <i>b</b> c</i> <p>d<li>e</div></span> f &amp; g<x";
  const Parsed p = Parse(html);
  std::string out;
  ASSERT_TRUE(Render(html, p, Identity(p), &out).ok());
  EXPECT_EQ(out, "<div><b>a <i>b</i></b> c <p>d</p><li>e</li></div> f &amp; g<x");
  EXPECT_TRUE(WellFormed(html, p, out, p.text));
}

TEST(HtmlMarkupRender, Reordered) {
  // A man is riding a bike . -> Ein Mann fährt Fahrrad .
  EXPECT_EQ(RenderAligned("A man is <b>riding</b> a bike.", "Ein Mann f\xC3\xA4hrt Fahrrad.", {0, 1, 3, 5, 6}),
            "Ein Mann <b>f\xC3\xA4hrt</b> Fahrrad.");
  // Nested: the child's hull is inside the parent's.
  EXPECT_EQ(RenderAligned("<b>A <i>B</i></b> C", "C B A", {2, 1, 0}), "C <b><i>B</i> A</b>");
}

TEST(HtmlMarkupRender, SiblingsDoNotOverlap) {
  // one -> eins, two -> zwei, swapped: the later sibling starts at the end of the earlier one.
  const std::string out = RenderAligned("<p><b>one</b> <i>two</i></p>", "zwei eins", {1, 0});
  EXPECT_EQ(out, "<p>zwei <b>eins</b><i></i></p>");
}

TEST(HtmlMarkupRender, ManyToOneAndNonContiguousHull) {
  // "does not" -> "ne ... pas" around "va": the hull takes both.
  EXPECT_EQ(RenderAligned("He <b>does not</b> go.", "Il ne va pas.", {0, 2, 3, 2, 4}), "Il <b>ne va pas</b>.");
  // two target words aligned to one source word
  EXPECT_EQ(RenderAligned("I <i>love</i> it.", "Ich habe es gern.", {0, -1, 2, 1, 3}),
            "Ich habe es <i>gern</i>.");
}

TEST(HtmlMarkupRender, UnalignedElementIsEmptyBeforeTheNextAlignedWord) {
  EXPECT_EQ(RenderAligned("Hello <b>dear</b> world", "Hallo Welt", {0, 2}), "Hallo <b></b>Welt");
  EXPECT_EQ(RenderAligned("Hello <b>dear</b>", "Hallo", {0}), "Hallo<b></b>");
}

TEST(HtmlMarkupRender, VoidMidSentence) {
  EXPECT_EQ(RenderAligned("Press <img src=k.png> now", "Jetzt dr\xC3\xBC" "cken", {1, 0}),
            "<img src=k.png>Jetzt dr\xC3\xBC" "cken");
  EXPECT_EQ(RenderAligned("Press now <!-- c -->please", "Bitte jetzt dr\xC3\xBC" "cken", {2, 1, 0}),
            "<!-- c -->Bitte jetzt dr\xC3\xBC" "cken");
  // Two leaves keep their input order: the comment (before Bitte) cannot move before the <wbr>.
  EXPECT_EQ(RenderAligned("Press <wbr>now <!-- c -->please", "Bitte jetzt dr\xC3\xBC" "cken", {2, 1, 0}),
            "Bitte <wbr><!-- c -->jetzt dr\xC3\xBC" "cken");
  // At the end of the sentence, without a following aligned token: after the last target token.
  EXPECT_EQ(RenderAligned("Press now<br><img>.", "Jetzt dr\xC3\xBC" "cken.", {1, 0, -1}),
            "Jetzt dr\xC3\xBC" "cken.<br><img>");
}

TEST(HtmlMarkupRender, BlockTagsBetweenSentences) {
  const std::string html = "<div>\n  <p>Hello world.</p>\n  <p>Good <b>bye</b>.</p>\n</div>";
  const Parsed p = Parse(html);
  ASSERT_EQ(p.text, "\n  Hello world.\n  Good bye.\n");
  Translation t;
  t.target = "\n  Hallo Welt.\n  Auf Wiedersehen.\n";
  t.tokens = {{{3, 8}, {3, 8}},    {{9, 13}, {9, 14}},  {{13, 14}, {14, 15}},
              {{17, 20}, {18, 22}}, {{21, 32}, {23, 26}}, {{32, 33}, {26, 27}}};
  t.sentences = {{{3, 15}, {3, 14}, 0, 3}, {{18, 27}, {17, 33}, 3, 3}};
  std::string out;
  ASSERT_TRUE(Render(html, p, t, &out).ok());
  EXPECT_EQ(out, "<div>\n  <p>Hallo Welt.</p>\n  <p>Auf <b>Wiedersehen</b>.</p>\n</div>");
  EXPECT_TRUE(WellFormed(html, p, out, t.target));
}

TEST(HtmlMarkupRender, InlineAcrossSentences) {
  const std::string html = "<b>One two. Three</b> four.";
  const Parsed p = Parse(html);
  ASSERT_EQ(p.text, "One two. Three four.");
  Translation t;
  t.target = "Eins zwei. Vier drei.";
  t.tokens = {{{0, 4}, {0, 3}}, {{5, 9}, {4, 7}}, {{9, 10}, {7, 8}},
              {{11, 15}, {15, 19}}, {{16, 20}, {9, 14}}, {{20, 21}, {19, 20}}};
  t.sentences = {{{0, 8}, {0, 10}, 0, 3}, {{9, 20}, {11, 21}, 3, 3}};
  std::string out;
  ASSERT_TRUE(Render(html, p, t, &out).ok());
  EXPECT_EQ(out, "<b>Eins zwei. Vier drei</b>.");
  EXPECT_TRUE(WellFormed(html, p, out, t.target));
}

TEST(HtmlMarkupRender, SentenceWithoutTokensIsVerbatim) {
  const std::string html = "x <b>a</b> <i>b c</i>";
  const Parsed p = Parse(html);
  Translation t;
  t.target = p.text;
  t.sentences = {{{0, uint32_t(p.text.size())}, {0, uint32_t(p.text.size())}, 0, 0}};
  std::string out;
  ASSERT_TRUE(Render(html, p, t, &out).ok());
  EXPECT_EQ(out, html);
}

TEST(HtmlMarkupRender, ErrorsAndCapacities) {
  const std::string html = "<b>x</b> &amp;";
  const Parsed p = Parse(html);
  const Translation t = Identity(p);
  std::vector<unsigned char> scratch(RenderScratchBytes(p.items.size(), t.tokens.size()));
  char out[64];
  size_t len = 0;
  Status s = RenderMarkup(html, p.items.data(), p.items.size(), p.text, t.target, t.sentences.data(),
                          t.sentences.size(), t.tokens.data(), t.tokens.size(), out, sizeof(out), &len,
                          scratch.data(), scratch.size());
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(std::string(out, len), html);
  const size_t need = len;
  s = RenderMarkup(html, p.items.data(), p.items.size(), p.text, t.target, t.sentences.data(), t.sentences.size(),
                   t.tokens.data(), t.tokens.size(), out, need - 1, &len, scratch.data(), scratch.size());
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find("needs " + std::to_string(need)), std::string::npos) << s.message();
  s = RenderMarkup(html, p.items.data(), p.items.size(), p.text, t.target, t.sentences.data(), t.sentences.size(),
                   t.tokens.data(), t.tokens.size(), out, sizeof(out), &len, scratch.data(), scratch.size() - 1);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  // Broken items: a close that is not the innermost open's.
  std::vector<MarkupItem> bad = p.items;
  bad[0].partner = -1;
  s = RenderMarkup(html, bad.data(), bad.size(), p.text, t.target, t.sentences.data(), t.sentences.size(),
                   t.tokens.data(), t.tokens.size(), out, sizeof(out), &len, scratch.data(), scratch.size());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  // A token outside its sentence.
  std::vector<AlignedToken> tokens = t.tokens;
  tokens[0].target = {0, 40};
  s = RenderMarkup(html, p.items.data(), p.items.size(), p.text, t.target, t.sentences.data(), t.sentences.size(),
                   tokens.data(), tokens.size(), out, sizeof(out), &len, scratch.data(), scratch.size());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

TEST(HtmlMarkupRender, NoHeapAllocation) {
#ifndef MTLITE_COUNTS_ALLOCATIONS
  GTEST_SKIP() << "allocation counting is unavailable under a sanitizer";
#else
  const std::string html = "<p>Hello <b>big</b> &amp; <i>bold</i> world<br>!</p><!-- c --><x";
  char text[128];
  MarkupItem items[64];
  ByteSpan segs[8];
  const SentencePair sentences[] = {{{0, 5}, {0, 5}, 0, 0}, {{6, 12}, {6, 12}, 0, 0}};
  alignas(8) unsigned char scratch[1024];
  char out[256];
  size_t len = 0, n = 0, dropped = 0, count = 0, out_len = 0;
  testing_util::g_allocs = 0;
  testing_util::g_counting = true;
  const bool ok1 = ParseMarkup(html, text, sizeof(text), &len, items, 64, &n, &dropped).ok();
  const bool ok2 = MarkupSegments(items, n, len, segs, 8, &count).ok();
  const bool ok3 = RenderMarkup(html, items, n, std::string_view(text, len), std::string_view(text, len), sentences, 2,
                                nullptr, 0, out, sizeof(out), &out_len, scratch, sizeof(scratch))
                       .ok();
  testing_util::g_counting = false;
  EXPECT_TRUE(ok1 && ok2 && ok3);
  EXPECT_EQ(testing_util::g_allocs.load(), 0);
  EXPECT_EQ(std::string(out, out_len), "<p>Hello <b>big</b> &amp; <i>bold</i> world<br>!</p><!-- c --><x");
#endif
}

}  // namespace
}  // namespace text
}  // namespace mtlite

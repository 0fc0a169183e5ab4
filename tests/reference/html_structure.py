"""The structure of an HTML text as the text layer's markup rules see it (runtime/src/html_markup.h),
read with the standard library's html.parser (an independent parser):

  * events: the start tags with their attributes (decoded), end tags and void tags, in order;
  * errors: what makes the text not well-formed (an end tag that does not close the innermost
    open element, an element left open; void elements need no end tag);
  * segments: the text content (character references decoded) cut where a block element starts
    or ends, without the content of the untranslated elements (script, style, code,
    translate="no", class="notranslate") and of comments;
  * elements: per element, its name, attributes and the text inside it (whitespace collapsed).
"""
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta", "param", "source",
        "track", "wbr", "basefont", "bgsound", "frame"}
BLOCK = {"p", "div", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "td", "th", "tr",
         "table", "thead", "tbody", "tfoot", "caption", "col", "colgroup", "section", "article", "header", "footer",
         "nav", "aside", "blockquote", "pre", "figure", "figcaption", "main", "form", "fieldset", "legend",
         "address", "hr", "br", "title", "option", "optgroup", "select", "details", "summary", "dialog", "menu",
         "html", "head", "body", "center", "hgroup", "frameset"}
RAW_TEXT = {"script", "style", "textarea", "xmp", "iframe", "noembed", "noframes", "noscript"}
OPAQUE_ELEMENTS = {"code", "svg", "math"}


def untranslated(tag, attrs):
    if tag in RAW_TEXT or tag in OPAQUE_ELEMENTS:
        return True
    for k, v in attrs:
        if k == "translate" and (v or "").strip().lower() == "no":
            return True
        if k == "class" and "notranslate" in (v or "").split():
            return True
    return False


class Structure(HTMLParser):
    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.events, self.errors, self.segments = [], [], [""]
        self.elements = []  # [name, attrs, text inside]
        self._stack = []    # (name, element index, untranslated)
        self._opaque = 0    # open untranslated elements
        self.feed(text)
        self.close()
        for name, _, _ in reversed(self._stack):
            self.errors.append(f"<{name}> not closed")
        for e in self.elements:
            e[2] = " ".join(e[2].split())

    def _break(self):
        if self.segments[-1]:
            self.segments.append("")

    def handle_starttag(self, tag, attrs):
        self.events.append(("start", tag, tuple(attrs)))
        opaque = untranslated(tag, attrs)
        if (tag in BLOCK or tag in RAW_TEXT) and not self._opaque:
            self._break()
        if tag in VOID:
            return
        self.elements.append([tag, tuple(attrs), ""])
        self._stack.append((tag, len(self.elements) - 1, opaque))
        self._opaque += opaque

    def handle_startendtag(self, tag, attrs):
        self.events.append(("void", tag, tuple(attrs)))
        if tag in BLOCK and not self._opaque:
            self._break()

    def handle_endtag(self, tag):
        self.events.append(("end", tag, ()))
        if not self._stack or self._stack[-1][0] != tag:
            top = self._stack[-1][0] if self._stack else "nothing"
            self.errors.append(f"</{tag}> while <{top}> is open")
            # recover: close up to the element of that name, if any
            names = [s[0] for s in self._stack]
            if tag not in names:
                return
            while self._stack[-1][0] != tag:
                self._opaque -= self._stack.pop()[2]
        _, _, opaque = self._stack.pop()
        self._opaque -= opaque
        if (tag in BLOCK or tag in RAW_TEXT) and not self._opaque:
            self._break()

    def handle_data(self, data):
        for _, k, _ in self._stack:
            self.elements[k][2] += data
        if not self._opaque:
            self.segments[-1] += data

    def handle_comment(self, data):
        self.events.append(("comment", data, ()))

    def text_segments(self):
        """The segments that hold text, line breaks made spaces."""
        return [s.replace("\n", " ") for s in self.segments if s.strip()]

    def tags(self):
        """The events without comments."""
        return [e for e in self.events if e[0] != "comment"]

    def inline_elements(self):
        return [tuple(e) for e in self.elements if e[0] not in BLOCK]

#!/usr/bin/python3
"""HTML snippets for checking the text layer's markup (`mtlite translate --html`), made from dev
sentences (tests/data/dev/{multi30k.val,tatoeba.dev}.en), deterministic (fixed seed).

Each snippet holds 1-4 sentences with:
  * inline tags (b i em strong a span u sub sup code) over random word spans, some nested, with
    attributes in single and double quotes holding character references
    (title="a &quot;b&quot;", href="x?a=1&amp;b=2");
  * void tags (<br>, <img src=...>), comments, <script>, translate="no" and class="notranslate"
    spans, character references in the text (&amp; &quot; &#39; &nbsp; &eacute; ...);
  * block tags (p div li ul h2 td, with table/tr) around sentences;
  * about 10 % malformed (marked "malformed": true): an unclosed inline or block element, a stray
    end tag, misnested inline elements.
Never generated: unterminated tags, comments or raw-text elements (they run to the end of the
input), and the element <section>, which a caller may use to join snippets into one document.

Output: JSON lines {"html", "malformed", "kind"}. Usage: make_html_snippets.py [--n 600]
[--seed 20240502] [--out FILE]
"""
import argparse
import html
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEV = os.path.join(HERE, "..", "data", "dev")
CORPORA = ("multi30k.val", "tatoeba.dev")
INLINE = ("b", "i", "em", "strong", "a", "span", "u", "sub", "sup", "code")
MALFORMED = 0.1


def sentences():
    out = []
    for corpus in CORPORA:
        with open(os.path.join(DEV, corpus + ".en"), encoding="utf-8") as f:
            out += [line.strip() for line in f if 2 <= len(line.split()) <= 25]
    return out


def attrs(rng, tag):
    """Attributes of a start tag: single and double quotes, character references."""
    if tag == "a":
        return rng.choice([' href="x?a=1&amp;b=2"',
                           " href='https://example.com/p?q=1&amp;r=2' title=\"a &quot;b&quot;\"", ' href="#top"'])
    if tag == "span":
        return rng.choice(["", ' class="hl"', " class='x y' data-n=\"3\"", ' title="a &quot;b&quot;"',
                           " style='color: red'"])
    return rng.choice(["", "", "", ' class="k"', " title='it&#39;s'"])


def escape_word(rng, w):
    """A word as HTML text: & < > escaped; sometimes ' " and a letter as character references."""
    s = html.escape(w, quote=False)
    if "'" in s and rng.random() < 0.5:
        s = s.replace("'", rng.choice(["&#39;", "&apos;", "&#x27;"]))
    if '"' in s and rng.random() < 0.5:
        s = s.replace('"', "&quot;")
    if "e" in s and rng.random() < 0.03:
        s = s.replace("e", "&#101;", 1)
    return s


class Snippet:
    def __init__(self, rng):
        self.rng = rng
        self.malformed = False
        self.kinds = set()

    def inline(self, words, defect=False):
        """One sentence's words with inline markup over random spans (some nested); defect: with
        one defect instead (an unclosed or stray inline tag, two misnested elements, an unclosed
        <p>), and no other span, which could hide it."""
        rng = self.rng
        toks = [escape_word(rng, w) for w in words]
        n = len(toks)
        before = [""] * n  # markup written before word k
        after = [""] * n   # markup written after word k
        spans = []
        for _ in range(0 if defect else rng.choice([0, 1, 1, 2, 2, 3])):
            a = rng.randrange(n)
            b = rng.randrange(a, min(n, a + rng.randint(1, 4)))
            if any(not (b < x or a > y or (x <= a and b <= y) or (a <= x and y <= b)) for x, y in spans):
                continue  # would cross an earlier span
            spans.append((a, b))
        # outer spans first, so that inner tags open after and close before them
        spans.sort(key=lambda s: (s[0], -s[1]))
        for a, b in spans:
            tag = rng.choice(INLINE)
            self.kinds.add("inline")
            before[a] += f"<{tag}{attrs(rng, tag)}>"
            after[b] = f"</{tag}>" + after[b]
        if defect:
            self.malformed = True
            self.kinds.add("malformed")
            kind = rng.randrange(4)
            k = rng.randrange(n)
            if kind == 0:  # unclosed inline element
                before[k] += "<b>"
            elif kind == 1:  # stray end tag
                after[k] += rng.choice(["</i>", "</em>", "</u>"])
            elif kind == 2 and n >= 3:  # misnested: <strong>.. <em>.. </strong> ..</em>
                m = rng.randrange(1, n - 1)
                m2 = rng.randrange(m, n - 1)
                before[0] += "<strong>"
                before[m] += "<em>"
                after[m2] += "</strong>"
                after[n - 1] += "</em>"
            else:  # an unclosed <p> (an optional end tag, but not closed in order)
                before[0] = "<p>" + before[0]
        out = []
        for k in range(n):
            sep = " "
            r = rng.random()
            if k and r < 0.05:
                sep = rng.choice([' <img src="a.png" alt="x"> ', " <img src='b.gif'>", "<br>", " <!-- note --> "])
                self.kinds.add("void/comment")
            elif k and r < 0.08:
                sep = rng.choice([' <span translate="no">Acme Widget</span> ',
                                  ' <span class="notranslate">v1.2</span> ', " <b translate='no'>Kept As Is</b> "])
                self.kinds.add("notranslate")
            elif k and r < 0.10:
                sep = rng.choice(["&nbsp;", " &amp; ", " &quot;"])
                self.kinds.add("entity")
            out.append((sep if k else "") + before[k] + toks[k] + after[k])
        return "".join(out)


def make(n, seed):
    rng = random.Random(seed)
    pool = sentences()
    out = []
    for _ in range(n):
        sn = Snippet(rng)
        k = rng.randint(1, 4)
        start = rng.randrange(0, len(pool) - k)
        bad = rng.randrange(k) if rng.random() < MALFORMED else -1
        sents = [sn.inline(s.split(), j == bad) for j, s in enumerate(pool[start:start + k])]
        layout = rng.randrange(7)
        if layout == 0:  # plain sentences, one text
            body = " ".join(sents)
        elif layout == 1:
            body = "".join(f"<p>{s}</p>" for s in sents)
        elif layout == 2:
            body = "<ul>" + "".join(f"\n  <li>{s}</li>" for s in sents) + "\n</ul>"
        elif layout == 3:
            body = f"<h2>{sents[0]}</h2>\n<div>{' '.join(sents[1:])}</div>"
        elif layout == 4:
            body = "<table><tr>" + "".join(f"<td>{s}</td>" for s in sents) + "</tr></table>"
        elif layout == 5:  # sentences with a script and a comment between them
            body = sents[0]
            for s in sents[1:]:
                body += rng.choice([" <script>var a = \"<b>\" + 1 < 2;</script> ", " <!-- block note --> ",
                                    "<br>", " <style>p { color: red }</style> "]) + s
        else:
            body = "<div class='c'>" + " ".join(sents) + "</div>"
        if layout:
            sn.kinds.add("block")
        out.append({"html": body, "malformed": sn.malformed, "kind": sorted(sn.kinds)})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=600)
    ap.add_argument("--seed", type=int, default=20240502)
    ap.add_argument("--out", default="-")
    args = ap.parse_args()
    rows = make(args.n, args.seed)
    f = sys.stdout if args.out == "-" else open(args.out, "w", encoding="utf-8")
    for r in rows:
        f.write(json.dumps(r, ensure_ascii=False) + "\n")
    if f is not sys.stdout:
        f.close()


if __name__ == "__main__":
    main()

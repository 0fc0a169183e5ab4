#!/usr/bin/env python3
"""Writes the seed corpora of the text-path fuzz targets (stdlib only, deterministic):

  tests/fuzz/seeds/tokenizer/  one text per file: every adversarial tokenizer case
                               (tests/data/tokenizer/adversarial.txt), every 100th line of each dev
                               set (en and de), and hand-made bad input (invalid UTF-8 of every
                               kind, NUL, BOM, bidi and control characters);
  tests/fuzz/seeds/translate/  1-4 sentences per file, one per line: dev lines in groups,
                               adversarial lines, bad input mixed with good sentences.

Files named regression-* (reproducers of fixed findings) are kept; the rest are rewritten.
Usage: python3 tests/fuzz/make_text_seeds.py
"""
import os
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
SEEDS = ROOT / "tests" / "fuzz" / "seeds"

# Invalid UTF-8 of every kind, and valid but hostile text.
BAD = {
    "utf8-overlong-2byte-slash": b"a\xc0\xafb",
    "utf8-overlong-3byte-nul": b"x\xe0\x80\x80y",
    "utf8-overlong-4byte": b"\xf0\x82\x82\xac euro",
    "utf8-surrogate-high": b"half \xed\xa0\x80 pair",
    "utf8-surrogate-low": b"\xed\xbf\xbf",
    "utf8-surrogate-pair-cesu": b"\xed\xa0\xbd\xed\xb8\x80",
    "utf8-beyond-10ffff": b"big \xf4\x90\x80\x80",
    "utf8-lead-f5": b"\xf5\x80\x80\x80",
    "utf8-lead-ff": b"A dog \xff runs.",
    "utf8-lone-continuation": b"\x80 cat",
    "utf8-truncated-2of3": b"snow \xe2\x82",
    "utf8-truncated-3of4-end": b"A man rides a bike \xf0\x9f\x98",
    "utf8-truncated-mid": b"\xc3 A woman sits.",
    "nul-inside": b"A dog\x00 runs in the park.",
    "nul-only": b"\x00",
    "bom-start": b"\xef\xbb\xbfA man is riding a bike.",
    "bom-only": b"\xef\xbb\xbf",
    "bidi-controls": "A \u202eman\u202c is \u2067riding\u2069 a bike \u200f.".encode(),
    "control-chars": b"Two\x01 dogs\x1b[31m play\x7f in the\x0b snow.",
    "zero-width": "A\u200bman\u200d is\ufeff here.".encode(),
    "nfkc-expansion": ("\ufdfa" * 8).encode(),
    "cr-inside": b"carriage\rreturn\r",
}


def lines(path):
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def write(directory, name, data):
    (directory / name).write_bytes(data)


def main():
    adversarial = [l.encode() for l in lines(DATA / "tokenizer" / "adversarial.txt")]
    dev = {}
    for name in ("multi30k.val.en", "multi30k.val.de", "tatoeba.dev.en", "tatoeba.dev.de"):
        dev[name] = [l.encode() for l in lines(DATA / "dev" / name)]

    for target in ("tokenizer", "translate"):
        d = SEEDS / target
        d.mkdir(parents=True, exist_ok=True)
        for f in d.iterdir():
            if not f.name.startswith("regression-"):
                f.unlink()

    tok = SEEDS / "tokenizer"
    for i, text in enumerate(adversarial):
        write(tok, "adversarial-%02d" % i, text)
    for name, rows in dev.items():
        for i in range(0, len(rows), 100):
            write(tok, "dev-%s-%04d" % (name, i), rows[i])
    for name, data in BAD.items():
        write(tok, name, data)

    tr = SEEDS / "translate"
    en = dev["multi30k.val.en"] + dev["tatoeba.dev.en"]
    k = 0
    for i in range(0, 240, 10):  # groups of 1..4 dev sentences
        group = en[i:i + 1 + k % 4]
        write(tr, "dev-group-%03d" % i, b"\n".join(group))
        k += 1
    for i, text in enumerate(adversarial[::3]):
        write(tr, "adversarial-%02d" % (3 * i), text)
    good = en[0]
    for name, data in BAD.items():
        write(tr, name, good + b"\n" + data + b"\n" + en[1])
    write(tr, "empty-sentences", b"\n\n\n")
    write(tr, "empty", b"")
    write(tr, "long-sentence", b" ".join(en[:6]))


if __name__ == "__main__":
    main()

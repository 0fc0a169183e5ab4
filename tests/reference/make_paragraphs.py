#!/usr/bin/python3
"""Paragraphs with known sentence boundaries, for measuring the sentence splitter.

A paragraph joins 3-6 consecutive lines of a dev set (tests/data/dev/{multi30k.val,tatoeba.dev}
.{en,de}) with one space; its true boundaries are the byte offsets (UTF-8) where the second and
later lines start. Lines without terminal punctuation (some Multi30k captions) are skipped: their
end cannot be seen in the joined text, so the lines of a paragraph are consecutive among the
lines that have it. About a quarter of the paragraphs also get one synthetic sentence (written
for this test, listed below; marked "synthetic": true) with abbreviations, numbers, initials,
URLs, dates and quotes, which the dev lines have few of.

Output: JSON lines {"text", "boundaries", "lang", "corpus", "synthetic"}; deterministic (fixed
seed). Usage: make_paragraphs.py [--n 1000] [--seed 20240501] [--out FILE]
"""
import argparse
import json
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEV = os.path.join(HERE, "..", "data", "dev")
CORPORA = ("multi30k.val", "tatoeba.dev")

# Synthetic sentences (the project's own): each starts uppercase (or with an opening quote) and
# ends with terminal punctuation; none ends with an abbreviation.
SYNTHETIC = {
    "en": [
        "Dr. Smith arrived at 10.30 and met Mr. Brown in the hall.",
        "The price rose by 3.5 percent, e.g. from $1,000.50 to $1,035.52.",
        "She moved to the U.S. in 1998 and studied at St. John's College.",
        "He said: \"We will meet again.\"",
        "Read No. 5 on p. 12, i.e. the second chapter.",
        "J. K. Rowling wrote all seven books.",
        "Visit example.com/a.b or https://x.y/z?q=1 for details.",
        "Send a mail to a.b@c.de and attach report.pdf, please.",
        "Version v1.2.3 fixed the bug vs. the old release.",
        "The meeting is on Jan. 5 at 3 p.m. in room 4.",
        "\"Why not?\" she asked.",
        "We waited... and then it started to rain.",
        "Prof. Adams, Mrs. Lee and Capt. Hook were there.",
        "It weighs 2.5 kg, approx. half of the box.",
        "Mrs. Jones paid 1,200.75 dollars for Art. 3 of the set.",
        "What a surprise!",
        "Are you sure?!",
        "The train leaves at 7.45 from platform 2.",
        "George W. Bush visited Washington, D.C. on Monday.",
        "Ms. Taylor works for Acme Corp. in Boston.",
    ],
    "de": [
        "Dr. Müller kommt am 1. Januar um 10.30 Uhr.",
        "Wir brauchen Obst, z. B. Äpfel und Birnen.",
        "Das ist ein Problem, d. h. wir müssen handeln.",
        "Die Wohnung in der Hauptstr. 5 kostet ca. 800 Euro.",
        "Hr. Meier und Fr. Schulz sind Nachbarn.",
        "Er belegte den 3. Platz im Rennen.",
        "Im 19. Jahrhundert wuchs die Stadt stark.",
        "Sie sagte: „Ich komme morgen.“",
        "Bitte lesen Sie Nr. 7 bzw. Nr. 8 der Liste.",
        "Der Preis stieg um 3,5 Prozent, also um 3.5 Punkte.",
        "Äpfel, Birnen usw. sind gesund.",
        "Am 24. Dezember schließen wir um 14 Uhr.",
        "Die Datei bericht.pdf liegt auf example.de/a.b bereit.",
        "Das kostet 5 Mio. Euro, vgl. den Bericht.",
        "Wie bitte?",
        "Das ist ja toll!",
        "Prof. Dr. Weber hält am 3. Mai einen Vortrag.",
        "Er schrieb an a.b@c.de eine Nachricht.",
        "Die Version v1.2.3 erschien am 15. März.",
        "„Warum nicht?“, fragte sie.",
    ],
}

TERMINAL = re.compile(r"[.!?\u2026][\"'\u201d\u2019\u201c\u00bb)\]]*$")


def eligible_lines(path):
    with open(path, encoding="utf-8") as f:
        lines = [line.strip() for line in f]
    return [line for line in lines if line and TERMINAL.search(line)]


def make(n, seed):
    rng = random.Random(seed)
    pools = {(lang, corpus): eligible_lines(os.path.join(DEV, "%s.%s" % (corpus, lang)))
             for lang in ("en", "de") for corpus in CORPORA}
    out = []
    for i in range(n):
        lang = "en" if i % 2 == 0 else "de"
        corpus = CORPORA[(i // 2) % 2]
        pool = pools[(lang, corpus)]
        k = rng.randint(3, 6)
        start = rng.randrange(0, len(pool) - k)
        sentences = pool[start:start + k]
        synthetic = rng.random() < 0.25
        if synthetic:
            sentences.insert(rng.randint(0, k), rng.choice(SYNTHETIC[lang]))
        text = ""
        boundaries = []
        for s in sentences:
            if text:
                text += " "
                boundaries.append(len(text.encode("utf-8")))
            text += s
        out.append({"text": text, "boundaries": boundaries, "lang": lang, "corpus": corpus,
                    "synthetic": synthetic})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20240501)
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

#!/usr/bin/python3
"""The sentence splitter (`mtlite split`, runtime/src/sentence_split.h) on 1,000 paragraphs of
joined dev lines (make_paragraphs.py) whose true boundaries are known.

  * recall of the true boundaries (where a new dev line starts) must be >= 99.5 %, over all
    paragraphs and over the ones with a synthetic sentence (abbreviations, numbers, quotes);
  * precision is reported: a split inside one dev line is counted apart and a few are printed
    (a Tatoeba line with two sentences is rightly split, so it is not a failure);
  * the JSON spans cover each paragraph as the splitter promises (trimmed, in order);
  * beside it, Bergamot's own split of the same paragraphs (ssplit-mode paragraph, through
    tests/reference/bergamot/split.mjs with the demo model exported by marian_export.py) is
    measured the same way and compared; skipped with the reason where node or the package is
    missing.
Needs MTLITE_BIN (set by ctest). Run with Debian's /usr/bin/python3.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
BERGAMOT = os.path.join(HERE, "bergamot")
DEMO = os.path.join(ROOT, "models", "marian-en-de-tiny")
N = 1000
MIN_RECALL = 0.995

import make_paragraphs  # noqa: E402


def mtlite_bin():
    b = os.environ.get("MTLITE_BIN")
    if not b:
        raise AssertionError("MTLITE_BIN is not set (run through ctest)")
    if not os.access(b, os.X_OK):
        raise AssertionError(f"MTLITE_BIN={b} is not an executable")
    return b


def bergamot_missing():
    """Why Bergamot's split cannot be measured (None: it can)."""
    if shutil.which("node") is None:
        return "node is not installed"
    if not os.path.exists(os.path.join(BERGAMOT, "node_modules", "@browsermt", "bergamot-translator")):
        return "Bergamot is not installed (scripts/setup.sh, or `npm ci` in tests/reference/bergamot)"
    return None


def starts(spans):
    """Boundaries of a split: where the second and later sentences start."""
    return [b for b, _ in spans[1:]]


class Score:
    def __init__(self):
        self.true = self.found = self.predicted = self.correct = 0
        self.missed, self.extra = [], []

    def add(self, row, spans):
        truth, pred = set(row["boundaries"]), set(starts(spans))
        self.true += len(truth)
        self.found += len(truth & pred)
        self.predicted += len(pred)
        self.correct += len(truth & pred)
        raw = row["text"].encode("utf-8")
        for b in sorted(truth - pred):
            self.missed.append(raw[max(0, b - 40):b + 30].decode("utf-8", "replace"))
        for b in sorted(pred - truth):
            self.extra.append(raw[max(0, b - 40):b].decode("utf-8", "replace") + " | " +
                              raw[b:b + 30].decode("utf-8", "replace"))

    def recall(self):
        return self.found / self.true if self.true else 1.0

    def precision(self):
        return self.correct / self.predicted if self.predicted else 1.0

    def line(self, name):
        return (f"{name}: recall {100 * self.recall():.2f} % ({self.found}/{self.true}), precision "
                f"{100 * self.precision():.2f} % ({self.correct}/{self.predicted}); {len(self.extra)} splits "
                f"inside a dev line")


def mtlite_split(rows, lang):
    text = "".join(r["text"] + "\n" for r in rows)
    r = subprocess.run([mtlite_bin(), "split", "--split", "paragraph", "--lang", lang, "--json"], input=text.encode(),
                       capture_output=True, timeout=300)
    if r.returncode != 0:
        raise AssertionError(f"mtlite split failed ({r.returncode}): {r.stderr.decode()}")
    out = [json.loads(line) for line in r.stdout.decode("utf-8").split("\n") if line]
    if len(out) != len(rows):
        raise AssertionError(f"{len(out)} JSON lines for {len(rows)} paragraphs")
    return out


class SentenceSplitOnParagraphs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rows = make_paragraphs.make(N, 20240501)
        cls.results = [None] * N
        for lang in ("en", "de"):
            idx = [i for i, r in enumerate(cls.rows) if r["lang"] == lang]
            for i, res in zip(idx, mtlite_split([cls.rows[i] for i in idx], lang)):
                cls.results[i] = res

    def test_json_spans_cover_the_paragraph(self):
        for row, res in zip(self.rows, self.results):
            self.assertEqual(res["text"], row["text"])
            raw = row["text"].encode("utf-8")
            pos = 0
            for b, e in res["spans"]:
                self.assertTrue(pos <= b < e <= len(raw), (row["text"], res["spans"]))
                self.assertEqual(raw[pos:b].strip(), b"")
                self.assertEqual(raw[b:e], raw[b:e].strip())
                pos = e
            self.assertEqual(raw[pos:].strip(), b"")

    def test_recall_of_the_true_boundaries(self):
        total, synthetic = Score(), Score()
        parts = {}
        for row, res in zip(self.rows, self.results):
            total.add(row, res["spans"])
            parts.setdefault((row["lang"], row["corpus"]), Score()).add(row, res["spans"])
            if row["synthetic"]:
                synthetic.add(row, res["spans"])
        print("\nmtlite split on %d paragraphs" % N)
        print("  " + total.line("all"))
        for (lang, corpus), s in sorted(parts.items()):
            print("  " + s.line(f"{lang} {corpus}"))
        print("  " + synthetic.line("with a synthetic sentence"))
        for m in total.missed[:10]:
            print("  missed:", repr(m))
        for x in total.extra[:8]:
            print("  split inside a dev line:", repr(x))
        self.assertGreaterEqual(total.recall(), MIN_RECALL, total.missed[:20])
        self.assertGreaterEqual(synthetic.recall(), MIN_RECALL, synthetic.missed[:20])
        # extra splits are rare: a dev line holds at most a few sentences
        self.assertGreaterEqual(total.precision(), 0.97, total.extra[:20])

    @unittest.skipIf(bergamot_missing(), bergamot_missing() or "")
    def test_bergamot_split_beside_ours(self):
        import marian_export
        tmp = tempfile.mkdtemp(prefix="split-bergamot-")
        try:
            marian_export.main([DEMO, tmp, "--tying", "all", "--format", "bin"])
            text = "".join(r["text"] + "\n" for r in self.rows)
            r = subprocess.run(["node", os.path.join(BERGAMOT, "split.mjs"), "--model", os.path.join(tmp, "model.bin"),
                                "--vocab", os.path.join(tmp, "vocab.spm")],
                               input=text.encode(), capture_output=True, timeout=1200)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        theirs = [json.loads(line)["spans"] for line in r.stdout.decode().split("\n") if line]
        self.assertEqual(len(theirs), N)
        score, same = Score(), 0
        for row, res, spans in zip(self.rows, self.results, theirs):
            raw = row["text"].encode("utf-8")
            for b, e in spans:
                self.assertTrue(0 <= b < e <= len(raw), spans)
            score.add(row, spans)
            same += starts(spans) == starts(res["spans"])
        print("\nBergamot (ssplit-mode paragraph, no nonbreaking-prefix file) on the same paragraphs")
        print("  " + score.line("all"))
        print(f"  same split as mtlite: {same}/{N} paragraphs")
        for x in score.extra[:5]:
            print("  Bergamot split inside a dev line:", repr(x))
        for m in score.missed[:5]:
            print("  Bergamot missed:", repr(m))


if __name__ == "__main__":
    unittest.main(verbosity=2)

#!/usr/bin/python3
"""Tests of tests/reference/bleu.py (corpus BLEU, 13a tokenizer, sacrebleu defaults).
Run by ctest (py_test_bleu) with Debian's python3; stdlib unittest only."""
import json
import math
import os
import re
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("MTLITE_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import bleu  # noqa: E402

GOLDEN = os.path.join(ROOT, "tests", "data", "golden")
DEV = os.path.join(ROOT, "tests", "data", "dev")
MODEL = os.path.join(ROOT, "models", "marian-en-de-tiny")


def hand_bleu(p, c, r):
    """BLEU from hand-counted precisions p = [(matches, total)] * 4, lengths c (hyp), r (ref)."""
    bp = 1.0 if c >= r else math.exp(1.0 - r / c)
    return 100.0 * bp * math.exp(sum(math.log(m / t) for m, t in p) / 4.0)


class TokenizerTest(unittest.TestCase):
    def check(self, text, tokens):
        self.assertEqual(bleu.tokenize_13a(text), tokens.split(" ") if tokens else [])

    def test_punctuation(self):
        self.check("Hello, world.", "Hello , world .")
        self.check("(x) [y] {z}", "( x ) [ y ] { z }")
        self.check('He said "hi"!', 'He said " hi " !')
        self.check("a/b a:b a;b a?b a@b a#b a$b a%b a+b a=b a*b", "a / b a : b a ; b a ? b a @ b a # b a $ b a % b a + b a = b a * b")

    def test_kept_together(self):
        self.check("it's well-known", "it's well-known")   # ' and - between letters stay
        self.check("3.5 1,000", "3.5 1,000")                # . , between digits stay
        self.check("Straße über Äpfel", "Straße über Äpfel")

    def test_digits(self):
        self.check("5-6", "5 - 6")              # dash after a digit
        self.check("in 2010.", "in 2010 .")     # period after a digit, at the end
        self.check("2010, then", "2010 , then")
        self.check("U.S.", "U . S .")

    def test_entities_and_spaces(self):
        self.check("&quot;a&quot; &amp; b &lt;c&gt;", '" a " & b < c >')
        self.check("  many   spaces\there ", "many spaces here")
        self.check("", "")


class BleuTest(unittest.TestCase):
    def test_perfect(self):
        refs = ["Ein Mann fährt Fahrrad.", "Zwei Hunde spielen im Schnee, und ein Kind lacht."]
        self.assertAlmostEqual(bleu.corpus_bleu(refs, refs), 100.0, places=10)

    def test_no_4gram_match_is_zero(self):
        # 1-grams 5/6, 2-grams 3/5, 3-grams 1/4, 4-grams 0/3 -> 0 without smoothing
        m, t, c, r = bleu.corpus_stats(["the cat sat on the mat"], ["the cat is on the mat"])
        self.assertEqual((m, t, c, r), ([5, 3, 1, 0], [6, 5, 4, 3], 6, 6))
        self.assertEqual(bleu.corpus_bleu(["the cat sat on the mat"], ["the cat is on the mat"]), 0.0)

    def test_brevity_penalty(self):
        # every n-gram matches; c = 6, r = 7 -> BLEU = exp(1 - 7/6)
        got = bleu.corpus_bleu(["the cat is on the mat"], ["the cat is on the mat today"])
        self.assertAlmostEqual(got, 100.0 * math.exp(1.0 - 7.0 / 6.0), places=10)
        # longer hypothesis: no penalty, precisions 6/7, 5/6, 4/5, 3/4
        got = bleu.corpus_bleu(["the cat is on the mat today"], ["the cat is on the mat"])
        self.assertAlmostEqual(got, hand_bleu([(6, 7), (5, 6), (4, 5), (3, 4)], 7, 6), places=10)

    def test_corpus_sums_counts(self):
        # seg 1: 4/5 3/4 2/3 1/2; seg 2: 4/4 3/3 2/2 1/1 -> 8/9 6/7 4/5 2/3, c = 9, r = 10
        hyps = ["a b c d e", "x y z w"]
        refs = ["a b c d f", "x y z w v"]
        want = hand_bleu([(8, 9), (6, 7), (4, 5), (2, 3)], 9, 10)
        self.assertAlmostEqual(bleu.corpus_bleu(hyps, refs), want, places=10)
        self.assertAlmostEqual(want, 71.4447, places=4)  # by hand: exp(-1/9) * (384/945)^(1/4)

    def test_clipping(self):
        m, t, c, r = bleu.corpus_stats(["the the the the the the the"], ["the cat is on the mat"])
        self.assertEqual(m[0], 2)   # "the" clipped to its 2 reference occurrences
        self.assertEqual(t[0], 7)
        self.assertEqual(bleu.corpus_bleu(["the the the the the the the"], ["the cat is on the mat"]), 0.0)

    def test_tokenization_matters(self):
        # "mat." is two tokens: mat and . -> identical after 13a
        self.assertAlmostEqual(bleu.corpus_bleu(["the cat sat on the mat."], ["the cat sat on the mat ."]), 100.0)

    def test_empty_hypotheses(self):
        self.assertEqual(bleu.corpus_bleu(["", ""], ["a b c d", "e f"]), 0.0)
        # an empty line adds reference length only: c = 4, r = 8 -> exp(1 - 2)
        got = bleu.corpus_bleu(["a b c d", ""], ["a b c d", "e f g h"])
        self.assertAlmostEqual(got, 100.0 * math.exp(-1.0), places=10)
        # hypotheses shorter than 4 tokens in total: no 4-grams -> 0
        self.assertEqual(bleu.corpus_bleu(["a b c"], ["a b c"]), 0.0)

    def test_count_mismatch(self):
        with self.assertRaises(ValueError):
            bleu.corpus_bleu(["a"], ["a", "b"])


def _readme_table():
    with open(os.path.join(MODEL, "README.md"), encoding="utf-8") as f:
        text = f.read()
    return {m.group(1): float(m.group(2))
            for m in re.finditer(r"^\|\s*([a-z0-9]+\.[a-z]+)\s*\([0-9,]+\)\s*\|\s*([0-9.]+)\s*\|", text, re.M)}


def _decode(pieces, ids):
    text = "".join(pieces[i] for i in ids if pieces[i] not in ("</s>", "<unk>", "<pad>"))
    return text.replace("\u2581", " ").lstrip(" ")


def _readme_tokenizer(line):
    """The README's 'simple 13a-like' tokenization: 13a, but . and , are split off even next
    to digits (this reproduces both README figures to 2 decimals)."""
    return re.sub(r"([.,])", r" \1 ", " ".join(bleu.tokenize_13a(line))).split()


class ReadmeFiguresTest(unittest.TestCase):
    """The model README's greedy BLEU, recomputed from the committed greedy goldens.
    The README's outputs were capped at floor(1.5 * source_tokens + 10) generated tokens
    before </s> (the goldens use max_length 256), so the goldens are cut to that length."""

    def test_readme_bleu(self):
        table = _readme_table()
        self.assertEqual(sorted(table), ["multi30k.val", "tatoeba.dev"], "README table not found")
        with open(os.path.join(MODEL, "vocab.json"), encoding="utf-8") as f:
            pieces = {i: p for p, i in json.load(f).items()}
        for name, want in sorted(table.items()):
            with self.subTest(name):
                refs_path = os.path.join(DEV, f"{name}.de")
                self.assertTrue(os.path.exists(refs_path), f"missing {refs_path}")
                refs = bleu._read(refs_path)
                with open(os.path.join(GOLDEN, f"demo.{name}.src.ids")) as f:
                    srcs = [l.split() for l in f]
                with open(os.path.join(GOLDEN, f"demo.{name}.greedy.ids")) as f:
                    outs = [[int(x) for x in l.split()] for l in f]
                self.assertEqual(len(srcs), len(refs))
                self.assertEqual(len(outs), len(refs))
                hyps = [_decode(pieces, o[:int(math.floor(1.5 * len(s) + 10))]) for s, o in zip(srcs, outs)]
                std = bleu.corpus_bleu(hyps, refs)
                simple = bleu.corpus_bleu(hyps, refs, tokenize=_readme_tokenizer)
                print(f"  {name}: 13a {std:.4f}, README tokenization {simple:.4f}, README {want:.2f}")
                self.assertEqual(f"{simple:.2f}", f"{want:.2f}")
                self.assertLess(abs(std - want), 0.05)


if __name__ == "__main__":
    prog = unittest.main(exit=False, verbosity=2)
    r = prog.result
    failed = len(r.failures) + len(r.errors) + len(r.unexpectedSuccesses)
    print(f"{r.testsRun - failed - len(r.skipped)} passed, {failed} failed")
    sys.exit(1 if failed or r.skipped else 0)

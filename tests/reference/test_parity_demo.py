#!/usr/bin/python3
"""Live parity of the mtlite CLI with the committed goldens of the demo model (made by
tests/reference/make_goldens.py with the PyTorch reference marian_ref.py).

  * demo.fp32.mtlite: greedy and beam-4 ids on every dev sentence are token-identical to the
    goldens (a difference counts as a tie, not a failure, when the reference's own decision
    there was closer than parity_common.GREEDY_TIE / BEAM_TIE);
  * demo.fp32.mtlite teacher-forced logits within 1e-4 (max abs) of the goldens;
  * demo.int8.mtlite corpus BLEU (text in, text out) within 1.0 of demo.fp32.mtlite's on both
    dev sets, and fp32 text BLEU not below the golden greedy BLEU - 1.0.
Needs MTLITE_BIN, MTLITE_TEST_MODEL_DIR (set by ctest). Run with Debian's /usr/bin/python3.
"""
import json
import os
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import parity_common as pc  # noqa: E402
import bleu  # noqa: E402

SETS = ["multi30k.val", "tatoeba.dev"]
LOGIT_TOL = 1e-4
MAX_LENGTH = 256  # the goldens' max_length (generated tokens incl. </s>)
BLEU_TOL = 1.0

_ref = None


def reference():
    """The PyTorch reference of the demo model, loaded on first use (only differing
    sentences need it)."""
    global _ref
    if _ref is None:
        import torch
        torch.set_num_threads(1)
        from marian_ref import MarianRef
        _ref = MarianRef(pc.DEMO_HF)
    return _ref


def model_path(tc, q):
    d = pc.env_or_fail(tc, "MTLITE_TEST_MODEL_DIR")
    p = os.path.join(d, f"demo.{q}.mtlite")
    if not os.path.exists(p):
        tc.fail(f"missing {p} (built by the demo_models target)")
    return p


def golden(name):
    return os.path.join(pc.GOLDEN, name)


class DemoIdsParity(unittest.TestCase):
    def _run(self, name, beam):
        model = model_path(self, "fp32")
        srcs = pc.read_ids(golden(f"demo.{name}.src.ids"))
        kind = "greedy" if beam == 1 else f"beam{beam}"
        want = pc.read_ids(golden(f"demo.{name}.{kind}.ids"))
        self.assertEqual(len(srcs), len(want))
        t0 = time.time()
        got = pc.translate_ids(model, srcs, beam, MAX_LENGTH, f"fp32 {kind} {name}")
        print(f"  mtlite {kind} on {len(srcs)} sentences: {time.time() - t0:.1f}s")
        if beam == 1:
            pc.compare_greedy(self, f"fp32 {kind} {name}", srcs, got, want, reference(), MAX_LENGTH)
        else:
            pc.compare_beam(self, f"fp32 {kind} {name}", srcs, got, want, reference(), beam, MAX_LENGTH)

    def test_greedy_multi30k(self):
        self._run("multi30k.val", 1)

    def test_greedy_tatoeba(self):
        self._run("tatoeba.dev", 1)

    def test_beam4_multi30k(self):
        self._run("multi30k.val", 4)

    def test_beam4_tatoeba(self):
        self._run("tatoeba.dev", 4)


class DemoUnbatched(unittest.TestCase):
    """The first sentences again, one per translate() call (--batch 1)."""
    N = 40

    def test_unbatched_subset(self):
        model = model_path(self, "fp32")
        for name in SETS:
            srcs = pc.read_ids(golden(f"demo.{name}.src.ids"))[:self.N]
            for beam, kind in ((1, "greedy"), (4, "beam4")):
                want = pc.read_ids(golden(f"demo.{name}.{kind}.ids"))[:self.N]
                got = pc.translate_ids(model, srcs, beam, MAX_LENGTH, f"fp32 {kind} {name} batch 1", batch=1)
                what = f"fp32 {kind} {name} (first {self.N}, batch 1)"
                with self.subTest(what):
                    if beam == 1:
                        pc.compare_greedy(self, what, srcs, got, want, reference(), MAX_LENGTH)
                    else:
                        pc.compare_beam(self, what, srcs, got, want, reference(), beam, MAX_LENGTH)


class DemoForcedLogits(unittest.TestCase):
    def test_forced_logits_fp32(self):
        import numpy as np
        model = model_path(self, "fp32")
        with open(golden("demo.forced.json")) as f:
            meta = json.load(f)
        want = np.fromfile(golden("demo.forced.f32"), dtype="<f4")
        pairs = [(e["source_ids"], e["target_ids"]) for e in meta["entries"]]
        with tempfile.TemporaryDirectory() as tmp:
            got = pc.forced_logits(model, pairs, os.path.join(tmp, "logits.f32"), "forced logits")
        self.assertEqual(got.size, want.size, "forced-logits output size")
        worst = 0.0
        for e in meta["entries"]:
            n = e["shape"][0] * e["shape"][1]
            o = e["offset_floats"]
            d = float(np.abs(got[o:o + n] - want[o:o + n]).max())
            worst = max(worst, d)
            print(f"  {e['set']} line {e['line']} ({e['target']}, {e['shape'][0]} steps): max abs diff {d:.2e}")
            self.assertTrue(np.isfinite(got[o:o + n]).all())
        self.assertLessEqual(worst, LOGIT_TOL)


def _read_text(path):
    with open(path, encoding="utf-8") as f:
        return [l.rstrip("\n") for l in f]


def _golden_greedy_text(name):
    with open(os.path.join(pc.DEMO_HF, "vocab.json"), encoding="utf-8") as f:
        pieces = {i: p for p, i in json.load(f).items()}
    out = []
    for ids in pc.read_ids(golden(f"demo.{name}.greedy.ids")):
        t = "".join(pieces[i] for i in ids if pieces[i] not in ("</s>", "<unk>", "<pad>"))
        out.append(t.replace("\u2581", " ").lstrip(" "))
    return out


class DemoInt8Bleu(unittest.TestCase):
    def test_int8_bleu_close_to_fp32(self):
        fp32 = model_path(self, "fp32")
        int8 = model_path(self, "int8")
        for name in SETS:
            with self.subTest(name):
                src_path = os.path.join(pc.DEV, f"{name}.en")
                ref_path = os.path.join(pc.DEV, f"{name}.de")
                for p in (src_path, ref_path):
                    self.assertTrue(os.path.exists(p), f"missing {p}")
                src = _read_text(src_path)
                refs = _read_text(ref_path)
                scores = {}
                for q, model in (("fp32", fp32), ("int8", int8)):
                    t0 = time.time()
                    out = pc.run_cli(["translate", "-m", model, "--batch", "16", "--split", "none"],
                                     "".join(s + "\n" for s in src), f"{q} text {name}")
                    lines = out.split("\n")
                    if lines and lines[-1] == "":
                        lines.pop()
                    self.assertEqual(len(lines), len(src), f"{q} {name}: output line count")
                    scores[q] = bleu.corpus_bleu(lines, refs)
                    print(f"  {name} {q}: BLEU {scores[q]:.2f} ({time.time() - t0:.1f}s)")
                greedy = bleu.corpus_bleu(_golden_greedy_text(name), refs)
                print(f"  {name} golden greedy (reference): BLEU {greedy:.2f}")
                self.assertLessEqual(abs(scores["int8"] - scores["fp32"]), BLEU_TOL)
                self.assertGreaterEqual(scores["fp32"], greedy - BLEU_TOL)


if __name__ == "__main__":
    pc.main()

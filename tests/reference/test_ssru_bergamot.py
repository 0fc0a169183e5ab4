#!/usr/bin/python3
"""Decoder layers of Marian's SSRU cell (the Firefox Translations students' transformer-decoder-
autoreg: rnn, dec-cell: ssru), checked against Marian itself (Bergamot, Marian compiled to
WebAssembly: tests/reference/bergamot, installed by scripts/setup.sh with `npm ci`).

The checkpoint: make_ssru_checkpoint.py --shape demo (the demo model's trained weights, each
decoder self-attention replaced by a random SSRU cell), exported by marian_export.py as a Marian
model.bin with its vocab.spm. On the first 300 sentences of multi30k.val, greedy, float32:
  * the PyTorch reference (marian_semantics.py, SSRU as Marian's cells.h defines it) against
    Bergamot, first 100 sentences: at least 99% of the lines identical;
  * `mtlite convert model.bin --vocab vocab.spm --quantize fp32`, translated by mtlite, against
    Bergamot: at least 99% identical;
  * beam 4 (Marian's beam search, normalize 1; the SSRU states follow each hypothesis's parent),
    first 100 sentences: mtlite against Bergamot, at least 99% identical.
Both sides cut a sentence at Marian's length cap, 3 x its source tokens (</s> included) words:
Bergamot with --max-length-factor 3 one sentence per batch (Marian takes the cap from the
batch's longest source), mtlite with --max-length-ratio 3 --max-length-offset 1 (its cap counts
the forced </s>), the reference with max_length 3 x source + 1. Many outputs of this half-random
network repeat until the cap, so equal caps are what makes whole lines comparable.
Skipped (with the reason) where node or the Bergamot package is not installed.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from parity_common import DEV, mtlite_bin  # noqa: E402
from test_marian_bergamot import BERGAMOT, bergamot_missing  # noqa: E402

N = 300
N_BEAM = 100
MIN_SAME = 0.99
MIN_BEAM_SAME = 0.99


@unittest.skipIf(bergamot_missing(), bergamot_missing() or "")
class SsruAgainstBergamot(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import make_ssru_checkpoint
        import marian_export
        cls.tmp = tempfile.mkdtemp(prefix="ssru-")
        cls.hf = make_ssru_checkpoint.make(os.path.join(cls.tmp, "hf"), "demo", seed=1)
        cls.dir = os.path.join(cls.tmp, "marian")
        marian_export.main([cls.hf, cls.dir, "--tying", "all", "--format", "bin"])
        cls.vocab = os.path.join(cls.dir, "vocab.spm")
        with open(os.path.join(DEV, "multi30k.val.en"), encoding="utf-8") as f:
            cls.src = [next(f).rstrip("\n") for _ in range(N)]
        cls.cache = {}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def reference(self):
        if "ref" not in self.cache:
            import torch
            torch.set_num_threads(1)
            from marian_ref import TextTools
            from marian_semantics import MarianSemanticsRef
            m = MarianSemanticsRef(self.hf)
            self.assertTrue(m.ssru)
            tt = TextTools(self.hf)
            srcs = [tt.encode(s) for s in self.src]
            self.cache["ref"] = (m, tt, srcs)
        return self.cache["ref"]

    def bergamot(self, beam=1):
        if ("bergamot", beam) not in self.cache:
            lines = self.src if beam == 1 else self.src[:N_BEAM]
            r = subprocess.run(["node", os.path.join(BERGAMOT, "translate.mjs"), "--model",
                                os.path.join(self.dir, "model.bin"), "--vocab", self.vocab, "--precision", "float32",
                                "--max-length-factor", "3", "--batch", "1", "--beam", str(beam), "--normalize", "1"],
                               input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=1200)
            self.assertEqual(r.returncode, 0, r.stderr)
            out = r.stdout.split("\n")[:-1]
            self.assertEqual(len(out), len(lines), r.stderr)
            self.cache["bergamot", beam] = [line.strip() for line in out]
        return self.cache["bergamot", beam]

    def mtlite_model(self):
        if "model" not in self.cache:
            out = os.path.join(self.tmp, "ssru.fp32.mtlite")
            r = subprocess.run([mtlite_bin(), "convert", os.path.join(self.dir, "model.bin"), "--vocab", self.vocab,
                                "--quantize", "fp32", "-o", out], capture_output=True, text=True, timeout=600)
            self.assertEqual(r.returncode, 0, r.stderr)
            info = subprocess.run([mtlite_bin(), "info", out], capture_output=True, text=True, timeout=60)
            self.assertIn('decoder_layer            "ssru"', info.stdout)
            self.cache["model"] = out
        return self.cache["model"]

    def mtlite(self, lines, beam):
        """mtlite's translations, each capped at Marian's length."""
        r = subprocess.run([mtlite_bin(), "translate", "-m", self.mtlite_model(), "--beam", str(beam), "--batch", "8", "--split", "none",
                            "--max-length-ratio", "3", "--max-length-offset", "1", "--length-penalty", "1", "-q"],
                           input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=900)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = r.stdout.split("\n")[:-1]
        self.assertEqual(len(got), len(lines), r.stderr)
        return [line.strip() for line in got]

    def compare(self, what, ref, got, floor):
        diff = [(i, a, b) for i, (a, b) in enumerate(zip(ref, got)) if a != b]
        same = len(ref) - len(diff)
        print(f"{what}: {same}/{len(ref)} lines identical ({100.0 * same / len(ref):.1f}%)", file=sys.stderr)
        for i, a, b in diff[:5]:
            print(f"  line {i + 1}:\n    {a[:160]}\n    {b[:160]}", file=sys.stderr)
        self.assertGreaterEqual(same, floor * len(ref), diff[:3])

    def test_reference_equals_bergamot(self):
        m, tt, srcs = self.reference()
        srcs = srcs[:N_BEAM]
        hyps = m.greedy(srcs, max_length=[3 * len(s) + 1 for s in srcs])
        ref = [tt.decode(ids).strip() for ids, _ in hyps]
        distinct = len(set(ref))
        self.assertGreater(distinct, 0.9 * len(ref), "the outputs should depend on the source")
        self.compare("SSRU greedy float32, PyTorch reference = Bergamot", ref, self.bergamot()[:N_BEAM], MIN_SAME)

    def test_mtlite_fp32_equals_bergamot(self):
        self.compare("SSRU greedy float32, mtlite = Bergamot", self.bergamot(), self.mtlite(self.src, 1), MIN_SAME)

    def test_mtlite_beam_equals_bergamot(self):
        self.compare("SSRU beam 4 float32, mtlite = Bergamot", self.bergamot(4), self.mtlite(self.src[:N_BEAM], 4),
                     MIN_BEAM_SAME)


if __name__ == "__main__":
    unittest.main()

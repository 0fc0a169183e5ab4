#!/usr/bin/python3
"""Live parity of the mtlite converter + runtime with the PyTorch reference (marian_ref.py)
on random-initialised HF MarianMT checkpoints (make_random_checkpoint.py presets):

  make_random_checkpoint -> `mtlite convert DIR -o x.mtlite --quantize fp32` ->
  greedy and beam-4 ids of random source id sequences token-identical to the live reference
  (differences at numerical ties are reported, not failed: see parity_common), and
  teacher-forced logits (`translate --input-ids --forced-logits FILE`) within 1e-4 max abs.

Needs MTLITE_BIN (set by ctest). Run with Debian's /usr/bin/python3.
"""
import os
import random
import shutil
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import parity_common as pc  # noqa: E402

LOGIT_TOL = 1e-4
SEED = 20261121
# preset -> (number of source sequences, max_length passed to both sides)
CASES = {
    "big-relu-sep": (24, 48),
    "big-gelu": (24, 48),
    "small": (32, 40),
    "small-sep": (32, 64),
}


def make_sources(rng, n, vocab, eos, pad):
    """Random source ids ending with </s>: lengths 1 (only </s>), 2, then random 3..40, and
    one long sequence of 120 tokens."""
    body_ids = [i for i in range(vocab) if i not in (eos, pad)]
    lens = [0, 1] + [rng.randint(2, 39) for _ in range(n - 3)] + [119]
    return [[rng.choice(body_ids) for _ in range(L)] + [eos] for L in lens[:n]]


class _RandomModelParity:
    PRESET = None

    @classmethod
    def setUpClass(cls):
        import torch
        torch.set_num_threads(1)
        import make_random_checkpoint as mrc
        from marian_ref import MarianRef
        cls.tmp = tempfile.mkdtemp(prefix=f"mtlite_rand_{cls.PRESET}_")
        n, cls.max_len = CASES[cls.PRESET]
        hf = os.path.join(cls.tmp, "hf")
        t0 = time.time()
        mrc.build(hf, seed=SEED, **mrc.PRESETS[cls.PRESET])
        cls.ref = MarianRef(hf)
        cls.model = os.path.join(cls.tmp, "model.mtlite")
        t1 = time.time()
        pc.run_cli(["convert", hf, "-o", cls.model, "--quantize", "fp32"], "", f"convert {cls.PRESET}")
        t2 = time.time()
        rng = random.Random(SEED + len(cls.PRESET))
        import json
        with open(os.path.join(hf, "vocab.json")) as f:
            src_pad = json.load(f)["<pad>"]
        cls.srcs = make_sources(rng, n, cls.ref.src_vocab, cls.ref.eos, src_pad)
        cls.greedy = cls.ref.greedy(cls.srcs, cls.max_len)
        cls.beam = cls.ref.beam(cls.srcs, 4, cls.max_len)
        t3 = time.time()
        lens = sorted(len(g[0]) for g in cls.greedy)
        print(f"\n  {cls.PRESET}: build {t1 - t0:.1f}s, convert {t2 - t1:.1f}s, reference {t3 - t2:.1f}s; "
              f"greedy lengths {lens}")
        # the random model must not be degenerate: outputs differ across inputs
        cls.distinct = len({tuple(g[0]) for g in cls.greedy})

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_outputs_vary(self):
        self.assertGreaterEqual(self.distinct, len(self.srcs) // 2,
                                "random checkpoint gives near-identical outputs: the parity test would be weak")

    def test_greedy(self):
        got = pc.translate_ids(self.model, self.srcs, 1, self.max_len, f"{self.PRESET} greedy")
        want = [g[0] for g in self.greedy]
        pc.compare_greedy(self, f"{self.PRESET} greedy", self.srcs, got, want, self.ref, self.max_len)

    def test_beam4(self):
        got = pc.translate_ids(self.model, self.srcs, 4, self.max_len, f"{self.PRESET} beam4")
        want = [b[0][0] for b in self.beam]
        pc.compare_beam(self, f"{self.PRESET} beam4", self.srcs, got, want, self.ref, 4, self.max_len)

    def test_forced_logits(self):
        import numpy as np
        rng = random.Random(SEED + 1)
        tv = self.ref.tgt_vocab
        body = [i for i in range(tv) if i not in (self.ref.eos, self.ref.pad)]
        pairs = [(self.srcs[i], self.greedy[i][0] + [self.ref.eos]) for i in range(8)]
        pairs += [(self.srcs[-1], [rng.choice(body) for _ in range(30)] + [self.ref.eos]),
                  (self.srcs[3], [self.ref.eos])]
        got = pc.forced_logits(self.model, pairs, os.path.join(self.tmp, "logits.f32"),
                               f"{self.PRESET} forced logits")
        want = np.concatenate([self.ref.forced_logits(s, t).numpy().reshape(-1) for s, t in pairs])
        self.assertEqual(got.size, want.size, "forced-logits output size "
                         f"(expected sum of target lengths x target vocab {tv})")
        d = np.abs(got.astype(np.float64) - want.astype(np.float64))
        print(f"  {self.PRESET} forced logits: {len(pairs)} pairs, max abs diff {d.max():.2e}, "
              f"max |logit| {np.abs(want).max():.1f}")
        self.assertTrue(np.isfinite(got).all())
        self.assertLessEqual(float(d.max()), LOGIT_TOL)


class BigReluSeparateVocabs(_RandomModelParity, unittest.TestCase):
    PRESET = "big-relu-sep"


class BigGeluF16(_RandomModelParity, unittest.TestCase):
    PRESET = "big-gelu"


class SmallGeluNewUntiedBF16(_RandomModelParity, unittest.TestCase):
    PRESET = "small"


class SmallSwishSeparateVocabs(_RandomModelParity, unittest.TestCase):
    PRESET = "small-sep"


if __name__ == "__main__":
    pc.main()

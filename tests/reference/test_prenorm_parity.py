#!/usr/bin/python3
"""Pre-norm models through the converter and the runtime, against the PyTorch reference
(marian_ref.py, normalize_before): random checkpoints of make_random_checkpoint.py's "prenorm*"
presets (x + Block(LN(x)) in every block, the stacks' final norms, scaled embeddings), one for
each sinusoid the runtime computes:

  prenorm         Marian's sinusoid (no table in the checkpoint)
  prenorm-m2m100  HF M2M100's sinusoid at the padding offset, stored in the checkpoint as a table
  prenorm-ct2     CTranslate2's sinusoid, stored as a table; separate vocabularies, untied output

  make_random_checkpoint -> `mtlite convert DIR -o x.mtlite --quantize fp32` -> `mtlite info
  --json` names the norm placement, the final norms and the position kind the converter recognised
  (no table stored) -> greedy ids of the first 300 multi30k.val sources token-identical to the
  reference (numerical ties reported, not failed: parity_common), beam 4 on 40 of them, and
  teacher-forced logits within 1e-4 max abs (the float sinusoids: or within twice what another
  libm's float exp/sin moves the reference's logits by, see test_forced_logits).

Needs MTLITE_BIN (set by ctest). Run with Debian's /usr/bin/python3.
"""
import json
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import parity_common as pc  # noqa: E402

SEED = 20261202
LINES, BEAM_LINES, MAX_LEN = 300, 40, 64
LOGIT_TOL = 1e-4
# preset -> the position kind `mtlite info` must show
POSITIONS = {"prenorm": "sinusoidal", "prenorm-m2m100": "sinusoidal_m2m100", "prenorm-ct2": "sinusoidal_ct2"}


FLOAT_SINUSOIDS = ("prenorm-m2m100", "prenorm-ct2")


def numpy_fairseq_sinusoid(n_pos, dim, first, float_log):
    """marian_ref.fairseq_sinusoid through numpy's float32 exp / sin / cos."""
    import math
    import numpy as np
    half = dim // 2
    step = np.float32(np.log(np.float32(10000.0)) / np.float32(half - 1)) if float_log else \
        np.float32(math.log(10000) / (half - 1))
    freq = np.exp(np.arange(half, dtype=np.float32) * -step).astype(np.float32)
    ang = (np.arange(first, first + n_pos, dtype=np.float32)[:, None] * freq[None, :]).astype(np.float32)
    t = np.concatenate([np.sin(ang), np.cos(ang)], axis=1).astype(np.float32)
    if dim % 2:
        t = np.concatenate([t, np.zeros((n_pos, 1), dtype=np.float32)], axis=1)
    return t


class _PreNormParity:
    PRESET = None

    @classmethod
    def setUpClass(cls):
        import torch
        torch.set_num_threads(1)
        import make_random_checkpoint as mrc
        from marian_ref import MarianRef
        cls.tmp = tempfile.mkdtemp(prefix=f"mtlite_{cls.PRESET}_")
        hf = os.path.join(cls.tmp, "hf")
        mrc.build(hf, seed=SEED, **mrc.PRESETS[cls.PRESET])
        cls.ref = MarianRef(hf)
        cls.model = os.path.join(cls.tmp, "model.mtlite")
        pc.run_cli(["convert", hf, "-o", cls.model, "--quantize", "fp32"], "", f"convert {cls.PRESET}")
        cls.info = json.loads(pc.run_cli(["info", cls.model, "--json"], "", f"info {cls.PRESET}"))
        srcs = pc.read_ids(os.path.join(pc.GOLDEN, "demo.multi30k.val.src.ids"))[:LINES]
        cls.srcs = [s for s in srcs if max(s) < cls.ref.src_vocab]
        cls.greedy = cls.ref.greedy(cls.srcs, MAX_LEN)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_config(self):
        c = self.info["config"]
        self.assertEqual((c["norm"], c["encoder_final_norm"], c["decoder_final_norm"], c["positions"]),
                         ("pre", True, True, POSITIONS[self.PRESET]))
        self.assertGreater(c["embed_scale"], 1.0)
        stored = sum(x["bytes"] for x in self.info["components"] if x["name"] == "positions")
        self.assertEqual(stored, 0, "a sinusoid the runtime computes was stored as a table")

    def test_outputs_vary(self):
        self.assertEqual(len(self.srcs), LINES)
        distinct = len({tuple(g[0]) for g in self.greedy})
        self.assertGreaterEqual(distinct, len(self.srcs) // 2, "near-identical outputs: the parity test would be weak")

    def test_greedy(self):
        got = pc.translate_ids(self.model, self.srcs, 1, MAX_LEN, f"{self.PRESET} greedy")
        want = [g[0] for g in self.greedy]
        t = pc.compare_greedy(self, f"{self.PRESET} greedy", self.srcs, got, want, self.ref, MAX_LEN)
        self.assertGreaterEqual(t.same, len(self.srcs) - 3, "more than 3 ties")

    def test_beam4(self):
        srcs = self.srcs[:BEAM_LINES]
        got = pc.translate_ids(self.model, srcs, 4, MAX_LEN, f"{self.PRESET} beam4")
        want = [b[0][0] for b in self.ref.beam(srcs, 4, MAX_LEN)]
        pc.compare_beam(self, f"{self.PRESET} beam4", srcs, got, want, self.ref, 4, MAX_LEN)

    def test_forced_logits(self):
        import numpy as np
        import torch
        pairs = [(self.srcs[i], self.greedy[i][0] + [self.ref.eos]) for i in range(8)]
        got = pc.forced_logits(self.model, pairs, os.path.join(self.tmp, "logits.f32"), f"{self.PRESET} forced")

        def reference():
            return np.concatenate([self.ref.forced_logits(s, t).numpy().reshape(-1) for s, t in pairs])
        want = reference()
        self.assertEqual(got.size, want.size)
        d = float(np.abs(got.astype(np.float64) - want.astype(np.float64)).max())
        tol = LOGIT_TOL
        if self.PRESET in FLOAT_SINUSOIDS:
            # The sinusoid in float arithmetic: libms differ in the last bit of exp and sin (the
            # runtime's C library, torch's vectorised ones), which moves the positions by ~1e-5.
            # The bound: what the same formula through numpy's float32 functions moves the
            # reference's logits by, twice.
            saved = self.ref.enc_pos, self.ref.dec_pos
            n, dim = saved[0].shape
            first = self.ref.pad + 1 if self.PRESET == "prenorm-m2m100" else 1
            self.ref.enc_pos = self.ref.dec_pos = torch.from_numpy(
                numpy_fairseq_sinusoid(n, dim, first, float_log=self.PRESET == "prenorm-ct2"))
            try:
                spread = float(np.abs(reference().astype(np.float64) - want.astype(np.float64)).max())
            finally:
                self.ref.enc_pos, self.ref.dec_pos = saved
            tol = max(tol, 2 * spread)
        print(f"  {self.PRESET} forced logits: max abs diff {d:.2e} (bound {tol:.2e}), "
              f"max |logit| {float(np.abs(want).max()):.1f}")
        self.assertLessEqual(d, tol)


class PreNormMarianSinusoid(_PreNormParity, unittest.TestCase):
    PRESET = "prenorm"


class PreNormM2M100Sinusoid(_PreNormParity, unittest.TestCase):
    PRESET = "prenorm-m2m100"


class PreNormCT2Sinusoid(_PreNormParity, unittest.TestCase):
    PRESET = "prenorm-ct2"


if __name__ == "__main__":
    pc.main()

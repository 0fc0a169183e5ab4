#!/usr/bin/python3
"""Marian checkpoints written by marian_export.py, checked against Marian itself (Bergamot, Marian
compiled to WebAssembly: tests/reference/bergamot, installed by scripts/setup.sh with `npm ci`).

  * the three tying layouts (tied-embeddings-all, tied-embeddings, untied) of the demo model
    translate identically in Bergamot (float32, greedy);
  * Bergamot's translations equal those of the PyTorch reference with Marian's semantics
    (marian_semantics.py) on the first dev sentences;
  * a separate, shuffled target vocabulary is reordered to SentencePiece ids per side;
  * the intgemm8 export (int8 weights, transposed, with their multipliers) translates sensibly:
    most sentences as the float32 model, which a wrong layout would not do;
  * model.npz holds the same arrays as model.bin.
Skipped (with the reason) where node or the Bergamot package is not installed.
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
BERGAMOT = os.path.join(HERE, "bergamot")
DEMO = os.path.join(ROOT, "models", "marian-en-de-tiny")
DEV = os.path.join(ROOT, "tests", "data", "dev", "multi30k.val.en")
N = 100


def bergamot_missing():
    """Why the Bergamot checks cannot run (None: they can). With MTLITE_REQUIRE_BERGAMOT=1
    (scripts/test.sh sets it) a missing Bergamot is an error instead of a skip."""
    why = None
    if shutil.which("node") is None:
        why = "node is not installed"
    elif not os.path.exists(os.path.join(BERGAMOT, "node_modules", "@browsermt", "bergamot-translator")):
        why = "Bergamot is not installed (scripts/setup.sh, or `npm ci` in tests/reference/bergamot)"
    if why and os.environ.get("MTLITE_REQUIRE_BERGAMOT") == "1":
        raise RuntimeError(why + " and MTLITE_REQUIRE_BERGAMOT=1")
    return why


def read_bin(path):
    """{name: float32 array} of a Marian binary file's float32 items."""
    with open(path, "rb") as f:
        b = f.read()
    version, n = struct.unpack_from("<QQ", b, 0)
    assert version == 1
    heads = [struct.unpack_from("<QQQQ", b, 16 + 32 * i) for i in range(n)]
    at = 16 + 32 * n
    names = []
    for name_len, _, _, _ in heads:
        names.append(b[at:at + name_len - 1].decode())
        at += name_len
    shapes = []
    for _, _, dims, _ in heads:
        shapes.append(struct.unpack_from(f"<{dims}i", b, at))
        at += 4 * dims
    (pad,) = struct.unpack_from("<Q", b, at)
    at += 8 + pad
    out = {}
    for name, (_, typ, _, size), shape in zip(names, heads, shapes):
        if typ == 0x0404:
            out[name] = np.frombuffer(b, np.float32, int(np.prod(shape)), at).reshape(shape)
        at += size
    assert at == len(b)
    return out


@unittest.skipIf(bergamot_missing(), bergamot_missing() or "")
class MarianExportAgainstBergamot(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import marian_export
        cls.tmp = tempfile.mkdtemp(prefix="marian-export-")
        for tying, fmt in (("all", "npz,bin,int8"), ("tied", "bin"), ("untied", "bin")):
            marian_export.main([DEMO, os.path.join(cls.tmp, tying), "--tying", tying, "--format", fmt])
        with open(DEV, encoding="utf-8") as f:
            cls.src = [next(f).rstrip("\n") for _ in range(N)]
        cls.cache = {}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def bergamot(self, tying, model="model.bin", precision="float32"):
        key = (tying, model, precision)
        if key not in self.cache:
            d = os.path.join(self.tmp, tying)
            r = subprocess.run(["node", os.path.join(BERGAMOT, "translate.mjs"), "--model", os.path.join(d, model),
                                "--vocab", os.path.join(d, "vocab.spm"), "--precision", precision],
                               input="\n".join(self.src) + "\n", capture_output=True, text=True, timeout=600)
            self.assertEqual(r.returncode, 0, r.stderr)
            out = r.stdout.split("\n")[:-1]
            self.assertEqual(len(out), N, r.stderr)
            self.cache[key] = out
        return self.cache[key]

    def test_tying_layouts_translate_identically(self):
        ref = self.bergamot("all")
        self.assertEqual(self.bergamot("tied"), ref)
        self.assertEqual(self.bergamot("untied"), ref)

    def test_bergamot_equals_the_marian_semantics_reference(self):
        import torch
        torch.set_num_threads(1)
        from marian_ref import TextTools
        from marian_semantics import MarianSemanticsRef
        m = MarianSemanticsRef(DEMO)
        tt = TextTools(DEMO)
        srcs = [tt.encode(s) for s in self.src]
        # Marian's length limit: max-length-factor (3, translate.mjs's default) x source length
        hyps = m.greedy(srcs, max_length=[3 * len(s) for s in srcs])
        ref = [tt.decode(ids) for ids, _ in hyps]
        got = self.bergamot("all")
        same = sum(a.strip() == b.strip() for a, b in zip(ref, got))
        diff = [(a, b) for a, b in zip(ref, got) if a.strip() != b.strip()][:3]
        self.assertGreaterEqual(same, N - 2, f"{same}/{N} identical; first differences: {diff}")

    def test_separate_vocabularies_are_reordered_per_side(self):
        """A random checkpoint with a separate, shuffled target vocabulary (2,000 target pieces
        missing from it): Bergamot, reading SentencePiece ids, and the reference, reading HF ids,
        generate the same text. Random weights run to the length limit, which Marian counts
        differently, so one output must be a prefix of the other."""
        import torch
        torch.set_num_threads(1)
        from marian_ref import TextTools
        from marian_semantics import MarianSemanticsRef
        import marian_export
        hf, out = os.path.join(self.tmp, "sep-hf"), os.path.join(self.tmp, "sep")
        subprocess.run([sys.executable, os.path.join(HERE, "make_random_checkpoint.py"), hf, "--preset", "small-sep",
                        "--set", "dec_heads=2", "--set", "dec_ffn=128"], check=True, capture_output=True)
        marian_export.main([hf, out, "--tying", "untied", "--format", "bin"])
        src = self.src[:30]
        r = subprocess.run(["node", os.path.join(BERGAMOT, "translate.mjs"), "--model", os.path.join(out, "model.bin"),
                            "--vocab", os.path.join(out, "vocab.spm")],
                           input="\n".join(src) + "\n", capture_output=True, text=True, timeout=600)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = [line.strip() for line in r.stdout.split("\n")[:-1]]
        m, tt = MarianSemanticsRef(hf), TextTools(hf)
        srcs = [tt.encode(s) for s in src]
        ref = [tt.decode(ids).strip() for ids, _ in m.greedy(srcs, max_length=[3 * len(s) for s in srcs])]
        self.assertEqual(len(got), len(ref))
        for a, b in zip(ref, got):
            self.assertTrue(a and b and (a.startswith(b) or b.startswith(a)), f"reference {a!r}\nbergamot  {b!r}")

    def test_intgemm8_export_translates_like_float32(self):
        f32 = self.bergamot("all")
        q = self.bergamot("all", "model.int8.bin", "int8shiftAll")
        same = sum(a == b for a, b in zip(f32, q))
        self.assertGreaterEqual(same, 0.7 * N, f"{same}/{N} int8 translations equal to float32")

    def test_npz_holds_the_bin_arrays(self):
        d = os.path.join(self.tmp, "all")
        npz = np.load(os.path.join(d, "model.npz"))
        binary = read_bin(os.path.join(d, "model.bin"))
        self.assertEqual(set(npz.files) - {"special:model.yml"}, set(binary))
        for name, a in binary.items():
            np.testing.assert_array_equal(npz[name], a, err_msg=name)
        yml = bytes(npz["special:model.yml"].astype(np.uint8)).rstrip(b"\0").decode()
        self.assertIn("type: transformer", yml)
        self.assertIn("tied-embeddings-all: true", yml)


if __name__ == "__main__":
    unittest.main()

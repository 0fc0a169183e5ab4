#!/usr/bin/python3
"""Self-checks of the PyTorch reference (marian_ref.py) and of the random checkpoints
(make_random_checkpoint.py); also checks that the reference still reproduces the committed
goldens. Needs no mtlite binary. Run with Debian's /usr/bin/python3 (torch, numpy)."""
import filecmp
import json
import math
import os
import random
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import numpy as np  # noqa: E402
import torch  # noqa: E402

import make_random_checkpoint as mrc  # noqa: E402
import marian_ref as mr  # noqa: E402
import parity_common as pc  # noqa: E402

torch.set_num_threads(1)
N_GOLDEN = 24  # dev sentences per set re-decoded against the goldens


def _sources(ref, n, seed, max_len=30):
    rng = random.Random(seed)
    return [[rng.randrange(1, ref.src_vocab - 1) for _ in range(rng.randint(0, max_len))] + [ref.eos]
            for _ in range(n)]


class SafetensorsTest(unittest.TestCase):
    def test_round_trip(self):
        a = np.array([[0.0, -1.5, 3.25], [1e-3, 65504.0, -2.0 ** -14]], dtype=np.float32)
        with tempfile.TemporaryDirectory() as tmp:
            for dt, tol in (("F32", 0), ("F16", 1e-3), ("BF16", 1e-2)):
                p = os.path.join(tmp, dt)
                mr.write_safetensors(p, {"x": a, "b.y": a[0]}, dt)
                with open(p, "rb") as f:
                    n = int.from_bytes(f.read(8), "little")
                    self.assertEqual(n % 8, 0)
                    h = json.loads(f.read(n))
                self.assertEqual(h["x"]["dtype"], dt)
                got = mr.read_safetensors(p)
                self.assertEqual(sorted(got), ["b.y", "x"])
                np.testing.assert_allclose(got["x"].numpy(), a, rtol=tol, atol=0)
                np.testing.assert_allclose(got["b.y"].numpy(), a[0], rtol=tol, atol=0)

    def test_bad_files(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = os.path.join(tmp, "bad")
            with open(p, "wb") as f:
                f.write((1000).to_bytes(8, "little") + b"{}")
            with self.assertRaises(ValueError):
                mr.read_safetensors(p)

    def test_demo_positions_are_marian_sinusoids(self):
        ref = mr.MarianRef(pc.DEMO_HF)
        want = mr.marian_sinusoid(ref.enc_pos.shape[0], ref.d)
        self.assertEqual(float((ref.enc_pos - want).abs().max()), 0.0)
        self.assertEqual(float((ref.dec_pos - want).abs().max()), 0.0)


class RandomModelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="mtlite_refself_")
        cls.refs = {}
        for preset in ("small", "small-sep"):
            d = os.path.join(cls.tmp, preset)
            mrc.build(d, seed=3, **mrc.PRESETS[preset])
            cls.refs[preset] = mr.MarianRef(d)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_deterministic_build(self):
        d = os.path.join(self.tmp, "again")
        mrc.build(d, seed=3, **mrc.PRESETS["small-sep"])
        for fn in ("model.safetensors", "config.json", "target_vocab.json"):
            self.assertTrue(filecmp.cmp(os.path.join(d, fn), os.path.join(self.tmp, "small-sep", fn),
                                        shallow=False), fn)

    def test_separate_vocab_layout(self):
        ref = self.refs["small-sep"]
        d = os.path.join(self.tmp, "small-sep")
        with open(os.path.join(d, "target_vocab.json")) as f:
            tv = json.load(f)
        with open(os.path.join(d, "config.json")) as f:
            cfg = json.load(f)
        self.assertEqual(len(tv), cfg["decoder_vocab_size"])
        self.assertNotEqual(cfg["decoder_vocab_size"], cfg["vocab_size"])
        self.assertEqual((tv["</s>"], tv["<unk>"], tv["<pad>"]), (0, 1, len(tv) - 1))
        self.assertEqual(cfg["pad_token_id"], tv["<pad>"])
        self.assertEqual(sorted(tv.values()), list(range(len(tv))))
        self.assertEqual(ref.tgt_vocab, len(tv))
        self.assertEqual(ref.enc_embed.shape[0], cfg["vocab_size"])

    def test_incremental_equals_teacher_forcing(self):
        for preset, ref in self.refs.items():
            src = _sources(ref, 1, 11)[0]
            out = ref.greedy([src], 20)[0][0] + [ref.eos]
            full = ref.forced_logits(src, out)
            s, lens = ref._batch([src])
            enc, mask = ref.encode(s, lens)
            xkv = ref.cross_kv(enc)
            cache = mr.KVCache(ref.dec_layers, len(out))
            steps = [ref.start] + out[:-1]
            inc = torch.cat([ref.decode(torch.tensor([[tok]]), i, cache, xkv, mask)[0]
                             for i, tok in enumerate(steps)])
            self.assertLess(float((inc - full).abs().max()), 1e-4, preset)

    def test_batching_changes_nothing(self):
        for preset, ref in self.refs.items():
            srcs = _sources(ref, 8, 12)
            g = ref.greedy(srcs, 40)
            b = ref.beam(srcs, 4, 40, n_best=4)
            for i, s in enumerate(srcs):
                self.assertEqual(ref.greedy([s], 40)[0][0], g[i][0], f"{preset} greedy {i}")
                one = ref.beam([s], 4, 40, n_best=4)[0]
                self.assertEqual([h[0] for h in one], [h[0] for h in b[i]], f"{preset} beam {i}")
                for x, y in zip(one, b[i]):
                    self.assertAlmostEqual(x[1], y[1], delta=1e-4)

    def test_beam1_is_greedy(self):
        for preset, ref in self.refs.items():
            srcs = _sources(ref, 8, 13)
            g = ref.greedy(srcs, 40)
            b = ref.beam(srcs, 1, 40)
            self.assertEqual([x[0] for x in g], [x[0][0] for x in b], preset)
            for x, y in zip(g, b):
                self.assertAlmostEqual(x[1], y[0][1], delta=1e-5)

    def test_max_length(self):
        ref = self.refs["small"]
        srcs = _sources(ref, 6, 14)
        for m in (1, 2, 5):
            for ids, score in ref.greedy(srcs, m):
                self.assertLessEqual(len(ids), m - 1)
            for hyps in ref.beam(srcs, 4, m, n_best=4):
                self.assertEqual(len(hyps), 4)
                self.assertTrue(all(len(h[0]) <= m - 1 for h in hyps))
                self.assertEqual(hyps, sorted(hyps, key=lambda h: -h[1]))
        # max_length 1: only the forced </s>, whose log-prob counts as 0 (HF ForcedEOS)
        self.assertEqual(ref.greedy(srcs[:1], 1)[0], ([], 0.0))
        self.assertEqual(ref.beam(srcs[:1], 4, 1)[0][0], ([], 0.0))

    def test_nbest_scores_are_normalised_logprobs(self):
        ref = self.refs["small-sep"]
        src = _sources(ref, 1, 15)[0]
        for lp in (1.0, 0.6):
            for ids, score in ref.beam([src], 4, 30, length_penalty=lp, n_best=4)[0]:
                tgt = ids + [ref.eos]
                logp = ref.step_logprobs(ref.forced_logits(src, tgt))
                total = float(sum(logp[i, t] for i, t in enumerate(tgt)))
                if len(tgt) == 30:  # forced </s>: log-prob 0
                    total -= float(logp[len(tgt) - 1, ref.eos])
                self.assertAlmostEqual(score, total / len(tgt) ** lp, delta=1e-4)

    def test_pad_never_generated(self):
        ref = self.refs["small-sep"]
        for hyps in ref.beam(_sources(ref, 6, 16), 4, 30, n_best=4):
            for ids, _ in hyps:
                self.assertNotIn(ref.pad, ids)


class Int8Test(unittest.TestCase):
    """quantize_int8 (the benchmark's PyTorch int8 peer): every projection becomes a dynamically
    quantized int8 Linear, the float32 copies go, and the model still translates."""

    def test_quantize_int8(self):
        with tempfile.TemporaryDirectory() as tmp:
            mrc.build(tmp, seed=5, **mrc.PRESETS["small"])
            fp32, q = mr.MarianRef(tmp), mr.MarianRef(tmp)
            q.quantize_int8()
            self.assertTrue(all(isinstance(m, torch.nn.quantized.dynamic.Linear) for m in q.proj.values()))
            self.assertFalse([k for k in q.w if k.endswith(("_proj.weight", ".fc1.weight", ".fc2.weight"))])
            srcs = _sources(fp32, 6, 17)
            want, got = fp32.greedy(srcs, 20), q.greedy(srcs, 20)
            self.assertEqual(len(got), len(srcs))
            for (ids, score), (ref_ids, _) in zip(got, want):
                self.assertTrue(all(0 <= i < q.tgt_vocab and i != q.pad for i in ids))
                self.assertTrue(math.isfinite(score))
            self.assertGreater(sum(g[0] == w[0] for g, w in zip(got, want)), 0)


class TextToolsTest(unittest.TestCase):
    """TextTools is HF MarianTokenizer: it reproduces the tokenizer oracle of tests/data/tokenizer
    (make_tokenizer_golden.py): decode strips spaces at both ends."""

    TOK = os.path.join(pc.ROOT, "tests", "data", "tokenizer")

    @staticmethod
    def _lines(path):  # split on "\n" only, as the oracle does
        with open(path, "rb") as f:
            data = f.read()
        return [l.decode("utf-8") for l in (data[:-1] if data.endswith(b"\n") else data).split(b"\n")]

    def test_encode(self):
        tt = mr.TextTools(pc.DEMO_HF)
        for text, ids in ((os.path.join(pc.DEV, "multi30k.val.en"), "multi30k.val.en.ids"),
                          (os.path.join(pc.DEV, "tatoeba.dev.en"), "tatoeba.dev.en.ids"),
                          (os.path.join(self.TOK, "adversarial.txt"), "adversarial.source.ids")):
            want = pc.read_ids(os.path.join(self.TOK, ids))
            self.assertEqual([tt.encode(l) for l in self._lines(text)], [w + [tt.eos] for w in want], ids)

    def test_decode(self):
        tt = mr.TextTools(pc.DEMO_HF)
        for name in ("multi30k.val.greedy", "tatoeba.dev.greedy", "multi30k.val.de", "tatoeba.dev.de",
                     "adversarial.target"):
            with open(os.path.join(self.TOK, name + ".decoded"), encoding="utf-8") as f:
                want = [json.loads(l) for l in f]
            got = [tt.decode(ids) for ids in pc.read_ids(os.path.join(self.TOK, name + ".ids"))]
            self.assertEqual(len(got), len(want), name)
            for i, (g, w) in enumerate(zip(got, want)):
                self.assertEqual(g, w, f"{name} line {i + 1}")


class GoldenReproductionTest(unittest.TestCase):
    """The committed goldens are still what marian_ref.py computes (first sentences)."""

    @classmethod
    def setUpClass(cls):
        cls.ref = mr.MarianRef(pc.DEMO_HF)

    def test_greedy_and_beam(self):
        for name in ("multi30k.val", "tatoeba.dev"):
            srcs = pc.read_ids(os.path.join(pc.GOLDEN, f"demo.{name}.src.ids"))[:N_GOLDEN]
            greedy = pc.read_ids(os.path.join(pc.GOLDEN, f"demo.{name}.greedy.ids"))[:N_GOLDEN]
            beam = pc.read_ids(os.path.join(pc.GOLDEN, f"demo.{name}.beam4.ids"))[:N_GOLDEN]
            nbest = {}
            with open(os.path.join(pc.GOLDEN, f"demo.{name}.beam4.nbest.tsv")) as f:
                for l in f:
                    i, r, sc, ids = l.rstrip("\n").split("\t")
                    nbest.setdefault(int(i), []).append((int(r), float(sc), [int(x) for x in ids.split()]))
            self.assertEqual([x[0] for x in self.ref.greedy(srcs, 256)], greedy, name)
            got = self.ref.beam(srcs, 4, 256, n_best=4)
            for i, hyps in enumerate(got):
                self.assertEqual(hyps[0][0], beam[i], f"{name} {i}")
                want = sorted(nbest[i])
                self.assertEqual([h[0] for h in hyps], [w[2] for w in want], f"{name} {i}")
                for h, w in zip(hyps, want):
                    self.assertAlmostEqual(h[1], w[1], delta=2e-6)

    def test_forced_logits(self):
        with open(os.path.join(pc.GOLDEN, "demo.forced.json")) as f:
            meta = json.load(f)
        data = np.fromfile(os.path.join(pc.GOLDEN, "demo.forced.f32"), dtype="<f4")
        for e in meta["entries"]:
            n = e["shape"][0] * e["shape"][1]
            want = data[e["offset_floats"]:e["offset_floats"] + n].reshape(e["shape"])
            got = self.ref.forced_logits(e["source_ids"], e["target_ids"]).numpy()
            self.assertLess(float(np.abs(got - want).max()), 1e-5)


if __name__ == "__main__":
    pc.main()

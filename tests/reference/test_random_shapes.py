#!/usr/bin/python3
"""make_random_checkpoint.py's deployment-shape presets (demo, tiny32k, base), grown vocabularies
and --fixed-length (the benchmark bench/run_shapes.py relies on them):

  * the presets have the documented shapes and parameter counts (~17 M tiny32k, ~74 M base);
  * a grown vocabulary keeps the demo's ids, is dense, and its added pieces are output-only
    (SentencePiece never produces them);
  * fixed length, through `mtlite convert` + `mtlite translate` (int8, greedy and beam 4): every
    output has exactly max_length - 1 ids (+ the forced </s>); the same checkpoint without
    fixed_length ends sentences earlier (so the check can fail).

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
import make_random_checkpoint as mrc  # noqa: E402
import parity_common as pc  # noqa: E402

MAX_LEN = 24
SENTENCES = ["A man is riding a bike.", "Two dogs play in the snow.", "Hello!",
             "The quick brown fox jumps over the lazy dog near the river bank.", "x"]


def params(p):
    """Parameters of a shared-vocabulary, tied-output preset."""
    d, V = p["d_model"], p["vocab_size"]
    enc = p["enc_layers"] * (4 * (d * d + d) + 2 * d * p["enc_ffn"] + p["enc_ffn"] + d + 4 * d)
    dec = p["dec_layers"] * (8 * (d * d + d) + 2 * d * p["dec_ffn"] + p["dec_ffn"] + d + 6 * d)
    return V * d + enc + dec + V


class PresetShapes(unittest.TestCase):
    def test_demo_preset_is_the_bundled_config(self):
        with open(os.path.join(pc.DEMO_HF, "config.json")) as f:
            c = json.load(f)
        p = mrc.PRESETS["demo"]
        self.assertEqual((p["d_model"], p["enc_heads"], p["enc_layers"], p["dec_layers"], p["dec_ffn"],
                          p["vocab_size"], p["activation"]),
                         (c["d_model"], c["encoder_attention_heads"], c["encoder_layers"], c["decoder_layers"],
                          c["decoder_ffn_dim"], c["vocab_size"], c["activation_function"]))

    def test_deployment_shapes(self):
        t, b = mrc.PRESETS["tiny32k"], mrc.PRESETS["base"]
        self.assertEqual((t["d_model"], t["enc_heads"], t["enc_layers"], t["dec_layers"], t["enc_ffn"],
                          t["vocab_size"]), (256, 8, 6, 2, 1536, 32000))
        self.assertEqual((b["d_model"], b["enc_heads"], b["enc_layers"], b["dec_layers"], b["enc_ffn"],
                          b["vocab_size"], b["activation"]), (512, 8, 6, 6, 2048, 58101, "swish"))
        self.assertAlmostEqual(params(t) / 1e6, 17, delta=0.5)
        self.assertAlmostEqual(params(b) / 1e6, 74, delta=1.0)


class GrownVocabulary(unittest.TestCase):
    def test_layout(self):
        import sentencepiece as spm
        base = mrc.vocab_with_codes()
        v = mrc.extended_vocab(base, 12000)
        self.assertEqual(len(v), 12000)
        self.assertEqual(sorted(v.values()), list(range(12000)))
        for p, i in base.items():
            self.assertEqual(v[p], i)
        sp = spm.SentencePieceProcessor(model_file=os.path.join(pc.DEMO_HF, "source.spm"))
        added = [p for p in v if p not in base]
        self.assertEqual(len(added), 12000 - len(base))
        self.assertTrue(all(sp.piece_to_id(p) == sp.unk_id() for p in added))
        with self.assertRaises(ValueError):
            mrc.extended_vocab(base, len(base) - 1)


class FixedLength(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="mtlite_shapes_")
        cls.models = {}
        for fixed in (True, False):
            hf = os.path.join(cls.tmp, f"hf{int(fixed)}")
            mrc.build(hf, seed=5, **dict(mrc.PRESETS["small"], vocab_size=9000, fixed_length=fixed))
            with open(os.path.join(hf, "config.json")) as f:
                cls.vocab_size = json.load(f)["vocab_size"]
            m = os.path.join(cls.tmp, f"m{int(fixed)}.mtlite")
            pc.run_cli(["convert", hf, "-o", m, "--quantize", "int8"], "", "convert")
            cls.models[fixed] = m

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def lengths(self, fixed, beam):
        out = pc.run_cli(["translate", "-m", self.models[fixed], "--output-ids", "--beam", str(beam),
                          "--max-length", str(MAX_LEN)], "\n".join(SENTENCES) + "\n", "translate")
        lines = out.rstrip("\n").split("\n")
        self.assertEqual(len(lines), len(SENTENCES))
        ids = [[int(x) for x in l.split()] for l in lines]
        self.assertTrue(all(0 < i < self.vocab_size for s in ids for i in s))
        return [len(s) for s in ids]

    def test_every_output_runs_to_the_cap(self):
        for beam in (1, 4):
            self.assertEqual(self.lengths(True, beam), [MAX_LEN - 1] * len(SENTENCES), f"beam {beam}")

    def test_without_fixed_length_outputs_end_earlier(self):
        self.assertLess(min(self.lengths(False, 1) + self.lengths(False, 4)), MAX_LEN - 1)


if __name__ == "__main__":
    unittest.main(verbosity=2)

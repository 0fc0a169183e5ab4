#!/usr/bin/python3
"""Two models chained through a pivot language (`mtlite translate -m A -m B`, Python
`mtlite.Translator([a, b])`), checked against Marian's own chaining: Bergamot's
translateViaPivoting (tests/reference/bergamot/translate.mjs --pivot, installed by
scripts/setup.sh with `npm ci`).

The chain: the demo model (en->de) exported by marian_export.py as a Marian model.bin, then a
random-weight Marian model "de->en" with the same SentencePiece vocabulary
(make_random_checkpoint.py --preset small-sep with a shared vocabulary and one head count, which
Marian's transformer needs, exported likewise), both converted by `mtlite convert model.bin --vocab
vocab.spm --quantize fp32 --source-lang .. --target-lang ..`. The first 300 sentences of
multi30k.val, greedy, float32:
  * the chain against Bergamot's translateViaPivoting: at least 99% of the lines identical
    (measured: 299 of 300). A line that differs must be a cap cut (one output a prefix of the
    other) or a near-tie: where the two first part ways, the PyTorch reference with Marian's
    semantics (marian_semantics.py) of the model that decided (the first, if the two pivot texts
    differ, else the second) has its two best log-probabilities within TIE (the random model's
    logits are nearly flat; the one line measured differs at a gap of 1.4e-5);
  * the chain against the two models one after the other (`mtlite translate -m A | mtlite
    translate -m B`): every line identical;
  * the chain's one arena holds both translators: Translator([a, b]).arena_bytes is at least a's
    arena plus b's without a text layer (the text layer is the chain's, not the second's);
  * HTML through the chain (`--html`: the alignments composed through the pivot text) is
    well-formed and keeps the input's tags, in order (<code> content untranslated);
  * a chain whose languages do not meet (en->de, then en->de again) is refused.
Both engines cut a sentence at Marian's length cap, 3 x its source tokens (</s> included) words,
the second model's source being the pivot text: Bergamot with --max-length-factor 3 one sentence
per call (Marian takes the cap from the longest source of a batch), mtlite with
--max-length-ratio 3 --max-length-offset 1.
The Bergamot checks are skipped (with the reason) where node or the Bergamot package is not
installed (an error with MTLITE_REQUIRE_BERGAMOT=1); the arena check where the Python package is
not built.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from parity_common import DEMO_HF, DEV, mtlite_bin  # noqa: E402
from test_marian_bergamot import BERGAMOT, bergamot_missing  # noqa: E402
import html_structure  # noqa: E402

N = 300
MIN_SAME = 0.99
TIE = 1e-3  # log-probability gap of a near-tie (float32 engines that sum in other orders)
MARIAN_CAP = ["--max-length-ratio", "3", "--max-length-offset", "1"]  # Bergamot: max-length-factor 3
# The second model: small, shared vocabulary (the demo's), one head count for both stacks.
RANDOM = ["--preset", "small-sep", "--seed", "1", "--set", "target_vocab=0", "--set", "dec_heads=2",
          "--set", "dec_ffn=128"]
SNIPPETS = [
    '<p>A dog runs in the <a href="https://example.org/park">park</a>.</p>',
    "<ul><li>Two <i>men</i> are <em>talking</em>.</li><li>A girl &amp; a boy play.</li></ul>",
    '<h1>A day at the <b>beach</b></h1><p>The woman <span class="x">reads</span> a book.<br>'
    "A child <code>sleeps</code> under a tree.</p>",
]

M = {}  # the models of setUpModule


def setUpModule():
    import marian_export
    tmp = tempfile.mkdtemp(prefix="pivot-")
    M["tmp"] = tmp
    first, second, hf = os.path.join(tmp, "first"), os.path.join(tmp, "second"), os.path.join(tmp, "second-hf")
    marian_export.main([DEMO_HF, first, "--tying", "all", "--format", "bin"])
    subprocess.run([sys.executable, os.path.join(HERE, "make_random_checkpoint.py"), hf, *RANDOM],
                   check=True, capture_output=True)
    marian_export.main([hf, second, "--tying", "all", "--format", "bin"])
    M.update(first_dir=first, second_dir=second, second_hf=hf)
    for name, d, src, tgt in (("a", first, "en", "de"), ("b", second, "de", "en")):
        out = os.path.join(tmp, f"{name}.mtlite")
        r = subprocess.run([mtlite_bin(), "convert", os.path.join(d, "model.bin"), "--vocab", os.path.join(d, "vocab.spm"),
                            "--quantize", "fp32", "--source-lang", src, "--target-lang", tgt, "-o", out],
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise AssertionError(f"mtlite convert {d}/model.bin: {r.stderr}")
        M[name] = out
    with open(os.path.join(DEV, "multi30k.val.en"), encoding="utf-8") as f:
        M["src"] = [next(f).rstrip("\n") for _ in range(N)]


def tearDownModule():
    shutil.rmtree(M.get("tmp", ""), ignore_errors=True)


def mtlite(models, lines, extra=()):
    args = [mtlite_bin(), "translate", "-q", "--split", "none", *MARIAN_CAP, *extra]
    for m in models:
        args += ["-m", m]
    r = subprocess.run(args, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        raise AssertionError(f"mtlite translate {' '.join(models)}: {r.stderr}")
    out = r.stdout.split("\n")[:-1]
    if len(out) != len(lines):
        raise AssertionError(f"{len(out)} output lines for {len(lines)}: {r.stderr}")
    return [line.strip() for line in out]


def bergamot(lines, pivot=True):
    """Bergamot, one sentence per call (--batch 1: Marian's cap is the batch's longest source's)."""
    a, b = M["first_dir"], M["second_dir"]
    args = ["node", os.path.join(BERGAMOT, "translate.mjs"), "--model", os.path.join(a, "model.bin"),
            "--vocab", os.path.join(a, "vocab.spm"), "--precision", "float32", "--max-length-factor", "3",
            "--beam", "1", "--batch", "1"]
    if pivot:
        args += ["--pivot", os.path.join(b, "model.bin"), "--pivot-vocab", os.path.join(b, "vocab.spm")]
    r = subprocess.run(args, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        raise AssertionError(f"translate.mjs: {r.stderr}")
    out = r.stdout.split("\n")[:-1]
    if len(out) != len(lines):
        raise AssertionError(f"{len(out)} Bergamot lines for {len(lines)}: {r.stderr}")
    return [line.strip() for line in out]


def chained():
    if "chain" not in M:
        M["chain"] = mtlite([M["a"], M["b"]], M["src"])
    return M["chain"]


def first_output():
    if "first_out" not in M:
        M["first_out"] = mtlite([M["a"]], M["src"])
    return M["first_out"]


def tie_gap(hf_dir, source, outputs):
    """The reference's greedy decision where the texts `outputs` part ways: its top-1 minus top-2
    log-probability there (the smaller of that step and the one before, as a piece of one output
    may be a prefix of the other's), or None when its own output runs along both to its end."""
    import torch
    torch.set_num_threads(1)
    from marian_ref import TextTools
    from marian_semantics import MarianSemanticsRef
    key = ("ref", hf_dir)
    if key not in M:
        M[key] = (MarianSemanticsRef(hf_dir), TextTools(hf_dir))
    m, tt = M[key]
    ids = tt.encode(source)
    (out, _, gaps), = m.greedy([ids], max_length=[3 * len(ids) + 1], with_gaps=True)
    text = ""
    for t, i in enumerate(out):
        text += tt.tgt_pieces[i] if i not in tt.special else ""
        s = text.replace("\u2581", " ").strip()
        if not all(o.startswith(s) for o in outputs):
            return min(gaps[max(t - 1, 0):t + 1])
    return None


@unittest.skipIf(bergamot_missing(), bergamot_missing() or "")
class PivotAgainstBergamot(unittest.TestCase):
    def test_chain_equals_bergamot_translate_via_pivoting(self):
        ref, got = bergamot(M["src"]), chained()
        diff = [i for i, (a, b) in enumerate(zip(ref, got)) if a != b]
        same = N - len(diff)
        print(f"multi30k.val (first {N}): en->de->en chain, float32 greedy: mtlite = Bergamot translateViaPivoting "
              f"on {same}/{N} lines ({100.0 * same / N:.1f}%)", file=sys.stderr)
        for i in diff:
            print(f"  line {i + 1}: {M['src'][i]!r}\n    Bergamot {ref[i]!r}\n    mtlite   {got[i]!r}", file=sys.stderr)
        self.assertGreaterEqual(same, MIN_SAME * N, f"first differences: {diff[:3]}")
        cut = [i for i in diff if not (ref[i].startswith(got[i]) or got[i].startswith(ref[i]))]
        if not cut:
            return
        # not a cap cut: a near-tie of the model that decided
        pivot_ref = bergamot([M["src"][i] for i in cut], pivot=False)
        for i, bp in zip(cut, pivot_ref):
            mp = first_output()[i]
            if bp != mp:  # the first model parted ways
                where, gap = "first", tie_gap(DEMO_HF, M["src"][i], [bp, mp])
            else:
                where, gap = "second", tie_gap(M["second_hf"], mp, [ref[i], got[i]])
            print(f"  line {i + 1}: the {where} model decides, top-2 log-probability gap {gap}", file=sys.stderr)
            self.assertTrue(gap is not None and gap < TIE,
                            f"line {i + 1} differs beyond a tie ({where} model, gap {gap}):\n"
                            f"Bergamot {ref[i]!r}\nmtlite   {got[i]!r}")


class PivotChain(unittest.TestCase):
    def test_chain_equals_the_two_models_one_after_the_other(self):
        two = mtlite([M["b"]], first_output())
        got = chained()
        diff = [(i + 1, a, b) for i, (a, b) in enumerate(zip(two, got)) if a != b]
        print(f"chain = first | second on {N - len(diff)}/{N} lines", file=sys.stderr)
        self.assertEqual(diff, [])

    def test_languages_must_meet(self):
        r = subprocess.run([mtlite_bin(), "translate", "-q", "-m", M["a"], "-m", M["a"]], input="A dog.\n",
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 1)
        self.assertIn("pivot: the first model translates into 'de' but the second translates from 'en'", r.stderr)

    def test_html_through_the_pivot_keeps_the_tags(self):
        for snippet in SNIPPETS:
            r = subprocess.run([mtlite_bin(), "translate", "-q", "--html", "-m", M["a"], "-m", M["b"], *MARIAN_CAP],
                               input=snippet + "\n", capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            src, out = html_structure.Structure(snippet), html_structure.Structure(r.stdout)
            self.assertEqual(out.errors, [], f"{snippet!r} -> {r.stdout!r}")
            self.assertEqual(out.tags(), src.tags(), f"{snippet!r} -> {r.stdout!r}")
            self.assertNotEqual(out.text_segments(), src.text_segments(), f"not translated: {snippet!r}")
            if "<code>" in snippet:  # untranslated element: kept as it is
                self.assertIn("<code>sleeps</code>", r.stdout)

    def test_one_arena_holds_both_translators(self):
        build_python = os.environ.get("MTLITE_PYTHON_BUILD_DIR") or os.path.join(os.path.dirname(mtlite_bin()), "python")
        if not os.path.isdir(os.path.join(build_python, "mtlite")):
            self.skipTest(f"the Python package is not built ({build_python})")
        sys.path.insert(0, build_python)
        import mtlite
        for limits in ({}, {"alignments": True}, {"max_text_bytes": 0, "max_beam": 2}):
            a = mtlite.Translator(M["a"], **limits).arena_bytes
            alone = dict(limits, max_text_bytes=0)
            b = mtlite.Translator(M["b"], **alone).arena_bytes
            chain = mtlite.Translator([M["a"], M["b"]], **limits)
            print(f"arena {limits}: chain {chain.arena_bytes}, first {a}, second without a text layer {b}",
                  file=sys.stderr)
            self.assertGreaterEqual(chain.arena_bytes, a + b, limits)
            # no more than the heads of the second part beyond the second's own text-free arena
            # (and its inputs, as long as the first's outputs can be)
            self.assertLessEqual(chain.arena_bytes, a + b + (1 << 16), limits)
        chain = mtlite.Translator([M["a"], M["b"]], max_text_bytes=0)
        self.assertEqual(chain.translate(M["src"][0], beam_size=1, max_length_ratio=3.0, max_length_offset=1),
                         chained()[0])


if __name__ == "__main__":
    unittest.main()

"""Python output equals the CLI's (same model, limits and options) on the dev sets."""
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import DEV_SETS, dev_lines, run_cli


@pytest.mark.parametrize("beam", [1, 4])
def test_dev_sets_equal_cli(mtlite, cli, int8_model, int8_path, beam):
    tr = mtlite.Translator(int8_model, max_batch=16, max_beam=beam)
    for name in DEV_SETS:
        lines = dev_lines(name)
        got = [r.text for r in tr.translate_batch(lines, beam_size=beam)]
        _, want, _ = run_cli(cli, ["translate", "-m", int8_path, "--split", "none", "--beam", str(beam), "--batch", "16", "-q"], lines)
        assert len(got) == len(want) == len(lines)
        diff = [i for i, (a, b) in enumerate(zip(got, want)) if a != b]
        assert not diff, f"{name} beam {beam}: {len(diff)} lines differ, first {diff[0] + 1}: {got[diff[0]]!r} vs {want[diff[0]]!r}"
        ids = run_cli(cli, ["translate", "-m", int8_path, "--beam", str(beam), "--batch", "16", "--output-ids", "-q"],
                      lines[:200])[1]
        py_ids = [" ".join(map(str, r.ids[0])) for r in tr.translate_batch(lines[:200], beam_size=beam)]
        assert py_ids == ids


def test_nbest_scores_alignments_equal_cli(mtlite, cli, int8_model, int8_path):
    lines = dev_lines("multi30k.val")[:60]
    tr = mtlite.Translator(int8_model, max_batch=8, max_beam=4, alignments=True)
    res = tr.translate_batch(lines, beam_size=4, n_best=3, return_scores=True, return_alignments=True)
    _, out, _ = run_cli(cli, ["translate", "-m", int8_path, "--beam", "4", "--n-best", "3", "--batch", "8",
                              "--alignments", "-q"], lines)
    want = [l.split(" ||| ") for l in out]
    k = 0
    for i, r in enumerate(res):
        assert len(r.hypotheses) == len(r.ids) == len(r.scores) == len(r.alignments) == 3
        assert r.scores == sorted(r.scores, reverse=True)
        for text, ids, score, align in zip(r.hypotheses, r.ids, r.scores, r.alignments):
            idx, wtext, wscore, walign = want[k]
            k += 1
            assert int(idx) == i and text == wtext and f"{score:.6f}" == wscore
            assert ids.dtype == np.int32 and align.dtype == np.float32
            assert align.shape == (len(ids) + 1, len(int8_model.encode(lines[i])))
            np.testing.assert_allclose(align.sum(axis=1), 1.0, atol=1e-4)
            pairs = " ".join(f"{int(np.argmax(align[t]))}-{t}" for t in range(len(ids)))
            assert pairs == walign
    assert k == len(want)


def test_options_equal_cli(mtlite, cli, int8_model, int8_path):
    lines = dev_lines("tatoeba.dev")[:80]
    tr = mtlite.Translator(int8_model, max_batch=4, max_beam=3)
    got = [f"{r.text} ||| {r.scores[0]:.6f}" for r in
           tr.translate_batch(lines, beam_size=3, max_length=12, length_penalty=0.6, return_scores=True)]
    _, want, _ = run_cli(cli, ["translate", "-m", int8_path, "--split", "none", "--beam", "3", "--batch", "4", "--max-length", "12",
                               "--length-penalty", "0.6", "--scores", "-q"], lines)
    assert got == want
    got = [r.text for r in tr.translate_batch(lines, beam_size=1, max_length_ratio=0.5)]
    _, want, _ = run_cli(cli, ["translate", "-m", int8_path, "--split", "none", "--batch", "4", "--max-length-ratio", "0.5", "-q"], lines)
    assert got == want


def test_threads_option_same_output(mtlite, int8_model):
    lines = dev_lines("multi30k.val")[:16]
    one = mtlite.Translator(int8_model, max_batch=8)
    two = mtlite.Translator(int8_model, max_batch=8, threads=2)
    assert two.limits["threads"] == 2
    assert [r.text for r in one.translate_batch(lines)] == [r.text for r in two.translate_batch(lines)]


def test_translate_iterable_and_file(mtlite, cli, int8_model, int8_path, tmp_path):
    lines = dev_lines("tatoeba.dev")[:50]
    tr = mtlite.Translator(int8_model, max_batch=8)
    want = [r.text for r in tr.translate_batch(lines, beam_size=1)]
    src = tmp_path / "in.txt"
    src.write_bytes("".join(l + ("\r\n" if i % 3 == 0 else "\n") for i, l in enumerate(lines)).encode("utf-8"))
    with open(src, encoding="utf-8", newline="") as f:
        it = tr.translate_iterable(f, batch_size=3, beam_size=1)
        assert iter(it) is it  # a lazy generator
        assert [r.text for r in it] == want
    assert [r.text for r in tr.translate_iterable(iter(lines[:5]), beam_size=1)] == want[:5]
    out = tmp_path / "out.txt"
    stats = tr.translate_file(src, out, beam_size=1)
    assert stats == {"lines": 50, "errors": []}
    assert out.read_text(encoding="utf-8") == "".join(w + "\n" for w in want)
    _, cli_out, _ = run_cli(cli, ["translate", "-m", int8_path, "--split", "none", "-q"], lines)
    assert cli_out == want
    with pytest.raises(ValueError):
        list(tr.translate_iterable(lines, batch_size=9))


def test_translate_file_errors_like_cli(mtlite, cli, int8_model, int8_path, tmp_path):
    lines = ["A dog runs.", "x" * 300, "Two men.", "\udcff bad", "", "The end."]
    src = tmp_path / "in.txt"
    src.write_bytes("".join(l + "\n" for l in lines).encode("utf-8", "surrogatepass"))
    tr = mtlite.Translator(int8_model, max_batch=4, max_input_bytes=256)
    out = tmp_path / "out.txt"
    stats = tr.translate_file(src, out, on_error="empty", beam_size=1)
    assert [e[0] for e in stats["errors"]] == [2, 4]
    assert "max_input_bytes" in stats["errors"][0][1] and "UTF-8" in stats["errors"][1][1]
    p_out = out.read_text(encoding="utf-8").split("\n")[:-1]
    import subprocess
    p = subprocess.run([cli, "translate", "-m", int8_path, "--split", "none", "--max-input-bytes", "256", "--batch", "4", "-q"],
                       stdin=open(src, "rb"), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.returncode == 1
    assert p_out == p.stdout.decode("utf-8").split("\n")[:-1]
    with pytest.raises(mtlite.OutOfRangeError, match=r"in\.txt:2: .*max_input_bytes"):
        tr.translate_file(src, out, beam_size=1)


def test_batches_longer_than_max_batch(mtlite, int8_model):
    lines = dev_lines("multi30k.val")[:23]
    small = mtlite.Translator(int8_model, max_batch=5)
    big = mtlite.Translator(int8_model, max_batch=23)
    assert [r.text for r in small.translate_batch(lines)] == [r.text for r in big.translate_batch(lines)]
    assert small.translate_batch([]) == []
    # The failing sentence is named by its index in the caller's list.
    with pytest.raises(mtlite.InvalidArgumentError, match=r"^sentence 12: .*UTF-8"):
        small.translate_batch(lines[:12] + [b"\xff"])


def test_translate_single_and_bytes(mtlite, int8_model):
    tr = mtlite.Translator(int8_model)
    a = tr.translate("A man is riding a bike.")
    assert a and isinstance(a, str)
    assert tr.translate("A man is riding a bike.".encode("utf-8")) == a
    assert tr.translate("") == ""
    assert tr.translate_batch(["A man is riding a bike."], beam_size=4)[0].text == a


def test_model_info_equals_cli(mtlite, cli, int8_model, int8_path):
    import json
    import subprocess
    # `mtlite info --limits B,S,T,BEAM` keeps the other TranslatorLimits defaults (4096 input bytes,
    # 16384 text bytes)
    info = int8_model.info(max_batch=4, max_source_tokens=128, max_target_tokens=64, max_beam=2, max_input_bytes=4096,
                           max_text_bytes=16384)
    out = subprocess.run([cli, "info", int8_path, "--json", "--limits", "4,128,64,2"], check=True,
                         stdout=subprocess.PIPE).stdout
    want = json.loads(out)
    assert info["file_size"] == want["file_size"] == os.path.getsize(int8_path)
    assert info["arena_bytes"] == want["arena_bytes"]
    assert info["config"] == pytest.approx(want["config"], rel=1e-8)  # the CLI prints floats with %.9g
    assert list(info["config"]) == list(want["config"])  # the same fields in the same order
    assert info["limits"]["max_n_best"] == 2
    tr = mtlite.Translator(int8_model, max_batch=4, max_source_tokens=128, max_target_tokens=64, max_beam=2,
                           max_input_bytes=4096, max_text_bytes=16384)
    assert tr.arena_bytes == info["arena_bytes"]
    assert int8_model.config["weight_type"] == "int8" and int8_model.file_size == info["file_size"]
    assert mtlite.version() == mtlite.__version__ and mtlite.__version__.count(".") == 2


def test_kernel_table(mtlite, cli):
    """kernel_table() is the table `mtlite version` names, in this process and when forced."""
    env = {k: v for k, v in os.environ.items() if k != "MTLITE_KERNELS"}
    line = subprocess.run([cli, "version"], check=True, stdout=subprocess.PIPE, env=env).stdout.decode().split("\n")[1]
    assert line.startswith("kernels ") and "(this CPU can run: reference" in line, line
    runs = line[line.index(":") + 2:-1].split()
    if "MTLITE_KERNELS" not in os.environ:
        assert mtlite.kernel_table() == line.split()[1] == runs[-1]
    code = "import mtlite; print(mtlite.kernel_table())"
    for table in (runs[0], runs[-1]):
        p = subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=dict(env, MTLITE_KERNELS=table))
        assert p.stdout.decode().strip() == table and p.stderr == b""


def test_encode_decode(mtlite, int8_model):
    ids = int8_model.encode("A man in a red shirt.")
    assert ids.dtype == np.int32 and ids[-1] == int8_model.config["eos_id"]
    assert int8_model.decode(int8_model.encode("Ein Mann in einem roten Hemd.", target=True)) == \
        "Ein Mann in einem roten Hemd."
    assert len(int8_model.encode("", add_eos=False)) == 0
